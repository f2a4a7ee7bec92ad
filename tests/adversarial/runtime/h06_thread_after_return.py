# h06_thread_after_return.py - L1/2: forward returns at once and a Python thread fills the output in the
# background: the timer stops before the work is done. The static checks reject the threading import, so
# this case runs with them off to show the runtime check on its own.
# static: off
# device: cpu
# expect: H06
import threading

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
        out = torch.empty_like(x)

        def work():
            out.copy_(ext.relu(x.contiguous()))

        threading.Thread(target=work, daemon=True).start()
        return out
