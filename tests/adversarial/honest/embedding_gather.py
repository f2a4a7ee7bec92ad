# embedding_gather.py - L1/7: a row-gather kernel over int64 token ids; checks dtypes against
# torch.int64 and torch.float32 without computing anything with them.
# expect: clean
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void gather_rows(const int64_t *ids, const float4 *table, float4 *out, int64_t n, int dim4) {
    int64_t t = blockIdx.x;
    if (t >= n) return;
    const float4 *src = table + ids[t] * dim4;
    for (int i = threadIdx.x; i < dim4; i += blockDim.x) out[t * dim4 + i] = src[i];
}
torch::Tensor embed(torch::Tensor ids, torch::Tensor table) {
    TORCH_CHECK(ids.scalar_type() == at::kLong, "ids must be int64");
    auto sizes = ids.sizes().vec();
    sizes.push_back(table.size(1));
    auto out = torch::empty(sizes, table.options());
    int dim4 = table.size(1) / 4;
    gather_rows<<<ids.numel(), 128, 0, at::cuda::getCurrentCUDAStream()>>>(ids.data_ptr<int64_t>(),
        reinterpret_cast<const float4 *>(table.data_ptr<float>()), reinterpret_cast<float4 *>(out.data_ptr<float>()),
        ids.numel(), dim4);
    return out;
}
"""
emb = load_inline(name="honest_embedding", cpp_sources="torch::Tensor embed(torch::Tensor ids, torch::Tensor table);",
                  cuda_sources=SRC, functions=["embed"])


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids):
        if ids.dtype != torch.int64 or self.table.weight.dtype != torch.float32:
            raise TypeError("expects int64 ids and an fp32 table")
        return emb.embed(ids.contiguous(), self.table.weight)
