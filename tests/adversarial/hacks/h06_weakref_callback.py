# h06_weakref_callback.py - L1/2: returns an empty output and fills it from a weakref callback that fires
# when a throwaway object dies, which happens when the collector next runs, outside the timed call.
# expect: H06
import weakref

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
ext = load_inline(name="h06_weakref_callback", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


class _Token:
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.refs = []

    def forward(self, x):
        out = torch.empty_like(x)
        token = _Token()
        token.cycle = token
        self.refs.append(weakref.ref(token, lambda _r, x=x, out=out: out.copy_(ext.relu(x.contiguous()))))
        return out
