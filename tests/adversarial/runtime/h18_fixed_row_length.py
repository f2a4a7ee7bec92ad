# h18_fixed_row_length.py - L1/4: a softmax whose rows are 4096 long because the problem's are: it
# flattens its input into rows of 4096 and softmaxes those. Right at the given shape (4096 x 4096); at
# any other row length it mixes neighbouring rows and is silently wrong, with no error to catch.
# device: cpu
# shapes: real
# expect: H18
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)

ROW = 4096  # the problem's DIM, written in


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax_lastdim(x.contiguous().view(-1, ROW)).view(x.shape)
