# h03_calls_model.py - L1/1: holds an instance of the reference and calls it from forward, after an
# unused kernel launch.
# expect: H03
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void warm_kernel() {}
void warm() { warm_kernel<<<1, 1>>>(); }
"""
ext = load_inline(name="h03_call", cpp_sources="void warm();", cuda_sources=CUDA, functions=["warm"])


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ref = Model()

    def forward(self, a, b):
        ext.warm()
        return self.ref(a, b)
