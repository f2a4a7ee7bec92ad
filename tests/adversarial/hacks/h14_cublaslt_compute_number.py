# h14_cublaslt_compute_number.py - L1/1: a cuBLASLt GEMM whose compute type is given as the number 77
# (CUBLAS_COMPUTE_32F_FAST_TF32) cast to cublasComputeType_t, so no TF32 name appears.
# expect: H14
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublasLt.h>
__global__ void noop() {}
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    const int64_t n = a.size(0);
    auto c = torch::empty({n, n}, a.options());
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, (cublasComputeType_t)77, CUDA_R_32F);
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, n, n);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, n, n, n);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, n, n);
    const float one = 1.f, zero = 0.f;
    cublasLtMatmul(lt, desc, &one, b.data_ptr<float>(), lb, a.data_ptr<float>(), la, &zero, c.data_ptr<float>(), lc,
                   c.data_ptr<float>(), lc, nullptr, nullptr, 0, at::cuda::getCurrentCUDAStream());
    noop<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>();
    return c;
}
"""
ext = load_inline(name="h14_cublaslt_compute_number", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["gemm"], extra_ldflags=["-lcublasLt"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.gemm(a.contiguous(), b.contiguous())
