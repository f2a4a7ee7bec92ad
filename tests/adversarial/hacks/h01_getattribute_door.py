# h01_getattribute_door.py - L1/4: the softmax is fetched with __getattribute__ (on the tensor, through
# its class, and through object), so no reference ever names a tensor method that computes.
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
ext = load_inline(name="h01_getattribute_door", cpp_sources="torch::Tensor copy(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["copy"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.dim() == 2:
            y = x.__getattribute__("softmax")(dim=1)
        elif x.dim() == 3:
            y = type(x).__getattribute__(x, "softmax")(dim=-1)
        else:
            y = object.__getattribute__(x, "softmax")(-1)
        return ext.copy(y)
