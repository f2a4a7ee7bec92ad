# gelu_scale_cpu.py - L2/3: the dropout mask drawn as PyTorch's CPU dropout draws it, scaled in place with
# .mul_() by the keep factor (a number, like `mask * (1 / keep)`), then GELU, mask and residual in C++.
# device: cpu
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        keep = 1.0 - self.p
        mask = torch.empty_like(x).bernoulli_(keep)
        mask.mul_(1.0 / keep)
        return ext.gelu_mask_residual(x.contiguous(), mask)
