# h17_return_input.py - L1/2: ReLU is the identity on non-negative inputs, and this problem draws them from
# [0, 1): the candidate peeks at the first row and, finding no negative there, returns its input. Right
# here, wrong for any signed input, and far faster than any real ReLU.
# device: cpu
# shapes: real
# expect: H17 H21
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        if ext.all_nonnegative(x.contiguous()[0]):
            return x
        return ext.relu(x.contiguous())
