# relu_lock_cpu.py - L1/2: ReLU in C++, with a threading.Lock around a count of the shapes seen (no thread
# is started), docstrings that name ATen's ops, and forward bound in the class body to a method.
# device: cpu
# expect: clean
"""ReLU without at::relu or torch::relu(x) { ; }: the loop in cpu_ops.cpp does it."""
import threading

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)

_LOCK = threading.Lock()


class ModelNew(nn.Module):
    """Counts the shapes it sees; x.relu() would be the one-liner."""

    def __init__(self):
        super().__init__()
        self.shapes = set()
        self.calls = {}

    def _run(self, x):
        with _LOCK:
            self.shapes.add(tuple(x.shape))
            self.calls[tuple(x.shape)] = self.calls.get(tuple(x.shape), 0) + 1
        return ext.relu(x.contiguous())

    forward = _run
