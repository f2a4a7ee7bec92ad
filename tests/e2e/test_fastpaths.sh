#!/usr/bin/env bash
# test_fastpaths.sh - the fast paths (the internal eval keys: shared exchange, fork server, prestarted and
# kept workers, lean and lite headers, split nvcc, parallel builds) give the verdicts the plain paths give.
# One generations folder on the CPU (a pass, an incorrect one, a compile error, three rejections: a torch
# op beside a kernel, a file that does not parse, a GEMM left to torch; the first four C++ extensions) is
# judged with every fast path on and again with STITCHBENCH_TEST_PLAIN_PATHS=1, and every verdict must
# agree on all but times, seconds and host details.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
gen="$TMP/gen"; mkdir -p "$gen"
cp "$FIX/relu_cpp_ok.py" "$gen/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/relu_cpp_wrong.py" "$gen/level_1_problem_2_sample_1_kernel.py"
# the same extension with a statement left unterminated, under a name of its own
sed -e 's/    return y;/    return y/' -e 's/name="sb_test_relu"/name="sb_test_relu_broken"/' "$FIX/relu_cpp_ok.py" \
	>"$gen/level_1_problem_2_sample_2_kernel.py"
# its kernel run on what torch.relu computed: a PyTorch op in forward beside a kernel (H01)
sed 's/return ext.relu_fwd(x)/return ext.relu_fwd(torch.relu(x))/' "$FIX/relu_cpp_ok.py" \
	>"$gen/level_1_problem_2_sample_3_kernel.py"
cp "$FIX/syntax_error.py" "$gen/level_1_problem_2_sample_4_kernel.py"
cp "$FIX/torch_matmul.py" "$gen/level_1_problem_1_sample_0_kernel.py"
if grep -q 'return y;' "$gen/level_1_problem_2_sample_2_kernel.py" ||
	! grep -q 'ext.relu_fwd(torch.relu(x))' "$gen/level_1_problem_2_sample_3_kernel.py"; then
	echo "not ok 1 - relu_cpp_ok.py no longer has the lines this test edits"; exit 1
fi
EVAL=(--samples "$gen" --device cpu --trials 2 --perf-trials 3 --set eval.warmup_ms=0 --set eval.warmup_calls=1)

run_sb eval "${EVAL[@]}" --set eval.exchange=shared --set eval.build_jobs=2 -o "$TMP/fast.jsonl"
check_rc "the folder is judged with the fast paths" 0
check_out "every verdict is there" "6 judged: 1 pass, 1 incorrect, 1 compile_error, 0 runtime_error, 0 timeout, 2 rejected, 1 format_error, 0 cannot_judge, 0 harness_error"
STITCHBENCH_TEST_PLAIN_PATHS=1 run_sb eval "${EVAL[@]}" --set eval.exchange=shared --set eval.build_jobs=2 -o "$TMP/plain.jsonl"
check_rc "and with the plain paths" 0
got=$(python3 -c '
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
print(sorted({x["settings"]["exchange"] for x in v}), any(x["candidate_worker_forked"] or x["candidate_worker_prestarted"]
      or x["reference_worker_reused"] for x in v))' "$TMP/plain.jsonl" 2>&1)
check_eq "the switch wins over --set: outputs as files, no worker forked, prestarted or kept" "$got" "['files'] False"
got=$(python3 -c '
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
print(sorted({x["settings"]["exchange"] for x in v if x["status"] in ("pass", "incorrect")}),
      any(x["candidate_worker_forked"] for x in v))' "$TMP/fast.jsonl" 2>&1)
check_eq "the fast run took the fast paths (shared outputs, forked workers)" "$got" "['shared'] True"

# What a verdict decides must agree: tests/e2e/same_verdicts.py says what that is.
SAME="$SB_ROOT/tests/e2e/same_verdicts.py"
got=$(python3 "$SAME" "$TMP/fast.jsonl" "$TMP/plain.jsonl" 2>&1)
check_eq "the fast and the plain paths give the same verdicts" "$got" "6 verdicts agree"

# The comparison can fail: one finding's severity changed in a copy is a difference.
python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for v in lines:
    if v["findings"]:
        v["findings"][0]["severity"] = "flag" if v["findings"][0]["severity"] == "reject" else "reject"
        break
print("\n".join(json.dumps(v) for v in lines))' "$TMP/plain.jsonl" >"$TMP/changed.jsonl"
got=$(python3 "$SAME" "$TMP/fast.jsonl" "$TMP/changed.jsonl" 2>&1 | wc -l)
check_eq "a verdict that differs in one finding's severity is told apart" "$got" 1
