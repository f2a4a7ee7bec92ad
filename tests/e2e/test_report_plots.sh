#!/usr/bin/env bash
# test_report_plots.sh - the report's plots as a reader sees them, asserted on in the DOM of headless Chromium
# (tests/e2e/report_dom.py): a run of three agents with long names over 90 problems (one iterative, with stages,
# and without a verdict for some problems; one with two samples), one agent over 1200 problems, and the
# iterative store with LLM calls that test_report.sh also opens. fast_p spans the thresholds results are quoted at, 0 to 2; an agent has one colour in
# every plot; no two texts of a plot overlap, none leaves its plot or lies on a panel's data, and none is smaller
# than 10 px on a page 1280 px wide; the iterative agents' plot is over the results table's problems.
# tier: fast
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/verdicts"
export STITCHBENCH_TEST_SUITE=
R="$TMP/results"
IT="stitchcuda@qwen3-coder-480b-a35b-instruct"
ONE="oneshot@gpt-oss-120b-high-reasoning"
SAM="kernelbench-samples@level1-3-run2"

# The run, as `export` rows built from the fixture verdicts (one per status): problem i's speedups follow a
# fixed rule from 0.3x to 3.1x, so that some are beyond fast_p's axis; the iterative agent makes 1 to 5 attempts,
# passes at its last one unless i % 4 == 0, and has no verdict for every seventh problem.
python3 - "$FIX/shard_a.jsonl" "$FIX/shard_b.jsonl" "$IT" "$ONE" "$SAM" >"$TMP/many.jsonl" <<'PY'
import copy, hashlib, json, sys
tmpl = {}
for path in sys.argv[1:3]:
    for line in open(path):
        v = json.loads(line)
        tmpl.setdefault(v["status"], v)
it, one, sam = sys.argv[3:6]
refs = ["L1/%d" % i for i in range(1, 61)] + ["L2/%d" % i for i in range(1, 21)] + ["L3/%d" % i for i in range(1, 11)]
def row(agent, ref, sample, attempt, stage, status, s):
    v = copy.deepcopy(tmpl[status])
    v["problem"] = {"ref": ref, "sha256": hashlib.sha256(ref.encode()).hexdigest()}
    v["candidate"]["sha256"] = hashlib.sha256(("%s %s %d %d" % (agent, ref, sample, attempt)).encode()).hexdigest()
    if status == "pass":
        v["speedup"].update(vs_eager=s, vs_eager_ci95=[s * 0.98, s * 1.02], vs_compiled=s * 0.8,
                            vs_compiled_ci95=[s * 0.78, s * 0.82])
    print(json.dumps({"agent": agent, "problem": ref, "sample": sample, "attempt": attempt, "stage": stage,
                      "verdict": v}))
for i, ref in enumerate(refs):
    s = 0.3 + (i * 37 % 29) / 10.0
    row(one, ref, 0, 0, None, "pass" if i % 3 else ("incorrect" if i % 2 else "compile_error"), s)
    if i < len(refs) - 3:
        for smp in range(2):
            row(sam, ref, smp, 0, None, "pass" if (i + smp) % 4 else "runtime_error", s * (0.7 + 0.2 * smp))
    if i % 7 == 6:
        continue
    n = 1 + i % 5
    for k in range(n):
        last = k == n - 1
        stage = "draft" if k == 0 else ("optimize_performance" if last else "repair_correctness")
        row(it, ref, 0, k, stage, "pass" if last and i % 4 else ("compile_error" if k == 0 else "incorrect"),
            s * (1 + 0.1 * k))
PY
run_sb import "$R/many" "$TMP/many.jsonl"
check_rc "the run of three agents over 90 problems is stored" 0
run_sb report "$R/many" -o "$TMP/many"
check_rc "its report is drawn" 0
# one agent over 1200 problems: more than the widest per-problem plot has room to label one by one
python3 - "$FIX/shard_a.jsonl" >"$TMP/huge.jsonl" <<'PY'
import copy, hashlib, json, sys
tmpl = {}
for line in open(sys.argv[1]):
    v = json.loads(line)
    tmpl.setdefault(v["status"], v)
for i in range(1200):
    ref = "L%d/%d" % (1 + i // 400, 1 + i % 400)
    v = copy.deepcopy(tmpl["pass" if i % 3 else "incorrect"])
    v["problem"] = {"ref": ref, "sha256": hashlib.sha256(ref.encode()).hexdigest()}
    v["candidate"]["sha256"] = hashlib.sha256(b"huge %d" % i).hexdigest()
    if i % 3:
        s = 0.3 + (i * 37 % 29) / 10.0
        v["speedup"].update(vs_eager=s, vs_eager_ci95=[s * 0.98, s * 1.02])
    print(json.dumps({"agent": "solo", "problem": ref, "sample": 0, "attempt": 0, "stage": None, "verdict": v}))
PY
run_sb import "$R/huge" "$TMP/huge.jsonl"
run_sb report "$R/huge" -o "$TMP/huge"
check_rc "a report of one agent over 1200 problems is drawn" 0
mk="$SB_ROOT/build/tests/test_report"
[ -x "$mk" ] || make -s -C "$SB_ROOT" build/tests/test_report >/dev/null
"$mk" --make-store "$R/rich" >"$TMP/mk.log" 2>&1
run_sb report "$R/rich" -o "$TMP/rich"
check_rc "the iterative store's report (LLM calls, findings, a hostile agent name) is drawn" 0

# plot_check name report.html agents...: the probe's facts of the rendered page, asserted on; lines
# "ok|fail<TAB>name<TAB>evidence".
plot_check() {
	local name=$1 html=$2
	shift 2
	python3 "$SB_ROOT/tests/e2e/report_dom.py" "$html" "$TMP/$name.png" >"$TMP/$name.json" 2>"$TMP/$name.err"
	python3 - "$TMP/$name.json" "$@" <<'PY' 2>&1
import json, re, sys
f = json.load(open(sys.argv[1]))
agents = sys.argv[2:]
def check(ok, name, evidence=""):
    print("%s\t%s\t%s" % ("ok" if ok else "fail", name, str(evidence)[:700].replace("\n", " ")))
check("error" not in f and f.get("figures"), "the page loaded and the probe ran", f.get("error"))
figs = {x["id"]: x for x in f.get("figures", [])}
def centre(t):
    return [sum(p[k] for p in t["quad"]) / 4 for k in (0, 1)]
def neutral(c):
    m = re.match(r"rgba?\((\d+), (\d+), (\d+)", c)
    return not m or m.group(1) == m.group(2) == m.group(3)

# fast_p: the x axis is the thresholds 0 to 2, and every curve is drawn over all of it
fp = figs.get("plot-fast-p", {"text_boxes": [], "series": []})
flat = [t for t in fp["text_boxes"] if t["angle"] == 0 and re.fullmatch(r"\s*[0-9.]+\s*", t["text"])]
rows = {}
for t in flat:
    rows.setdefault(round(t["at"][1]), []).append(t)
xt = sorted(rows[max(rows)], key=lambda t: t["at"][0]) if rows else []
check([t["text"].strip() for t in xt] == ["0", "0.5", "1", "1.5", "2"],
      "fast_p: the x axis's tick labels are the quoted thresholds 0, 0.5, 1, 1.5, 2", [t["text"] for t in xt])
curves = [s for s in fp["series"] if s["keys"] and s["points"]]
x0 = centre(xt[0])[0] if xt else 0
x2 = centre(xt[-1])[0] if xt else 0
spans = [(s["keys"][0], round(min(p[0] for p in s["points"]), 1), round(max(p[0] for p in s["points"]), 1)) for s in curves]
check(len(curves) == len(agents) and xt and all(abs(a - x0) < 3 and abs(b - x2) < 3 for _, a, b in spans),
      "fast_p: every curve runs from the '0' tick to the '2' tick: the axis is p = 0 to 2",
      {"ticks": [x0, x2], "curves": spans})
check(any("fast_0 to fast_2" in t["text"] for t in fp["text_boxes"]),
      "fast_p: the x axis's label says it spans fast_0 to fast_2", [t["text"] for t in fp["text_boxes"]][-6:])

# one colour per agent: each series keyed by an agent is drawn in one colour, the same in every plot, and
# no two agents share one; no series is drawn in a colour that stands for no agent
def agent_of(key):
    for a in agents:
        if key == a or key.startswith(a + ": "):
            return a
    return None
seen, multi, strays = {}, [], []
for fid, x in figs.items():
    for s in x["series"]:
        own = [c for c in s["colours"] if not neutral(c)]
        a = agent_of(s["keys"][0]) if s["keys"] else None
        if a is not None:
            if len(set(own)) != 1:
                multi.append((fid, a, s["colours"]))
            seen.setdefault(a, {}).setdefault(fid, set()).update(own)
        strays += [(fid, s["keys"][:1], c) for c in own]
check(not multi, "every series an agent's key names is drawn in one colour", multi)
colour = {a: set().union(*by.values()) for a, by in seen.items()}
check(all(len(c) == 1 for c in colour.values()) and len(colour) == len(agents),
      "every agent has one colour, the same in every plot that keys it", {a: {k: sorted(v) for k, v in by.items()} for a, by in seen.items()})
flat_colours = [next(iter(c)) for c in colour.values() if len(c) == 1]
check(len(set(flat_colours)) == len(flat_colours), "no two agents share a colour", colour)
strays = [s for s in strays if all(s[2] not in c for c in colour.values())]
check(not strays, "no series is drawn in a colour that stands for no agent (greys aside)", strays[:6])
for fid in ("plot-fast-p", "plot-speedups", "plot-per-problem"):
    keyed = sorted({agent_of(s["keys"][0]) for s in figs.get(fid, {"series": []})["series"] if s["keys"]} - {None})
    check(keyed == sorted(agents), "%s keys every agent by its colour" % fid, keyed)

# texts: none overlaps another, none leaves its plot or lies on a panel's data, none is small
def proj(q, ax):
    v = [p[0] * ax[0] + p[1] * ax[1] for p in q]
    return min(v), max(v)
def overlap(q1, q2, tol=1.0):  # separating axes of two rectangles, turned as their texts are
    for q in (q1, q2):
        for i in range(2):
            (ax, ay), (bx, by) = q[i], q[i + 1]
            n = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5 or 1
            axis = ((by - ay) / n, (ax - bx) / n)
            l1, h1 = proj(q1, axis)
            l2, h2 = proj(q2, axis)
            if min(h1, h2) - max(l1, l2) <= tol:
                return False
    return True
def clashes(tb):  # pairs whose upright boxes meet, by a sweep along x, then the exact test
    box = sorted(((min(p[0] for p in t["quad"]), max(p[0] for p in t["quad"]), min(p[1] for p in t["quad"]),
                   max(p[1] for p in t["quad"]), t) for t in tb), key=lambda b: b[0])
    for i, a in enumerate(box):
        for b in box[i + 1:]:
            if b[0] > a[1]:
                break
            if b[2] < a[3] and a[2] < b[3] and overlap(a[4]["quad"], b[4]["quad"]):
                yield a[4]["text"], b[4]["text"]
clash, outside, on_data, small = [], [], [], []
for fid, x in figs.items():
    tb = x["text_boxes"]
    clash += [(fid, a, b) for a, b in clashes(tb)]
    l, t, r, b = x["box"]
    outside += [(fid, s["text"]) for s in tb if any(p[0] < l - 1 or p[0] > r + 1 or p[1] < t - 1 or p[1] > b + 1 for p in s["quad"])]
    for fr in x["frames"]:
        on_data += [(fid, s["text"]) for s in tb if overlap(s["quad"], [[fr[0], fr[1]], [fr[2], fr[1]], [fr[2], fr[3]], [fr[0], fr[3]]])]
    small += [(fid, s["text"], round(s["px"], 1)) for s in tb if s["px"] < 10]
check(not clash, "no two texts of a plot overlap (tick labels, keys, titles)", clash[:6])
check(not outside, "every text lies inside its plot's SVG", outside[:6])
check(not on_data, "no text lies on a panel's data area (keys and labels sit outside the frames)", sorted(set(on_data))[:6])
check(not small, "every text of every plot renders at 10 px or more", small[:6])
check(sum(len(x["text_boxes"]) for x in figs.values()) > 40, "and there were texts to measure",
      {k: len(x["text_boxes"]) for k, x in figs.items()})

# the iterative agents' plot is over the results table's problems
problems = [t for t in f.get("tables", []) if t["id"] == "problems-table"]
n = problems[0]["rows"] - 1 if problems else -1
at = figs.get("plot-attempts")
if at:
    check(all(("%s: the same %d problems as the results table" % (a, n)) in at["caption"]
              for a in agents if any(agent_of(k) == a for s in at["series"] for k in s["keys"])),
          "attempts: the caption says each iterative agent's curves are over the results table's %d problems" % n,
          at["caption"][:400])
PY
}
# the correct % the iterative agent's top curve ends at, against its row of the results table: read off the
# plot by its 0 and 100 ticks
attempts_end() { # facts.json agent
	python3 - "$1" "$2" <<'PY'
import json, re, sys
f, agent = json.load(open(sys.argv[1])), sys.argv[2]
at = [x for x in f["figures"] if x["id"] == "plot-attempts"][0]
tick = {t["text"].strip(): sum(p[1] for p in t["quad"]) / 4 for t in at["text_boxes"]
        if t["anchor"] == "end" and t["text"].strip() in ("0", "100")}
curve = [s for s in at["series"] if s["keys"] == [agent + ": correct"]][0]["points"]
y = max(curve)[1]  # the point of the largest k
table = [t for t in f["tables"] if t["id"] == "summary-table"][0]
row = table["body"][table["first_col"].index(agent)]
print("%.1f %s" % (100 * (tick["0"] - y) / (tick["0"] - tick["100"]), row[table["head"].index("all")].split(" / ")[0].split(" [")[0]))
PY
}
tap_from() { # lines "ok|fail<TAB>name<TAB>evidence" -> TAP
	while IFS=$'\t' read -r st name ev; do
		[ -n "$name" ] || { _report fail "the DOM check ran" "$st"; continue; }
		if [ "$st" = ok ]; then _report ok "$1: $name"; else _report fail "$1: $name" "$ev"; fi
	done
}

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$browser" ] && [ -n "${CI:-}" ] && [ "${CI:-}" != false ]; then
	_report fail "Chromium is installed in CI (scripts/setup.sh installs the package chromium)" "CI=$CI, no chromium on PATH"
elif [ -z "$browser" ]; then
	skip "the report's plots in headless Chromium" "chromium is not installed (Debian package chromium; scripts/setup.sh)"
else
	tap_from "90 problems, 3 agents" < <(plot_check many "$TMP/many/report.html" "$IT" "$ONE" "$SAM")
	read -r got want < <(attempts_end "$TMP/many.json" "$IT")
	if [ -n "$want" ] && python3 -c "import sys; sys.exit(abs($got - $want) > 1.5)"; then
		_report ok "attempts: the correct curve ends at the results table's correct % ($got vs $want)"; else
		_report fail "attempts: the correct curve ends at the results table's correct % (within the 1-point dodge)" "plot $got, table $want"; fi
	tap_from "iterative store" < <(plot_check rich "$TMP/rich/report.html" \
		'<img src=x onerror=alert(1)>"&'"'"'|*_[l](http://x)' oneshot stitchcuda)
	tap_from "1200 problems" < <(plot_check huge "$TMP/huge/report.html" solo)
	labels=$(python3 -c 'import json, sys
f = [x for x in json.load(open(sys.argv[1]))["figures"] if x["id"] == "plot-per-problem"][0]
print(sum(t["angle"] == -90 and t["text"].startswith("L") for t in f["text_boxes"]), "one in" in f["caption"])' "$TMP/huge.json")
	check_eq "1200 problems: the per-problem plot labels one problem in two, and its caption says so" "$labels" "600 True"
fi
