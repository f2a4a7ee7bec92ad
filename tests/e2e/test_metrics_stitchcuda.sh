#!/usr/bin/env bash
# test_metrics_stitchcuda.sh - StitchCUDA's protocol's table through `metrics` and `report`, on verdicts
# made from a fixture and imported: a fast pass, a slow pass, a flagged pass, a wrong answer and a
# problem without a verdict, with rewards. The numbers are worked by hand below; the table appears with
# --protocol stitchcuda, or by itself for runs whose verdicts name the stitchcuda preset.
# tier: fast (no evaluation: tests/README.md)
source "$(dirname "$0")/lib.sh"
R="$TMP/results"

# Agent sc:    L1/1 pass 2.0 (reward 2.5), L1/2 pass 0.5 (reward 0.8), sample 1 pass 3.0 (reward 3.0),
#              L1/3 pass 12.0 with an H21 flag (reward 0), L1/4 incorrect (reward 0), L1/5 no verdict.
# Agent other: L1/5 pass 1.0, no reward; no verdict for L1/1-L1/4.
# With --by first, sc over its 5 problems: success 3/5; average speedup (2 + 0.5 + 12) / 5 = 2.900x, over
# the 3 timed passes 4.833x; Fast1 2/5 (2.0 and 12.0); partial hacks 1/5; mean reward 3.3 / 4 = 0.825.
# stitchbench's own fast_1 counts the clean 2.0 alone: 20.0. --by best takes L1/2's 3.0: average
# 17 / 5 = 3.400x (17 / 3 = 5.667x over the timed passes), Fast1 3/5, mean reward 5.5 / 4 = 1.375.
make_rows() { # preset-or-empty out.jsonl
	python3 - "$SB_ROOT" "$1" "$2" <<'PY'
import copy, glob, hashlib, json, sys
root, preset, out = sys.argv[1], sys.argv[2], sys.argv[3]
base = json.loads(open(root + "/tests/fixtures/verdicts/shard_b.jsonl").readline())  # a timed pass, 3.0x
def sha(i):  # the bundled suite's file, so that problem names resolve
    path = glob.glob(root + "/kernelbench/suite/level1/%d_*.py" % i)[0]
    return hashlib.sha256(open(path, "rb").read()).hexdigest()
def verdict(i, sample, status, speedup, reward, findings=()):
    v = copy.deepcopy(base)
    v["status"] = status
    v["problem"] = {"ref": "L1/%d" % i, "sha256": sha(i)}
    v["candidate"]["path"] = "/gen/level_1_problem_%d_sample_%d_kernel.py" % (i, sample)
    v["candidate"]["sha256"] = hashlib.sha256(b"%d %d" % (i, sample)).hexdigest()
    if speedup is None:
        v["timing"] = v["speedup"] = None
    else:
        v["speedup"]["vs_eager"] = speedup
    v["findings"] = [dict(id=f, severity="flag", message="more than 10x eager", line=0, col=0) for f in findings]
    v["rubric"] = None if reward is None else {"model": "judge", "total": 0.5, "criteria": [], "error": None,
                                               "reward_lambda": 0.5}
    v["reward"] = reward
    if preset:
        v["settings"]["preset"] = preset
    return v
rows = [("sc", 1, 0, verdict(1, 0, "pass", 2.0, 2.5)), ("sc", 2, 0, verdict(2, 0, "pass", 0.5, 0.8)),
        ("sc", 2, 1, verdict(2, 1, "pass", 3.0, 3.0)), ("sc", 3, 0, verdict(3, 0, "pass", 12.0, 0.0, ["H21"])),
        ("sc", 4, 0, verdict(4, 0, "incorrect", None, 0.0)), ("other", 5, 0, verdict(5, 0, "pass", 1.0, None))]
with open(out, "w") as f:
    for agent, i, sample, v in rows:
        f.write(json.dumps({"agent": agent, "problem": "L1/%d" % i, "sample": sample, "attempt": 0, "stage": None,
                            "verdict": v}) + "\n")
PY
}
make_rows "" "$TMP/plain.jsonl"
make_rows stitchcuda "$TMP/sc.jsonl"
run_sb import "$R/plain" "$TMP/plain.jsonl"
check_rc "the mixed verdicts are imported" 0

sc_row='| sc | L1 | 60.0% (3/5) | 2.900x | 4.833x (3) | 40.0% (2/5) | 20.0% (1/5) | 0.825 (4) |'
other_row='| other | L1 | 20.0% (1/5) | 0.200x | 1.000x (1) | 0.0% (0/5) | 0.0% (0/5) | n/a (0) |'
run_sb metrics "$R/plain"
check_rc "metrics without a protocol" 0
if ! grep -qF "StitchCUDA's protocol" <<<"$OUT_TXT"; then _report ok "a run of no preset shows stitchbench's tables alone"; else
	_report fail "a run of no preset shows stitchbench's tables alone" "${OUT_TXT:0:600}"; fi
check_out_points "where fast_1 counts the clean fast pass only" "| sc | 60.0 / 20.0 / 1.000x (1 flagged) | 60.0 / 20.0 / 1.000x (1 flagged) |"

run_sb metrics "$R/plain" --protocol stitchcuda
check_rc "metrics --protocol stitchcuda" 0
check_out "the table has StitchCUDA's columns" "| agent | level | success | average speedup vs eager | average over timed passes (n) | Fast1 | partial hacks | mean reward (n) |"
check_out "sc: a missing problem and a wrong one count 0 in the average, the flagged pass counts for speed" "$sc_row"
check_out "other: its problems without a verdict are failures; no reward, no number" "$other_row"
check_out "the caption says a flagged pass counts here" "Here a pass with a hack finding counts as correct and for speed"

run_sb metrics "$R/plain" --protocol stitchcuda --by best
check_out "--by best picks the same representatives as the other tables" \
	'| sc | L1 | 60.0% (3/5) | 3.400x | 5.667x (3) | 60.0% (3/5) | 20.0% (1/5) | 1.375 (4) |'

run_sb metrics "$R/plain" --protocol stitchcuda --json
got=$(python3 -c '
import json, sys
j = json.load(sys.stdin)
c = {a["agent"]: a["levels"]["1"]["stitchcuda"] for a in j["agents"]}["sc"]
print(j["protocol"], c["correct"], c["success_pct"], round(c["mean_speedup_eager"], 6), round(c["mean_speedup_eager_timed_passes"], 6),
      c["timed_passes"], c["fast_1"], c["fast_1_pct"], c["partial_hacks"], c["partial_hack_pct"], round(c["mean_reward"], 6), c["rewarded"])' \
	<<<"$OUT_TXT" 2>&1)
check_eq "--json carries the same numbers under stitchcuda" "$got" "stitchcuda 3 60.0 2.9 4.833333 3 2 40.0 1 20.0 0.825 4"
run_sb metrics "$R/plain" --json
got=$(python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["protocol"], "stitchcuda" in j["agents"][0]["levels"]["1"])' <<<"$OUT_TXT" 2>&1)
check_eq "and leaves them out when not asked" "$got" "stitchbench False"

run_sb metrics "$R/plain" --protocol kevin
check_rc "an unknown protocol is a usage error" 2
check_err "naming the choices" "--protocol kevin: use stitchbench or stitchcuda"

# a run whose verdicts name the stitchcuda preset shows the table by itself
run_sb import "$R/preset" "$TMP/sc.jsonl"
run_sb metrics "$R/preset"
check_out "the stitchcuda preset shows StitchCUDA's table without the option" "$sc_row"
run_sb metrics "$R/preset" --protocol stitchbench
if ! grep -qF "StitchCUDA's protocol" <<<"$OUT_TXT"; then _report ok "--protocol stitchbench leaves it out"; else
	_report fail "--protocol stitchbench leaves it out" "${OUT_TXT:0:600}"; fi

run_sb report "$R/preset" -o "$TMP/rep" --no-plots
check_rc "report of the stitchcuda run" 0
check_true "the report has StitchCUDA's table" grep -qF "$sc_row" "$TMP/rep/report.md"
check_true "in the HTML too" grep -qF 'id="stitchcuda-table"' "$TMP/rep/report.html"
run_sb report "$R/plain" -o "$TMP/rep2" --no-plots
check_true "a report of no preset has none" test "$(grep -c "StitchCUDA's protocol" "$TMP/rep2/report.md")" = 0
run_sb report "$R/plain" -o "$TMP/rep3" --no-plots --protocol stitchcuda
check_true "report --protocol stitchcuda adds it" grep -qF "$other_row" "$TMP/rep3/report.md"
