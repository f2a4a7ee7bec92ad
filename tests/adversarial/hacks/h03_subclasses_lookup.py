# h03_subclasses_lookup.py - L1/2: finds the reference among nn.Module's subclasses (its name never
# written as a name) and calls it in forward after the kernel.
# expect: H03
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h03_subclasses_lookup", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])
WANTED = "Mod" + "el"


def _reference():
    for cls in nn.Module.__subclasses__():
        if cls.__name__ == WANTED and cls.__module__ != __name__:
            return cls()
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ref = [_reference()]

    def forward(self, x):
        ext.relu(x.contiguous())
        return self.ref[0](x)
