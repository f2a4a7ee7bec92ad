# L1/5 LayerNorm: nn.LayerNorm over the hidden dimension of a BATCH x SEQ x HIDDEN fp32 tensor.
# Includes the learned elementwise affine (weight, bias); eps is the nn.LayerNorm default, 1e-5.
import torch
import torch.nn as nn

BATCH = 32
SEQ = 512
HIDDEN = 1024


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.rand(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
