# h06_thread.py - L1/2: hands the launch to a background thread and returns a tensor that the thread
# fills later.
# expect: H06
import threading

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
void relu_into(torch::Tensor x, torch::Tensor y) {
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
}
"""
ext = load_inline(name="h06_thread", cpp_sources="void relu_into(torch::Tensor x, torch::Tensor y);",
                  cuda_sources=CUDA, functions=["relu_into"])


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        threading.Thread(target=ext.relu_into, args=(x, y), daemon=True).start()
        return y
