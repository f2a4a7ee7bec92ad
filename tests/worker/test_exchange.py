# test_exchange.py - shared outputs (eval.exchange = shared, harness/worker/exchange.py) on the CPU, where the
# exported memory is a memfd: one worker's outputs pass as a descriptor to another, which compares them
# with its own and reports compare.c's numbers; and what a candidate's worker claims about the memory it
# shares is checked, never trusted. The statistics' rules are pinned on small tensors whose answers are
# known (NaN, infinities, integers beyond 2^53, the first maximum winning).
import json
import math
import os
import socket
import sys

import pytest
import torch

from conftest import ROOT, SMALL_SUITE, start_on_channel

RELU = str(SMALL_SUITE / "level1" / "2_ReLU.py")  # 256 x 256
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import exchange  # noqa: E402

TOL = {"F32": (1e-4, 1e-4), "F64": (1e-4, 1e-4), "F16": (1e-2, 1e-2), "BF16": (1e-2, 1e-2), "I64": (0.0, 0.0),
       "I32": (0.0, 0.0), "BOOL": (0.0, 0.0)}


class LiveWorker:
    """worker.py on a pair of Unix sockets, as the parent runs it (proc.c), asked one request at a time."""

    def __init__(self):
        self.proc, self.req, self.rep = start_on_channel([sys.executable, str(ROOT / "harness" / "worker" / "worker.py")])
        self.buf = b""
        self.fds = []

    def ask(self, req, fds=()):
        data = (json.dumps(req) + "\n").encode()
        if fds:
            sent = socket.send_fds(self.req, [data], list(fds))
            data = data[sent:]
        self.req.sendall(data)
        while b"\n" not in self.buf:
            chunk, got, _, _ = socket.recv_fds(self.rep, 1 << 16, 8)
            assert chunk, "the worker closed its channel"
            self.buf += chunk
            self.fds.extend(got)
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        self.ask({"cmd": "quit"})
        self.proc.wait(timeout=60)
        for fd in self.fds:
            os.close(fd)


@pytest.fixture
def pair():
    cand, ref = LiveWorker(), LiveWorker()
    for w in (cand, ref):
        assert w.ask({"cmd": "load", "problem": RELU, "device": "cpu", "seed": 42})["ok"]
    yield cand, ref
    cand.close()
    ref.close()


def share(cand, ref, seed, key, shared_edit=None):
    """The candidate's outputs for seed, shared and taken by ref under key: ref's reply."""
    r = cand.ask({"cmd": "run", "seed": seed, "out": key, "exchange": "share"})
    assert r["ok"] and r["fds"] == 1 and len(cand.fds) == 1, r
    shared = r["shared"]
    if shared_edit:
        shared_edit(shared)
    fd = cand.fds.pop(0)
    try:
        return ref.ask({"cmd": "take", "key": key, "shared": shared, "max_bytes": 1 << 30}, [fd])
    finally:
        os.close(fd)


def test_shared_outputs_compare_equal_to_the_reference(pair):
    cand, ref = pair
    assert share(cand, ref, 7, "cand/0")["ok"]
    assert ref.ask({"cmd": "run", "seed": 7, "out": "ref/0", "exchange": "hold"})["ok"]
    assert ref.ask({"cmd": "run", "seed": 8, "out": "ref/1", "exchange": "hold"})["ok"]
    same = ref.ask({"cmd": "compare", "expected": "ref/0", "actual": "cand/0", "tol": TOL})
    assert same["ok"] and same["bitwise"] and same["digest_expected"] == same["digest_actual"], same
    o = same["outputs"][0]
    assert (o["n_mismatched"], o["max_abs"], o["shape"], o["zero_actual"]) == (0, 0.0, [256, 256], False), o
    # another seed's reference: a different digest, and the elements that differ are counted
    other = ref.ask({"cmd": "compare", "expected": "ref/1", "actual": "cand/0", "tol": TOL, "drop": ["ref/1"]})
    assert other["ok"] and not other["bitwise"] and other["digest_expected"] != other["digest_actual"], other
    assert other["outputs"][0]["n_mismatched"] > 1000, other["outputs"][0]
    gone = ref.ask({"cmd": "compare", "expected": "ref/1", "actual": "cand/0", "tol": TOL})
    assert not gone["ok"] and gone["kind"] == "protocol_error", gone


@pytest.mark.parametrize("edit, says", [
    (lambda s: s.update(bytes=s["bytes"] + (1 << 20)), "hold"),                      # more than the memfd holds
    (lambda s: s["outputs"][0].update(offset=1 << 40), "outside"),                    # beyond the buffer
    (lambda s: s["outputs"][0].update(shape=[256, 512]), "wrong size"),              # a shape its bytes do not fill
    (lambda s: s["outputs"][0].update(dtype="C64"), "dtype"),                        # a dtype nobody compares
    (lambda s: s.update(bytes=1 << 31), "allowed"),                                   # above the parent's limit
])
def test_a_false_description_is_refused(pair, edit, says):
    cand, ref = pair
    r = share(cand, ref, 7, "cand/0", edit)
    assert not r["ok"] and r["kind"] == "bad_outputs" and says in r["message"], r
    assert ref.ask({"cmd": "hello", "device": "cpu"})["ok"]  # and the reference worker carries on


def test_take_without_a_descriptor_or_with_a_foreign_one(pair, tmp_path):
    _, ref = pair
    r = ref.ask({"cmd": "take", "key": "x", "shared": {"bytes": 4, "outputs": []}})
    assert not r["ok"] and "no descriptor" in r["message"], r
    p = tmp_path / "short"
    p.write_bytes(b"abc")
    fd = os.open(p, os.O_RDONLY)
    r = ref.ask({"cmd": "take", "key": "x", "shared": {"bytes": 4096, "outputs": []}}, [fd])
    os.close(fd)
    assert not r["ok"] and r["kind"] == "bad_outputs", r


# ---------- the statistics, pinned ----------

def one(e, a, tol=TOL):
    r = exchange.compare_one(e, a, tol)
    return r


def test_nan_and_infinities_follow_compare_c():
    e = torch.tensor([1.0, 2.0, float("inf"), 4.0, float("nan"), 6.0])
    a = torch.tensor([1.0, float("nan"), float("inf"), float("-inf"), float("nan"), 6.5])
    r = one(e, a)
    # NaN against 2.0 (counted as NaN), -inf against 4.0 (inf), NaN against NaN: mismatches; inf == inf passes
    assert (r["n_mismatched"], r["n_nan"], r["n_inf"]) == (4, 1, 1), r
    assert r["max_abs"] == math.inf and r["max_rel"] == math.inf, r
    assert r["worst_index"] == 1, r  # the first non-finite mismatch stays the worst


def test_the_first_maximum_wins_and_a_pass_reports_max_abs():
    e = torch.tensor([0.0, 1.0, 2.0, 3.0])
    a = torch.tensor([0.5, 1.0, 2.5, 3.0])
    r = one(e, a)
    assert (r["n_mismatched"], r["worst_index"], r["max_abs"]) == (2, 0, 0.5), r
    r = one(e, e + 1e-6)
    assert r["n_mismatched"] == 0 and r["worst_index"] >= 0, r


def test_integers_compare_exactly_beyond_2_to_53():
    big = 2 ** 60
    e = torch.tensor([big, 5, -3], dtype=torch.int64)
    a = torch.tensor([big + 1, 5, -3], dtype=torch.int64)
    r = one(e, a)
    assert (r["n_mismatched"], r["worst_index"], r["worst_expected"], r["worst_actual"]) == (1, 0, big, big + 1), r


def test_dtype_and_shape_mismatches_are_reported_not_compared():
    r = one(torch.zeros(4), torch.zeros(4, dtype=torch.float64))
    assert (r["dtype"], r["actual_dtype"]) == ("F32", "F64") and "n_mismatched" not in r, r
    r = one(torch.zeros(2, 3), torch.zeros(3, 2))
    assert (r["shape"], r["actual_shape"]) == ([2, 3], [3, 2]) and "n_mismatched" not in r, r


def test_digest_and_zero_flags():
    z = torch.zeros(5, dtype=torch.float16)
    x = torch.arange(5, dtype=torch.float16)
    s = exchange.stats([("out0", x)], [("out0", x.clone())], TOL)
    assert s["bitwise"] and s["digest_expected"] == s["digest_actual"], s
    s = exchange.stats([("out0", x)], [("out0", x.flip(0))], TOL)  # the same elements in another order
    assert not s["bitwise"] and s["digest_expected"] != s["digest_actual"], s
    s = exchange.stats([("out0", x)], [("out0", z)], TOL)
    assert s["outputs"][0]["zero_actual"] and not s["outputs"][0]["zero_expected"], s
    s = exchange.stats([("out0", x), ("out1", x)], [("out0", x)], TOL)
    assert (s["count"], s["expected_count"]) == (1, 2) and s["outputs"][1]["missing"], s


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_the_cpu_steps_give_what_one_whole_pass_gives(monkeypatch, dtype):
    # the comparison and the digest walk the CPU in small steps; the statistics (first worst element, counts,
    # maxima) and the digest must not depend on where the steps fall
    g = torch.Generator().manual_seed(7)
    e = (torch.randn(10007, generator=g) * 10).to(dtype)
    a = e.clone()
    a[[3, 4100, 9000, 10006]] += torch.tensor([2, 5, 5, 1]).to(dtype)
    if dtype.is_floating_point:  # the first non-finite mismatch is the worst
        e[7017], a[6000], a[6001] = float("inf"), float("nan"), float("-inf")
    whole = (one(e, a), exchange.digest([("out0", e)]), exchange.digest([("out0", a)]))
    monkeypatch.setattr(exchange, "CPU_CHUNK", 1000)  # 11 steps, the last one short
    stepped = (one(e, a), exchange.digest([("out0", e)]), exchange.digest([("out0", a)]))
    assert json.dumps(stepped, sort_keys=True) == json.dumps(whole, sort_keys=True)  # NaN never equals itself
    assert whole[0]["worst_index"] in (6000, 4100, 9000) and whole[1] != whole[2], whole


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the device's fallback to host memory")
def test_outputs_shared_through_the_host_compare_as_on_the_device():
    """The fallback a full device takes (exchange.Exporter): the outputs go out in a sealed memfd marked
    "where": "host", are taken on the device or kept on the host, and compare as the device's copy does."""
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(3)
    e = [torch.randn(1000, 37, device=dev, generator=g), torch.arange(5000, device=dev)]
    a = [e[0].clone(), e[1].clone()]
    a[0][7, 3] += 1.0
    a[1][4000] = -1
    shared, fd = exchange.Exporter().export(a, dev, host=True)
    assert shared["where"] == "host"
    host = exchange.take(fd, shared, torch.device("cpu"), 0)      # kept on the host, as when the device is full
    shared2, fd2 = exchange.Exporter().export(a, dev)
    assert "where" not in shared2
    ondev = exchange.take(fd2, shared2, dev, 0)
    assert host[0][1].device.type == "cpu" and ondev[0][1].device.type == "cuda"
    mine = exchange.held(e)
    r_host, r_dev = exchange.stats(mine, host, TOL), exchange.stats(mine, ondev, TOL)
    assert r_host == r_dev, (r_host, r_dev)
    assert not r_host["bitwise"] and [o["n_mismatched"] for o in r_host["outputs"]] == [1, 1], r_host
    same = exchange.stats(mine, exchange.held([t.cpu() for t in e]), TOL)
    assert same["bitwise"] and all(o["n_mismatched"] == 0 for o in same["outputs"]), same
