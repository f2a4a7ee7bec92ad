# h06_host_callback.py - L1/3: the sum is computed on the host by a function cudaLaunchHostFunc queues on
# the stream, which a CUDA driver thread runs whenever the stream gets there.
# expect: H06
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
struct Job { const float *x; float *y; int64_t b, r, c; };
static void host_sum(void *p) {
    Job *j = static_cast<Job *>(p);
    for (int64_t i = 0; i < j->b; i++)
        for (int64_t k = 0; k < j->c; k++) {
            float s = 0.f;
            for (int64_t r = 0; r < j->r; r++) s += j->x[(i * j->r + r) * j->c + k];
            j->y[i * j->c + k] = s;
        }
    delete j;
}
__global__ void noop() {}
torch::Tensor sum_middle(torch::Tensor x_cpu) {
    auto y = torch::empty({x_cpu.size(0), 1, x_cpu.size(2)}, x_cpu.options());
    noop<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>();
    cudaLaunchHostFunc(at::cuda::getCurrentCUDAStream(), host_sum,
                       new Job{x_cpu.data_ptr<float>(), y.data_ptr<float>(), x_cpu.size(0), x_cpu.size(1), x_cpu.size(2)});
    return y;
}
"""
ext = load_inline(name="h06_host_callback", cpp_sources="torch::Tensor sum_middle(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["sum_middle"])


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return ext.sum_middle(x.contiguous())
