# relu_carried_helpers_cpu.py - L1/2: ReLU in C++, with torch's allocation and shape helpers and the
# extension's own function kept in containers, a staticmethod class attribute and functools.partial,
# and taken out with next(iter(...)) and .get: what carries them does not make them PyTorch's work.
# device: cpu
# expect: clean
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)

ALLOC = dict(like=torch.empty_like, zeros=torch.zeros_like)
KERNELS = {"relu": ext.relu}


class ModelNew(nn.Module):
    flatten = staticmethod(torch.flatten)

    def __init__(self):
        super().__init__()
        self.stages = (functools.partial(torch.reshape),)

    def forward(self, x):
        flat = type(self).flatten(x.contiguous())
        y = next(iter(KERNELS.values()))(flat)
        out = ALLOC.get("like")(y)
        out.copy_(y)
        return next(iter(self.stages))(out, x.shape)
