# reraise_only.py - L1/2: wraps the kernel call in try/except that adds context and re-raises, and
# another that logs and re-raises; neither computes anything with PyTorch.
# expect: clean
import logging

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

log = logging.getLogger(__name__)

SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

try:
    ext = load_inline(name="honest_reraise", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=SRC,
                      functions=["relu"])
except Exception as exc:
    raise RuntimeError("building the ReLU extension failed") from exc


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return ext.relu(x.contiguous())
        except RuntimeError:
            log.error("relu kernel failed for shape %s", tuple(x.shape))
            raise
