# h06_sigaction_timer.py - L1/2: the C++ wrapper returns an empty output, arms a POSIX timer and fills the
# output from a SIGRTMIN handler (sigaction) a little later, after the call has returned.
# expect: H06
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ctime>
__global__ void relu_kernel(const float *x, float *y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
static torch::Tensor g_in, g_out;
static void later(int) {
    relu_kernel<<<(g_in.numel() + 255) / 256, 256>>>(g_in.data_ptr<float>(), g_out.data_ptr<float>(), g_in.numel());
}
torch::Tensor relu(torch::Tensor x) {
    g_in = x;
    g_out = torch::empty_like(x);
    struct sigaction sa = {};
    sa.sa_handler = later;
    sigaction(SIGRTMIN, &sa, nullptr);
    struct sigevent ev = {};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGRTMIN;
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    struct itimerspec when = {};
    when.it_value.tv_nsec = 200000;
    timer_settime(t, 0, &when, nullptr);
    return g_out;
}
"""
ext = load_inline(name="h06_sigaction_timer", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"], extra_ldflags=["-lrt"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x.contiguous())
