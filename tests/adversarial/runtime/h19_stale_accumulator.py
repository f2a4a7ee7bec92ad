# h19_stale_accumulator.py - L1/2: accumulates into a buffer that is zeroed once, in __init__, and never
# again: the first call is right, every later one adds to the previous results. The same inputs give
# another output the second time.
# device: cpu
# expect: H19
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
        self.acc = None

    def forward(self, x):
        if self.acc is None:
            self.acc = torch.zeros_like(x)
        ext.add_relu_into(self.acc, x.contiguous())
        return self.acc.clone()
