"""The worker's profiling on a CPU-only machine: every request is answered, nothing raises.

Without a GPU, profile_start must say why profiling is unavailable (no CUDA device, a library that does
not load), timed calls carry no trial ids, and the NVTX decorator leaves functions unchanged. The GPU path
is checked by scripts/gpu-check.sh (section prof).
Run with: /usr/bin/python3 -m pytest -q tests/worker/test_profiler.py
"""

import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import profiler  # noqa: E402
from conftest import SMALL_SUITE  # noqa: E402

LIB = ROOT / "lib" / "libstitchprof.so"


def test_nvtx_range_passes_results_and_errors_through():
    @profiler.nvtx_range("check")
    def f(x, y=1):
        """doc"""
        if x < 0:
            raise ValueError("negative")
        return x + y

    assert f(2, y=3) == 5
    assert f.__name__ == "f" and f.__doc__ == "doc"
    with pytest.raises(ValueError):
        f(-1)


def test_tensor_bytes_counts_nested_tensors_only():
    xs = [torch.zeros(4, 8), (torch.zeros(3, dtype=torch.float16), 7), "x"]
    assert profiler.tensor_bytes(xs) == 4 * 8 * 4 + 3 * 2
    assert profiler.tensor_bytes(None) == 0


def test_mapped_objects_lists_only_objects_below_the_folder(tmp_path):
    # this interpreter maps libpython/torch objects, none of them below tmp_path
    assert profiler.mapped_objects(str(tmp_path)) == []
    assert profiler.mapped_objects(None) == []
    torch_dir = os.path.dirname(torch.__file__)
    found = profiler.mapped_objects(torch_dir)
    assert found and all(p.startswith(os.path.realpath(torch_dir)) and ".so" in p for p in found)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only answer")
def test_start_without_a_gpu_says_so():
    p = profiler.Profiler()
    reply = p.start(str(LIB), "/nonexistent/trace")
    assert reply["available"] is False
    assert "CUDA GPU" in reply["reason"]
    assert p.reply() == {}
    assert p.stop()["available"] is False


def test_a_library_that_does_not_load_is_reported(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    bogus = tmp_path / "libstitchprof.so"
    bogus.write_bytes(b"not an ELF file")
    reply = profiler.Profiler().start(str(bogus), str(tmp_path / "t"))
    assert reply["available"] is False
    assert str(bogus) in reply["reason"] and "make" in reply["reason"]


def test_trials_are_numbered_but_not_tagged_without_a_session():
    p = profiler.Profiler()

    class Stream:
        cuda_stream = 0

    for _ in range(3):
        p.begin(Stream())
        p.end()
    assert p.trial == 3 and not p.open
    assert p.reply() == {}


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only answer")
def test_the_worker_answers_profile_requests_on_the_cpu(tmp_path, worker):
    problem = SMALL_SUITE / "level1" / "2_ReLU.py"
    replies = worker([
        {"cmd": "load", "problem": str(problem), "device": "cpu", "seed": 42},
        {"cmd": "timing_setup", "seeds": [1, 2]},
        {"cmd": "profile_start", "lib": str(LIB), "trace": str(tmp_path / "trace")},
        {"cmd": "time", "which": "model", "sets": [0], "seeds": [5]},
        {"cmd": "profile_stop", "objects_under": str(tmp_path)},
    ])
    assert [r["ok"] for r in replies] == [True] * 6, replies
    start, timed, stop = replies[2], replies[3], replies[4]
    assert start["available"] is False and "CUDA GPU" in start["reason"]
    assert "trials" not in timed and timed["us"][0] > 0
    assert stop["available"] is False
    assert stop["io_bytes"] > 0  # the inputs of set 0 and the outputs of the timed call


def test_the_ncu_target_runs_its_calls_on_the_cpu():
    """What `profile --ncu` runs under Nsight Compute must speak the worker's current protocol: it once
    asked for timed calls in a form the worker had dropped, and exited 1 under ncu on the GPU."""
    import subprocess
    r = subprocess.run([sys.executable, str(ROOT / "harness" / "worker" / "ncu_target.py"),
                        "--problem", str(SMALL_SUITE / "level1" / "2_ReLU.py"),
                        "--device", "cpu", "--calls", "3"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only answer")
def test_the_worker_answers_metrics_requests_on_the_cpu(tmp_path, worker):
    problem = SMALL_SUITE / "level1" / "2_ReLU.py"
    replies = worker([
        {"cmd": "load", "problem": str(problem), "device": "cpu", "seed": 42},
        {"cmd": "timing_setup", "seeds": [1, 2]},
        {"cmd": "metrics_start", "lib": str(LIB), "out": str(tmp_path / "m")},
        {"cmd": "time", "which": "model", "sets": [0], "seeds": [5]},
        {"cmd": "metrics_stop"},
    ])
    assert [r["ok"] for r in replies] == [True] * 6, replies
    start, timed, stop = replies[2], replies[3], replies[4]
    assert start["available"] is False and "CUDA GPU" in start["reason"]
    assert timed["us"][0] > 0
    assert stop["available"] is False and "no metrics session" in stop["reason"]
    assert not (tmp_path / "m").exists()


def test_a_metrics_session_excludes_a_trace_and_marks_the_calls(monkeypatch):
    """Launch callbacks and replays would disturb a trace, so the two never run together; while metrics
    run, each timed call is bracketed for the library, so its launches are told from the ones around it."""
    marks = []

    class Lib:
        def stitchprof_metrics_mark(self, on):
            marks.append(on)

    class Stream:
        cuda_stream = 0

    p = profiler.Profiler()
    p.lib, p.metrics = Lib(), True
    assert p.start("/nonexistent", "/nonexistent")["available"] is False
    assert "already running" in p.start("/nonexistent", "/nonexistent")["reason"]
    p.begin(Stream())
    p.end()
    assert marks == [1, 0]
    p.metrics, p.active = False, True
    assert "already running" in p.metrics_start("/nonexistent", "/nonexistent")["reason"]
