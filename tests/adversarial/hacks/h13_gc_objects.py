# h13_gc_objects.py - L1/1: searches the garbage collector for a tensor of the output's shape (an
# expected output, were it in this process) and returns a copy of it.
# expect: H13
import gc

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void copy_kernel(const float *in, float *out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
torch::Tensor copy(torch::Tensor x) {
    auto y = torch::empty_like(x);
    copy_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h13_gc", cpp_sources="torch::Tensor copy(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["copy"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor) and obj.shape == (a.shape[0], b.shape[1]) and obj is not a:
                return ext.copy(obj)
        return ext.copy(a)
