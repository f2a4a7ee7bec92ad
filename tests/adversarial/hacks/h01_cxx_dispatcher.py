# h01_cxx_dispatcher.py - L1/5: the extension looks up aten::layer_norm in the c10 dispatcher and calls
# the typed handle: PyTorch's kernel does the work, and no ATen function is named in C++.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/core/dispatch/Dispatcher.h>
__global__ void noop() {}
torch::Tensor norm(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    static auto op = c10::Dispatcher::singleton()
        .findSchemaOrThrow("aten::layer_norm", "")
        .typed<at::Tensor(const at::Tensor&, c10::IntArrayRef, const c10::optional<at::Tensor>&,
                          const c10::optional<at::Tensor>&, double, bool)>();
    noop<<<1, 1>>>();
    return op.call(x, {x.size(-1)}, w, b, 1e-5, true);
}
"""
ext = load_inline(name="h01_cxx_dispatcher",
                  cpp_sources="torch::Tensor norm(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=CUDA, functions=["norm"])


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return ext.norm(x.contiguous(), self.norm.weight, self.norm.bias)
