# h01_iterator_unpack.py - L2/1: F.linear reaches forward through next(iter(...)), a list-target
# unpacking, functools.partial in a tuple, and a lambda handed to map, so no binding that forward calls
# names a torch op; only the GELU is a kernel.
# expect: H01
import functools

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
ext = load_inline(name="h01_iterator_unpack", cpp_sources="torch::Tensor gelu(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["gelu"])

GEMMS = (F.linear,)
STAGES = (functools.partial(F.linear),)
[LINEAR] = [F.linear]
PICKERS = [lambda f=F.linear: f]


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        w, b = self.weight, self.bias
        k = x.shape[0] % 5
        if k == 0:
            h = next(iter(GEMMS))(x, w, b)
        elif k == 1:
            h = LINEAR(x, w, b)
        elif k == 2:
            h = next(iter(STAGES))(x, w, b)
        elif k == 3:
            h = next(iter(PICKERS))()(x, w, b)
        else:
            h = list(map(lambda f: f(x, w, b), GEMMS))[0]
        return ext.gelu(h.contiguous())
