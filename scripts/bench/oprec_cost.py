#!/usr/bin/env python3
"""oprec_cost.py - what the CPU's record of ATen operators (harness/worker/oprec.cpp) costs a candidate's
call: per operator, without the recorder, with it installed and its window closed (between calls), and
with its window open (inside a call, where each outermost operator is written to the pipe, but for the
quiet ones the harness names, such as torch.empty_like, which are counted in the process). Builds the
recorder for this interpreter's torch first (harness/worker/oprec_build.py).

Each configuration runs in a fresh process (the callback, once installed, stays), alternating, ROUNDS
times; per configuration the median over rounds of the mean time per operator is printed, for a memory
utility (torch.empty_like on 16 floats) and a compute operator (torch.relu on 16 floats).

Usage: python3 scripts/bench/oprec_cost.py [ROUNDS] [CALLS]
"""
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

CHILD = r"""
import ctypes, os, sys, time
import torch
mode, lib, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
x = torch.ones(16)
rec = None
if mode != "none":
    r, w = os.pipe()
    os.set_blocking(w, False)
    rec = ctypes.CDLL(lib)
    rec.sb_oprec_quiet(b"aten::empty_like")  # as the harness names it: counted in the process, never written
    rec.sb_oprec_install(w)
    # a reader, so the pipe never fills: the cost measured is the recorder's, not a full pipe's
    import threading
    threading.Thread(target=lambda: [os.read(r, 1 << 20) for _ in iter(int, 1)], daemon=True).start()
out = []
for op in (torch.empty_like, torch.relu):
    for _ in range(1000):
        op(x)
    if mode == "open":
        rec.sb_oprec_open()
    t0 = time.perf_counter()
    for _ in range(calls):
        op(x)
    t1 = time.perf_counter()
    if mode == "open":
        rec.sb_oprec_close()
    out.append((t1 - t0) / calls * 1e6)
print(" ".join("%.3f" % u for u in out))
"""


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    lib = os.path.join(tempfile.mkdtemp(), "oprec.so")
    subprocess.run([sys.executable, os.path.join(ROOT, "harness/worker/oprec_build.py"),
                    os.path.join(ROOT, "harness/worker/oprec.cpp"), lib], check=True, stderr=subprocess.DEVNULL)
    modes = ["none", "installed", "open"]
    got = {m: [] for m in modes}
    for _ in range(rounds):
        for m in modes:
            line = subprocess.run([sys.executable, "-c", CHILD, m, lib, str(calls)], check=True, capture_output=True,
                                  text=True).stdout.split()
            got[m].append([float(v) for v in line])
    print("us per operator (median of %d rounds of %d calls): empty_like, relu" % (rounds, calls))
    for m in modes:
        print("  %-9s %7.3f %7.3f" % (m, statistics.median(r[0] for r in got[m]), statistics.median(r[1] for r in got[m])))


if __name__ == "__main__":
    main()
