# gemm_cublas.py - L1/1: calls cublasSgemm from the extension on PyTorch's handle and stream; calling
# cuBLAS from C++ is a legitimate technique (DESIGN §3).
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

// C = A @ B in row-major is C^T = B^T @ A^T in cuBLAS's column-major view: swap the operands.
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat, "fp32 only");
    const int m = a.size(0), k = a.size(1), n = b.size(1);
    auto c = torch::empty({m, n}, a.options());
    const float alpha = 1.f, beta = 0.f;
    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
    cublasSetStream(handle, at::cuda::getCurrentCUDAStream());
    cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.data_ptr<float>(), n,
                a.data_ptr<float>(), k, &beta, c.data_ptr<float>(), n);
    return c;
}
"""

gemm_ext = load_inline(
    name="honest_cublas",
    cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
    cuda_sources=cuda_source,
    functions=["gemm"],
    extra_ldflags=["-lcublas"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return gemm_ext.gemm(a.contiguous(), b.contiguous())
