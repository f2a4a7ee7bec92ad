# h01_lambda.py - L1/4: wraps torch.softmax in a lambda stored on self, and adds a kernel launch so
# that the file looks like it has a custom kernel.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void noop_kernel() {}
void launch() { noop_kernel<<<1, 1>>>(); }
"""
ext = load_inline(name="h01_lambda", cpp_sources="void launch();", cuda_sources=CUDA, functions=["launch"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = lambda t: torch.softmax(t, dim=-1)

    def forward(self, x):
        ext.launch()
        return self.op(x)
