# L2/5 Conv2d + ReLU returning a tuple: (feature map, its global average pool per channel).
# Trap: the output is a tuple of two tensors of different shapes; both are compared.
import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor):
        features = torch.relu(self.conv(x))
        pooled = features.mean(dim=(2, 3))
        return features, pooled


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
