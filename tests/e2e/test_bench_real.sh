#!/usr/bin/env bash
# test_bench_real.sh - `make bench-real` (scripts/bench/bench_real.sh) without ../shared: its table maker on
# hand-made verdict JSONL (whose fault each non-pass verdict is, throughput, idle share, ours beside
# theirs, the BENCHMARKS.md splice), then the script end to end on the CPU over three tiny problems.
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

# the part's file-by-file table stays in its own section file: the splice keeps the summary lines only
printf '%s\n' "$OUT_TXT" >"$TMP/part.md"
python3 "$TABLES" splice --file "$TMP/C.md" --section "$TMP/part.md"
if grep -q "2 agree, 1 disagree, 3 not comparable" "$TMP/C.md" && ! grep -q "| compiled=1 correct=1 hw=A100 | yes |" "$TMP/C.md" &&
	grep -q "file-by-file table is in the run's bench-real.md" "$TMP/C.md"; then
	_report ok "the splice keeps the summaries and leaves the file-by-file table in the section file"; else
	_report fail "the splice keeps the summaries and leaves the file-by-file table in the section file" "$(cat "$TMP/C.md")"; fi

# ---- the script end to end on the CPU ----------------------------------------------------------------
# An upstream-like checkout (KernelBench/levelN/) of three tiny problems, one whose reference raises.
KB="$TMP/kb"
mkdir -p "$KB/KernelBench/level1"
cp tests/fixtures/suite_traps/level1/1_Tiny_Scale.py tests/fixtures/suite_traps/level1/4_Row_Sum.py "$KB/KernelBench/level1/"
cat >"$KB/KernelBench/level1/7_Reference_Raises.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        raise RuntimeError("this reference cannot run")


def get_inputs():
    return [torch.randn(4, 4)]


def get_init_inputs():
    return []
PY
# a real-dev-like corpus: a copy of a reference, a file Python cannot parse, one for a problem the suite lacks
C="$TMP/corpus"
mkdir -p "$C"
sed -E 's/\bModel\b/ModelNew/g' tests/fixtures/suite_traps/level1/4_Row_Sum.py >"$C/level_1_problem_4_sample_3_kernel.py"
cp tests/fixtures/candidates/syntax_error.py "$C/level_1_problem_1_sample_1_kernel.py"
cp "$C/level_1_problem_4_sample_3_kernel.py" "$C/level_1_problem_99_sample_0_kernel.py"
cp "$C/level_1_problem_4_sample_3_kernel.py" "$C/level_1_problem_4_sample_9_kernel.py" # left out by the pattern
printf 'file\tlevel\tproblem_id\ttheir_verdict\n%s\t1\t4\tcompiled=1 correct=1 hw=T\n%s\t1\t1\tcompiled=0 correct=0 hw=T\n%s\t1\t99\t-\n' \
	level_1_problem_4_sample_3_kernel.py level_1_problem_1_sample_1_kernel.py level_1_problem_99_sample_0_kernel.py \
	>"$C/manifest.tsv"
printf '# Benchmarks\n\nbefore\n<!-- bench-real: begin (kept) -->\nold numbers\n<!-- bench-real: end -->\nafter\n' >"$TMP/BENCH.md"
mkdir -p "$TMP/out"
run_bench() {
	(cd "$TMP" && env OUT="$TMP/out" SB_BENCH_CPU=1 SB_BENCH_TRACE=0 STITCHBENCH_CACHE="$TMP/cache" "$@" \
		bash "$SB_ROOT/scripts/bench/bench_real.sh" --md BENCH.md) >"$TMP/o" 2>"$TMP/e"
	RC=$?
	OUT_TXT=$(cat "$TMP/o")
	ERR_TXT=$(cat "$TMP/e")
}
# no timing: what is under test is the script, and tiny problems' timings on a busy CI machine are noise
run_bench SB_BENCH_KB_ROOT=kb SB_BENCH_CORPUS=corpus SB_BENCH_PROBLEMS=L1/1,L1/4,L1/7 SB_BENCH_EVAL_ARGS='--perf-trials 0' \
	SB_BENCH_REAL_FILES='level_1_problem_1_*,level_1_problem_4_sample_3_kernel.py,level_1_problem_99_*'
check_rc "bench-real runs end to end on the CPU, with relative folders" 0
# named as the script names folders: relative to the checkout when in or beside it, else absolute
kb_named=$(realpath -m --relative-to="$SB_ROOT" "$TMP/kb")
case "$kb_named" in ../../*) kb_named=$(realpath -m "$TMP/kb") ;; esac
check_out "the upstream part names its checkout" "#### Upstream KernelBench references as candidates, from $kb_named"
check_out "the static checks are off and H01/H04 flags for the references only, SB_BENCH_EVAL_ARGS added, 3 files" \
	"--set checks.static=false --set checks.policy=H01:flag,H04:flag --perf-trials 0\`, 3 files."
check_out_re "both working references pass as candidates" "^\| pass \| 2( |$)"
check_out_re "a problem whose reference raises is the harness's" "^\| harness \| [^|]+ \| 1 \| L1/7 s0 \|"
check_out "the real-dev part judges the chosen files, every check on" "--device cpu --perf-trials 0\`, 3 files."
check_out_re "a file Python cannot parse is the candidate's" "^\| candidate \| [^|]+ \| [0-9]+ \| [^|]*L1/1 s1"
check_out "a file for a problem the suite lacks is the harness's, with eval's reason" "| harness | skipped | 1 | L1/99 s0 |"
check_out "each real-dev file has our verdict beside theirs" "| level_1_problem_4_sample_3_kernel.py | L1/4 |"
check_out "their_verdict comes from the manifest" "| compiled=0 correct=0 hw=T |"
check_out "verdicts per hour are printed" "verdicts per hour"
check_out "the idle share says why it is missing on the CPU" "GPU idle: not measured"
md=$(cat "$TMP/BENCH.md")
if grep -q '^before$' <<<"$md" && grep -q '^after$' <<<"$md" && ! grep -q 'old numbers' <<<"$md" &&
	grep -q '^### Last run: .*device cpu$' <<<"$md" && grep -q 'Command: `SB_BENCH_CPU=.1. .*make bench-real`' <<<"$md"; then
	_report ok "the section in --md is replaced, with the date, the device and the command"; else
	_report fail "the section in --md is replaced, with the date, the device and the command" "$md"; fi
check_true "the updated file is copied to \$OUT" cmp "$TMP/BENCH.md" "$TMP/out/BENCH.md"
check_eq "the upstream verdicts lie in \$OUT, the raising reference's file as harness_error" \
	"$(python3 -c 'import json, sys; print(" ".join(sorted("%s:%s" % (json.loads(l)["problem"]["ref"], json.loads(l)["status"]) for l in open(sys.argv[1]))))' "$TMP/out/bench-real-upstream.jsonl")" \
	"L1/1:pass L1/4:pass L1/7:harness_error"

# a batch stopped by SB_BENCH_TIME_S: the tables of what it judged, the rest not reached; the same
# SB_BENCH_STATE again goes on where it stopped
cat >"$KB/KernelBench/level1/8_Slow_Reference.py" <<'PY'
import time
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        time.sleep(120)
        return x


def get_inputs():
    return [torch.randn(4, 4)]


def get_init_inputs():
    return []
PY
run_bench SB_BENCH_KB_ROOT=kb SB_BENCH_PARTS=upstream SB_BENCH_PROBLEMS=L1/8 SB_BENCH_STATE=state SB_BENCH_TIME_S=3
check_rc "a batch stopped by its time limit still gives its tables" 0
check_out "it says so, and how to go on" "Stopped after SB_BENCH_TIME_S=3 s with 1 file not reached"
check_out "a file it did not reach is no one's fault" "| not reached | 1 |"
check_out "and not in the cause table" "No non-pass verdict."
run_bench SB_BENCH_KB_ROOT=kb SB_BENCH_PARTS=upstream SB_BENCH_PROBLEMS=L1/4 SB_BENCH_STATE=state SB_BENCH_EVAL_ARGS='--perf-trials 0'
run_bench SB_BENCH_KB_ROOT=kb SB_BENCH_PARTS=upstream SB_BENCH_PROBLEMS=L1/4 SB_BENCH_STATE=state SB_BENCH_EVAL_ARGS='--perf-trials 0'
check_rc "the same state again runs" 0
check_true "and judges nothing twice" grep -q "1 candidates in .*, 1 already judged" "$TMP/state/upstream.log"
check_out "the tables cover every invocation's wall time, this selection's verdicts only" \
	"Throughput: 1 verdicts in"
check_out "with the number of invocations (the stopped one too)" "(3 invocations)"

run_bench SB_BENCH_KB_ROOT=kb SB_BENCH_CORPUS=nowhere
check_rc "a missing corpus stops it before any evaluation" 2
check_err "and says which setting names it" "SB_BENCH_CORPUS"
run_bench SB_BENCH_PARTS=upstream,everything
check_rc "an unknown part is refused" 2
check_err "by name" "unknown part 'everything'"
echo "1..$_n"
