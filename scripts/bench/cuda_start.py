"""cuda_start.py - what starting CUDA on a thread during `import torch` saves (worker.py's start_cuda_early,
imported and run as the worker runs it).

Each round starts two fresh processes, one without and one with the early start, in alternating order, and
prints the seconds from the process's first line to a usable device (a tensor on it), split into the import
and the CUDA step that follows it. Run on a GPU node: python3 scripts/bench/cuda_start.py [ROUNDS]
"""
import os
import subprocess
import sys

WORKER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "worker")

# The worker's own start: importing worker.py starts CUDA on a thread when STITCHBENCH_WORKER_DEVICE is
# set (start_cuda_early), then imports torch; its load joins that thread before torch's CUDA start.
CHILD = r"""
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import worker
import torch
t1 = time.perf_counter()
if worker.CUDA_STARTING is not None:
    worker.CUDA_STARTING.join()
torch.cuda.set_device(0)
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
t2 = time.perf_counter()
print("%.3f %.3f %.3f" % (t1 - t0, t2 - t1, t2 - t0))
"""


def once(mode):
    env = dict(os.environ)
    env.pop("STITCHBENCH_WORKER_DEVICE", None)
    if mode == "early":
        env["STITCHBENCH_WORKER_DEVICE"] = "cuda:0"
    out = subprocess.run([sys.executable, "-c", CHILD, WORKER_DIR], env=env, capture_output=True, text=True,
                         check=True).stdout
    return [float(x) for x in out.split()]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rows = {"plain": [], "early": []}
    for r in range(rounds):
        for mode in (("plain", "early") if r % 2 == 0 else ("early", "plain")):
            rows[mode].append(once(mode))
    print("| start | import torch s | CUDA step after it s | total s |")
    print("|---|---|---|---|")
    for mode, runs in rows.items():
        cols = list(zip(*runs))
        print("| %s | %s |" % (mode, " | ".join("%.3f-%.3f (median %.3f)" % (min(c), max(c), sorted(c)[len(c) // 2])
                                              for c in cols)))


if __name__ == "__main__":
    main()
