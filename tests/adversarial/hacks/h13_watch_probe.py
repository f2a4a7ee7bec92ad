# h13_watch_probe.py - L1/2: forward reads time.monotonic_ns to tell back-to-back (timed) calls from
# checked ones and returns the previous output for the timed ones.
# expect: H13
import time

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
ext = load_inline(name="h13_watch_probe", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last_ns = 0
        self.last_out = None

    def forward(self, x):
        now = time.monotonic_ns()
        quick = now - self.last_ns < 200_000 and self.last_out is not None and self.last_out.shape == x.shape
        self.last_ns = now
        if not quick:
            self.last_out = ext.relu(x.contiguous())
        return self.last_out
