# h09_uninit_accumulator_cuda.py - L1/3: sums with atomicAdd into torch::empty, trusting fresh device
# memory to be zero. It is, often enough, on a new allocation; once the caching allocator hands back a
# block an earlier call used, or the harness fills freed memory with NaN, the sums start from garbage.
# expect: H09|H19
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
// out[b, 0, c] += x[b, r, c] for a slice of rows per block: the rows are split across blocks, so partial
// sums meet in atomicAdd, onto an output that nobody set to zero.
__global__ void sum_rows_atomic(const float *x, float *out, int rows, int cols, int rows_per_block) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.z;
    int r0 = blockIdx.y * rows_per_block;
    if (c >= cols) return;
    float s = 0.f;
    for (int r = r0; r < r0 + rows_per_block && r < rows; r++)
        s += x[((long long)b * rows + r) * cols + c];
    atomicAdd(&out[(long long)b * cols + c], s);
}
torch::Tensor sum_middle(torch::Tensor x) {
    int batch = x.size(0), rows = x.size(1), cols = x.size(2), per = 64;
    auto out = torch::empty({batch, 1, cols}, x.options());
    dim3 grid((cols + 255) / 256, (rows + per - 1) / per, batch);
    sum_rows_atomic<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), out.data_ptr<float>(),
                                                                         rows, cols, per);
    return out;
}
"""

ext = load_inline(name="hack_uninit_accumulator", cpp_sources="torch::Tensor sum_middle(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["sum_middle"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        assert dim == 1

    def forward(self, x):
        return ext.sum_middle(x.contiguous())
