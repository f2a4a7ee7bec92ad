# conv_padded_input.py - L1/6: pads the input with F.pad (a copy, not the convolution) and runs a
# direct 3x3 convolution kernel on it; weights come from an nn.Conv2d kept for its initialisation.
# expect: clean
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
// x is already padded by one pixel on each side, so the inner loop has no bounds checks.
__global__ void conv3x3(const float *x, const float *w, const float *b, float *y, int cin, int cout, int h, int wd) {
    int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y, co = blockIdx.z % cout, n = blockIdx.z / cout;
    if (ox >= wd) return;
    int pw = wd + 2, ph = h + 2;
    float acc = b[co];
    for (int ci = 0; ci < cin; ci++) {
        const float *xp = x + ((long long)(n * cin + ci) * ph + oy) * pw + ox;
        const float *wp = w + (co * cin + ci) * 9;
        acc = fmaf(xp[0], wp[0], fmaf(xp[1], wp[1], fmaf(xp[2], wp[2], acc)));
        acc = fmaf(xp[pw], wp[3], fmaf(xp[pw + 1], wp[4], fmaf(xp[pw + 2], wp[5], acc)));
        acc = fmaf(xp[2 * pw], wp[6], fmaf(xp[2 * pw + 1], wp[7], fmaf(xp[2 * pw + 2], wp[8], acc)));
    }
    y[(((long long)n * cout + co) * h + oy) * wd + ox] = acc;
}
torch::Tensor conv(torch::Tensor xp, torch::Tensor w, torch::Tensor b) {
    int n = xp.size(0), cin = xp.size(1), h = xp.size(2) - 2, wd = xp.size(3) - 2, cout = w.size(0);
    auto y = torch::empty({n, cout, h, wd}, xp.options());
    dim3 grid((wd + 127) / 128, h, n * cout);
    conv3x3<<<grid, 128, 0, at::cuda::getCurrentCUDAStream()>>>(xp.data_ptr<float>(), w.data_ptr<float>(),
        b.data_ptr<float>(), y.data_ptr<float>(), cin, cout, h, wd);
    return y;
}
"""
conv_ext = load_inline(name="honest_conv3x3", cpp_sources="torch::Tensor conv(torch::Tensor xp, torch::Tensor w, torch::Tensor b);",
                       cuda_sources=src, functions=["conv"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        assert kernel_size == 3
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        xp = F.pad(x, (1, 1, 1, 1))
        return conv_ext.conv(xp.contiguous(), self.conv.weight.contiguous(), self.conv.bias)
