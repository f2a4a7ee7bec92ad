# test_timed_checks.py - the worker's side of "every timed call is a checked call": each timed call's slot
# gets fresh values in the same tensors, its outputs are frozen in sealed memory before the next call runs,
# and a block's inputs can be shipped by the reference worker in one sealed memfd.
import errno
import fcntl
import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import exchange  # noqa: E402
import sbtensors  # noqa: E402
import worker as worker_mod  # noqa: E402

PROBLEM = '''
import torch
import torch.nn as nn
N = 64
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x, k, scale):
        return torch.relu(x) * scale + k.to(x.dtype)
def get_inputs():
    return [torch.randn(N, 8), torch.randint(0, 5, (N, 8)), 3]
def get_init_inputs():
    return []
'''

# returns the same output tensor every call, overwritten: only a snapshot taken at the call sees its values
REUSER = '''
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = None
    def forward(self, x, k, scale):
        y = torch.relu(x) * scale + k.to(x.dtype)
        if self.out is None:
            self.out = torch.empty_like(y)
        self.out.copy_(y)
        return self.out
'''


class FakeChannel:
    def __init__(self):
        self.fds = []

    def take_fds(self, n):
        got, self.fds = self.fds[:n], self.fds[n:]
        return got


@pytest.fixture
def loaded(tmp_path):
    def load(candidate=None):
        problem = tmp_path / "1_Tiny.py"
        problem.write_text(PROBLEM)
        w = worker_mod.Worker()
        w.channel = FakeChannel()
        req = {"cmd": "load", "problem": str(problem), "device": "cpu", "seed": 42}
        if candidate:
            cand = tmp_path / "cand.py"
            cand.write_text(candidate)
            req["candidate"] = str(cand)
        w.cmd_load(req)
        w.cmd_timing_setup({"seeds": [1, 2, 3]})
        return w
    return load


def expected(w, seed):
    torch.manual_seed(seed)
    x, k, scale = w.problem.get_inputs()
    return torch.relu(x) * scale + k.to(x.dtype)


def outputs_of(fd):
    try:
        tensors, _ = sbtensors.load("/proc/self/fd/%d" % fd)
        return tensors["out0"]
    finally:
        os.close(fd)


def test_save_sealed_cannot_change_after_it_returns():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    fd = sbtensors.save_sealed({"out0": t})
    seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    assert seals & fcntl.F_SEAL_WRITE and seals & fcntl.F_SEAL_SHRINK and seals & fcntl.F_SEAL_GROW
    with pytest.raises(OSError) as e:
        os.write(fd, b"x")
    assert e.value.errno == errno.EPERM
    with pytest.raises(OSError):
        os.ftruncate(fd, 0)
    assert torch.equal(outputs_of(fd), t)


def test_cpu_export_is_sealed_and_take_refuses_memory_that_is_not():
    t = torch.randn(5, 7)
    shared, fd = exchange.Exporter().export([t], torch.device("cpu"))
    assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) & exchange.SEALS == exchange.SEALS
    got = exchange.take(fd, shared, torch.device("cpu"), 0)
    assert torch.equal(got[0][1], t)
    # the same layout in a memfd left writable: what a tampered worker would hand over
    loose = os.memfd_create("loose", os.MFD_CLOEXEC)
    os.write(loose, t.numpy().tobytes())
    with pytest.raises(exchange.ExchangeError, match="not sealed"):
        exchange.take(loose, shared, torch.device("cpu"), 0)


def test_timed_calls_get_fresh_values_in_the_same_tensors(loaded):
    w = loaded()
    slot = w.timing_sets[0][0]
    reply = w.cmd_time({"which": "model", "sets": [0, 0, 1], "seeds": [10, 11, 12], "fresh": True,
                        "snapshot": "memfd"})
    assert len(reply["us"]) == 3 and len(w.reply_fds) == 3
    outs = [outputs_of(fd) for fd in w.reply_fds]
    for seed, out in zip([10, 11, 12], outs):
        assert torch.equal(out, expected(w, seed))
    assert w.timing_sets[0][0] is slot                   # the same object ...
    torch.manual_seed(11)
    assert torch.equal(slot, w.problem.get_inputs()[0])   # ... holding the last call's fresh values
    assert not torch.equal(outs[0], outs[1])


def test_each_call_is_frozen_before_the_next_runs(loaded):
    w = loaded(REUSER)
    w.cmd_time({"which": "model", "sets": [0, 1], "seeds": [20, 21], "fresh": True, "snapshot": "memfd"})
    first, second = (outputs_of(fd) for fd in w.reply_fds)
    # the model overwrote its one output tensor in the second call: the first snapshot kept call 0's values
    assert torch.equal(first, expected(w, 20)) and torch.equal(second, expected(w, 21))


def test_shipped_inputs_reach_the_slots_with_every_kind_of_value(loaded):
    ref = loaded()
    ref.cmd_draw({"seeds": [30, 31]})
    assert len(ref.reply_fds) == 1
    shipped_fd = ref.reply_fds[0]
    assert fcntl.fcntl(shipped_fd, fcntl.F_GET_SEALS) & exchange.SEALS == exchange.SEALS
    descr = ref.cmd_draw({"seeds": [30, 31]})  # the same description for the same seeds
    for fd in ref.reply_fds[1:]:
        os.close(fd)
    cand = loaded()
    cand.channel.fds = [shipped_fd]
    cand.cmd_time({"which": "model", "sets": [2, 0], "seeds": [30, 31], "snapshot": "memfd", "inputs": descr})
    assert [torch.equal(outputs_of(fd), expected(cand, s)) for fd, s in zip(cand.reply_fds, [30, 31])] == [True, True]
    x, k, scale = cand.timing_sets[0]
    assert k.dtype == torch.int64 and scale == 3
    torch.manual_seed(31)
    want = cand.problem.get_inputs()
    assert torch.equal(x, want[0]) and torch.equal(k, want[1])


def test_shipped_inputs_without_their_descriptor_are_refused(loaded):
    w = loaded()
    with pytest.raises(worker_mod.WorkerError, match="no descriptor"):
        w.cmd_time({"which": "model", "sets": [0], "seeds": [1], "inputs": {"sets": [[]], "bytes": 0}})
