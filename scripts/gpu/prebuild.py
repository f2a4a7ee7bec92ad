#!/usr/bin/env python3
"""prebuild.py - builds candidates' load_inline extensions into the evaluator's build cache, many at once.

    python3 scripts/gpu/prebuild.py --ext-dir "$STITCHBENCH_CACHE/ext" [--jobs N] [--headers lite|lean|as-written] [--no-split-nvcc] CANDIDATE.py...

A device session pays for every cold CUDA build; scripts/gpu-check.sh calls this first with the candidates
its sections evaluate one at a time, so their builds run side by side on the node's cores instead of in
turn. Each build happens in its own process exactly as the evaluator's worker would do it (worker.py,
build_only), with the device's arch only, so the evaluator's later load is a cache hit. Prints one line per
file and exits 1 when a build failed (the section that uses it then reports the compile error itself).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from worker import Worker
r = Worker().cmd_load({"problem": sys.argv[2], "candidate": sys.argv[3], "device": sys.argv[4], "seed": 42,
                       "ext_dir": sys.argv[5], "build_only": True,
                       "lean_headers": sys.argv[6] in ("lite", "lean"), "lite_headers": sys.argv[6] == "lite",
                       "split_nvcc": sys.argv[7] == "split"})
print(json.dumps(r))
"""


def shown(path):
    """The path as a reader of the log wants it: inside the repository relative to it, else its name."""
    rel = os.path.relpath(path, ROOT)
    return os.path.basename(path) if rel.startswith("..") else rel


def build(path, a, env):
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", DRIVER, os.path.join(ROOT, "harness", "worker"),
                        os.path.join(ROOT, "kernelbench", "suite", "level1", "2_ReLU.py"), path, a.device,
                        a.ext_dir, a.headers, "split" if a.split_nvcc else "whole"],
                       capture_output=True, text=True, env=env)
    last = (r.stdout.strip().splitlines() or ["{}"])[-1]
    try:
        builds = json.loads(last).get("builds", [])
    except ValueError:
        builds = []
    cached = all(b.get("cached") for b in builds) if builds else False
    steps = " ".join("%s headers: " % (b.get("headers") or ("lean" if b.get("lean_headers") else "as-written")) +
                     " ".join("%s %.1f s" % (k, v) for k, v in sorted((b.get("steps") or {}).items()))
                     for b in builds if not b.get("cached"))
    # the cache keys and arch, so a later cache miss in the evaluator can be matched against them
    steps += "".join("  key %s arch %s" % (b.get("key"), b.get("arch") or "-") for b in builds)
    return path, r.returncode, time.time() - t0, len(builds), cached, steps, r.stderr.strip().splitlines()[-1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ext-dir", required=True)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--headers", choices=["lite", "lean", "as-written"], default="lite",
                    help="the headers the first build tries (headers.py): lite (the evaluator's default), lean "
                         "(eval.lite_headers = false) or as-written (both false)")
    ap.add_argument("--as-written", dest="headers", action="store_const", const="as-written",
                    help="the same as --headers as-written")
    ap.add_argument("--split-nvcc", action="store_true", default=True,
                    help="compile .cu files through harness/worker/nvcc_split.py (eval.split_nvcc = true, the "
                         "evaluator's default; torch 2.x)")
    ap.add_argument("--no-split-nvcc", dest="split_nvcc", action="store_false",
                    help="compile .cu files with nvcc itself (eval.split_nvcc = false)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    env = dict(os.environ)
    if a.device.startswith("cuda"):
        # The arch exactly as the evaluator sets it (evaluate.c: "major.minor" of the device), whatever the
        # node's environment says: the arch is part of the cache key, and an inherited value (a node that
        # exports TORCH_CUDA_ARCH_LIST=9.0a) would make every prebuilt extension a miss in the evaluator.
        import torch
        env["TORCH_CUDA_ARCH_LIST"] = "%d.%d" % torch.cuda.get_device_capability(torch.device(a.device))
    env["MAX_JOBS"] = "2"  # main.cpp and cuda.cu side by side; the pool gives the parallelism
    os.makedirs(a.ext_dir, exist_ok=True)
    t0, failed = time.time(), 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for path, rc, secs, n, cached, steps, err in pool.map(lambda p: build(os.path.abspath(p), a, env), a.files):
            failed += rc != 0
            print("prebuild %-4s %6.1f s  %d extension(s)%s  %s%s%s" % ("ok" if rc == 0 else "FAIL", secs, n,
                  " (cached)" if cached else "", shown(path), ": " + err[0] if rc and err else "",
                  "  [ninja: %s]" % steps if steps else ""))
    print("prebuild: %d file(s) in %.1f s with %d jobs, %d failed (%s)" % (len(a.files), time.time() - t0, a.jobs, failed,
                                                                      sys.executable))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
