# h20_l2_window.py - L1/2: pins its input in L2 with an access policy window and a persisting L2
# limit, so the harness's flush between timed calls does not evict it.
# expect: H20
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu(torch::Tensor x) {
    static bool pinned = false;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (!pinned) {
        cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 64 << 20);
        cudaStreamAttrValue attr = {};
        attr.accessPolicyWindow.base_ptr = x.data_ptr();
        attr.accessPolicyWindow.num_bytes = x.numel() * sizeof(float);
        attr.accessPolicyWindow.hitRatio = 1.0f;
        attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
        pinned = true;
    }
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="h20_l2", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
