#!/usr/bin/env bash
# test_bench_real.sh - `make bench-real`'s table maker (scripts/bench/real_tables.py) on hand-made verdict
# JSONL: whose fault each non-pass verdict is, throughput, idle share, ours beside theirs, the splice.
source "$(dirname "$0")/lib.sh"
cd "$SB_ROOT" || exit 1
TABLES=scripts/bench/real_tables.py

# ---- the table maker on hand-made verdicts ---------------------------------------------------------
G="$TMP/g"
mkdir -p "$G"
verdict() { # file status message [findings-json]
	: >"$G/$1"
	printf '{"schema":1,"status":"%s","message":"%s","problem":{"ref":"?"},"candidate":{"path":"/elsewhere/%s"},"findings":%s,"seconds":{"total":2.0},"speedup":null}\n' \
		"$2" "$3" "$1" "${4:-[]}" >>"$TMP/v.jsonl"
}
: >"$TMP/v.jsonl"
verdict level_1_problem_1_sample_0_kernel.py pass "all 5 correctness trials passed"
verdict level_1_problem_2_sample_0_kernel.py runtime_error "ExchangeError: cuMemCreate failed (CUDA driver error 2) while running trial 0"
verdict level_1_problem_3_sample_0_kernel.py runtime_error "RuntimeError: CUDA error: an illegal memory access was encountered while running trial 0"
verdict level_1_problem_4_sample_0_kernel.py rejected "H01: forward calls torch.matmul" \
	'[{"id":"H05","severity":"flag","message":"m"},{"id":"H01","severity":"reject","message":"m"}]'
verdict level_1_problem_5_sample_0_kernel.py harness_error "the build cache could not be written: no space left on device"
verdict level_1_problem_6_sample_0_kernel.py runtime_error "the reference worker failed while timing: it died (SIGKILL)"
verdict level_1_problem_9_sample_0_kernel.py timeout "no answer within the 1800 s limit while timing"
verdict level_2_problem_1_sample_0_kernel.py pass "all passed" '[{"id":"H15","severity":"flag","message":"m"}]'
verdict level_2_problem_2_sample_0_kernel.py compile_error "build failed: /root/.cache/stitchbench/ext/k/cuda.cu(3): error: identifier x is undefined"
: >"$G/level_1_problem_7_sample_0_kernel.py" # not judged, said on stderr
: >"$G/level_1_problem_8_sample_0_kernel.py" # nothing at all
cat >"$TMP/err.log" <<'LOG'
stitchbench: 11 candidates in DIR, 0 already judged in v.jsonl
stitchbench: trace: 1.000 worker run took 0.1 s
stitchbench: warning: /elsewhere/level_1_problem_7_sample_0_kernel.py: not judged: the reference failed while computing the expected outputs: runtime_error: RuntimeError: boom
LOG
printf '0\n0\n50\n100\n' >"$TMP/util.log"
printf "1800.0\n\n1800\n" >"$TMP/walls" # two invocations
printf 'file\tlevel\tproblem_id\ttheir_verdict\n%s\t1\t1\tcompiled=1 correct=1 hw=A100 [from runs/x.json]\n%s\t1\t3\tcompiled=1 correct=0 hw=A100 runtime_error=boom\n%s\t1\t4\tcompiled=1 correct=1 hw=A100\n%s\t1\t9\t-\n%s\t2\t1\tspeedup=2.1 (vs eager) hw=A100; no per-kernel correctness field\n%s\t1\t2\tcompiled=1 correct=1\n' \
	level_1_problem_1_sample_0_kernel.py level_1_problem_3_sample_0_kernel.py level_1_problem_4_sample_0_kernel.py \
	level_1_problem_9_sample_0_kernel.py level_2_problem_1_sample_0_kernel.py level_1_problem_2_sample_0_kernel.py \
	>"$TMP/manifest.tsv"
OUT_TXT=$(python3 "$TABLES" part --title "hand-made" --samples "$G" --jsonl "$TMP/v.jsonl" --log "$TMP/err.log" \
	--walls "$TMP/walls" --util "$TMP/util.log" --manifest "$TMP/manifest.tsv" 2>&1)
RC=$?
ERR_TXT=""
check_rc "the table maker reads hand-made verdicts" 0
check_out "a pass with a flag finding is counted apart" "| pass | 2 (1 clean, 1 with a flag finding: H15 1) |"
check_out "a rejection is the candidate's, with its reject ids only" "| candidate | rejected H01 | 1 | L1/4 s0 |"
check_out "a crash of the candidate's code is the candidate's" "| candidate | runtime_error | 1 | L1/3 s0 |"
check_out "a timeout is the candidate's" "| candidate | timeout | 1 | L1/9 s0 |"
check_out "a compile error is the candidate's, though its path names a cache" "| candidate | compile_error | 1 | L2/2 s0 |"
check_out "an exchange allocation failure is the harness's" "| harness | exchange failed (runtime_error) | 1 | L1/2 s0 |"
check_out "a failed reference worker is the harness's" "| harness | reference failed (runtime_error) | 1 | L1/6 s0 |"
check_out "harness_error is the harness's" "| harness | harness_error | 1 | L1/5 s0 |"
check_out "a file eval --samples did not judge is the harness's, with its reason" \
	"| harness | not judged | 1 | L1/7 s0 | the reference failed while computing the expected outputs"
check_out "a file with no verdict and no word is the harness's" "| harness | no verdict | 1 | L1/8 s0 |"
check_out "the split adds up" "Non-pass: 4 the candidate's, 5 the harness's (of 11 files)."
check_out "verdicts per hour come from the verdict lines and the invocations' wall time" \
	"9 verdicts in 3600 s of wall time (2 invocations), 9 verdicts per hour"
check_out "the idle share is the share of zero samples" "utilization 0 in nvidia-smi's 200 ms samples of GPU 0): 50% of 4 samples"
check_out "their_verdict is shown without its source" "| compiled=1 correct=1 hw=A100 | yes |"
check_out_re "a failure where they recorded correct=0 agrees" \
	"^\| level_1_problem_3_sample_0_kernel.py \| L1/3 \| runtime_error \| - \| .* \| yes \|$"
check_out "ours against theirs: a harness verdict and a source without correctness are not compared" \
	"2 agree, 1 disagree, 3 not comparable"
check_out "the disagreement is named" "Disagreements: level_1_problem_4_sample_0_kernel.py (ours rejected, theirs pass)."

# the splice: only the text between the markers changes, and a file without them gets them appended
printf '# Benchmarks\n\nbefore\n<!-- bench-real: begin (kept) -->\nold numbers\n<!-- bench-real: end -->\nafter\n' >"$TMP/B.md"
echo "new numbers" >"$TMP/sec.md"
python3 "$TABLES" splice --file "$TMP/B.md" --section "$TMP/sec.md"
echo "newer numbers" >"$TMP/sec.md"
python3 "$TABLES" splice --file "$TMP/B.md" --section "$TMP/sec.md"
want=$(printf '# Benchmarks\n\nbefore\n<!-- bench-real: begin (kept) -->\nnewer numbers\n<!-- bench-real: end -->\nafter')
if [ "$(cat "$TMP/B.md")" = "$want" ]; then _report ok "a second splice replaces the section and keeps the rest"; else
	_report fail "a second splice replaces the section and keeps the rest" "$(cat "$TMP/B.md")"; fi
printf '# Other\n' >"$TMP/C.md"
python3 "$TABLES" splice --file "$TMP/C.md" --section "$TMP/sec.md"
python3 "$TABLES" splice --file "$TMP/C.md" --section "$TMP/sec.md"
if [ "$(grep -c 'bench-real: begin' "$TMP/C.md")" = 1 ] && grep -q '^newer numbers$' "$TMP/C.md" && head -1 "$TMP/C.md" | grep -q Other; then
	_report ok "a file without the section gets one, once"; else _report fail "a file without the section gets one, once" "$(cat "$TMP/C.md")"; fi

echo "1..$_n"
