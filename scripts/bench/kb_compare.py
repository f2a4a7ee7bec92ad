#!/usr/bin/env python3
"""kb_compare.py - stitchbench's verdicts under eval.preset=kernelbench beside KernelBench's own evaluator
on the same candidates (the JSON lines of ../shared/tools/kbeval.py, one fresh process per candidate),
as the Markdown that BENCHMARKS.md keeps.

  kb_compare.py OURS.jsonl KB.jsonl [KB_AGAIN.jsonl]

Outcomes compared: compiled (ours: any status but compile_error and format_error; a candidate our static
rules rejected never built, and is counted as theirs for this column) and correct (ours: pass, flagged or
not, as KernelBench counts it). KernelBench's evaluator does not run its own static checker; the driver
runs it beside, and a candidate its strict checks call invalid is listed, so each disagreement can be
read against both. Speedups: ours (speedup.vs_eager, the mean over the mean under this preset) against
theirs (ref_runtime / runtime). A second KernelBench file gives its own repeat spread per candidate,
|s1 / s2 - 1|; ours agrees with theirs when |ours / theirs - 1| is within that spread (or, without a
second file, within the spread the driver's first file cannot say: left unjudged)."""
import json
import re
import statistics
import sys


def key(path):
    m = re.search(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$", path or "")
    return m.group(0) if m else None


def ours_of(path):
    out = {}
    for line in open(path):
        v = json.loads(line)
        k = key((v.get("candidate") or {}).get("path"))
        if k:
            out[k] = v
    return out


def theirs_of(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        out[r["file"]] = r
    return out


def their_outcome(r):
    res = r.get("result")
    if not isinstance(res, dict) or "exception" in res:
        return None  # the evaluator crashed, timed out or returned nothing
    sp = None
    if res.get("correct") and res.get("runtime_us") and res.get("ref_runtime_us"):
        rt, ref = float(res["runtime_us"]), float(res["ref_runtime_us"])
        sp = ref / rt if rt > 0 and ref > 0 else None
    return {"compiled": bool(res.get("compiled")), "correct": bool(res.get("correct")), "speedup": sp,
            "static_valid": (r.get("static") or {}).get("valid"), "errors": (r.get("static") or {}).get("errors"),
            "metadata": res.get("metadata") or {}}


def our_outcome(v):
    st = v["status"]
    sp = (v.get("speedup") or {}).get("vs_eager") if st == "pass" else None
    return {"status": st, "compiled": st not in ("compile_error", "format_error"), "correct": st == "pass",
            "speedup": sp, "rejected": st == "rejected",
            "ids": sorted({f["id"] for f in v.get("findings") or [] if f.get("severity") == "reject"}),
            "flags": sorted({f["id"] for f in v.get("findings") or [] if f.get("severity") == "flag"}),
            "message": (v.get("message") or "")[:140], "preset": (v.get("settings") or {}).get("preset")}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ours, kb = ours_of(sys.argv[1]), theirs_of(sys.argv[2])
    again = theirs_of(sys.argv[3]) if len(sys.argv) > 3 else {}
    names = sorted(set(ours) & set(kb), key=lambda k: [int(x) for x in re.findall(r"\d+", k)])
    presets = {our_outcome(ours[k])["preset"] for k in names}
    rows, agree, judged, dis, sp_in, sp_n, spreads = [], 0, 0, [], 0, 0, []
    for k in names:
        o, t = our_outcome(ours[k]), their_outcome(kb[k])
        if t is None:
            rows.append((k, o, None, "their evaluator gave no result"))
            continue
        judged += 1
        compiled = t["compiled"] if o["rejected"] else o["compiled"]
        same = compiled == t["compiled"] and o["correct"] == t["correct"]
        agree += same
        if not same:
            dis.append((k, o, t))
        ratio, spread = None, None
        if o["speedup"] and t["speedup"]:
            ratio = o["speedup"] / t["speedup"]
            t2 = their_outcome(again[k]) if k in again else None
            if t2 and t2["speedup"]:
                spread = abs(t["speedup"] / t2["speedup"] - 1)
                spreads.append(spread)
        rows.append((k, o, t, (ratio, spread)))
    # a candidate without a repeat of its own is judged against the median spread of those with one
    typical = statistics.median(spreads) if spreads else None
    print("Preset of our verdicts: %s. Candidates in both files: %d; judged by KernelBench's evaluator: %d." % (
        ", ".join(sorted(p or "?" for p in presets)), len(names), judged))
    print("")
    print("| candidate | ours | KernelBench: compiled / correct | strict static | our speedup | theirs | ours/theirs | their repeat spread |")
    print("|---|---|---|---|---|---|---|---|")
    for k, o, t, extra in rows:
        if t is None:
            print("| %s | %s | %s | | | | | |" % (k, o["status"], extra))
            continue
        ratio, spread = extra
        within = None
        bound = spread if spread is not None else typical
        if ratio is not None and bound is not None:
            sp_n += 1
            within = abs(ratio - 1) <= bound
            sp_in += within
        f = lambda x, p=3: ("%.*f" % (p, x)) if x is not None else "-"
        print("| %s | %s%s | %s / %s | %s | %s | %s | %s%s | %s |" % (
            k, o["status"], (" (" + ",".join(o["ids"] or o["flags"]) + ")") if (o["ids"] or o["flags"]) else "",
            t["compiled"], t["correct"], {True: "valid", False: "invalid", None: "?"}[t["static_valid"]],
            f(o["speedup"]), f(t["speedup"]), f(ratio), "" if within is None else (" within" if within else " OUTSIDE"),
            f(spread, 4) if spread is not None else ("median %.4f" % typical if typical is not None and ratio is not None else "-")))
    print("")
    print("Compiled/correct agreement: %d of %d (%.1f%%; target 95%%)." % (agree, judged, 100.0 * agree / max(judged, 1)))
    if sp_n:
        print("Speedups within KernelBench's own repeat spread: %d of %d (median spread %.4f over %d repeated candidates)." % (
            sp_in, sp_n, typical if typical is not None else float("nan"), len(spreads)))
    print("")
    print("Disagreements:")
    for k, o, t in dis:
        print("- %s: ours %s%s (%s); KernelBench compiled %s, correct %s; its static checker: %s %s" % (
            k, o["status"], (" " + ",".join(o["ids"])) if o["ids"] else "", o["message"], t["compiled"], t["correct"],
            {True: "valid", False: "invalid", None: "?"}[t["static_valid"]], "; ".join(t["errors"] or [])[:120]))


if __name__ == "__main__":
    main()
