# h01_self_attr.py - L2/1: keeps nn.Linear from __init__ and calls it in forward; only the GELU is a
# kernel, so PyTorch still does the GEMM that dominates the time.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void gelu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5f * x[i] * (1.f + erff(x[i] * 0.70710678f));
}
torch::Tensor gelu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    gelu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h01_gelu", cpp_sources="torch::Tensor gelu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["gelu"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ext.gelu(self.fc(x))
