# layernorm_params.py - L1/5: a one-block-per-row LayerNorm kernel (Welford + warp shuffles) that
# reads gamma, beta and eps from an nn.LayerNorm kept for its parameters.
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

LN_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__device__ void welford_merge(float &m, float &m2, float &n, float om, float om2, float on) {
    float tot = n + on;
    if (tot == 0.f) return;
    float d = om - m;
    m += d * on / tot;
    m2 += om2 + d * d * n * on / tot;
    n = tot;
}
__global__ void layer_norm_kernel(const float *x, const float *g, const float *b, float *y, int cols, float eps) {
    const float *row = x + (int64_t)blockIdx.x * cols;
    float mean = 0.f, m2 = 0.f, cnt = 0.f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        cnt += 1.f;
        float d = row[i] - mean;
        mean += d / cnt;
        m2 += d * (row[i] - mean);
    }
    for (int off = 16; off > 0; off >>= 1)
        welford_merge(mean, m2, cnt, __shfl_xor_sync(0xffffffff, mean, off), __shfl_xor_sync(0xffffffff, m2, off),
                      __shfl_xor_sync(0xffffffff, cnt, off));
    __shared__ float sm[32], sm2[32], sc[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sm[warp] = mean; sm2[warp] = m2; sc[warp] = cnt; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); w++) welford_merge(sm[0], sm2[0], sc[0], sm[w], sm2[w], sc[w]);
    }
    __syncthreads();
    float mu = sm[0], rstd = rsqrtf(sm2[0] / cols + eps);
    for (int i = threadIdx.x; i < cols; i += blockDim.x)
        y[(int64_t)blockIdx.x * cols + i] = (row[i] - mu) * rstd * g[i] + b[i];
}
torch::Tensor layer_norm(torch::Tensor x, torch::Tensor g, torch::Tensor b, double eps) {
    auto y = torch::empty_like(x);
    int cols = x.size(-1);
    int rows = x.numel() / cols;
    layer_norm_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), g.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    return y;
}
"""
ln = load_inline(name="honest_layernorm",
                 cpp_sources="torch::Tensor layer_norm(torch::Tensor x, torch::Tensor g, torch::Tensor b, double eps);",
                 cuda_sources=LN_CUDA, functions=["layer_norm"])


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return ln.layer_norm(x.contiguous(), self.norm.weight, self.norm.bias, self.norm.eps)
