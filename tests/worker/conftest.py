"""Shared by the worker tests: running harness/worker/worker.py over its fd 3/4 protocol (docs/worker.md)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The bundled suite at small shapes (tests/fixtures/suite_small.py writes it): what the worker tests load
# where a problem's size is not what they test.
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import suite_small  # noqa: E402

SMALL_SUITE = suite_small.build()


def start_on_channel(argv, **popen):
    """Starts argv with its command channel on fds 3 (requests) and 4 (replies), a pair of Unix sockets as
    the parent makes them (proc.c). Returns the process and our ends: (proc, requests, replies)."""
    req_parent, req_child = socket.socketpair()
    rep_parent, rep_child = socket.socketpair()

    def channel():  # in the child: fd 3 reads requests, fd 4 writes replies (fresh copies first: no overlap)
        a, b = os.dup(req_child.fileno()), os.dup(rep_child.fileno())
        os.dup2(a, 3)
        os.dup2(b, 4)

    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    # the dup2'd fds 3 and 4 must survive the close_fds sweep that follows preexec_fn
    proc = subprocess.Popen(argv, pass_fds=(3, 4), preexec_fn=channel, **popen)
    req_child.close()
    rep_child.close()
    return proc, req_parent, rep_parent


def run_worker(requests, timeout=120):
    """Runs worker.py with `requests` (then quit) and returns its replies, one per request."""
    proc, req_parent, rep_parent = start_on_channel([sys.executable, str(ROOT / "harness" / "worker" / "worker.py")])
    with req_parent:
        for req in requests + [{"cmd": "quit"}]:
            req_parent.sendall((json.dumps(req) + "\n").encode())
    with rep_parent, rep_parent.makefile("r") as r:
        replies = [json.loads(line) for line in r]
    proc.wait(timeout=timeout)
    return replies


@pytest.fixture
def worker():
    return run_worker
