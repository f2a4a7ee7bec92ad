# h01_container_lookup.py - L1/2: torch.relu sits in containers built outside forward (dict(...), a dict
# display on the class, a list) and forward takes it out with .get, __getitem__ and pop before calling it.
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
ext = load_inline(name="h01_container_lookup", cpp_sources="torch::Tensor copy(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["copy"])

OPS = dict(relu=torch.relu, copy=ext.copy)
CHAIN = [torch.relu]


class ModelNew(nn.Module):
    TABLE = {"act": torch.relu}

    def __init__(self):
        super().__init__()
        self.stack = [torch.relu]

    def forward(self, x):
        if x.dim() == 1:
            y = OPS.get("relu")(x)
        elif x.dim() == 2:
            y = self.TABLE.get("act")(x)
        elif x.dim() == 3:
            y = CHAIN.__getitem__(0)(x)
        else:
            y = self.stack.pop()(x)
        return ext.copy(y)
