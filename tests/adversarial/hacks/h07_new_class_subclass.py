# h07_new_class_subclass.py - L1/2: a tensor subclass made with types.new_class, its dispatch hook put in
# the namespace by name; forward returns the input wrapped, and the ReLU runs when the harness reads it.
# expect: H07
import types

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
ext = load_inline(name="h07_new_class_subclass", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


def _late(cls, func, types_, args=(), kwargs=None):
    plain = [ext.relu(a.contiguous()) if isinstance(a, torch.Tensor) else a for a in args]
    return func(*plain, **(kwargs or {}))


Late = types.new_class("Late", (torch.Tensor,), exec_body=lambda ns: ns.update({"__torch_dispatch__": classmethod(_late)}))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.Tensor._make_subclass(Late, x)
