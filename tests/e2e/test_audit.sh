#!/usr/bin/env bash
# test_audit.sh - `stitchbench audit` end to end: on the bundled suite it finds exactly the traps the suite
# holds, problem by problem; on tests/fixtures/suite_traps every kind of finding; the cache, --run into a
# store that `report` reads, and verdicts of `eval` that carry the problem's audit.
source "$(dirname "$0")/lib.sh"
use_cache
TRAPS="$SB_ROOT/tests/fixtures/suite_traps"

sql() { python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print(*row)' "$@"; }

# "L1/2 H17" lines: every finding id of every problem, from the JSON
ids() { python3 -c 'import json,sys
for p in json.load(sys.stdin)["problems"]:
    print(p["problem"], " ".join(sorted(f["id"] for f in p["findings"])) or "-", "FAILED" if p["failed"] else "")' <<<"$OUT_TXT"; }
expect_ids() { # name expected-lines
	local got; got=$(ids | sed 's/ *$//')
	if [ "$got" = "$2" ]; then _report ok "$1"; else _report fail "$1" "$(diff <(echo "$2") <(echo "$got"))"; fi
}

run_sb -q audit --device cpu --json
check_rc "audit of the bundled suite exits 0" 0
expect_ids "the bundled suite: H17 on ReLU, integer ids, Dropout, two near-constant outputs, nothing else" "L1/1 -
L1/2 H17
L1/3 -
L1/4 -
L1/5 -
L1/6 -
L1/7 integer_inputs
L1/8 -
L2/1 -
L2/2 -
L2/3 nondeterministic
L2/4 H15
L2/5 -
L3/1 -
L3/2 -
L3/3 -
L3/4 H15"
msg=$(python3 -c 'import json,sys
p={x["problem"]: x for x in json.load(sys.stdin)["problems"]}
print(p["L1/2"]["findings"][0]["message"]); print(p["L2/3"]["findings"][0]["message"]); print(p["L2/4"]["findings"][0]["message"])' <<<"$OUT_TXT")
grep -q "identity only on this problem's input distribution" <<<"$msg" && _report ok "ReLU is the identity only on [0, 1) inputs (not on signed ones)" \
	|| _report fail "ReLU is the identity only on [0, 1) inputs" "$msg"
grep -q "reseeding torch's RNG before each call" <<<"$msg" && _report ok "Dropout is reproducible under a seed" \
	|| _report fail "Dropout is reproducible under a seed" "$msg"
grep -q "on signed inputs it is not constant" <<<"$msg" && _report ok "the mean of tanh is constant only on [0, 1) inputs" \
	|| _report fail "the mean of tanh is constant only on [0, 1) inputs" "$msg"

run_sb -q audit --device cpu --problems L1/2,L2/4
check_rc "a second audit exits 0" 0
check_out "it reads the cache" "cached in $STITCHBENCH_CACHE/audit"
if [ "$(ls "$STITCHBENCH_CACHE"/audit/*.json | wc -l)" = 17 ]; then _report ok "one cache file per problem file"; else
	_report fail "one cache file per problem file" "$(ls "$STITCHBENCH_CACHE"/audit)"; fi
run_sb audit --device cpu --problems L1/2
check_err "cached problems are not run again" "audited 1/1: L1/2 (cached)"

run_sb -q audit --device cpu --kernelbench-root "$TRAPS" --json --rerun
check_rc "audit of the traps suite exits 0" 0
expect_ids "the traps suite: zeros pass, randn in forward, a copy, the control, Python's random" "L1/1 H16
L1/2 nondeterministic
L1/3 H17
L1/4 -
L1/5 nondeterministic"
msg=$(python3 -c 'import json,sys
p={x["problem"]: x for x in json.load(sys.stdin)["problems"]}
print(p["L1/3"]["findings"][0]["message"]); print(p["L1/5"]["findings"][0]["message"])' <<<"$OUT_TXT")
grep -q "on signed inputs too, so the operation is the identity" <<<"$msg" && _report ok "a copy is the identity on signed inputs too" \
	|| _report fail "a copy is the identity on signed inputs too" "$msg"
grep -q "two runs with the same seed give different outputs" <<<"$msg" && _report ok "Python's random is not reproducible under a seed" \
	|| _report fail "Python's random is not reproducible under a seed" "$msg"

# a problem whose reference fails is reported, and the exit code says so
broken="$TMP/broken"; mkdir -p "$broken/level1"
printf '# L1/1 broken\n# raises\nimport torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n        raise ValueError("no")\n\n\ndef get_inputs():\n    return [torch.rand(4)]\n\n\ndef get_init_inputs():\n    return []\n' >"$broken/level1/1_Broken.py"
run_sb -q audit --device cpu --kernelbench-root "$broken"
check_rc "a reference that fails makes audit exit 1" 1
check_out "and is named with the reason" "FAILED: the reference failed while running seed0: ValueError: no"

# --run: the audit table of a store, read by the report
run_sb -q audit --device cpu --kernelbench-root "$TRAPS" --run audited --set output.dir="$TMP/results"
check_rc "audit --run exits 0" 0
rows=$(sql "$TMP/results/audited/results.db" "SELECT problem || ' ' || id FROM audit ORDER BY problem, id" 2>&1)
if [ "$rows" = "L1/1 H16
L1/2 nondeterministic
L1/3 H17
L1/5 nondeterministic" ]; then _report ok "audit --run writes one row per finding"; else _report fail "audit --run writes one row per finding" "$rows"; fi
run_sb report "$TMP/results/audited" -o "$TMP/report-audited" --no-plots
check_rc "report reads the audited run" 0
md="$TMP/report-audited/report.md"
if grep -q "can pass these problems without doing the work" "$md" && grep -q "Randomness in forward: the reference draws random numbers" "$md" \
	&& [ "$(grep -c "without doing the work" "$md")" = 1 ]; then
	_report ok "the report says per kind what a flag means (H16/H17 and randomness each their own sentence)"; else
	_report fail "the report says per kind what a flag means" "$(grep -A12 "Problems flagged by the audit" "$md")"; fi

# eval: a verdict of an audited problem carries the audit, and a stored verdict brings it into the run
cand="$TMP/zeros.py"
printf 'import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x * 1e-6\n' >"$cand"
run_sb eval "$cand" --problem L1/1 --kernelbench-root "$TRAPS" --device cpu --trials 2 --perf-trials 0 --set checks.static=false "${NO_OPREC[@]}" --json
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], [f["id"] for f in v["audit"]["findings"]], v["audit"]["device"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "pass ['H16'] cpu" ]; then _report ok "the verdict carries the problem's audit"; else _report fail "the verdict carries the problem's audit" "$got"; fi
run_sb eval "$cand" --problem L1/4 --kernelbench-root "$TRAPS" --device cpu --trials 2 --perf-trials 0 --set checks.static=false "${NO_OPREC[@]}" --json
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], v["audit"]["findings"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "incorrect []" ]; then _report ok "a problem audited clean has an empty audit, and the status is the candidate's own"; else
	_report fail "a problem audited clean has an empty audit" "$got"; fi
run_sb eval "$cand" --problem L1/1 --device cpu --trials 1 --perf-trials 0 --set checks.static=false "${NO_OPREC[@]}" --json \
	--set problems.root="$TRAPS" --set eval.tolerance=kernelbench-v0
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["audit"] is not None)' <<<"$OUT_TXT" 2>&1)
if [ "$got" = True ]; then _report ok "the audit follows the problem file, whatever the eval settings"; else
	_report fail "the audit follows the problem file, whatever the eval settings" "$got"; fi
gen="$TMP/gen"; mkdir -p "$gen"; cp "$cand" "$gen/level_1_problem_1_sample_0_kernel.py"
run_sb -q eval --samples "$gen" -o "$TMP/v.jsonl" --run fromeval --set output.dir="$TMP/results" --kernelbench-root "$TRAPS" \
	--device cpu --trials 2 --perf-trials 0 --set checks.static=false "${NO_OPREC[@]}"
rows=$(sql "$TMP/results/fromeval/results.db" "SELECT problem || ' ' || id FROM audit" 2>&1)
if [ "$rows" = "L1/1 H16" ]; then _report ok "eval --run stores the audit of the problems it judged"; else
	_report fail "eval --run stores the audit of the problems it judged" "$rows"; fi
run_sb report "$TMP/results/fromeval" -o "$TMP/report" --no-plots
check_rc "report reads the run" 0
if grep -q "H16" "$TMP/report/report.md" && grep -q "Problems flagged by the audit" "$TMP/report/report.md"; then
	_report ok "the report lists the audited problem"; else _report fail "the report lists the audited problem" "$(grep -A8 -i audit "$TMP/report/report.md")"; fi

run_sb audit --problems L9/1
check_rc "a bad selector is an input error" 2
run_sb audit --frobnicate
check_err "an unknown option is named" "'--frobnicate' is not known"
