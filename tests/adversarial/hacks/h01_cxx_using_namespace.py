# h01_cxx_using_namespace.py - L2/4: `using namespace at;` makes ATen's functions plain names, so the whole
# tanh, mean and sigmoid are ATen calls that look like the candidate's own helpers.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
using namespace at;
__device__ float clip(float v) { return v < -30.f ? -30.f : v; }
__global__ void clip_kernel(float *x, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = clip(x[i]);
}
Tensor pooled(Tensor x) {
    auto y = sigmoid(mean(tanh(x), {2, 3}, true));
    clip_kernel<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), y.numel());
    return y;
}
"""
ext = load_inline(name="h01_cxx_using_namespace", cpp_sources="at::Tensor pooled(at::Tensor x);", cuda_sources=CUDA,
                  functions=["pooled"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.pooled(x.contiguous())
