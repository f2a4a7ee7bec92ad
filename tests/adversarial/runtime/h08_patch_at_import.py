# h08_patch_at_import.py - L1/2: replaces torch.allclose when imported, so a harness comparing in the
# candidate's process would accept anything. Rejected right after the import, before any trial.
# static: off
# device: cpu
# expect: H08
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)


torch.allclose = lambda *args, **kwargs: True


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x.contiguous())
