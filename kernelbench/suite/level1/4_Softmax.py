# L1/4 Softmax: row-wise softmax over the last dimension of a BATCH x DIM fp32 tensor.
# Rows are long (4096), so a one-block-per-row kernel needs a max pass, a sum pass and a write pass.
import torch
import torch.nn as nn

BATCH = 4096
DIM = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
