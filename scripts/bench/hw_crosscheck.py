#!/usr/bin/env python3
"""hw_crosscheck.py - `make bench-hw`: the bound class stitchbench gives each kernel (CUPTI range profiler)
beside Nsight Compute's own Speed of Light and Occupancy sections, for bundled references and real
candidates (BENCHMARKS.md, "Hardware metrics").

For each subject it runs `stitchbench profile ... --json`, then ncu on the same program
(harness/worker/ncu_target.py) limited to the kernels the profile measured, so set-up kernels (weight
initialisation, input draws) cost no replays, and prints scripts/bench/ncu_crosscheck.py's table. A
summary line per subject and a total go to stdout; every file to SB_BENCH_OUT (default build/bench/hw).

Environment: SB_HW_REFS (bundled problems, default "L1/1 L1/2 L1/4 L1/6 L2/1 L3/1"), SB_HW_CANDIDATES
(space-separated FILE:L<l>/<id> pairs judged against --kernelbench-root SB_HW_KB, default none),
SB_HW_KB (default ../shared/kernelbench-upstream). Standard library only.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SB = os.path.join(ROOT, "bin", "stitchbench")


def run(argv, out_path, timeout):
    with open(out_path, "w") as out:
        try:
            return subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT if out_path.endswith(".txt") else
                                  subprocess.DEVNULL, timeout=timeout, cwd=ROOT).returncode
        except subprocess.TimeoutExpired:
            return 124


def problem_file(ref, kb):
    """The problem's file, as `stitchbench problems` lists it."""
    argv = [SB, "problems"] + (["--kernelbench-root", kb] if kb else [])
    text = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT).stdout
    root = re.search(r"in (\S+)\s*$", text.strip())
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == ref and root:
            return os.path.join(root.group(1), f[-1])
    return None


def check(name, profile_argv, target_argv, out):
    ours, theirs = os.path.join(out, name + ".json"), os.path.join(out, name + ".ncu.txt")
    if run(profile_argv + ["--json"], ours, 600) != 0:
        print("%-40s no profile (see %s)" % (name, ours))
        return 0, 0
    kernels = [k["mangled"] for k in json.load(open(ours))["profile"].get("kernels", [])
               if k.get("kind") == "kernel" and "bound" in k and k.get("mangled")]
    if not kernels:
        print("%-40s no kernel with metrics" % name)
        return 0, 0
    regex = "regex:^(%s)$" % "|".join(re.escape(k) for k in kernels)
    ncu = ["ncu", "--clock-control", "none", "--cache-control", "none", "--kernel-name-base", "mangled",
           "--print-kernel-base", "mangled", "--kernel-name", regex, "--launch-count", str(4 * len(kernels)),
           "--section", "SpeedOfLight", "--section", "Occupancy", "python3", "-u",
           os.path.join(ROOT, "harness", "worker", "ncu_target.py")] + target_argv + ["--calls", "2"]
    run(ncu, theirs, 600)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench", "ncu_crosscheck.py"), ours, theirs],
                       capture_output=True, text=True)
    print("== " + name)
    print(r.stdout.rstrip())
    m = re.search(r"classes agree for (\d+) of (\d+)", r.stdout)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def main():
    out = os.environ.get("SB_BENCH_OUT") or os.path.join(ROOT, "build", "bench", "hw")
    os.makedirs(out, exist_ok=True)
    kb = os.environ.get("SB_HW_KB", os.path.join(ROOT, "..", "shared", "kernelbench-upstream"))
    agree = total = 0
    for ref in os.environ.get("SB_HW_REFS", "L1/1 L1/2 L1/4 L1/6 L2/1 L3/1").split():
        path = problem_file(ref, None)
        a, t = check("ref_" + ref.replace("/", "_"), [SB, "profile", "--reference", "--problem", ref],
                     ["--problem", path], out)
        agree, total = agree + a, total + t
    for item in os.environ.get("SB_HW_CANDIDATES", "").split():
        cand, ref = item.rsplit(":", 1)
        cand = os.path.abspath(cand)
        path = problem_file(ref, kb)
        cache = os.environ.get("STITCHBENCH_CACHE") or os.path.expanduser("~/.cache/stitchbench")
        a, t = check("cand_" + os.path.basename(cand).replace(".py", ""),
                     [SB, "profile", cand, "--problem", ref, "--kernelbench-root", kb],
                     ["--problem", path, "--candidate", cand, "--ext-dir=%s/ext" % cache], out)
        agree, total = agree + a, total + t
    print("classes agree for %d of %d kernels measured by both (files in %s)" % (agree, total, out))
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
