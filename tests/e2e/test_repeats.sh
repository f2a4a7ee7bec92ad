#!/usr/bin/env bash
# test_repeats.sh - repeated evaluations end to end on the CPU: a run with run.repeats against the fake LLM
# server judges its best clean pass again and stores the repeats as rows of their own, beside a verdict
# they leave alone; `metrics --repeats` reuses what is stored and judges only what is missing; the speed
# intervals of metrics and report cover the repeats' spread, and widen when the repeats spread more.
source "$(dirname "$0")/lib.sh"
use_cache
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
R="$TMP/results"
D="$R/rep"
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
sqlw() { python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(sys.argv[2]); db.commit()' "$@"; }
source "$SB_ROOT/tests/e2e/fake_llm.sh"
trap 'stop_fakes; rm -rf "$TMP"' EXIT

# One oneshot agent on L1/2 (ReLU), answered with the C++ fixture (a clean pass; its build is in the warm
# cache); the run ends by judging that pass twice more.
python3 - "$SB_ROOT/tests/fixtures/candidates/relu_cpp_ok.py" >"$TMP/a.script" <<'PY'
import json, sys
print(json.dumps([{"content": "```python\n" + open(sys.argv[1]).read() + "```\n", "prompt_tokens": 100,
                   "completion_tokens": 50}]))
PY
start_fake a "$TMP/a.script"
cat >"$TMP/rep.yaml" <<EOF
name: rep
problems: {levels: [1], select: [L1/2]}
models:
  - {name: a, provider: openai, api_base: "http://127.0.0.1:$PORT_a/v1", model: fake-model, api_key_env: null, timeout_s: 30}
agents:
  - {name: one, kind: oneshot, model: a}
eval: {device: cpu, trials: 2, perf_trials: 5, warmup_ms: 10, timing_cap_s: 10}
run: {repeats: 2}
output: {dir: $R, report: false}
EOF
run_sb run -c "$TMP/rep.yaml" --run-id rep
check_rc "a run with run.repeats: 2 ends with exit 0" 0
check_eq "the verdict passed, and two repeats of it are stored with the same candidate" \
	"$(sql "$D/results.db" "SELECT v.status, count(r.idx), group_concat(r.idx), sum(r.candidate_sha256 = v.candidate_sha256), sum(r.status = 'pass') FROM verdicts v LEFT JOIN repeats r USING (agent, problem, sample, attempt)")" \
	"pass|2|1,2|2|2"
check_err "the run says what it judged again" "repeat 2 of 2: one L1/2 sample 0 attempt 0"
check_eq "the store is schema 2; a repeat is no verdict and no attempt" \
	"$(sql "$D/results.db" "SELECT (SELECT version FROM schema_version), (SELECT count(*) FROM verdicts), (SELECT count(*) FROM attempts)")" "2|1|1"
verdict0=$(sql "$D/results.db" "SELECT json FROM verdicts")
ids0=$(sql "$D/results.db" "SELECT idx, created, speedup_eager FROM repeats ORDER BY idx")

# ---------- reused, not judged again ----------
run_sb metrics "$D" --repeats 2 --json
check_rc "metrics --repeats 2 over the run" 0
check_err "it judges nothing: both repeats are stored" "repeats of $D: 1 candidates, 0 repeats judged now, 2 stored before"
check_eq "and the repeat rows are the same ones" "$(sql "$D/results.db" "SELECT idx, created, speedup_eager FROM repeats ORDER BY idx")" "$ids0"
got=$(python3 -c 'import json,sys; j=json.load(sys.stdin); c=j["agents"][0]["levels"]["all"]; print(j["repeats"]["speed_intervals"], c["timed"], c["timed_repeated"], c["repeats"], c["repeats_failed"])' <<<"$OUT_TXT" 2>&1)
check_eq "the JSON names the repeats the intervals used" "$got" "own interval and repeats 1 1 2 0"
run_sb metrics "$D" --repeats 3
check_err "--repeats 3 judges the one that is missing" "repeats of $D: 1 candidates, 1 repeats judged now, 2 stored before"
check_out "the text says what the speed intervals cover, with the count" "one: 3 repeats over 1 of its 1 timed problems"
check_eq "repeat 3 joins them; the verdict is the same JSON" \
	"$(sql "$D/results.db" "SELECT group_concat(idx) FROM repeats") $(test "$(sql "$D/results.db" "SELECT json FROM verdicts")" = "$verdict0" && echo same)" \
	"1,2,3 same"

# ---------- the interval covers the spread between evaluations ----------
# With one problem, the geometric mean's interval is that problem's speed interval as the bootstrap draws it.
ci() { python3 -c 'import json,sys; c=json.load(sys.stdin)["agents"][0]["levels"]["all"]; lo, hi = c["geomean_speedup_eager_ci95"]; print("%.6f %.6f %.6f" % (c["geomean_speedup_eager"], lo, hi))' <<<"$1"; }
cp -r "$D" "$TMP/norep"
sqlw "$TMP/norep/results.db" "DELETE FROM repeats"
run_sb metrics "$TMP/norep" --json
read -r g0 lo0 hi0 <<<"$(ci "$OUT_TXT")"
check_eq "without repeats the JSON says one evaluation" \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["repeats"]["speed_intervals"])' <<<"$OUT_TXT")" "one evaluation"
run_sb metrics "$TMP/norep"
check_out "and the text says the intervals cover one evaluation only" "over one evaluation only: no repeated evaluation is stored"
own=$(sql "$D/results.db" "SELECT json_extract(json, '\$.speedup.vs_eager_ci95[0]') || ' ' || json_extract(json, '\$.speedup.vs_eager_ci95[1]') FROM verdicts")
check_true "without repeats the interval is the verdict's own, within the bootstrap's draws ($lo0 $hi0 vs $own)" \
	python3 -c 'import sys; lo, hi, olo, ohi = map(float, sys.argv[1:]); sys.exit(not (abs(lo / olo - 1) < 0.1 and abs(hi / ohi - 1) < 0.1))' "$lo0" "$hi0" $own
run_sb metrics "$D" --json
read -r g1 lo1 hi1 <<<"$(ci "$OUT_TXT")"
check_eq "repeats leave the point where the verdict put it" "$g1" "$g0"
check_true "the measured repeats widen it or leave it ($lo1 $hi1 around $lo0 $hi0)" \
	python3 -c 'import sys; lo0, hi0, lo1, hi1 = map(float, sys.argv[1:]); sys.exit(not (lo1 <= lo0 * 1.0001 and hi1 >= hi0 * 0.9999))' "$lo0" "$hi0" "$lo1" "$hi1"
# Noisy repeats: the same candidate measured, each time tightly, at 50x and 1/50 of its speedup. Set from
# the point, not from the measured repeats: on a loaded CPU those are already wide, and scaling them
# proves nothing.
sqlw "$D/results.db" "UPDATE repeats SET speedup_eager = $g0 * CASE idx WHEN 1 THEN 50.0 WHEN 2 THEN 0.02 ELSE 1 END, speedup_eager_lo = 0.99 * $g0 * CASE idx WHEN 1 THEN 50.0 WHEN 2 THEN 0.02 ELSE 1 END, speedup_eager_hi = 1.01 * $g0 * CASE idx WHEN 1 THEN 50.0 WHEN 2 THEN 0.02 ELSE 1 END"
run_sb metrics "$D" --json
read -r g2 lo2 hi2 <<<"$(ci "$OUT_TXT")"
check_true "noisy repeats widen it a lot, on both sides ($lo2 $hi2 against one evaluation's $lo0 $hi0)" \
	python3 -c 'import sys; g, lo0, hi0, lo2, hi2 = map(float, sys.argv[1:]); sys.exit(not (lo2 < lo0 and hi2 > hi0 and hi2 / g > 2 and g / lo2 > 2))' "$g2" "$lo0" "$hi0" "$lo2" "$hi2"
check_eq "and the point stays" "$g2" "$g0"

# ---------- report ----------
run_sb report "$D" --no-plots -o "$TMP/report" --repeats 3
check_rc "report --repeats 3 writes the report" 0
check_err "without judging again" "0 repeats judged now, 3 stored before"
check_true "the report says what its speed intervals cover" grep -q "one: 3 repeats over 1 of its 1 timed problems" "$TMP/report/report.md"

# ---------- refused where it cannot repeat ----------
mkdir -p "$TMP/alone" && cp "$TMP/norep/results.db" "$TMP/alone/results.db"
run_sb metrics "$TMP/alone/results.db" --repeats 1
check_rc "a store without its config.yaml cannot be repeated" 2
check_err "and says why" "no config.yaml beside the store"
run_sb metrics "$D" --repeats -1
check_rc "a negative count is a usage error" 2
