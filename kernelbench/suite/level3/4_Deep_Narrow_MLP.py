# L3/4 Deep narrow MLP: DEPTH tiny Linear(WIDTH, WIDTH) + Tanh layers on a batch of 16 fp32 vectors.
# Launch-bound: two tiny kernels per layer in eager mode, so launch overhead dominates; fusing layers is the win.
import torch
import torch.nn as nn

BATCH = 16
WIDTH = 64
DEPTH = 48


class Model(nn.Module):
    def __init__(self, width: int, depth: int):
        super().__init__()
        # Tanh keeps the activations bounded however deep the stack is.
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.rand(BATCH, WIDTH)]


def get_init_inputs():
    return [WIDTH, DEPTH]
