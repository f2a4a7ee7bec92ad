# h01_source_template.py - L1/2: the CUDA source is a template whose call is filled in with .format, so the
# op's name is never written next to at:: in the file; what the compiler gets is at::relu.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TEMPLATE = r"""
#include <torch/extension.h>
__global__ void mark(float *y) {{ }}
torch::Tensor apply(torch::Tensor x) {{
    mark<<<1, 1>>>(x.data_ptr<float>());
    return at::{fn}({arg});
}}
"""
ext = load_inline(name="h01_source_template", cpp_sources="torch::Tensor apply(torch::Tensor x);",
                  cuda_sources=TEMPLATE.format(fn="relu", arg="x"), functions=["apply"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.apply(x)
