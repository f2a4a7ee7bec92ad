# softmax_workspace_cpu.py - L1/4: keeps a staging copy of the input between calls (a plain attribute,
# reallocated when the shape changes) and returns a fresh result every call: state, but not a cached output.
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
    def __init__(self):
        super().__init__()
        self.staging = None

    def forward(self, x):
        if self.staging is None or self.staging.shape != x.shape:
            self.staging = torch.empty_like(x)
        self.staging.copy_(x)
        return ext.softmax_lastdim(self.staging)
