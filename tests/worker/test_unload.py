# test_unload.py - the candidate's worker loads the reference for the process factor (eval.process_factor)
# and unloads it before the candidate: after `unload` nothing of the reference answers (no model, no timing
# inputs, no last outputs), and the same worker then loads and runs another model as a fresh one would.
# `compile` adds torch.compile to a loaded model, or says it cannot.
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import worker as worker_mod  # noqa: E402
from conftest import SMALL_SUITE as SUITE  # noqa: E402


def test_unload_forgets_the_reference_and_the_next_load_runs(worker, tmp_path):
    relu, gemm = str(SUITE / "level1" / "2_ReLU.py"), str(SUITE / "level1" / "1_Square_GEMM.py")
    replies = worker([
        {"cmd": "load", "problem": relu, "device": "cpu", "seed": 42},
        {"cmd": "timing_setup", "seeds": [1, 2]},
        {"cmd": "time", "which": "model", "sets": [0, 1], "gc": False},
        {"cmd": "unload"},
        {"cmd": "time", "which": "model", "sets": [0], "gc": False},      # nothing left to time
        {"cmd": "load", "problem": gemm, "device": "cpu", "seed": 42},
        {"cmd": "run", "seed": 7, "out": str(tmp_path / "b.safetensors")},
    ])
    assert [r["ok"] for r in replies[:4]] == [True] * 4, replies
    assert replies[3]["poisoned_bytes"] == 0            # the CPU has no device memory to fill
    assert not replies[4]["ok"], replies[4]
    assert replies[5]["ok"] and replies[6]["ok"], replies[5:]
    assert replies[6]["outputs"][0]["shape"] != [], replies[6]


def test_unload_drops_every_reference_object():
    w = worker_mod.Worker()
    w.models = {"model": object(), "compiled": object()}
    w.timing_sets, w.last, w.host_us = [[1]], {"model": 1}, {"model": [1.0]}
    w.flush, w.problem, w.cls = object(), object(), object
    assert w.cmd_unload({}) == {"poisoned_bytes": 0}
    assert (w.models, w.timing_sets, w.last, w.host_us, w.held) == ({}, [], {}, {}, {})
    assert w.flush is None and w.problem is None and w.cls is None


def test_compile_after_load(worker):
    replies = worker([
        {"cmd": "load", "problem": str(SUITE / "level1" / "2_ReLU.py"), "device": "cpu", "seed": 42},
        {"cmd": "compile", "warm": True, "seed": 42},
    ])
    assert replies[0]["ok"] and replies[1]["ok"], replies
    import torch
    assert replies[1]["compile_available"] == hasattr(torch, "compile")
