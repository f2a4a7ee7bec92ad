"""same_verdicts.py A.jsonl B.jsonl - whether two JSONL files of verdicts decide the same: prints "N verdicts
agree" or one line per candidate whose verdicts differ. What a verdict decides, without times, seconds and
host details: its status, findings, every trial's comparison (the inputs' seeds are each evaluation's own, so
only what they cannot change), the robust trials and the settings (but the exchange, an internal key reported
as applied). Used by test_fastpaths.sh and test_shared_cache.sh."""
import json
import sys


def decided(v):
    trials = [(t.get("pass"), t.get("inputs_mutated"),
               [(o.get("pass"), o.get("shape_mismatch"), o.get("dtype_mismatch"), o.get("mismatched"),
                 o.get("worst_index"), round(o.get("max_abs_error") or 0, 3)) for o in t.get("outputs") or []])
              for t in v.get("trials") or []]
    r = v.get("robust") or {}
    settings = {k: x for k, x in v["settings"].items() if k != "exchange"}
    return {"status": v["status"], "findings": sorted((f["id"], f["severity"]) for f in v["findings"]),
            "trials": trials, "robust": (r.get("trials"), r.get("passed")), "settings": settings,
            "timed": v.get("timing") is not None}

def load(path):
    out = {}
    for line in open(path):
        v = json.loads(line)
        out[(v["problem"]["ref"], v["candidate"]["path"])] = decided(v)
    return out

a, b = load(sys.argv[1]), load(sys.argv[2])
diff = [f"{k}: {a.get(k)} vs {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
print("\n".join(diff) if diff else f"{len(a)} verdicts agree")
