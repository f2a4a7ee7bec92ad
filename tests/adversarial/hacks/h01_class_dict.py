# h01_class_dict.py - L1/2: ReLU looked up in the tensor class's namespace: __class__.__base__.__dict__,
# vars(type(x)), type(x).__mro__ and torch.Tensor.__dict__.get, never as a dotted name of torch.
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
ext = load_inline(name="h01_class_dict", cpp_sources="torch::Tensor copy(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["copy"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.dim()
        if n == 1:
            y = x.__class__.__base__.__dict__.get("relu")(x)
        elif n == 2:
            y = vars(type(x).__base__)["relu"](x)
        elif n == 3:
            y = type(x).__mro__[1].__dict__["relu"](x)
        else:
            y = torch.Tensor.__dict__.get("relu", None)(x)
        return ext.copy(y)
