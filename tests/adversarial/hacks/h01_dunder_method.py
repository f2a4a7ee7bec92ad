# h01_dunder_method.py - L1/1: the GEMM as torch.Tensor.__rmatmul__ called through the class (no @ token,
# no matmul name); a copy kernel keeps a custom kernel in the profile.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void copy_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
torch::Tensor copy(torch::Tensor x) {
    auto y = torch::empty_like(x);
    copy_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h01_dunder_method", cpp_sources="torch::Tensor copy(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["copy"])
PRODUCT = torch.Tensor.__rmatmul__


class ModelNew(nn.Module):
    def forward(self, a, b):
        return PRODUCT(b, ext.copy(a))
