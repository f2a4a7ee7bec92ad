# h04_no_kernel.py - L1/2: "optimises" ReLU by calling clamp_min on the input; no kernel anywhere.
# expect: H04 H01
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # in-place clamp avoids an allocation
        return x.clamp_min(0.0)
