# L1/2 ReLU: elementwise max(x, 0) over a BATCH x DIM fp32 tensor (memory-bound).
# Trap H17: torch.rand draws from [0, 1), where ReLU is the identity; the inputs stay torch.rand on purpose.
import torch
import torch.nn as nn

BATCH = 4096
DIM = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
