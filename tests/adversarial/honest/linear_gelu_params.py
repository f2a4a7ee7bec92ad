# linear_gelu_params.py - L2/1: keeps nn.Linear only for its initialised parameters and feeds
# weight and bias to a fused GEMM + bias + GELU kernel; the module itself is never called.
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#define T 16
__global__ void linear_gelu_kernel(const float *x, const float *w, const float *b, float *y, int M, int N, int K) {
    __shared__ float xs[T][T], ws[T][T + 1];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += T) {
        xs[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? x[row * K + k0 + threadIdx.x] : 0.f;
        ws[threadIdx.y][threadIdx.x] = blockIdx.x * T + threadIdx.y < N && k0 + threadIdx.x < K
                                       ? w[(blockIdx.x * T + threadIdx.y) * K + k0 + threadIdx.x] : 0.f;
        __syncthreads();
        for (int k = 0; k < T; k++) acc = fmaf(xs[threadIdx.y][k], ws[threadIdx.x][k], acc);
        __syncthreads();
    }
    if (row < M && col < N) {
        float v = acc + b[col];
        y[row * N + col] = 0.5f * v * (1.f + erff(v * 0.7071067811865475f));
    }
}
torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    int M = x.size(0), K = x.size(1), N = w.size(0);
    auto y = torch::empty({M, N}, x.options());
    dim3 block(T, T), grid((N + T - 1) / T, (M + T - 1) / T);
    linear_gelu_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    return y;
}
"""

fused = load_inline(name="honest_linear_gelu",
                    cpp_sources="torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                    cuda_sources=cuda_src, functions=["linear_gelu"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # same initialisation as the reference

    def forward(self, x):
        w = self.linear.weight
        return fused.linear_gelu(x.contiguous(), w.contiguous(), self.linear.bias)
