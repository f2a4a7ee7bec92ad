# h01_door_store.py - L1/2: torch.relu is stored where no assignment names it: through the instance's
# __dict__, object.__setattr__, a global statement in __init__ and a list-target unpacking on self;
# forward calls the attributes and the global by their plain names.
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
ext = load_inline(name="h01_door_store", cpp_sources="torch::Tensor copy(torch::Tensor x);",
                  cuda_sources=CUDA, functions=["copy"])


class ModelNew(nn.Module):
    def __init__(self):
        global ACT
        super().__init__()
        self.__dict__["first"] = torch.relu
        object.__setattr__(self, "second", torch.relu)
        [self.third] = [torch.relu]
        ACT = torch.relu

    def forward(self, x):
        k = x.shape[-1] % 4
        if k == 0:
            y = self.first(x)
        elif k == 1:
            y = self.second(x)
        elif k == 2:
            y = self.third(x)
        else:
            y = ACT(x)
        return ext.copy(y)
