# h14_tf32.py - L1/8: turns on TF32 for fp32 matmuls and asks cuBLAS for the fast TF32 compute type.
# expect: H14
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

torch.backends.cuda.matmul.allow_tf32 = True

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>
__global__ void unused_kernel() {}
torch::Tensor bmm(torch::Tensor a, torch::Tensor b) {
    int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
    auto c = torch::empty({batch, m, n}, a.options());
    float alpha = 1.f, beta = 0.f;
    cublasGemmStridedBatchedEx(at::cuda::getCurrentCUDABlasHandle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
        b.data_ptr<float>(), CUDA_R_32F, n, k * n, a.data_ptr<float>(), CUDA_R_32F, k, m * k, &beta,
        c.data_ptr<float>(), CUDA_R_32F, n, m * n, batch, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    return c;
}
"""
ext = load_inline(name="h14_tf32", cpp_sources="torch::Tensor bmm(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["bmm"], extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.bmm(a, b)
