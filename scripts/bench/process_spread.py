#!/usr/bin/env python3
# process_spread.py - a diagnostic for timing fidelity on a GPU node: is a model's GPU time a property of
# the process that runs it? Starts P processes one after another; each loads the bundled problem (same
# seeds), times it with the evaluator's protocol (L2 flush, a device-side lead longer than the host's
# launch, CUDA events), then times a second copy of the model and inputs built at other addresses, then
# the first copy again, then the first copy on four new streams. If the medians differ between processes
# by more than within one, a kept reference worker carries its process's bias into every sample of a
# problem (BENCHMARKS.md, a launch-bound model's GPU time).
#
# Usage: python3 scripts/bench/process_spread.py kernelbench/suite/level3/3_Transformer_Block.py [P] [calls]
# SPREAD_BLOCKING=1 also times eight blocking streams (cudaStreamCreate), blocks rotated between them.
# SPREAD_MOVE=1 also times the first copy after moving the activations: the cached blocks are freed and a
# pad of k*3 MiB+1 is allocated in front of them, for 8 pads; prints each pad's median and their mean.
# SPREAD_RELOAD=1 also frees the model and inputs and loads them again, 6 times, timing each load (as the
# evaluator's candidate worker does when it unloads the reference and loads the candidate);
# prints each median and their spread (max/min).
# SPREAD_COMPANION=1 keeps a second process with a CUDA context of its own alive, idle, the whole time (as
# the evaluator's other worker is while one side is timed).
# Every process also times a probe first: 200 one-element adds queued behind a spin (launch-bound, no model).
# SPREAD_PIN=N runs every process on CPU N only (from before `import torch`, so the driver's host-side
# allocations are first touched there); SPREAD_PIN=rotate puts process i on CPU i*5 mod the CPUs it may use.
import copy, ctypes, os, statistics, subprocess, sys, time

LEAD_US = 5000  # above every bundled problem's host time per call on a GPU node (L3/4: ~1000-1900 us)


def median_us(model, sets, flush, n, stream=None):
    import torch
    xs_all = []
    with torch.no_grad(), torch.cuda.stream(stream or torch.cuda.current_stream()):
        for i in range(n):
            flush.zero_()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(int(LEAD_US * 2000))
            a.record()
            model(*sets[i % len(sets)])
            b.record()
            b.synchronize()
            xs_all.append(a.elapsed_time(b) * 1000)
    xs_all = xs_all[n // 10:]  # the first tenth is warm-up
    return statistics.median(xs_all), statistics.pstdev(xs_all) / statistics.mean(xs_all)


def pin(i):
    how = os.environ.get("SPREAD_PIN")
    if not how:
        return
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[(i * 5) % len(cpus)]} if how == "rotate" else {int(how)})


def probe_us(n=60):
    import torch
    x = torch.ones(1, device="cuda")
    xs = []
    for _ in range(n):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(3000 * 2000))
        a.record()
        for _ in range(200):
            x.add_(1)
        b.record()
        b.synchronize()
        xs.append(a.elapsed_time(b) * 1000)
    return statistics.median(xs[n // 5:])


def child(path, n):
    import torch
    probe = probe_us()
    from timing_probe import FLUSH_BYTES, load
    model, sets = load(path)
    flush = torch.empty(FLUSH_BYTES // 4, device="cuda")
    shift = torch.empty(12345 * 1024 + 4096, dtype=torch.uint8, device="cuda")  # moves the next allocations
    model2 = copy.deepcopy(model)
    sets2 = [[x.clone() if isinstance(x, torch.Tensor) else x for x in s] for s in sets]
    del shift
    a = median_us(model, sets, flush, n)
    b = median_us(model2, sets2, flush, n)
    c = median_us(model, sets, flush, n)
    # on streams of its own: a stream is a hardware queue of its own (one of CUDA_DEVICE_MAX_CONNECTIONS)
    streams = " ".join("%.2f" % median_us(model, sets, flush, n, torch.cuda.Stream())[0] for _ in range(4))
    if os.environ.get("SPREAD_BLOCKING"):  # blocking streams of cudaStreamCreate, 8 of them, blocks rotated
        rt = ctypes.CDLL(next(l.split()[-1] for l in open("/proc/self/maps") if "libcudart" in l))
        ext = []
        for _ in range(8):
            h = ctypes.c_void_p()
            assert rt.cudaStreamCreate(ctypes.byref(h)) == 0
            ext.append(torch.cuda.ExternalStream(h.value))
        per = [[] for _ in ext]
        for r in range(n // 10):
            for k, st in enumerate(ext):
                per[k].append(median_us(model, sets, flush, 11, st)[0])
        meds = [statistics.median(p) for p in per]
        streams += "  blocking %s  mean %.2f" % (" ".join("%.2f" % m for m in meds), statistics.mean(meds))
    if os.environ.get("SPREAD_MOVE"):
        meds = []
        for k in range(8):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            pad = torch.empty(k * 3 * 1024 * 1024 + 1, dtype=torch.uint8, device="cuda")
            meds.append(median_us(model, sets, flush, max(n // 2, 40))[0])
            del pad
        streams += "  moved %s  mean %.2f" % (" ".join("%.2f" % m for m in meds), statistics.mean(meds))
    if os.environ.get("SPREAD_RELOAD"):
        import gc
        del model2, sets2
        meds = []
        for k in range(6):
            del model, sets
            gc.collect()
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            model, sets = load(path)
            meds.append(median_us(model, sets, flush, n)[0])
        streams += "  reloaded %s  max/min %.4f" % (" ".join("%.2f" % m for m in meds), max(meds) / min(meds))
    print("probe %7.2f  pid %6d cpu %s  first %8.2f (cv %.3f)  copy %8.2f (cv %.3f)  first again %8.2f (cv %.3f)  new streams %s" % (
        probe, os.getpid(), ",".join(map(str, sorted(os.sched_getaffinity(0)))), a[0], a[1], b[0], b[1], c[0], c[1], streams), flush=True)
    return a[0], b[0], c[0]


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return
    path = os.path.abspath(sys.argv[1])  # the children run in this folder
    procs = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    print("== %s: %d processes, %d calls per measurement, lead %d us" % (os.path.basename(path), procs, n, LEAD_US),
          flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    firsts, copies = [], []
    companion = None
    if os.environ.get("SPREAD_COMPANION"):
        companion = subprocess.Popen([sys.executable, "-c", "import sys, torch; x = torch.ones(1 << 20, device='cuda'); "
                                      "torch.cuda.synchronize(); print('ready', flush=True); sys.stdin.read()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        print("companion:", companion.stdout.readline().strip(), flush=True)
    for i in range(procs):
        t = time.time()
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path, str(n)], cwd=here,
                             capture_output=True, text=True, preexec_fn=lambda i=i: pin(i))
        line = out.stdout.strip().splitlines()[-1:] or ["failed: " + out.stderr[-300:]]
        print(line[0], " (%.1f s)" % (time.time() - t), flush=True)
        if line[0].startswith("probe"):
            f = line[0].split()
            firsts.append(float(f[7]))
            copies.append(float(f[11]))
    if companion:
        companion.stdin.close()
        companion.wait()
    if firsts:
        lo, hi = min(firsts), max(firsts)
        within = statistics.median(abs(a - b) / a for a, b in zip(firsts, copies))
        print("across processes: %.2f-%.2f us (max/min %.4f); within a process, first vs copy: median |diff| %.4f" % (
            lo, hi, hi / lo, within), flush=True)


if __name__ == "__main__":
    main()
