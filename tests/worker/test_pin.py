# test_pin.py - Worker.pin (eval.timing_cpu): every thread of the worker, those started before the pin
# included, lands on the one CPU; new threads inherit it; cpu -1 puts them all back. Runs in a fresh
# interpreter so the test process's own affinity is never touched.
# tier: fast (no evaluation: tests/README.md)
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DRIVER = r"""
import json, os, sys, threading
sys.path.insert(0, %(worker)r)
import worker
w = worker.Worker()
stop = threading.Event()
started = threading.Thread(target=stop.wait); started.start()   # a thread older than the pin
before = sorted(os.sched_getaffinity(0))
got = w.pin(%(cpu)d)
tids = [int(t) for t in os.listdir("/proc/self/task")]
pinned = {t: sorted(os.sched_getaffinity(t)) for t in tids}
child = {}
t2 = threading.Thread(target=lambda: child.update(cpus=sorted(os.sched_getaffinity(0)))); t2.start(); t2.join()
back = w.pin(-1)
after = {t: sorted(os.sched_getaffinity(t)) for t in tids}
again = w.pin(-1)   # not pinned: nothing to restore
stop.set(); started.join()
print(json.dumps({"before": before, "got": got, "pinned": list(pinned.values()), "child": child["cpus"],
                  "back": back, "after": list(after.values()), "again": again, "threads": len(tids)}))
"""


def run(cpu):
    code = DRIVER % {"worker": str(ROOT / "harness" / "worker"), "cpu": cpu}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU here: a pin cannot be told from no pin")
def test_pin_moves_every_thread_and_back():
    cpu = max(os.sched_getaffinity(0))
    r = run(cpu)
    assert r["threads"] >= 2
    assert r["got"] == [cpu]
    assert all(a == [cpu] for a in r["pinned"]), r
    assert r["child"] == [cpu]                        # a thread started after the pin inherits it
    assert r["back"] == r["before"] and len(r["before"]) >= 2
    assert all(a == r["before"] for a in r["after"]), r
    assert r["again"] is None
