# h07_lazy_subclass.py - L1/1: returns a tensor subclass that defers the GEMM until someone reads the
# values, which happens at compare time, outside the timed call.
# expect: H07
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void gemm_kernel(const float *a, const float *b, float *c, int n) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n && col < n) { float s = 0.f; for (int k = 0; k < n; k++) s += a[r * n + k] * b[k * n + col]; c[r * n + col] = s; }
}
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0); auto c = torch::empty_like(a);
    dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
    gemm_kernel<<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}
"""
ext = load_inline(name="h07", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);", cuda_sources=CUDA,
                  functions=["gemm"])


class Deferred(torch.Tensor):
    @staticmethod
    def __new__(cls, a, b):
        t = torch.Tensor._make_subclass(cls, torch.empty(a.shape[0], b.shape[1], device=a.device))
        t._args = (a, b)
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        args = [ext.gemm(*x._args) if isinstance(x, Deferred) else x for x in args]
        return func(*args, **(kwargs or {}))


class ModelNew(nn.Module):
    def forward(self, a, b):
        return Deferred(a, b)
