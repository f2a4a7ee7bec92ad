# L3/3 Transformer block (pre-norm): x + MHSA(LN(x)), then x + MLP(LN(x)) with GELU; no mask, no dropout.
# Attention is written with basic ops (QKV projection, softmax(QK^T / sqrt(d_head)) V); long sequence, small heads.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1
SEQ_LEN = 1024
D_MODEL = 128
N_HEADS = 4
MLP_RATIO = 4


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int, mlp_ratio: int):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.shape
        # (batch, seq, 3 * d_model) -> three tensors of shape (batch, heads, seq, head_dim)
        qkv = self.qkv(self.ln1(x)).reshape(batch, seq, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        attn = attn.transpose(1, 2).reshape(batch, seq, d_model)
        x = x + self.proj(attn)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def get_inputs():
    return [torch.rand(BATCH, SEQ_LEN, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, N_HEADS, MLP_RATIO]
