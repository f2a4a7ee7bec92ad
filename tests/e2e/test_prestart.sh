#!/usr/bin/env bash
# test_prestart.sh - eval.prestart_candidate: in an `eval --samples` batch, the next candidate's worker is
# started while the current candidate runs its trials. The prestarted worker must be the same sandbox as a
# worker started on the spot (its candidate's 1 GiB write still hits the file-size limit, the same layers
# are reported), every evaluation after the first must get one, and nothing may be left behind: no
# worker process, no work folder, also when the batch ends on a candidate that never needed its worker.
source "$(dirname "$0")/lib.sh"
use_cache
FIX="$SB_ROOT/tests/fixtures/candidates"
OPTS=(--device cpu --trials 2 --perf-trials 3 --set checks.static=false --set eval.warmup_ms=0 "${NO_OPREC[@]}")
verdicts() { python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    print(v["status"], v["candidate_worker_prestarted"], json.dumps(v["sandbox"], sort_keys=True), (v["message"] or "")[:200])
' "$1" 2>&1; }

gen="$TMP/gen"
mkdir -p "$gen"
cp "$FIX/relu_cpp_ok.py" "$gen/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/relu_cpp_ok.py" "$gen/level_1_problem_2_sample_1_kernel.py"
cp "$FIX/huge_write.py" "$gen/level_1_problem_2_sample_2_kernel.py"
run_sb eval --samples "$gen" -o "$TMP/on.jsonl" "${OPTS[@]}"
check_rc "a batch with prestarted workers is judged" 0
got=$(verdicts "$TMP/on.jsonl")
mapfile -t row <<<"$got"
read -r s0 p0 sb0 _ <<<"${row[0]}"
read -r s1 p1 sb1 _ <<<"${row[1]}"
read -r s2 p2 sb2 msg2 <<<"${row[2]}"
if [ "$s0 $p0 $s1 $p1" = "pass False pass True" ]; then _report ok "the first worker starts on the spot, the second was prestarted, both pass"
else _report fail "the first worker starts on the spot, the second was prestarted, both pass" "$got"; fi
if [ "$s2 $p2" = "runtime_error True" ] && grep -qF "File too large" <<<"$msg2"; then
	_report ok "a prestarted worker keeps the file-size limit (a 1 GiB write: runtime_error, File too large)"
else _report fail "a prestarted worker keeps the file-size limit" "$got"; fi
if [ "$sb1" = "$sb0" ] && [ "$sb2" = "$sb0" ]; then _report ok "a prestarted worker reports the same sandbox layers as one started on the spot"
else _report fail "a prestarted worker reports the same sandbox layers as one started on the spot" "$got"; fi
# With the static checks on, the last candidate (torch.relu: H01) is rejected before it needs a worker:
# the one prestarted for it must be stopped, its folder removed.
gen2="$TMP/gen2"
mkdir -p "$gen2"
cp "$FIX/relu_cpp_ok.py" "$gen2/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/huge_write.py" "$gen2/level_1_problem_2_sample_1_kernel.py"
run_sb eval --samples "$gen2" -o "$TMP/unused.jsonl" --device cpu --trials 2 --perf-trials 3 --set eval.warmup_ms=0
got=$(verdicts "$TMP/unused.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
if [ "$got" = "pass False rejected False " ]; then _report ok "a worker prestarted for a candidate the static checks reject goes unused ($got)"
else _report fail "a worker prestarted for a candidate the static checks reject goes unused" "$got"; fi
# (kept reference workers exit when stitchbench's end closes their channel: give them a moment)
left=1
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(own_workers)" ] && { left=0; break; }; sleep 0.5; done
if [ "$left" = 0 ]; then _report ok "it was stopped: no worker left after the batch"
else _report fail "it was stopped: no worker left after the batch" "$(for p in $(own_workers); do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)"; fi
check_true "and no work folder is left" bash -c "[ -z \"\$(ls -A '$STITCHBENCH_CACHE/work' 2>/dev/null)\" ]"

# The candidate's worker is told to quit at the end of its evaluation and reaped later, so that its
# exit overlaps the next evaluation's start; one that will not exit (an exit handler that sleeps) is
# killed 2 s after the quit, and before the next candidate is timed.
gen4="$TMP/gen4"
mkdir -p "$gen4"
cp "$FIX/slow_exit.py" "$gen4/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/relu_cpp_ok.py" "$gen4/level_1_problem_2_sample_1_kernel.py"
STITCHBENCH_TRACE=1 run_sb eval --samples "$gen4" -o "$TMP/slow.jsonl" "${OPTS[@]}"
got=$(verdicts "$TMP/slow.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
if [ "$RC $got" = "0 pass False pass True " ]; then _report ok "a candidate that will not exit does not hold up the batch ($got)"
else _report fail "a candidate that will not exit does not hold up the batch" "$RC $got $ERR_TXT"; fi
# the trace: the second evaluation waited out the first one's grace, then timed
order=$(awk '/eval: .*sample_1_kernel/ {s = 1} s && /waited .* for the last candidate/ {print "reaped", $6} s && /timing_setup/ {print "timed"; exit}' <<<"$ERR_TXT" | tr '\n' ' ')
if [[ "$order" =~ ^reaped\ [0-9.]+\ timed ]]; then
	_report ok "the first candidate's worker was killed before the second was timed ($order)"
else _report fail "the first candidate's worker was killed before the second was timed" "$order"; fi
left=1
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(own_workers)" ] && { left=0; break; }; sleep 0.5; done
check_true "no worker is left after a batch with a worker that would not exit" test "$left" = 0
check_true "and no work folder" bash -c "[ -z \"\$(ls -A '$STITCHBENCH_CACHE/work' 2>/dev/null)\" ]"

# Two evaluations ahead: a worker's Python and torch take longer than a short evaluation, so the first
# evaluation of a batch of three starts workers for both that follow, and the second starts none.
gen5="$TMP/gen5"
mkdir -p "$gen5"
for s in 0 1 2; do cp "$FIX/relu_cpp_ok.py" "$gen5/level_1_problem_2_sample_${s}_kernel.py"; done
STITCHBENCH_TRACE=1 run_sb eval --samples "$gen5" -o "$TMP/ahead.jsonl" "${OPTS[@]}"
got=$(verdicts "$TMP/ahead.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
ahead=$(awk '/eval: .*_kernel.py on/ {n++} /started worker [0-9]+ ahead for evaluation/ {print n ":" $NF}' <<<"$ERR_TXT" | tr '\n' ' ')
if [ "$got" = "pass False pass True pass True " ] && [ "$ahead" = "1:+1 1:+2 " ]; then
	_report ok "workers are started two evaluations ahead ($ahead)"
else _report fail "workers are started two evaluations ahead" "$got / $ahead"; fi

# The next problem's reference worker is started as far ahead: by the first of L1/2, L1/2, L1/3, and
# only once; the L1/3 evaluation takes it (it would wait for its import, started any later).
gen6="$TMP/gen6"
mkdir -p "$gen6"
for s in 0 1; do cp "$FIX/relu_cpp_ok.py" "$gen6/level_1_problem_2_sample_${s}_kernel.py"; done
sed -E 's/\bModel\b/ModelNew/g' "$SB_ROOT/kernelbench/suite/level1/3_Sum_Over_Dim.py" >"$gen6/level_1_problem_3_sample_0_kernel.py"
STITCHBENCH_TRACE=1 run_sb eval --samples "$gen6" -o "$TMP/refahead.jsonl" "${OPTS[@]}"
got=$(python3 -c '
import json, sys
print(" ".join("%s:%s:%s" % (v["problem"]["ref"], v["status"], v["reference_worker_prestarted"])
               for v in map(json.loads, open(sys.argv[1]))))' "$TMP/refahead.jsonl")
ahead=$(awk '/eval: .*_kernel.py on/ {n++} /started reference worker [0-9]+ ahead for evaluation/ {print n ":" $NF}' <<<"$ERR_TXT" | tr '\n' ' ')
if [ "$got" = "L1/2:pass:False L1/2:pass:False L1/3:pass:True" ] && [ "$ahead" = "1:+2 " ]; then
	_report ok "the next problem's reference worker is started two evaluations ahead ($ahead)"
else _report fail "the next problem's reference worker is started two evaluations ahead" "$got / $ahead"; fi

rm -f "$gen/level_1_problem_2_sample_2_kernel.py"
run_sb eval --samples "$gen" -o "$TMP/off.jsonl" "${OPTS[@]}" --set eval.prestart_candidate=false
got=$(verdicts "$TMP/off.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
if [ "$got" = "pass False pass False " ]; then _report ok "eval.prestart_candidate=false starts every worker on the spot"
else _report fail "eval.prestart_candidate=false starts every worker on the spot" "$got"; fi

# The worker started for the next problem gets that problem's file-size limit when its expected outputs
# are cached: L1/3 (tiny outputs) followed by L1/4 (64 MiB) must not drop the worker for being too small.
gen3="$TMP/gen3"
mkdir -p "$gen3"
sed -E 's/\bModel\b/ModelNew/g' "$SB_ROOT/kernelbench/suite/level1/3_Sum_Over_Dim.py" >"$gen3/level_1_problem_3_sample_0_kernel.py"
sed -E 's/\bModel\b/ModelNew/g' "$SB_ROOT/kernelbench/suite/level1/4_Softmax.py" >"$gen3/level_1_problem_4_sample_0_kernel.py"
NEXT=(--device cpu --trials 1 --perf-trials 1 --set checks.static=false --set eval.warmup_ms=0 "${NO_OPREC[@]}")
run_sb eval --samples "$gen3" -o "$TMP/next1.jsonl" "${NEXT[@]}"  # fills the reference cache
run_sb eval --samples "$gen3" -o "$TMP/next2.jsonl" "${NEXT[@]}"
got=$(verdicts "$TMP/next2.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
if [ "$got" = "pass False pass True " ]; then _report ok "a worker started for a problem with larger outputs is sized for them and used ($got)"
else _report fail "a worker started for a problem with larger outputs is sized for them and used" "$got"; fi

# ... and when they are not cached yet (a samples folder of one sample per problem is all first
# evaluations): the worker starts with room for outputs up to 4 GiB, and its `load` lowers the limit to
# the problem's before the candidate runs (the 1 GiB write above still fails in a prestarted worker).
STITCHBENCH_CACHE="$TMP/fresh-cache" run_sb eval --samples "$gen3" -o "$TMP/next3.jsonl" "${NEXT[@]}"
got=$(verdicts "$TMP/next3.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
if [ "$got" = "pass False pass True " ]; then _report ok "a worker started before its problem's output size is known is used ($got)"
else _report fail "a worker started before its problem's output size is known is used" "$got"; fi

# one candidate: nothing follows, nothing is prestarted
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${OPTS[@]}" --json
got=$(python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print(v["status"], v["candidate_worker_prestarted"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "pass False" ]; then _report ok "a single evaluation prestarts nothing"; else _report fail "a single evaluation prestarts nothing" "$got"; fi

# A cache outside /tmp, as a user's ~/.cache is: the prestarted worker may then get a private /tmp, which
# is decided from the problem it is started for (the tests' caches under /tmp never reach that question).
out_cache="$SB_ROOT/build/tests/cache-outside-tmp.$$"
rm -rf "$out_cache"
mkdir -p "$out_cache"
STITCHBENCH_CACHE="$out_cache" run_sb eval --samples "$gen3" -o "$TMP/outside.jsonl" "${NEXT[@]}"
check_rc "a batch with its cache outside /tmp is judged" 0
got=$(verdicts "$TMP/outside.jsonl" | awk '{print $1, $2}' | tr '\n' ' ')
if [ "$got" = "pass False pass True " ]; then _report ok "and its prestarted worker is used ($got)"
else _report fail "and its prestarted worker is used" "$got; exit $RC; ${ERR_TXT: -400}"; fi
rm -rf "$out_cache"
