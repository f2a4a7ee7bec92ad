# L2/3 GELU + Dropout + residual add: y = x + dropout(gelu(x)), nn.Dropout(p=0.2) in training mode.
# Trap: each call draws a fresh dropout mask from torch's RNG, so the reference output is nondeterministic.
import torch
import torch.nn as nn

BATCH = 2048
DIM = 4096
DROPOUT_P = 0.2

# Read by the test suite and the audit: repeated calls give different outputs. A run that reseeds
# torch's global RNG before each call is still reproducible, because Dropout draws from that RNG.
NONDETERMINISTIC = True


class Model(nn.Module):
    def __init__(self, p: float):
        super().__init__()
        self.act = nn.GELU()
        self.dropout = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.dropout(self.act(x))


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [DROPOUT_P]
