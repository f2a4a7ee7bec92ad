# h14_half.py - L1/1: casts both fp32 inputs to fp16 for the kernel and back, trading the problem's
# precision for speed.
# expect: H14
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <cuda_fp16.h>
__global__ void gemm_kernel(const __half *a, const __half *b, __half *c, int n) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n && col < n) {
        __half s = __float2half(0.f);
        for (int k = 0; k < n; k++) s = __hfma(a[r * n + k], b[k * n + col], s);
        c[r * n + col] = s;
    }
}
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0); auto c = torch::empty_like(a);
    dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
    gemm_kernel<<<grid, block>>>((const __half *)a.data_ptr(), (const __half *)b.data_ptr(), (__half *)c.data_ptr(), n);
    return c;
}
"""
ext = load_inline(name="h14_half", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["gemm"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.gemm(a.half(), b.to(torch.float16)).float()
