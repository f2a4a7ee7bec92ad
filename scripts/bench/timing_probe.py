#!/usr/bin/env python3
# timing_probe.py - a diagnostic for the timing loop on a GPU node: times one bundled problem's
# forward under several call patterns, so the cause of a spread between identical sides can be found.
#
# Usage: python3 scripts/bench/timing_probe.py kernelbench/suite/level1/1_Square_GEMM.py [calls]
# Prints one line per pattern: median, p25, p75, min (us) and the CV.
import ctypes, importlib.util, multiprocessing as mp, statistics, sys, time

import torch

FLUSH_BYTES = 2 * 60 * 1024 * 1024 * 2


def load(path):
    spec = importlib.util.spec_from_file_location("p", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    torch.manual_seed(42)
    with torch.device("cuda"):
        model = m.Model(*m.get_init_inputs())
    model = model.cuda().eval()
    sets = []
    for s in range(4):
        torch.manual_seed(s)
        with torch.device("cuda"):
            sets.append([x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()])
    return model, sets


def cudart():
    with open("/proc/self/maps") as f:
        for p in sorted({line.split()[-1] for line in f if "libcudart" in line}):
            lib = ctypes.CDLL(p)
            if hasattr(lib, "cudaCtxResetPersistingL2Cache"):
                return lib
    return None


class Timer:
    def __init__(self, path):
        self.model, self.sets = load(path)
        self.flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
        self.rt = cudart()
        self.k = 0

    def call(self, xs):
        with torch.no_grad():
            return self.model(*xs)

    def one(self, prime=False, reset=False, flush=True, gap=0.0, sync_before=False, prime_ms=0):
        if gap:
            time.sleep(gap)
        xs = self.sets[self.k % 4]
        if prime:
            self.call(self.sets[(self.k + 3) % 4])
        t0 = time.perf_counter()
        while prime_ms and (time.perf_counter() - t0) * 1000 < prime_ms:
            self.call(self.sets[(self.k + 3) % 4])
            torch.cuda.synchronize()
        if reset and self.rt is not None:
            self.rt.cudaCtxResetPersistingL2Cache()
        if flush:
            self.flush.zero_()
        if sync_before:
            torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        self.call(xs)
        b.record()
        b.synchronize()
        torch.cuda.synchronize()
        self.k += 1
        return a.elapsed_time(b) * 1000.0


def summary(name, xs):
    xs = sorted(xs)
    q = lambda f: xs[min(len(xs) - 1, int(f * len(xs)))]
    cv = statistics.pstdev(xs) / statistics.mean(xs)
    print("%-34s median %8.1f  p25 %8.1f  p75 %8.1f  min %8.1f  cv %.3f" % (name, q(0.5), q(0.25), q(0.75), xs[0], cv),
          flush=True)


def partner(path, conn):
    t = Timer(path)
    for _ in range(10):
        t.one()
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg == "quit":
            break
        conn.send(t.one(prime=msg == "prime", reset=True))


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    t = Timer(path)
    for _ in range(20):
        t.one()
    print("== %s" % path)
    patterns = [
        ("back-to-back, flush", {}),
        ("back-to-back, flush+reset", {"reset": True}),
        ("back-to-back, no flush", {"flush": False}),
        ("sync before start", {"sync_before": True}),
        ("gap 2ms", {"gap": 0.002}),
        ("gap 2ms + prime", {"gap": 0.002, "prime": True}),
        ("gap 20ms", {"gap": 0.02}),
        ("gap 20ms + prime", {"gap": 0.02, "prime": True}),
        ("gap 20ms + prime 1ms", {"gap": 0.02, "prime_ms": 1}),
        ("gap 20ms + prime 2ms", {"gap": 0.02, "prime_ms": 2}),
        ("gap 20ms + prime 5ms", {"gap": 0.02, "prime_ms": 5}),
        ("gap 20ms + prime 10ms", {"gap": 0.02, "prime_ms": 10}),
    ]
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    for name, kw in patterns:
        if only and not any(name.startswith(o) for o in only):
            continue
        summary(name, [t.one(**kw) for _ in range(n)])
    # Two processes on the GPU, alternating single calls, as the evaluator does.
    ctx = mp.get_context("spawn")
    a, b = ctx.Pipe()
    p = ctx.Process(target=partner, args=(path, b))
    p.start()
    a.recv()
    for prime in (False, True):
        mine, theirs = [], []
        for i in range(n):
            if i % 2:
                mine.append(t.one(prime=prime, reset=True))
                a.send("prime" if prime else "plain")
                theirs.append(a.recv())
            else:
                a.send("prime" if prime else "plain")
                theirs.append(a.recv())
                mine.append(t.one(prime=prime, reset=True))
        tag = "prime" if prime else "plain"
        summary("2 procs alternating, %s: mine" % tag, mine)
        summary("2 procs alternating, %s: theirs" % tag, theirs)
        summary("2 procs, %s: mine when first" % tag, mine[1::2])
        summary("2 procs, %s: mine when second" % tag, mine[0::2])
    a.send("quit")
    p.join()


if __name__ == "__main__":
    main()
