# h06_precompute_thread_cpu.py - L1/2: the first call starts a helper thread, spelled `thread(f)` under
# `using namespace std`, that keeps the ReLU of every input slot it has seen ready between calls (it
# recomputes a slot whenever the slot's version counter moved); a call whose slot is ready returns the
# kept result. The work runs while no call is in flight, so the timer never sees it, and a thread born in
# the first call looks like a thread pool. The parent reads the process's CPU time while it is idle.
# device: cpu
# expect: H06
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#include <atomic>
#include <mutex>
#include <vector>
using namespace std;

struct Ready {
    torch::Tensor x, y;
    int64_t version = -1;
};

static mutex mu;
static vector<Ready> seen;
static atomic<bool> running{false};

static torch::Tensor relu_of(const torch::Tensor &x) {
    auto y = torch::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); i++)
        out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}

static void keep_ready() {
    for (;;) {
        vector<Ready> now;
        {
            lock_guard<mutex> g(mu);
            now = seen;
        }
        for (size_t i = 0; i < now.size(); i++) {
            int64_t v = now[i].x._version();
            if (v == now[i].version)
                continue;
            auto y = relu_of(now[i].x);
            if (now[i].x._version() != v)
                continue; /* written meanwhile: try again */
            lock_guard<mutex> g(mu);
            seen[i].y = y;
            seen[i].version = v;
        }
        this_thread::yield();
    }
}

torch::Tensor relu_fwd(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
    {
        lock_guard<mutex> g(mu);
        for (auto &r : seen)
            if (r.x.data_ptr() == x.data_ptr() && r.version == x._version() && r.y.defined())
                return r.y;
        bool known = false;
        for (auto &r : seen)
            known = known || r.x.data_ptr() == x.data_ptr();
        if (!known)
            seen.push_back(Ready{x, torch::Tensor(), -1});
    }
    if (!running.exchange(true))
        thread(keep_ready).detach();
    return relu_of(x);
}
"""

ext = load_inline(name="sb_corpus_precompute_thread", cpp_sources=CPP, functions=["relu_fwd"], extra_cflags=["-O2"],
                  verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_fwd(x.contiguous())
