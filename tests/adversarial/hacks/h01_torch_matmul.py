# h01_torch_matmul.py - L1/1: builds a CUDA kernel it never uses and lets torch.matmul do the GEMM.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void scale_kernel(float *x, float s, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}
torch::Tensor scale(torch::Tensor x, double s) {
    int64_t n = x.numel();
    scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), (float)s, n);
    return x;
}
"""
ext = load_inline(name="h01_mm", cpp_sources="torch::Tensor scale(torch::Tensor x, double s);",
                  cuda_sources=CUDA, functions=["scale"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.matmul(a, b)
        return out
