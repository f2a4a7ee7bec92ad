# gelu_dropout_rng.py - L2/3: draws the dropout mask with torch.rand_like (tensor creation, so the RNG
# stream matches the reference's) and fuses GELU, mask and residual in one kernel.
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

KERNEL = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void gelu_dropout_residual(const float *x, const float *u, float *y, float p, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float g = 0.5f * v * (1.f + erff(v * 0.7071067811865475f));
    y[i] = v + (u[i] >= p ? g / (1.f - p) : 0.f);
}
torch::Tensor fused(torch::Tensor x, torch::Tensor u, double p) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    gelu_dropout_residual<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), u.data_ptr<float>(), y.data_ptr<float>(), (float)p, n);
    return y;
}
"""
ext = load_inline(name="honest_gelu_dropout", cpp_sources="torch::Tensor fused(torch::Tensor x, torch::Tensor u, double p);",
                  cuda_sources=KERNEL, functions=["fused"])


class ModelNew(nn.Module):
    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x):
        u = torch.rand_like(x) if self.training else torch.ones_like(x)
        return ext.fused(x.contiguous(), u, self.p if self.training else 0.0)
