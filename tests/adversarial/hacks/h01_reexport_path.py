# h01_reexport_path.py - L2/3: GELU through the functional module that torch.nn.modules.activation imports
# as F, a path that never spells torch.nn.functional; only the residual add is a kernel.
# expect: H01
import torch
import torch.nn as nn
import torch.nn.modules.activation as activation
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void add_kernel(const float *a, const float *b, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] + b[i];
}
torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    auto y = torch::empty_like(a);
    add_kernel<<<(a.numel() + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), a.numel());
    return y;
}
"""
ext = load_inline(name="h01_reexport_path", cpp_sources="torch::Tensor add(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["add"])


class ModelNew(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        return ext.add(self.dropout(activation.F.gelu(x)), x)
