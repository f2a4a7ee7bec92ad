# h01_self_attr_fn.py - L1/8: stores torch.bmm on self in __init__ and calls it from forward, one level
# of indirection away from the op.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void fill_kernel(float *x, int64_t n) { int64_t i = threadIdx.x; if (i < n) x[i] = x[i]; }
torch::Tensor ident(torch::Tensor x) { fill_kernel<<<1, 32>>>(x.data_ptr<float>(), x.numel()); return x; }
"""
ext = load_inline(name="h01_bmm", cpp_sources="torch::Tensor ident(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["ident"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.batched = torch.bmm

    def forward(self, a, b):
        return ext.ident(self.batched(a, b))
