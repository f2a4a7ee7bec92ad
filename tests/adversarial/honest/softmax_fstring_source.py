# softmax_fstring_source.py - L1/4: the CUDA source is an f-string template ({BLOCK} substituted,
# {{ }} for C++ braces) and the build pins TORCH_CUDA_ARCH_LIST through os.environ, a build setting.
# expect: clean
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
os.environ["MAX_JOBS"] = str(os.cpu_count() or 4)

BLOCK = 1024
ROWS_PER_BLOCK = 1

cuda_template = f"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#define BLOCK {BLOCK}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {{
    __shared__ float red[BLOCK / 32];
    const float* row = x + (long long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += BLOCK) m = fmaxf(m, row[i]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x < 32) {{
        m = threadIdx.x < BLOCK / 32 ? red[threadIdx.x] : -INFINITY;
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
        if (threadIdx.x == 0) red[0] = m;
    }}
    __syncthreads();
    m = red[0];
    __syncthreads();
    float s = 0.f;
    for (int i = threadIdx.x; i < cols; i += BLOCK) s += __expf(row[i] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {{
        s = threadIdx.x < BLOCK / 32 ? red[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
        if (threadIdx.x == 0) red[0] = s;
    }}
    __syncthreads();
    float inv = 1.f / red[0];
    for (int i = threadIdx.x; i < cols; i += BLOCK) y[(long long)blockIdx.x * cols + i] = __expf(row[i] - m) * inv;
}}

torch::Tensor softmax(torch::Tensor x) {{
    auto y = torch::empty_like(x);
    softmax_kernel<<<x.size(0) / {ROWS_PER_BLOCK}, BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    return y;
}}
"""

ext = load_inline(name=f"honest_softmax_b{BLOCK}", cpp_sources="torch::Tensor softmax(torch::Tensor x);",
                  cuda_sources=cuda_template, functions=["softmax"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.softmax(x.contiguous())
