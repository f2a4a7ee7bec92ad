# h01_alias.py - L1/1: hides torch.matmul behind a module-level alias, a common LLM evasion.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void copy_kernel(const float *in, float *out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
torch::Tensor copy(torch::Tensor x) {
    auto y = torch::empty_like(x);
    copy_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h01_alias", cpp_sources="torch::Tensor copy(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["copy"])
mm = torch.matmul
fast_gemm = mm


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.copy(fast_gemm(a, b))
