"""Runs the adversarial corpus through `stitchbench eval` with the runtime checks on, and judges the verdicts.

Every file names its problem on its first line ("- L1/2:"), and may say `# device: cpu` (default: cuda),
`# static: off` (the static checks would reject it first; the runtime check is under test) and
`# suite: traps` (a problem of tests/fixtures/suite_traps) and `# shapes: real` (the hack needs the bundled
problem at its real sizes: a constant of its shape written in, a speed only a large input shows; the tests
judge the rest at the small shapes that tests/fixtures/suite_small.py writes). Hack files list the ids they must produce
(`# expect: H11 H21`, more are allowed; `H09|H19` takes either; `slow` in an alternative is met by a pass
whose speedup vs eager is below 1: the protocol left the trick nothing to gain); honest files (`# expect: clean`) must pass with no
finding, but for flags a `# problem: H15` line names: the problem's own flaw, on every pass there.

    python3 run_corpus.py run --device cpu --work DIR [-- extra eval options]

    python3 run_corpus.py show FILE > cand.py      (one file as the whole candidate, for `stitchbench eval`)

`run` lays the selected files out as KernelBench generations folders (one per static/suite group), runs one
`stitchbench eval --samples` per group, prints one line per file ("PASS name" or "FAIL name: why"), then
the detection table (lines starting with "#"), and exits 0 when every file behaved. Every batch runs with
`eval.extra_shapes` on, so H18 is checked on every file (honest files must stay clean there too).
Used by tests/e2e/test_adversarial_runtime.sh and test_adversarial_honest.sh (CPU) and scripts/gpu-check.sh,
section hacks (GPU).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The CPU candidates share one C++ source (one build serves the whole batch); each file holds this marker
# where the source goes, and the candidate written for evaluation holds the source itself.
SHARED_MARKER = "{{cpu_ops.cpp}}"


def candidate_text(path):
    """The whole candidate as an agent would submit it: the shared C++ source in place of its marker."""
    text = Path(path).read_text()
    if SHARED_MARKER in text:
        text = text.replace(SHARED_MARKER, "\n" + (HERE / "cpu_ops.cpp").read_text())
    return text
SUITES = {"bundled": None, "traps": ROOT / "tests" / "fixtures" / "suite_traps"}


def header(path):
    """The comment lines at the top of a file, as (first line, {key: value})."""
    lines = path.read_text().splitlines()
    keys = {}
    for line in lines:
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*(expect|device|static|suite|problem|shapes):\s*(.*)", line)
        if m:
            keys[m.group(1)] = m.group(2).strip()
    return lines[0] if lines else "", keys


def corpus(device):
    """The files that run on `device`, with what each must produce."""
    out = []
    for kind in ("honest", "runtime"):
        for path in sorted((HERE / kind).glob("*.py")):
            first, keys = header(path)
            if keys.get("device", "cuda") != device:
                continue
            m = re.search(r"\bL(\d)/(\d+)\b", first)
            if not m:
                raise SystemExit("%s: its first line names no problem (L<level>/<id>)" % path)
            expect = keys.get("expect", "")
            out.append({
                "name": "%s/%s" % (kind, path.name), "path": str(path), "level": int(m.group(1)),
                "id": int(m.group(2)), "honest": expect == "clean",
                # "H09|H19": either id will do (which one depends on what the device's memory held)
                "expect": [] if expect == "clean" else re.findall(r"(?:H\d\d|slow)(?:\|(?:H\d\d|slow))*", expect),
                "problem": re.findall(r"H\d\d", keys.get("problem", "")),
                "static": keys.get("static", "on") != "off", "suite": keys.get("suite", "bundled"),
                "real": keys.get("shapes", "") == "real",
            })
    return out


def run(args, extra):
    only = [x for x in (args.only or "").split(",") if x]
    files = [f for f in corpus(args.device) if not only or any(x in f["name"] for x in only)]
    if not files:
        raise SystemExit("no corpus files for device %s" % args.device)
    work = Path(args.work)
    groups = collections.defaultdict(list)
    for f in files:
        groups[(f["suite"], f["static"], f["real"])].append(f)
    sb = str(ROOT / "bin" / "stitchbench")
    verdicts = {}
    for (suite, static, real), members in sorted(groups.items()):
        d = work / ("%s-static-%s%s" % (suite, "on" if static else "off", "-real" if real else ""))
        d.mkdir(parents=True, exist_ok=True)
        by_sample = {}
        for n, f in enumerate(members):
            name = "level_%d_problem_%d_sample_%d_kernel.py" % (f["level"], f["id"], n)
            (d / name).write_text(candidate_text(f["path"]))
            by_sample[(f["level"], f["id"], n)] = f
        # every file is also run at the problem's shapes halved (H18): a hack specialised to the given
        # shapes shows there, and an honest candidate must stay clean
        cmd = [sb, "eval", "--samples", str(d), "-o", str(d / "verdicts.jsonl"), "--device", args.device,
               "--set", "eval.extra_shapes=true"]
        if SUITES[suite]:
            cmd += ["--kernelbench-root", str(SUITES[suite])]
        if not static:
            cmd += ["--set", "checks.static=false"]
        env = dict(os.environ)
        if real:
            env.pop("STITCHBENCH_TEST_SUITE", None)  # the bundled suite itself, not its small twin
        proc = subprocess.run(cmd + extra, capture_output=True, text=True, env=env)
        (d / "eval.log").write_text(proc.stdout + proc.stderr)
        if not (d / "verdicts.jsonl").exists():
            print("FAIL eval --samples %s: exit %d: %s" % (d.name, proc.returncode, (proc.stdout + proc.stderr)[-2000:]))
            return 1
        for line in (d / "verdicts.jsonl").read_text().splitlines():
            v = json.loads(line)
            m = re.search(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$", v["candidate"]["path"])
            f = by_sample.get(tuple(int(x) for x in m.groups())) if m else None
            if f:
                verdicts[f["name"]] = v
    return judge(files, verdicts)


def judge(files, verdicts):
    bad = 0
    caught, wanted = collections.Counter(), collections.Counter()
    false_pos = []
    for f in files:
        v = verdicts.get(f["name"])
        if v is None:
            print("FAIL %s: no verdict" % f["name"])
            bad += 1
            continue
        found = sorted({x["id"] for x in v["findings"]})
        sp = (v.get("speedup") or {}).get("vs_eager")
        if v["status"] == "pass" and isinstance(sp, (int, float)) and sp < 1:
            found_or_slow = found + ["slow"]
        else:
            found_or_slow = found
        if f["honest"]:
            # a flag the file's `# problem:` line names is the problem's flaw, on every pass there
            own = [x["id"] for x in v["findings"] if not (x["id"] in f["problem"] and x["severity"] == "flag")]
            okay = v["status"] == "pass" and not own
            if not okay:
                false_pos.append(f["name"])
            why = "%s, findings %s: %s" % (v["status"], " ".join(found) or "none", (v["message"] or "")[:300])
        else:
            for h in f["expect"]:
                wanted[h] += 1
                caught[h] += any(x in found_or_slow for x in h.split("|"))
            okay = all(any(x in found_or_slow for x in h.split("|")) for h in f["expect"])
            why = "%s, expected %s, found %s: %s" % (v["status"], " ".join(f["expect"]), " ".join(found) or "none",
                                                   (v["message"] or "")[:300])
        print("%s %s (%s)" % ("PASS" if okay else "FAIL", f["name"], why))
        bad += not okay
    print("# id       caught expected")
    for h in sorted(wanted):
        print("# %-8s %6d %8d" % (h, caught[h], wanted[h]))
    honest = sum(f["honest"] for f in files)
    print("# honest files: %d, with any finding or not passing (false positives): %d%s" % (
        honest, len(false_pos), (": " + ", ".join(false_pos)) if false_pos else ""))
    return 1 if bad else 0


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--device", default="cpu")
    r.add_argument("--work", required=True)
    r.add_argument("--list", action="store_true", help="print the selected files and exit")
    r.add_argument("--only", default="", help="only files whose name (honest/x.py, runtime/y.py) contains this; several, comma-separated")
    w = sub.add_parser("show", help="print one corpus file as the whole candidate (shared C++ source put in)")
    w.add_argument("file")
    args = p.parse_args(argv)
    if args.cmd == "show":
        sys.stdout.write(candidate_text(args.file))
        return 0
    if args.list:
        for f in corpus(args.device):
            if args.only and args.only not in f["name"]:
                continue
            print(f["name"], "L%d/%d" % (f["level"], f["id"]), f["suite"], "static" if f["static"] else "no-static",
                  "clean" if f["honest"] else " ".join(f["expect"]))
        return 0
    os.makedirs(args.work, exist_ok=True)
    return run(args, extra)


if __name__ == "__main__":
    sys.exit(main())
