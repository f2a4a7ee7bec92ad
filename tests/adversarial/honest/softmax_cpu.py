# softmax_cpu.py - L1/4: a row softmax in C++ (max, exponentials, one division per row). Its comments
# and strings name torch.softmax and F.softmax, which are prose, not calls.
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
    """Same result as torch.softmax(x, dim=-1), computed by ext.softmax_lastdim."""

    def forward(self, x):
        # F.softmax would be the PyTorch way; the extension does one pass per row instead
        assert x.dim() == 2, "expects [batch, dim] like torch.softmax's 2-D case"
        return ext.softmax_lastdim(x.contiguous())
