#!/usr/bin/env python3
"""kb_compare.py - stitchbench's verdicts under eval.preset=kernelbench beside KernelBench's own evaluator
on the same candidates (the JSON lines of ../shared/tools/kbeval.py, one fresh process per candidate),
as the Markdown that BENCHMARKS.md keeps.

  kb_compare.py OURS.jsonl KB.jsonl [KB_AGAIN.jsonl] [--manifest MANIFEST.tsv]

Outcomes compared: correct (ours: pass, flagged or not, as KernelBench counts it; theirs: the evaluator's
`correctness`, false when it raised) and, where both are known, compiled (ours: any status but
compile_error and format_error; theirs: `compiled`, unknown when the evaluator raised). KernelBench's
evaluator does not run its own static checker; the driver runs it beside, so agreement is given twice:
with the evaluator alone, and with KernelBench's protocol whole (the evaluator, and its strict checks
calling the file invalid count as not correct), which is what eval.preset=kernelbench applies. The
driver runs KernelBench with backend=cuda; with --manifest, candidates the manifest names Triton are
listed apart (KernelBench's CUDA path does not load Triton kernels), not counted. Speedups: ours (speedup.vs_eager, the mean over the mean under this preset) against
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
    static = r.get("static") or {}
    if isinstance(res, dict) and "exception" in res:  # it raised while running the candidate: not correct
        return {"compiled": None, "correct": False, "speedup": None, "static_valid": static.get("valid"),
                "errors": static.get("errors"), "metadata": {}, "exception": res["exception"][:100]}
    if not isinstance(res, dict):
        return None  # the driver timed out, or the evaluator returned nothing
    sp = None
    if res.get("correct") and res.get("runtime_us") and res.get("ref_runtime_us"):
        rt, ref = float(res["runtime_us"]), float(res["ref_runtime_us"])
        sp = ref / rt if rt > 0 and ref > 0 else None
    return {"compiled": bool(res.get("compiled")), "correct": bool(res.get("correct")), "speedup": sp,
            "static_valid": static.get("valid"), "errors": static.get("errors"),
            "metadata": res.get("metadata") or {}, "exception": None}


def our_outcome(v):
    st = v["status"]
    sp = (v.get("speedup") or {}).get("vs_eager") if st == "pass" else None
    gpu_only = ((v.get("timing") or {}).get("gpu_only") or {}).get("speedup") if st == "pass" else None
    return {"status": st, "gpu_only": gpu_only, "compiled": st not in ("compile_error", "format_error"), "correct": st == "pass",
            "speedup": sp, "rejected": st == "rejected",
            "ids": sorted({f["id"] for f in v.get("findings") or [] if f.get("severity") == "reject"}),
            "flags": sorted({f["id"] for f in v.get("findings") or [] if f.get("severity") == "flag"}),
            "message": (v.get("message") or "")[:140], "preset": (v.get("settings") or {}).get("preset")}


def backends(path):
    out = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) > 7 and f[0] != "file":
            out[f[0]] = f[7]
    return out


def main():
    args = sys.argv[1:]
    manifest = {}
    if "--manifest" in args:
        i = args.index("--manifest")
        manifest = backends(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    ours, kb = ours_of(args[0]), theirs_of(args[1])
    again = theirs_of(args[2]) if len(args) > 2 else {}
    names = sorted(set(ours) & set(kb), key=lambda k: [int(x) for x in re.findall(r"\d+", k)])
    presets = {our_outcome(ours[k])["preset"] for k in names}
    rows, spreads, apart, unjudged = [], [], [], []
    n = agree_eval = agree_whole = n_comp = agree_comp = 0
    dis = []
    for k in names:
        o, t = our_outcome(ours[k]), their_outcome(kb[k])
        if manifest.get(k) == "triton":
            apart.append((k, o, t))
            continue
        if t is None:
            unjudged.append((k, o, kb[k]))
            continue
        n += 1
        whole = t["correct"] and t["static_valid"] is not False
        agree_eval += o["correct"] == t["correct"]
        agree_whole += o["correct"] == whole
        if t["compiled"] is not None and not o["rejected"]:
            n_comp += 1
            agree_comp += o["compiled"] == t["compiled"]
        if o["correct"] != whole:
            dis.append((k, o, t))
        ratio, spread = None, None
        if o["speedup"] and t["speedup"]:
            ratio = o["speedup"] / t["speedup"]
            t2 = their_outcome(again[k]) if k in again else None
            if t2 and t2["speedup"]:
                spread = abs(t["speedup"] / t2["speedup"] - 1)
                spreads.append(spread)
        rows.append((k, o, t, ratio, spread))
    typical = statistics.median(spreads) if spreads else None
    print("Preset of our verdicts: %s. Candidates in both files: %d; compared: %d; Triton, apart: %d; "
          "no result from KernelBench's driver: %d." % (", ".join(sorted(p or "?" for p in presets)), len(names), n,
                                                       len(apart), len(unjudged)))
    print("")
    print("| candidate | ours | KernelBench: compiled / correct | its strict static checks | our speedup | theirs | ours/theirs |")
    print("|---|---|---|---|---|---|---|")
    f = lambda x, p=3: ("%.*f" % (p, x)) if x is not None else "-"
    for k, o, t, ratio, spread in rows:
        print("| %s | %s%s | %s / %s%s | %s | %s | %s | %s |" % (
            k, o["status"], (" (" + ",".join(o["ids"] or o["flags"]) + ")") if (o["ids"] or o["flags"]) else "",
            "?" if t["compiled"] is None else t["compiled"], t["correct"], " (raised)" if t["exception"] else "",
            {True: "valid", False: "invalid", None: "?"}[t["static_valid"]], f(o["speedup"]), f(t["speedup"]), f(ratio)))
    print("")
    pc = lambda a, b: "%d of %d (%.1f%%)" % (a, b, 100.0 * a / max(b, 1))
    print("- correct, ours against KernelBench's protocol whole (its evaluator and its strict static checks): %s" % pc(agree_whole, n))
    print("- correct, ours against its evaluator alone: %s" % pc(agree_eval, n))
    print("- compiled, where both say (not our static rejects, not where its evaluator raised): %s" % pc(agree_comp, n_comp))
    ratios = [r[3] for r in rows if r[3] is not None]
    if ratios:
        print("- speedups of the candidates both call correct: %d; ours/theirs median %.3f, range %.3f-%.3f" % (
            len(ratios), statistics.median(ratios), min(ratios), max(ratios)))
    repeat = [(their_outcome(kb[k]), their_outcome(again[k])) for k in names if k in again]
    repeat = [(a, b) for a, b in repeat if a and b]
    if repeat:
        print("- KernelBench against itself, correct in both of its timed runs: %s" % pc(
            sum(a["correct"] == b["correct"] for a, b in repeat), len(repeat)))
    if spreads:
        within = sum(abs(r[3] - 1) <= (r[4] if r[4] is not None else typical) for r in rows if r[3] is not None)
        print("- within KernelBench's own repeat spread: %d of %d (median spread %.4f)" % (within, len(ratios), typical))
        # our GPU-only diagnostic (timing.gpu_only: the same calls behind a device-side lead), which times
        # what KernelBench's start event, queued behind its L2 fill, mostly sees: the GPU's work alone
        gonly = [(r[1]["gpu_only"] / r[2]["speedup"], r[4]) for r in rows
                 if r[3] is not None and r[1]["gpu_only"] and r[2]["speedup"]]
        if gonly:
            print("- our GPU-only speedup over theirs: median %.3f, range %.3f-%.3f; within its spread: %d of %d" % (
                statistics.median([g for g, _ in gonly]), min(g for g, _ in gonly), max(g for g, _ in gonly),
                sum(abs(g - 1) <= (sp if sp is not None else typical) for g, sp in gonly), len(gonly)))
    print("")
    print("Disagreements on correct (against the protocol whole):")
    for k, o, t in dis:
        print("- %s: ours %s%s (%s); KernelBench compiled %s, correct %s%s; its static checks: %s %s" % (
            k, o["status"], (" " + ",".join(o["ids"])) if o["ids"] else "", o["message"][:110], t["compiled"], t["correct"],
            (" (raised %s)" % t["exception"]) if t["exception"] else "",
            {True: "valid", False: "invalid", None: "?"}[t["static_valid"]], "; ".join(t["errors"] or [])[:120]))
    for label, group in (("Triton candidates, apart", apart), ("No result from KernelBench's driver", unjudged)):
        if group:
            print("")
            print(label + ":")
            for k, o, x in group:
                print("- %s: ours %s" % (k, o["status"]))


if __name__ == "__main__":
    main()
