# h08_class_of_event.py - L1/2: patches the timer through an event object's class, type(ev).elapsed_time,
# so no dotted torch path is assigned; every timed interval reads 40% shorter.
# expect: H08
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h08_class_of_event", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])

_probe = torch.cuda.Event(enable_timing=True)
_real = type(_probe).elapsed_time
type(_probe).elapsed_time = lambda self, end: 0.4 * _real(self, end)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x.contiguous())
