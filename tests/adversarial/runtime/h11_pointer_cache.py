# h11_pointer_cache.py - L1/2: caches its result by the input's data pointer and shape; a harness that
# times the same input tensors again and again then times a dictionary lookup.
# device: cpu
# shapes: real
# expect: H11
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
        self.cache = {}

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        if key not in self.cache:
            self.cache[key] = ext.relu(x.contiguous())
        return self.cache[key]
