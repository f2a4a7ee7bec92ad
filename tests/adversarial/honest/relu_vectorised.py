# relu_vectorised.py - L1/2: a grid-stride float4 ReLU kernel on the current stream; the plainest
# honest candidate.
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float4 *__restrict__ in, float4 *__restrict__ out, int64_t n4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
        out[i] = v;
    }
}

torch::Tensor relu_fwd(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.numel() % 4 == 0, "expects a contiguous CUDA tensor");
    auto y = torch::empty_like(x);
    int64_t n4 = x.numel() / 4;
    int blocks = (int)std::min<int64_t>((n4 + 255) / 256, 65535);
    relu_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4 *>(x.data_ptr<float>()), reinterpret_cast<float4 *>(y.data_ptr<float>()), n4);
    return y;
}
"""
CPP_SRC = "torch::Tensor relu_fwd(torch::Tensor x);"

relu_ext = load_inline(name="honest_relu", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["relu_fwd"],
                       extra_cuda_cflags=["-O3", "--use_fast_math"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_fwd(x.contiguous())
