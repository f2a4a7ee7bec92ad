# h01_dict_forward.py - L1/2: __init__ puts a lambda under "forward" in the instance's __dict__, which
# nn.Module.__call__ finds before the class's forward; the lambda clamps with PyTorch.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h01_dict_forward", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.__dict__["forward"] = lambda x: x.clamp_min(0.0)

    def forward(self, x):
        return ext.relu(x.contiguous())
