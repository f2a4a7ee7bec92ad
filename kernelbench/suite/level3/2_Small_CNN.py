# L3/2 Small CNN: three conv + ReLU + pooling stages and a linear classifier, on a batch of RGB images.
# A mix of compute-bound convolutions and memory-bound ReLU/pooling passes over the same activations.
import torch
import torch.nn as nn

BATCH = 16
IMAGE_SIZE = 128
IN_CHANNELS = 3
NUM_CLASSES = 10


class Model(nn.Module):
    def __init__(self, in_channels: int, num_classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 128, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, NUM_CLASSES]
