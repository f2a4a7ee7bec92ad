# L2/1 Linear + bias + GELU: y = gelu(x @ W^T + b), a GEMM whose epilogue can absorb bias and activation.
# GELU is the exact (erf) form, the nn.GELU default; a tanh approximation differs by up to ~1e-3.
import torch
import torch.nn as nn

BATCH = 5120
IN_FEATURES = 128
OUT_FEATURES = 1024


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.linear(x))


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
