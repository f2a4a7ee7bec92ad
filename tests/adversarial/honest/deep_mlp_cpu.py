# deep_mlp_cpu.py - L3/4: all 48 Linear + Tanh layers in one C++ call; the nn.Linear modules are kept
# only so the weights start as the reference's do.
# device: cpu
# expect: clean
# problem: H15
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{{cpu_ops.cpp}}"""  # tests/adversarial/cpu_ops.cpp, put here by run_corpus.py

FUNCTIONS = ["relu", "relu_parallel", "relu_transposed_into", "all_nonnegative", "add_relu_into", "softmax_lastdim",
             "softmax_lastdim_inplace", "sum_dim1", "layernorm_lastdim", "gather_rows", "tanh_mean_sigmoid",
             "gelu_mask_residual", "mlp_tanh"]
ext = load_inline(name="sb_corpus_cpu_ops", cpp_sources=CPP, functions=FUNCTIONS, extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.Tanh()]
        self.net = nn.Sequential(*layers)  # the reference's structure, for its initialisation order

    def forward(self, x):
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        return ext.mlp_tanh(x.contiguous(), [m.weight for m in linears], [m.bias for m in linears])
