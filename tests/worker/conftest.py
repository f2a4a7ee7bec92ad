"""Shared by the worker tests: running harness/worker/worker.py over its fd 3/4 protocol (docs/worker.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_worker(requests, timeout=120):
    """Runs worker.py with `requests` (then quit) and returns its replies, one per request."""
    r_req, w_req = os.pipe()
    r_rep, w_rep = os.pipe()

    def channel():  # in the child: fd 3 reads requests, fd 4 writes replies (fresh copies first: no overlap)
        a, b = os.dup(r_req), os.dup(w_rep)
        os.dup2(a, 3)
        os.dup2(b, 4)

    # the dup2'd fds 3 and 4 must survive the close_fds sweep that follows preexec_fn
    proc = subprocess.Popen([sys.executable, str(ROOT / "harness" / "worker" / "worker.py")], pass_fds=(3, 4),
                            preexec_fn=channel, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(r_req)
    os.close(w_rep)
    with os.fdopen(w_req, "w") as w:
        for req in requests + [{"cmd": "quit"}]:
            w.write(json.dumps(req) + "\n")
    with os.fdopen(r_rep) as r:
        replies = [json.loads(line) for line in r]
    proc.wait(timeout=timeout)
    return replies


@pytest.fixture
def worker():
    return run_worker
