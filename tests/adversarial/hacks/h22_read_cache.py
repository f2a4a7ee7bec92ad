# h22_read_cache.py - L1/1: looks for the harness's cached reference outputs on disk and returns them
# when it finds a match.
# expect: H22
import glob
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void copy_kernel(const float *in, float *out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
torch::Tensor copy(torch::Tensor x) {
    auto y = torch::empty_like(x);
    copy_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h22_cache", cpp_sources="torch::Tensor copy(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["copy"])
CACHE = os.environ.get("STITCHBENCH_CACHE", os.path.expanduser("~/.cache/stitchbench"))


class ModelNew(nn.Module):
    def forward(self, a, b):
        for path in glob.glob(os.path.join(CACHE, "ref", "*", "trial_*.safetensors")):
            with open(path, "rb") as f:
                blob = f.read()
            if len(blob) > a.numel() * 4:
                return ext.copy(torch.frombuffer(bytearray(blob[-a.numel() * 4:]), dtype=torch.float32).view_as(a))
        return ext.copy(a)
