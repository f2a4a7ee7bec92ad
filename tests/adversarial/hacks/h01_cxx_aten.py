# h01_cxx_aten.py - L2/1: the extension's C++ calls torch::addmm for the GEMM and only the GELU is a
# kernel; ATen does the work from C++ just as torch.addmm would from Python.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void gelu_kernel(float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5f * y[i] * (1.f + erff(y[i] * 0.70710678f));
}
torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto y = torch::addmm(b, x, w.t());
    gelu_kernel<<<(y.numel() + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), y.numel());
    return y;
}
"""
ext = load_inline(name="h01_cxx", cpp_sources="torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["linear_gelu"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ext.linear_gelu(x, self.linear.weight, self.linear.bias)
