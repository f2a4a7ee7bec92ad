#!/usr/bin/env python3
"""replay_check.py - are the verdicts `stitchbench serve` gave the ones `stitchbench eval` gives on the same
seeds? Each result of `sbclient.py --verdicts full` carries its verdict and the verdict its seed secret;
this replays every candidate with `stitchbench eval FILE --problem P --seeds VERDICT` and compares what
the seeds decide: the status, the findings (id and severity) and each correctness trial's outcome. A
verdict reached before any input was drawn (a static rejection, a failed build) has no seeds: a plain
`stitchbench eval` replays it. Times are measured again, so they differ; the speedups are listed beside
each other, not compared.

    sbclient.py --endpoints URL --verdicts full --problem L1/2 a.py b.py > results.jsonl
    replay_check.py results.jsonl --problem L1/2 a.py b.py [-- EVAL OPTIONS]
    replay_check.py results.jsonl --samples generations/ [-- --kernelbench-root kernelbench-upstream]

The candidates are given as to sbclient.py, in the same order. Options after `--` go to `stitchbench
eval` (the server's own settings: a config, --device, --kernelbench-root). Exit 0 when every replayed
verdict is identical in those respects; standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE_RE = re.compile(r"level_(\d+)_problem_(\d+)_sample_\d+_kernel\.py$")


def decided(v):
    """What a verdict's seeds decide, comparable across two evaluations."""
    findings = sorted((f.get("id"), f.get("severity")) for f in v.get("findings") or [])
    trials = [(t.get("seed"), t.get("pass"), t.get("inputs_mutated")) for t in v.get("trials") or []]
    return {"status": v.get("status"), "findings": findings, "trials": trials}


def speedup(v):
    s = (v.get("speedup") or {}).get("vs_eager")
    return "%.3g" % s if isinstance(s, (int, float)) else "-"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="sbclient.py --verdicts full output, one JSON result a line")
    ap.add_argument("--problem")
    ap.add_argument("--samples")
    ap.add_argument("files", nargs="*")
    a = ap.parse_intermixed_args(argv)
    if a.samples:
        cands = [(os.path.join(a.samples, n), "L%s/%s" % SAMPLE_RE.search(n).groups())
                 for n in sorted(os.listdir(a.samples)) if SAMPLE_RE.search(n)]
    elif a.problem:
        cands = [(f, a.problem) for f in a.files]
    else:
        ap.error("give --problem with FILEs, or --samples DIR, as to sbclient.py")
    results = [json.loads(line) for line in open(a.results) if line.strip()]
    if len(results) != len(cands):
        sys.exit("replay_check: %d results for %d candidates: give the candidates as to sbclient.py" %
                 (len(results), len(cands)))
    sb = os.path.join(ROOT, "bin", "stitchbench")
    same = judged = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, ((path, problem), r) in enumerate(zip(cands, results)):
            v = r.get("verdict")
            name = os.path.basename(path)
            if not isinstance(v, dict):
                print("%-44s no verdict (state %s): ask sbclient.py for --verdicts full" % (name, r.get("state")))
                continue
            # A verdict decided before any input was drawn (a static rejection, a build that failed) has no
            # seeds: nothing random decided it, so a plain evaluation must reach it again.
            seeded = bool((v.get("seeds") or {}).get("secret"))
            cmd = [sb, "eval", path, "--problem", problem, "--json"]
            if seeded:
                vpath = os.path.join(tmp, "%d.json" % i)
                with open(vpath, "w") as f:
                    json.dump(v, f)
                cmd += ["--seeds", vpath]
            p = subprocess.run(cmd + extra, capture_output=True, text=True)
            try:
                w = json.loads(p.stdout)
            except ValueError:
                print("%-44s eval did not answer (exit %d): %s" % (name, p.returncode, p.stderr.strip()[-300:]))
                continue
            judged += 1
            ours, theirs = decided(v), decided(w)
            if ours == theirs and (not seeded or (w.get("seeds") or {}).get("replayed")):
                same += 1
                print("%-44s identical: %s, %d findings, %d trials (speedup %s served, %s replayed)%s" % (
                    name, ours["status"], len(ours["findings"]), len(ours["trials"]), speedup(v), speedup(w),
                    "" if seeded else "; no seeds drawn"))
            else:
                diff = [k for k in ours if ours[k] != theirs[k]]
                print("%-44s DIFFERENT in %s: served %s, replayed %s" % (
                    name, ", ".join(diff) or "seeds", {k: ours[k] for k in diff}, {k: theirs[k] for k in diff}))
    print("identical verdicts: %d of %d replayed (%d results)" % (same, judged, len(results)))
    return 0 if same == judged == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
