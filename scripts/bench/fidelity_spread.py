#!/usr/bin/env python3
"""fidelity_spread.py - how far the reference judged as its own candidate lands from 1.0 beyond what its
own interval explains, from the verdicts of fidelity batches (scripts/gpu-check.sh, fidelity section).

Each verdict's speedup before the process factor (speedup.vs_eager_uncorrected) is off 1.0 by the noise of
its calls, which its interval knows (a standard error of a quarter of the interval's width on a log scale),
plus whatever differs between the two processes, which it cannot know. Over many verdicts the mean squared
log distance is the sum of the two, so the spread between processes is the square root of the difference:
the estimate eval.process_spread_pct rests on.

Then, for verdicts timed before the spread was folded in (no timing.process_spread_pct), it shows how often
the interval would have held 1.0 with the harness's rule at a given spread (SPREAD, percent; default the
estimate): the factor applied or not as the verdict says, the interval spanning the speedup as measured,
and 1.96 x spread added to each side in quadrature on a log scale (harness/eval/timing/procfactor.c).

Usage: python3 scripts/bench/fidelity_spread.py [--spread PCT] FIDELITY.jsonl...
"""
import json
import math
import sys


def fold(point, lo, hi, half):
    a, b = max(math.log(point / lo), 0.0), max(math.log(hi / point), 0.0)
    return point * math.exp(-math.hypot(a, half)), point * math.exp(math.hypot(b, half))


def main(argv):
    spread = None
    if len(argv) > 2 and argv[1] == "--spread":
        spread, argv = float(argv[2]), [argv[0]] + argv[3:]
    if len(argv) < 2:
        sys.exit(__doc__)
    batches = []
    for path in argv[1:]:
        rows = []
        for line in open(path):
            v = json.loads(line)
            s, t = v.get("speedup") or {}, v.get("timing") or {}
            raw, raw_ci = s.get("vs_eager_uncorrected"), s.get("vs_eager_uncorrected_ci95")
            if not raw or not raw_ci or not all(raw_ci):
                continue
            rows.append((v["problem"]["ref"], s, t, raw, raw_ci))
        batches.append((path, rows))
    every = [r for _, rows in batches for r in rows]
    if not every:
        sys.exit("no verdict with a speedup and its interval")
    dist2 = sum(math.log(r[3]) ** 2 for r in every) / len(every)
    se2 = sum(((math.log(r[4][1]) - math.log(r[4][0])) / (2 * 1.96)) ** 2 for r in every) / len(every)
    between = math.sqrt(max(dist2 - se2, 0.0)) * 100
    print("%d verdicts: distance from 1.0 %.2f%% rms; their intervals' standard error %.2f%% rms; between the "
          "processes %.2f%% (sd)" % (len(every), math.sqrt(dist2) * 100, math.sqrt(se2) * 100, between))
    spread = between if spread is None else spread
    half = 1.96 * spread / 100
    for path, rows in batches:
        held = held_now = 0
        misses = []
        for ref, s, t, raw, raw_ci in rows:
            lo, hi = s["vs_eager_ci95"]
            point = s["vs_eager"]
            held_now += lo <= 1.0 <= hi
            if t.get("process_spread_pct") is None:  # timed before the fold: apply the rule here
                if (t.get("process_factor") or {}).get("applied"):
                    lo, hi = min(lo, raw_ci[0]), max(hi, raw_ci[1])
                lo, hi = fold(point, lo, hi, half)
            ok = lo <= 1.0 <= hi
            held += ok
            if not ok:
                misses.append("%s %.4f [%.4f, %.4f]" % (ref, point, lo, hi))
        print("%s: interval holds 1.0 in %d of %d as recorded, %d of %d (%.0f%%) with a spread of %.2f%%%s" % (
            path, held_now, len(rows), held, len(rows), 100.0 * held / max(len(rows), 1), spread,
            "; misses: " + ", ".join(misses) if misses else ""))


if __name__ == "__main__":
    main(sys.argv)
