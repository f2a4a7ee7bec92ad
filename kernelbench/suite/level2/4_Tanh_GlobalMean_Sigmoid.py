# L2/4 Tanh + global mean + Sigmoid: y[b] = sigmoid(mean(tanh(x[b]))) over C x H x W, one value per sample.
# Trap H15/H16: for x ~ U[0,1) every output is sigmoid(ln cosh 1) ~ 0.60678 within ~2e-4, so a constant passes.
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The mean over ~1M values per sample averages the input's randomness away.
        return torch.sigmoid(torch.tanh(x).mean(dim=(1, 2, 3)))


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
