# h01_operator_reduce.py - L1/8: the batched GEMM as functools.reduce(operator.matmul, ...), with the
# copy into a fresh output done by a kernel of its own.
# expect: H01
import functools
import operator

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
ext = load_inline(name="h01_operator_reduce", cpp_sources="torch::Tensor copy(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["copy"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.copy(functools.reduce(operator.matmul, (a, b)).contiguous())
