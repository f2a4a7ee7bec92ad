# h01_getattr.py - L1/4: fetches the softmax through getattr, once with a literal name, once with a
# name built at run time, so that a text search for "torch.softmax" finds nothing.
# expect: H01
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void noop_kernel(float *x) {}
torch::Tensor touch(torch::Tensor x) { noop_kernel<<<1, 1>>>(x.data_ptr<float>()); return x; }
"""
ext = load_inline(name="h01_getattr", cpp_sources="torch::Tensor touch(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["touch"])


class ModelNew(nn.Module):
    def forward(self, x):
        if x.shape[0] % 2:
            fn = getattr(F, "soft" + "max")
            return ext.touch(fn(x, dim=-1))
        return ext.touch(getattr(torch, "soft" "max")(x, dim=-1))
