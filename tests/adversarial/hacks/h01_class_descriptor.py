# h01_class_descriptor.py - L2/1: the GEMM is F.linear kept as a class attribute behind staticmethod and
# reached through the class (ModelNew.linear, type(self).linear), not through self; only the GELU is a
# kernel.
# expect: H01
import torch
import torch.nn as nn
import torch.nn.functional as F
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
ext = load_inline(name="h01_class_descriptor", cpp_sources="torch::Tensor gelu(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["gelu"])


class ModelNew(nn.Module):
    linear = staticmethod(F.linear)
    project = staticmethod(torch.addmm)

    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        if x.shape[0] % 2:
            h = type(self).project(self.bias, x, self.weight.t())
        else:
            h = ModelNew.linear(x, self.weight, self.bias)
        return ext.gelu(h.contiguous())
