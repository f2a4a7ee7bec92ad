# L1/7 Embedding lookup: gather rows of a VOCAB x DIM fp32 table for a BATCH x SEQ tensor of token ids.
# Trap: the input is an int64 index tensor (torch.randint); a loader that casts inputs to float breaks it.
import torch
import torch.nn as nn

VOCAB = 8192
DIM = 512
BATCH = 64
SEQ = 1024


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


def get_inputs():
    return [torch.randint(0, VOCAB, (BATCH, SEQ), dtype=torch.int64)]


def get_init_inputs():
    return [VOCAB, DIM]
