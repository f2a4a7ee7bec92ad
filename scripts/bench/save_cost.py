#!/usr/bin/env python3
"""save_cost.py - what saving a GPU output for the parent's comparison costs, step by step.

    python3 scripts/bench/save_cost.py [MiB...] [--dirs DIR,DIR...] [--repeat R]

A correctness trial saves the model's outputs as a safetensors file (harness/worker/sbtensors.py) that
the C parent reads; for a level-1 problem of 64-128 MiB of outputs that is most of the trial. This
times, per size and folder (median of R): the copy to the host (pageable, as sbtensors does it, and into a
reused pinned buffer), writing the bytes, and sbtensors.save as a whole.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "harness", "worker"))
import torch  # noqa: E402
import sbtensors  # noqa: E402


def median_s(fn, repeat):
    out = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mib", nargs="*", type=int, default=[64, 128])
    ap.add_argument("--dirs", default="/tmp,/dev/shm")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    for mib in a.mib:
        x = torch.rand(mib << 18, device="cuda")
        pinned = torch.empty(x.numel(), dtype=x.dtype, pin_memory=True)
        rows = [("to('cpu'), pageable", median_s(lambda: x.to("cpu"), a.repeat)),
                ("copy_ into a reused pinned buffer", median_s(lambda: pinned.copy_(x), a.repeat))]
        host = x.to("cpu")
        for d in a.dirs.split(","):
            path = os.path.join(d, "sb_save_cost.bin")

            def write():
                with open(path, "wb") as f:
                    f.write(sbtensors._raw_bytes(host)[1])
            rows.append(("write %d MiB to %s" % (mib, d), median_s(write, a.repeat)))
            st = os.path.join(d, "sb_save_cost.safetensors")
            rows.append(("sbtensors.save to %s" % d, median_s(lambda: sbtensors.save(st, {"out0": x}), a.repeat)))
            for p in (path, st):
                if os.path.exists(p):
                    os.unlink(p)
        for what, s in rows:
            print("%4d MiB  %-45s %7.1f ms  (%.1f GB/s)" % (mib, what, s * 1e3, (mib << 20) / s / 1e9))
    return 0


if __name__ == "__main__":
    sys.exit(main())
