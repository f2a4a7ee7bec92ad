# relu_openmp_cpu.py - L1/2: ReLU in C++ split over two OpenMP threads. The first parallel region starts
# libgomp's pool (and, with the process's first thread, glibc's own handler for its internal signal 33);
# the pool's threads wait between calls, which is not work left running after the call.
# device: cpu
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>

torch::Tensor relu_omp(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    const int64_t n = x.numel();
#pragma omp parallel for num_threads(2) schedule(static)
    for (int64_t i = 0; i < n; i++)
        out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}
"""

ext = load_inline(name="sb_corpus_relu_omp", cpp_sources=CPP, functions=["relu_omp"],
                  extra_cflags=["-O2", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_omp(x.contiguous())
