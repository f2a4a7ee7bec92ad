# h01_global_hook.py - L1/2: a global forward hook (for every module) swaps ModelNew's output for
# torch.relu of its input; forward itself only launches the kernel.
# expect: H01
import torch
import torch.nn as nn
from torch.nn.modules import module as module_hooks
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
ext = load_inline(name="h01_global_hook", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


def _swap(mod, inputs, output):
    return torch.relu(inputs[0]) if type(mod).__name__ == "ModelNew" else output


module_hooks.register_module_forward_hook(_swap)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x.contiguous())
