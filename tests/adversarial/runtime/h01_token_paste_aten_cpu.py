# h01_token_paste_aten_cpu.py - L1/4: softmax by ATen, its name put together by the preprocessor (token
# pasting inside a macro that qualifies it), which no rule over the source's spelling reads. The built
# extension still imports ATen's softmax operator, and that is what is judged.
# device: cpu
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#define JOIN(a, b) a##b
#define QUAL(ns, f) ns::f
torch::Tensor rowwise(torch::Tensor x) {
    return QUAL(at, JOIN(soft, max))(x, 1, c10::nullopt);
}
"""

ext = load_inline(name="sb_corpus_token_paste", cpp_sources=CPP, functions=["rowwise"], extra_cflags=["-O2"],
                  verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.rowwise(x)
