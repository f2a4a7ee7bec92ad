# relu_reraise_cpu.py - L1/2: the kernel call wrapped in a try/except that logs and re-raises; no
# PyTorch fallback.
# device: cpu
# expect: clean
import logging

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)


log = logging.getLogger(__name__)


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return ext.relu(x.contiguous())
        except RuntimeError:
            log.error("relu failed for shape %s", tuple(x.shape))
            raise
