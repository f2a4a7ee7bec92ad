# h01_pyobject_callback.py - L2/1: forward hands its nn.Linear and nn.GELU to the extension as Python
# objects, and the C++ calls them through py::object: PyTorch's modules do the work under a kernel's name.
# expect: H01
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void noop() {}
torch::Tensor run(torch::Tensor x, py::object linear, py::object act) {
    noop<<<1, 1>>>();
    auto y = linear(x).cast<torch::Tensor>();
    return act(y).cast<torch::Tensor>();
}
"""
ext = load_inline(name="h01_pyobject_callback",
                  cpp_sources="#include <torch/extension.h>\ntorch::Tensor run(torch::Tensor x, py::object linear, py::object act);",
                  cuda_sources=CUDA, functions=["run"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.act = nn.GELU()

    def forward(self, x):
        return ext.run(x, self.fc, self.act)
