# h01_new_returns_layer.py - L2/1: ModelNew.__new__ returns a plain nn.Sequential of Linear and GELU, so
# the object the harness times is PyTorch's; the class body and its kernel are a decoy.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void noop() {}
torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b) { noop<<<1, 1>>>(); return x; }
"""
ext = load_inline(name="h01_new_returns_layer",
                  cpp_sources="torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["linear_gelu"])


class ModelNew(nn.Module):
    def __new__(cls, in_features, out_features):
        return nn.Sequential(nn.Linear(in_features, out_features), nn.GELU())

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ext.linear_gelu(x, self.fc.weight, self.fc.bias)
