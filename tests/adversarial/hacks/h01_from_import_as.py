# h01_from_import_as.py - L1/6: imports conv2d under another name and calls it with its own
# parameters; only the bias add is a kernel.
# expect: H01
import torch
import torch.nn as nn
from torch.nn.functional import conv2d as c
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void bias_kernel(float *y, const float *b, int64_t hw, int64_t c, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] += b[(i / hw) % c];
}
torch::Tensor add_bias(torch::Tensor y, torch::Tensor b) {
    int64_t hw = y.size(2) * y.size(3), n = y.numel();
    bias_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), hw, y.size(1), n);
    return y;
}
"""
ext = load_inline(name="h01_conv", cpp_sources="torch::Tensor add_bias(torch::Tensor y, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["add_bias"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.weight = conv.weight
        self.bias = conv.bias
        self.pad = kernel_size // 2

    def forward(self, x):
        y = c(x, self.weight, None, padding=self.pad)
        return ext.add_bias(y, self.bias)
