# L1/3 Sum over a dimension: reduce a 3-D fp32 tensor over its middle dimension, keeping it as size 1.
# The reduced dimension is not the innermost one, so reads along it are strided (memory-bound).
import torch
import torch.nn as nn

BATCH = 64
ROWS = 512
COLS = 1024
REDUCE_DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.rand(BATCH, ROWS, COLS)]


def get_init_inputs():
    return [REDUCE_DIM]
