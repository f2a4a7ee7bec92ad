# L3/1 MLP: a per-point MLP (as in PointNet or NeRF) over a large batch of narrow fp32 feature vectors.
# Layers are 64 wide, so eager mode is memory-bound; keeping each point's activations on chip is the win.
import torch
import torch.nn as nn

NUM_POINTS = 65536
IN_FEATURES = 32
HIDDEN_SIZES = [64, 64]
OUT_FEATURES = 16


class Model(nn.Module):
    def __init__(self, in_features: int, hidden_sizes: list, out_features: int):
        super().__init__()
        layers = []
        width = in_features
        for hidden in hidden_sizes:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, out_features))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.rand(NUM_POINTS, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN_SIZES, OUT_FEATURES]
