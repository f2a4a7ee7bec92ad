# h13_ctypes.py - L1/2: reads raw process memory through ctypes; the C++ side looks symbols up with
# dlsym(RTLD_NEXT) to wrap the CUDA runtime.
# expect: H13
import ctypes

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <dlfcn.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu(torch::Tensor x) {
    static void *real = dlsym(RTLD_NEXT, "cudaEventElapsedTime");
    (void)real;
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h13_ctypes", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        probe = ctypes.string_at(id(x), 64)
        del probe
        return ext.relu(x)
