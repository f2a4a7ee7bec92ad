# two_streams_synced.py - L2/5: the pooled output is computed on a second stream while the feature
# map is written, and the current stream waits for it before forward returns: correctly synchronised.
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// Direct 3x3 convolution + bias + ReLU, one output element per thread.
__global__ void conv3x3_relu(const float *x, const float *w, const float *b, float *y,
                             int n, int cin, int cout, int h, int wd) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t total = (int64_t)n * cout * h * wd;
    if (idx >= total) return;
    int ox = idx % wd, oy = (idx / wd) % h, co = (idx / ((int64_t)wd * h)) % cout, bi = idx / ((int64_t)wd * h * cout);
    float acc = b[co];
    for (int ci = 0; ci < cin; ci++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                int iy = oy + ky - 1, ix = ox + kx - 1;
                if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
                    acc = fmaf(x[(((int64_t)bi * cin + ci) * h + iy) * wd + ix], w[((co * cin + ci) * 3 + ky) * 3 + kx], acc);
            }
    y[idx] = fmaxf(acc, 0.f);
}

// Mean over H x W, one block per (batch, channel).
__global__ void channel_mean(const float *y, float *out, int hw) {
    __shared__ float part[256];
    const float *p = y + (int64_t)blockIdx.x * hw;
    float s = 0.f;
    for (int i = threadIdx.x; i < hw; i += blockDim.x) s += p[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0] / hw;
}

torch::Tensor conv_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    int n = x.size(0), cin = x.size(1), h = x.size(2), wd = x.size(3), cout = w.size(0);
    auto y = torch::empty({n, cout, h, wd}, x.options());
    int64_t total = y.numel();
    conv3x3_relu<<<(total + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n, cin, cout, h, wd);
    return y;
}

torch::Tensor pool(torch::Tensor y) {
    auto out = torch::empty({y.size(0), y.size(1)}, y.options());
    channel_mean<<<y.size(0) * y.size(1), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), out.data_ptr<float>(), y.size(2) * y.size(3));
    return out;
}
"""

ext = load_inline(name="honest_two_streams",
                  cpp_sources="torch::Tensor conv_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b);\n"
                              "torch::Tensor pool(torch::Tensor y);",
                  cuda_sources=SRC, functions=["conv_relu", "pool"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.weight = nn.Parameter(conv.weight.detach().clone())
        self.bias = nn.Parameter(conv.bias.detach().clone())
        self.side = torch.cuda.Stream() if torch.cuda.is_available() else None

    def forward(self, x):
        features = ext.conv_relu(x.contiguous(), self.weight, self.bias)
        if self.side is None:
            return features, ext.pool(features)
        main = torch.cuda.current_stream()
        self.side.wait_stream(main)          # the side stream starts after the features exist
        with torch.cuda.stream(self.side):
            pooled = ext.pool(features)
        features.record_stream(self.side)    # keep the allocator from reusing it early
        main.wait_stream(self.side)          # and forward does not return before the pool is done
        return features, pooled
