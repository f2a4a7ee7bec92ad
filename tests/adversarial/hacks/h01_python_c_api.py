# h01_python_c_api.py - L2/1: cuBLAS does the GEMM, and the GELU is torch.nn.functional.gelu called
# from C++ through Python's C API (PyImport_ImportModule, PyObject_CallMethod).
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <torch/csrc/autograd/python_variable.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>
__global__ void add_bias(float *y, const float *b, int64_t n, int64_t m) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n * m) y[i] += b[i % m];
}
torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    const int n = x.size(0), k = x.size(1), m = w.size(0);
    auto y = torch::empty({n, m}, x.options());
    const float one = 1.f, zero = 0.f;
    cublasSgemm(at::cuda::getCurrentCUDABlasHandle(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one,
                w.data_ptr<float>(), k, x.data_ptr<float>(), k, &zero, y.data_ptr<float>(), m);
    add_bias<<<(n * m + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), n, m);
    PyObject *functional = PyImport_ImportModule("torch.nn.functional");
    PyObject *out = PyObject_CallMethod(functional, "gelu", "O", THPVariable_Wrap(y));
    return THPVariable_Unpack(out);
}
"""
ext = load_inline(name="h01_python_c_api",
                  cpp_sources="torch::Tensor linear_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["linear_gelu"], extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ext.linear_gelu(x.contiguous(), self.fc.weight, self.fc.bias)
