#!/usr/bin/env python3
"""ncu_crosscheck.py - our per-kernel bound class (stitchbench profile --json, CUPTI range profiler) beside
Nsight Compute's own Speed of Light and Occupancy sections for the same program.

  ncu --clock-control none --print-kernel-base mangled --section SpeedOfLight --section Occupancy \\
      python3 harness/worker/ncu_target.py --problem P [--candidate C] > P.ncu.txt
  stitchbench profile --reference --problem L1/1 --json > P.json
  scripts/bench/ncu_crosscheck.py P.json P.ncu.txt

For each kernel of our profile that ncu also measured (matched by mangled name; ncu's launches of one
kernel are averaged), it prints both sets of numbers, the class our rule gives from ncu's numbers, and
the first line of ncu's own Speed of Light verdict. Standard library only; exit 0 when every matched
kernel gets the same class from both sets of numbers.
"""
import json
import re
import sys

SOL_KEYS = {
    "Compute (SM) Throughput": "sm_pct",
    "Memory Throughput": "mem_pct",
    "DRAM Throughput": "dram_pct",
    "L1/TEX Cache Throughput": "l1_pct",
    "L2 Cache Throughput": "l2_pct",
    "Duration": "duration",
    "Achieved Occupancy": "occupancy_pct",
}
ROOF, LAUNCH_US, LOW_OCC = 60.0, 8.0, 40.0  # harness/profile/hwmetrics.h


def classify(m):
    mems = [m[k] for k in ("dram_pct", "l2_pct", "l1_pct") if m.get(k) is not None]
    mem = m["mem_pct"] if m.get("mem_pct") is not None else max(mems) if mems else None
    sm = m.get("sm_pct")
    known = [x for x in (mem, sm) if x is not None]
    if not known:
        return "-"
    if max(known) >= ROOF:
        return "memory" if sm is None or (mem is not None and mem >= sm) else "compute"
    if m.get("duration_us") is not None and m["duration_us"] < LAUNCH_US:
        return "launch"
    return "latency"


def number(s):
    return float(s.replace(",", ""))


def parse_ncu(text):
    """{mangled name: [per-launch dicts]} from ncu's text report."""
    kernels, cur, in_sol = {}, None, False
    header = re.compile(r"^  (\S+) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), Context \d+, Stream \d+")
    for line in text.splitlines():
        m = header.match(line)
        if m:
            cur = {"rule": ""}
            kernels.setdefault(m.group(1), []).append(cur)
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("Section:"):
            in_sol = "Speed Of Light" in s
            continue
        for label, key in SOL_KEYS.items():
            if s.startswith(label + " "):
                parts = s[len(label):].split()
                if len(parts) >= 2:
                    unit, val = parts[0], parts[-1]
                    try:
                        v = number(val)
                    except ValueError:
                        continue
                    if key == "duration":
                        cur["duration_us"] = v / 1000.0 if unit == "ns" else v * 1000.0 if unit == "ms" else v
                    else:
                        cur[key] = v
        if in_sol and not cur["rule"] and re.match(r"^(OPT|INF|WRN)\s", s):
            cur["rule"] = s.split(None, 1)[1].split(". ")[0]
    return kernels


def mean(launches, key):
    """Weighted by duration, as the harness averages a kernel's launches (hwmetrics.c)."""
    pairs = [(x[key], x.get("duration_us") or 1e-3) for x in launches if key in x]
    if not pairs:
        return None
    if key == "duration_us":
        return sum(v for v, _ in pairs) / len(pairs)
    return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ours = json.load(open(sys.argv[1]))
    theirs = parse_ncu(open(sys.argv[2], errors="replace").read())
    rows = ours.get("profile", {}).get("kernels", [])
    agree = matched = 0
    print("%-44s %-8s %-8s %6s %6s %6s %6s | %6s %6s %6s %6s  %s" % (
        "kernel", "ours", "ncu->", "SM", "mem", "DRAM", "occ", "SM", "mem", "DRAM", "occ", "ncu's own rule"))
    for k in rows:
        if k.get("kind") != "kernel" or "bound" not in k:
            continue
        launches = theirs.get(k.get("mangled"))
        if not launches:
            print("%-44s %-8s (not in ncu's output)" % (k["name"][:44], k["bound"]))
            continue
        n = {key: mean(launches, key) for key in ("sm_pct", "mem_pct", "dram_pct", "l1_pct", "l2_pct",
                                                  "occupancy_pct", "duration_us")}
        cls = classify(n)
        matched += 1
        agree += cls == k["bound"]

        def f(x):
            return "%6.1f" % x if x is not None else "     -"
        print("%-44s %-8s %-8s %s %s %s %s | %s %s %s %s  %s" % (
            k["name"][:44], k["bound"], cls, f(k.get("sm_pct")), f(k.get("mem_pct")), f(k.get("dram_pct")),
            f(k.get("occupancy_pct")), f(n["sm_pct"]), f(n["mem_pct"]), f(n["dram_pct"]), f(n["occupancy_pct"]),
            launches[0]["rule"][:110]))
    print("classes agree for %d of %d kernels measured by both" % (agree, matched))
    sys.exit(0 if agree == matched else 1)


if __name__ == "__main__":
    main()
