# test_timed_host.py - what the worker says about the host's side of each timed call: the `time` reply
# carries the host's microseconds per call beside the measured ones, and on a GPU the automatic lead
# (eval.timing_lead_us = -1) is sized from the host's recent calls, within its bounds.
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import worker as worker_mod  # noqa: E402
from conftest import SMALL_SUITE as SUITE  # noqa: E402


def test_time_reply_has_the_hosts_time_per_call(worker):
    problem = str(SUITE / "level1" / "2_ReLU.py")
    replies = worker([
        {"cmd": "load", "problem": problem, "device": "cpu", "seed": 42},
        {"cmd": "timing_setup", "seeds": [1, 2]},
        {"cmd": "warmup", "which": "model", "min_ms": 0, "min_calls": 1},
        {"cmd": "time", "which": "model", "sets": [0, 1, 0], "seeds": [5, 6, 7], "lead_us": -1, "gc": False},
    ])
    assert all(r["ok"] for r in replies), replies
    t = replies[3]
    assert len(t["us"]) == 3 and len(t["host_us"]) == 3
    assert t["host_us"] == t["us"]          # on the CPU the host's clock is the clock
    assert all(h > 0 for h in t["host_us"])
    assert t["exposed"] == 0 and t["lead_us"] == 0  # no device queue to lead on the CPU


def test_auto_lead_follows_the_slowest_recent_call():
    w = worker_mod.Worker()
    assert w.auto_lead_us("model") == 100                 # nothing seen yet: the floor
    w.host_us["model"] = [200.0, 1000.0, 300.0]
    assert w.auto_lead_us("model") == int(1.5 * 1000 + 50)
    assert w.auto_lead_us("compiled") == 100              # each side has its own history
    w.host_us["model"] = [10.0]
    assert w.auto_lead_us("model") == 100
    w.host_us["model"] = [1e6]
    assert w.auto_lead_us("model") == 50000               # the cap: a call that long is not hidden
