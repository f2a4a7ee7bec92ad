#!/usr/bin/env python3
# host_probe.py - a diagnostic for host-bound problems on a GPU node: times one bundled problem's forward
# with the evaluator's protocol (L2 flush, wait, device-side lead, CUDA events) and also the host's own
# wall time for the call (Python and launches), under conditions that might make the host noisy: an
# nvidia-smi monitor, the collector, one CPU, a lead long enough to hide the whole launch.
#
# Usage: python3 scripts/bench/host_probe.py kernelbench/suite/level3/4_Deep_Narrow_MLP.py [calls]
# Prints per condition: device-time median/p25/p75/min/CV and host-time median/min/CV (us).
import gc, os, statistics, subprocess, sys, time

import torch

from timing_probe import FLUSH_BYTES as FLUSH, load  # same folder: the model and input sets, built alike


def stats(xs):
    xs = sorted(xs)
    q = lambda f: xs[min(len(xs) - 1, int(f * len(xs)))]
    return "median %7.1f p25 %7.1f p75 %7.1f min %7.1f cv %.3f" % (q(.5), q(.25), q(.75), xs[0],
                                                                    statistics.pstdev(xs) / statistics.mean(xs))


def run(model, sets, flush, n, lead_us=100, block=10, gap_ms=0.0):
    dev, host = [], []
    with torch.no_grad():
        for i in range(n):
            if i % block == 0:
                if gap_ms:
                    time.sleep(gap_ms / 1000)
                t0 = time.perf_counter()
                while (time.perf_counter() - t0) < 0.005:  # prime 5 ms
                    model(*sets[2]); torch.cuda.synchronize()
            flush.zero_()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if lead_us:
                torch.cuda._sleep(int(lead_us * 2000))
            a.record()
            h0 = time.perf_counter_ns()
            model(*sets[i % 2])
            h1 = time.perf_counter_ns()
            b.record()
            b.synchronize()
            dev.append(a.elapsed_time(b) * 1000)
            host.append((h1 - h0) / 1000)
    return dev, host


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    model, sets = load(path)
    flush = torch.empty(FLUSH // 4, device="cuda")
    run(model, sets, flush, 50)
    print("== %s, %d calls per condition, pid %d, cpus %d" % (os.path.basename(path), n, os.getpid(),
                                                           len(os.sched_getaffinity(0))), flush=True)
    # the lead sweep: does the GPU's own time for the call grow with the idle spin before it (a power
    # state the spin lets the GPU fall into)? L3/4's calls can run ~7% slower some 20 ms after a prime
    conds = [("plain (lead 100)", {}), ("gap 2 ms between blocks", {"gap_ms": 2}), ("lead 0", {"lead_us": 0}),
             ("lead 3000", {"lead_us": 3000}), ("lead 1000", {"lead_us": 1000}), ("lead 10000", {"lead_us": 10000}),
             ("lead 3000, blocks of 3", {"lead_us": 3000, "block": 3})]
    for name, kw in conds:
        d, h = run(model, sets, flush, n, **kw)
        print("%-28s dev %s | host %s" % (name, stats(d), stats(h)), flush=True)
        if "lead" in name and "block" not in kw:  # device time by position in the block of 10
            pos = [statistics.median(d[j::10]) for j in range(10)]
            print("%-28s by position in block: %s" % ("", " ".join("%.1f" % x for x in pos)), flush=True)
    gc.disable()
    d, h = run(model, sets, flush, n)
    gc.enable()
    print("%-28s dev %s | host %s" % ("gc off", stats(d), stats(h)), flush=True)
    mon = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader", "-lms", "200"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    d, h = run(model, sets, flush, n)
    mon.kill()
    print("%-28s dev %s | host %s" % ("nvidia-smi -lms 200", stats(d), stats(h)), flush=True)
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(cpus)})
    d, h = run(model, sets, flush, n)
    os.sched_setaffinity(0, cpus)
    print("%-28s dev %s | host %s" % ("main thread on 1 CPU", stats(d), stats(h)), flush=True)
    d, h = run(model, sets, flush, n)
    print("%-28s dev %s | host %s" % ("plain again", stats(d), stats(h)), flush=True)


if __name__ == "__main__":
    main()
