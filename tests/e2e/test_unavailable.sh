#!/usr/bin/env bash
# test_unavailable.sh - an agent the workers' torch cannot run (torch-compile without torch.compile, i.e.
# torch < 2.0 such as Debian's 1.13) is skipped with one line, its samples end as "unavailable" with no
# attempts, the exit code stays 0, and metrics and the report say "unavailable" rather than 0%. Under a
# torch that has torch.compile the same run must run it instead. Nothing is faked: the machine's own
# torch decides which half applies.
source "$(dirname "$0")/lib.sh"
use_cache
R="$TMP/results"
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }

cat >"$TMP/tc.yaml" <<YAML
name: tc
problems: {levels: [1], select: [L1/2, L1/3]}
agents:
  - {name: tc, kind: torch-compile}
  - {name: eager, kind: torch-eager}
eval: {device: cpu, trials: 1, perf_trials: 3, timing_cap_s: 5, warmup_ms: 10}
output: {dir: $R}
YAML
run_sb doctor
py=$(sed -n 's/.*python *\(\/[^ ,]*\).*/\1/p' <<<"$OUT_TXT" | head -1)
has=$("${py:-python3}" -c 'import torch; print(int(hasattr(torch, "compile")), torch.__version__)' 2>/dev/null)
run_sb run -c "$TMP/tc.yaml" --run-id tc
D="$R/tc"
if [ "${has%% *}" = 0 ]; then
	ver=${has#* }
	check_rc "a run with torch-compile under torch $ver exits 0" 0
	check_err "one line says it is skipped and why" "tc: skipped: torch $ver has no torch.compile (needs torch 2.0 or later); 2 samples ended as \"unavailable\""
	if [ "$(grep -c 'has no torch.compile' <<<"$ERR_TXT")" = 1 ]; then _report ok "said once, not per problem"; else
		_report fail "said once, not per problem" "$ERR_TXT"; fi
	check_out "the summary counts them as ended and unavailable" "run tc: 4 of 4 samples ended (2 unavailable), 0 unfinished"
	got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stop_reason"], d["attempts"], d["notes"][0])' "$D/samples/tc/L1_2/s0/summary.json" 2>&1)
	check_eq() { if [ "$2" = "$3" ]; then _report ok "$1"; else _report fail "$1" "got: $2 / want: $3"; fi; }
	check_eq "its samples end as unavailable with no attempts" "$got" "unavailable 0 not run: torch $ver has no torch.compile (needs torch 2.0 or later)"
	check_eq "no verdict of it is stored; torch-eager ran" "$(sql "$D/results.db" "SELECT agent, count(*) FROM verdicts GROUP BY agent")" "eager|2"
	check_eq "the store records why" "$(sql "$D/results.db" "SELECT agent, reason FROM unavailable")" "tc|torch $ver has no torch.compile (needs torch 2.0 or later)"
	run_sb metrics "$D"
	check_out "metrics shows it as unavailable" "| tc | unavailable | unavailable |"
	check_out "and says why, not 0%" "Unavailable in this run: torch $ver has no torch.compile"
	if grep -q "^| tc | 0.0" <<<"$OUT_TXT"; then _report fail "no 0% row for it" "$OUT_TXT"; else _report ok "no 0% row for it"; fi
	run_sb metrics --json "$D"
	got=$(python3 -c 'import json,sys; a={x["agent"]: x for x in json.load(sys.stdin)["agents"]}; print("unavailable" in a["tc"], a["tc"]["levels"], "unavailable" in a["eager"])' <<<"$OUT_TXT" 2>&1)
	check_eq "metrics --json marks it unavailable with no levels" "$got" "True {} False"
	run_sb report "$D" -o "$TMP/rep" --no-plots
	check_rc "report exits 0" 0
	check_true "the report says it was unavailable" grep -q "Unavailable in this run: torch" "$TMP/rep/report.md"
	run_sb run --resume "$D"
	check_rc "a resume has nothing left to do and exits 0" 0
	check_out "every sample ended earlier" "run tc: 4 of 4 samples ended, 0 unfinished; 0 attempts in this session"
else
	check_rc "a run with torch-compile under torch ${has#* } exits 0" 0
	check_true "torch.compile is there, so torch-compile ran" test "$(sql "$D/results.db" "SELECT count(*) FROM verdicts WHERE agent = 'tc'")" = 2
	check_true "and nothing says unavailable" bash -c "! grep -q unavailable <<<\"\$1\"" _ "$ERR_TXT$OUT_TXT"
fi
