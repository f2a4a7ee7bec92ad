#!/usr/bin/env python3
# prof_overhead.py - what profiling costs a timed call of ~100 us (for BENCHMARKS.md and gpu-check's
# section prof): the evaluator's own timed calls (worker.py) of one custom kernel, in rounds of a block without
# libstitchprof and a block with it recording; the verdict is the median over rounds of on/off.
# Two measurements: PROF_OVERHEAD_GPU queues a device-side spin before each call's start event, so the GPU
# never waits for the host and the number is what profiling adds to the kernel's own time on the GPU;
# PROF_OVERHEAD_HOST times as the evaluator does, where CUPTI's slower launches show up too.
import argparse
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "harness", "worker"))
import torch  # noqa: E402
from worker import Worker  # noqa: E402


def kernel_durations(trace, name_part):
    """Durations in us of the kernels whose name holds name_part, from a libstitchprof trace (docs/trace.md)."""
    names, out = {}, []
    with open(trace) as f:
        for line in f:
            p = line.split()
            if p and p[0] == "name":
                names[p[1]] = p[2]
            elif p and p[0] == "kernel" and name_part in names.get(p[1], ""):
                out.append((int(p[3]) - int(p[2])) / 1000.0)
    return out


def timed_block(w, n, lead_us):
    return w.cmd_time({"which": "model", "sets": list(range(n)), "seeds": [7] * n, "lead_us": lead_us})["us"]


def rounds(w, a, tmp, lead_us, iters):
    """Rounds of one block without and one with a session, the order swapped every round (off-on, on-off),
    the first round discarded; the overhead is the median over rounds of on/off. Measured so because the
    GPU's clock wanders by more than the overhead: of three long blocks (off, on, off), the two "off"
    blocks can lie 11% apart. Returns the report line, or None when profiling cannot start."""
    ratios, ons, offs, durations, dropped = [], [], [], [], 0
    for r in range(a.rounds + 1):
        got = {}
        for side in (("off", "on") if r % 2 == 0 else ("on", "off")):
            if side == "off":
                got["off"] = timed_block(w, a.calls, lead_us)
                continue
            trace = os.path.join(tmp, "trace-%d-%d" % (lead_us, r))
            started = w.cmd_profile_start({"lib": a.lib, "trace": trace})
            if not started.get("available"):
                print("PROF_OVERHEAD_ERROR %s" % started.get("reason"))
                return None
            got["on"] = timed_block(w, a.calls, lead_us)
            stopped = w.cmd_profile_stop({})
            dropped += max(0, stopped.get("dropped", 0))
            if r > 0:
                durations += kernel_durations(trace, "relu_spin")
        if r == 0:
            continue
        ratios.append(statistics.median(got["on"]) / statistics.median(got["off"]))
        ons += got["on"]
        offs += got["off"]
    ratios.sort()
    return ("%.2f%% event_us off %.2f on %.2f (lead %d us; per-round on/off %.4f..%.4f over %d rounds of %d+%d "
            "calls) kernel_us %.2f iters %d dropped %d" % (
                100 * (statistics.median(ratios) - 1), statistics.median(offs), statistics.median(ons), lead_us,
                ratios[0], ratios[-1], len(ratios), a.calls, a.calls,
                statistics.median(durations) if durations else float("nan"), iters, dropped))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lib", default=os.path.join(ROOT, "lib", "libstitchprof.so"))
    ap.add_argument("--target-us", type=float, default=100.0)
    ap.add_argument("--calls", type=int, default=60, help="timed calls per block")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of an off and an on block (plus one discarded)")
    ap.add_argument("--attribution", default="external_correlation,callback",
                    help="libstitchprof attribution modes to measure, comma-separated")
    ap.add_argument("--lead-us", type=int, default=300,
                    help="device-side spin before each call's start event in the GPU-bound measurement")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--ext-dir", default=os.path.join(os.environ["STITCHBENCH_CACHE"], "ext")
                    if os.environ.get("STITCHBENCH_CACHE") else None, help="build cache (default: a new one)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sb-prof-overhead-")
    dev = torch.device(a.device)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "%d.%d" % torch.cuda.get_device_capability(dev))
    w = Worker()
    w.cmd_load({"problem": os.path.join(ROOT, "kernelbench", "suite", "level1", "2_ReLU.py"),
                "candidate": os.path.join(ROOT, "tests", "fixtures", "candidates", "cuda", "relu_spin.py"),
                "device": a.device, "seed": 42, "ext_dir": a.ext_dir or os.path.join(tmp, "ext")})
    l2 = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or (64 << 20))
    w.cmd_timing_setup({"seeds": [11, 12, 13], "flush_bytes": max(2 * l2, 32 << 20)})
    model = w.models["model"]

    def block(n):
        return timed_block(w, n, 0)

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

    # libstitchprof reads STITCHPROF_ATTRIBUTION at each start: both ways of tying calls to trials
    # are measured in this one process, the default (external correlation) first
    for mode in a.attribution.split(","):
        os.environ["STITCHPROF_ATTRIBUTION"] = mode
        suffix = "" if mode == "external_correlation" else "_" + mode.upper()
        for lead_us, tag in ((a.lead_us, "PROF_OVERHEAD_GPU"), (0, "PROF_OVERHEAD_HOST")):
            line = rounds(w, a, tmp, lead_us, iters)
            if line is None:
                return 1
            print("%s%s %s attribution %s" % (tag, suffix, line, mode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
