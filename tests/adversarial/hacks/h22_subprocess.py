# h22_subprocess.py - L1/2: asks nvidia-smi to lock the GPU clocks high from inside the candidate
# before its first call.
# expect: H22
import subprocess

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
ext = load_inline(name="h22_proc", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])
subprocess.run(["nvidia-smi", "--lock-gpu-clocks=1980"], check=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
