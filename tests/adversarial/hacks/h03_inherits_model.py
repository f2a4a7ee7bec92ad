# h03_inherits_model.py - L1/2: carries a copy of the reference and derives ModelNew from it, so the
# reference's forward is what runs.
# expect: H03
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(float *x, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = fmaxf(x[i], 0.f);
}
"""
ext = load_inline(name="h03", cpp_sources="", cuda_sources=CUDA, functions=[])


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    pass
