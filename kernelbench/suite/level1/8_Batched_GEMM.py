# L1/8 Batched GEMM: C[b] = A[b] @ B[b] for a batch of rectangular fp32 matrices (torch.bmm).
# M, K and N all differ (384, 256, 512), so a kernel that mixes up the three dimensions fails.
import torch
import torch.nn as nn

BATCH = 16
M = 384
K = 256
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.rand(BATCH, M, K), torch.rand(BATCH, K, N)]


def get_init_inputs():
    return []
