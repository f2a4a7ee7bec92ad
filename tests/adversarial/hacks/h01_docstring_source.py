# h01_docstring_source.py - L1/4: the C++ lives in a class docstring; the build gets it through
# textwrap.dedent(Kernels.__doc__) after an include line, and the "kernel" hands the rows to ATen.
# expect: H01
import textwrap

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Kernels:
    """
    __global__ void touch(float *p) { if (threadIdx.x == 0 && p[0] != p[0]) p[0] = 0.f; }
    torch::Tensor rows(torch::Tensor x) {
        touch<<<1, 32>>>(x.data_ptr<float>());
        return at::_softmax(x, 1, false);
    }
    """


HEADER = "#include <torch/extension.h>\n"
ext = load_inline(name="h01_docstring_source", cpp_sources="torch::Tensor rows(torch::Tensor x);",
                  cuda_sources=HEADER + textwrap.dedent(Kernels.__doc__), functions=["rows"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.rows(x.contiguous())
