#!/usr/bin/env python3
# prof_overhead.py - what profiling costs a timed call of ~100 us (for BENCHMARKS.md and gpu-check's
# section prof): the evaluator's own timed calls (worker.py) of one custom kernel, without libstitchprof,
# with it recording, and without again; the verdict is the median CUDA-event time with over without.
import argparse
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "harness", "worker"))
import torch  # noqa: E402
from worker import Worker  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lib", default=os.path.join(ROOT, "lib", "libstitchprof.so"))
    ap.add_argument("--target-us", type=float, default=100.0)
    ap.add_argument("--calls", type=int, default=300, help="timed calls per block (off, on, off)")
    ap.add_argument("--device", default="cuda:0")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sb-prof-overhead-")
    dev = torch.device(a.device)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "%d.%d" % torch.cuda.get_device_capability(dev))
    w = Worker()
    w.cmd_load({"problem": os.path.join(ROOT, "kernelbench", "suite", "level1", "2_ReLU.py"),
                "candidate": os.path.join(ROOT, "tests", "fixtures", "candidates", "cuda", "relu_spin.py"),
                "device": a.device, "seed": 42, "ext_dir": os.path.join(tmp, "ext")})
    l2 = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or (64 << 20))
    w.cmd_timing_setup({"seeds": [11, 12, 13], "flush_bytes": max(2 * l2, 32 << 20)})
    model = w.models["model"]

    def block(n):
        return w.cmd_time({"which": "model", "sets": list(range(n)), "seeds": [7] * n})["us"]

    # make the kernel take about target_us
    iters, t = 0, 0.0
    for _ in range(12):
        model.iters = iters
        block(10)
        t = statistics.median(block(30))
        if t >= 0.95 * a.target_us:
            break
        iters = max(16, int((iters or 16) * min(4.0, max(1.2, a.target_us / max(t, 1.0)))))
    block(50)
    off1 = block(a.calls)
    trace = os.path.join(tmp, "trace")
    started = w.cmd_profile_start({"lib": a.lib, "trace": trace})
    if not started.get("available"):
        print("PROF_OVERHEAD_ERROR %s" % started.get("reason"))
        return 1
    on = block(a.calls)
    stopped = w.cmd_profile_stop({})
    off2 = block(a.calls)

    # the kernel's own duration, from the trace
    names, durations = {}, []
    with open(trace) as f:
        for line in f:
            p = line.split()
            if p and p[0] == "name":
                names[p[1]] = p[2]
            elif p and p[0] == "kernel" and "relu_spin" in names.get(p[1], ""):
                durations.append((int(p[3]) - int(p[2])) / 1000.0)
    m_off = statistics.median(off1 + off2)
    m_on = statistics.median(on)
    drift = statistics.median(off2) / statistics.median(off1) - 1
    print("PROF_OVERHEAD %.2f%% event_us off %.2f on %.2f (off before %.2f, after %.2f, drift %+.2f%%) "
          "kernel_us %.2f iters %d calls %d dropped %d" % (
              100 * (m_on / m_off - 1), m_off, m_on, statistics.median(off1), statistics.median(off2), 100 * drift,
              statistics.median(durations) if durations else float("nan"), iters, len(on), stopped.get("dropped", -1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
