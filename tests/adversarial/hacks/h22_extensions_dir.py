# h22_extensions_dir.py - L1/2: points TORCH_EXTENSIONS_DIR at a folder of its own and asks load_inline for
# a build_directory there: builds placed outside the harness's cache, where another build can be swapped in.
# expect: H22
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

os.environ["TORCH_EXTENSIONS_DIR"] = "/tmp/shared_builds"
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
ext = load_inline(name="h22_extensions_dir", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"], build_directory="/tmp/shared_builds/relu")


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x.contiguous())
