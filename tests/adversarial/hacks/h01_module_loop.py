# h01_module_loop.py - L3/1: builds the layers as an nn.ModuleList in a loop and runs them in forward;
# the custom ReLU kernel is real, the Linear layers are PyTorch's.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(float *x, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu_(torch::Tensor x) {
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel());
    return x;
}
"""
ext = load_inline(name="h01_mlp", cpp_sources="torch::Tensor relu_(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu_"])


class ModelNew(nn.Module):
    def __init__(self, in_features, hidden_sizes, out_features):
        super().__init__()
        layers = []
        width = in_features
        for h in hidden_sizes:
            layers.append(nn.Linear(width, h))
            width = h
        self.hidden = nn.ModuleList(layers)
        self.out = nn.Linear(width, out_features)

    def forward(self, x):
        for layer in self.hidden:
            x = ext.relu_(layer(x))
        return self.out(x)
