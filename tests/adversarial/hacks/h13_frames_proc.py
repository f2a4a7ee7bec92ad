# h13_frames_proc.py - L1/2: walks up the interpreter's frames for the caller's locals and reads its
# own memory map from /proc.
# expect: H13
import sys

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h13_frames", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        caller = sys._getframe(1)
        expected = caller.f_back.f_locals.get("expected")
        with open("/proc/self/maps") as f:
            self.maps = f.read()
        return expected if expected is not None else ext.relu(x)
