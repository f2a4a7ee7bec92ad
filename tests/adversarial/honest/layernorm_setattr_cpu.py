# layernorm_setattr_cpu.py - L1/5: LayerNorm in C++ with its weight and bias made by setattr in a loop
# (LayerNorm's defaults, 1 and 0) and the epsilon scaled from a constructor argument; all of it is the
# model's own state, nothing of torch's is replaced.
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
    def __init__(self, hidden):
        super().__init__()
        for name, fill in (("weight", 1.0), ("bias", 0.0)):
            setattr(self, name, nn.Parameter(torch.full((hidden,), fill)))
        self.eps = 1e-5

    def forward(self, x):
        w = getattr(self, "weight")
        return ext.layernorm_lastdim(x.contiguous(), w, self.bias, self.eps)
