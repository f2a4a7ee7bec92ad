#!/usr/bin/env bash
# test_profile.sh - `stitchbench profile` and the profile in verdicts where no GPU is: usage errors
# exit 2, profiling on the CPU is a clear environment error (exit 3), a CPU verdict has no profile.
# The GPU path is scripts/gpu-check.sh's section `prof`.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache

run_sb profile --help
check_rc "profile --help exits 0" 0
check_out "its help names --reference" "--reference"
check_out "its help names --ncu" "--ncu"
check_out "its help names the exit code for a missing GPU" "profiling needs a CUDA GPU"

run_sb help
check_out "the command list has profile" "profile"

run_sb profile --problem L1/2
check_rc "neither a candidate nor --reference is a usage error" 2
check_err "it says what to give" "give CANDIDATE.py or --reference"

run_sb profile "$FIX/relu_cpp_ok.py"
check_rc "a missing --problem is a usage error" 2
check_err "it shows an example" "--problem L2/7"

run_sb profile "$TMP/nothing.py" --problem L1/2
check_rc "a missing candidate file is an input error" 2
check_err "it names the file" "nothing.py"

run_sb profile --reference --problem L1/2 --trace-out "$TMP/t"
check_rc "--trace-out with --reference is a usage error" 2

run_sb profile --reference --problem L9/1
check_rc "an unknown problem is an input error" 2

run_sb profile "$FIX/relu_cpp_ok.py" --problem L1/2 --device cpu
check_rc "profiling a candidate on the CPU exits 3" 3
check_err "it says profiling needs a CUDA GPU" "profiling needs a CUDA GPU"

run_sb profile --reference --problem L1/2 --device cpu --json
check_rc "profiling the reference on the CPU exits 3" 3
check_err "it says so too" "profiling needs a CUDA GPU"
[ -z "$OUT_TXT" ] && _report ok "nothing is printed on stdout then" || _report fail "nothing is printed on stdout then" "$OUT_TXT"

run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 --device cpu --trials 1 --perf-trials 3 --json
check_rc "eval on the CPU still passes" 0
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], "profile" in v, v["profile"])' <<<"$OUT_TXT" 2>&1)
[ "$got" = "pass True None" ] && _report ok "a CPU verdict carries profile: null" || _report fail "a CPU verdict carries profile: null" "$got"

# --trace reads a kept trace without a GPU: the same table and findings the evaluator makes
TR="$SB_ROOT/tests/fixtures/traces"
run_sb profile --trace "$TR/two_streams.trace"
check_rc "--trace reads a kept trace" 0
check_out "it uses the kept calls and their CUDA-event times" "per call (median of 3): CUDA events 174.20 us, kernel time 200.00 us (sum), span 172.00 us"
check_out_re "the GEMM is the top row, labelled cuBLAS" '^  1  sm90_xmma_gemm.* +3 +300\.00 +50\.0% +100\.00 +7 cuBLAS'
check_out_re "the side-stream kernel is custom on its own stream" '^  3  side_kernel +3 +90\.00 +15\.0% +30\.00 +13 custom +512x128'
check_out "copies are rows too" "[memset]"
check_out "the metrics file beside the trace gives each kernel its bound class" "hardware metrics (CUPTI range profiler on GH100"
check_out_re "a short kernel that reaches no roof is launch-bound" '^  3  side_kernel +launch +12\.0  launch overhead'
check_out_re "the GEMM is compute-bound on its tensor pipes" '^  1  sm90_xmma_gemm.* compute +82\.0  tensor pipelines'
run_sb profile --trace "$TR/two_streams.trace" --json
got=$(python3 -c 'import json,sys; p=json.load(sys.stdin)["profile"]; k=p["kernels"][1]; print(k["bound"], k["limiter"], k["dram_pct"], p["metrics"]["kernels_measured"], "bound" in p["kernels"][4])' <<<"$OUT_TXT" 2>&1)
[ "$got" = "memory DRAM bandwidth 85.0 4 False" ] && _report ok "--json carries the metrics per kernel, none for a copy" || _report fail "--json carries the metrics per kernel, none for a copy" "$got"
cp "$TR/two_streams.trace" "$TR/two_streams.trace.calls" "$TMP/"
sed 's/^end 5$/end 4/' "$TR/two_streams.trace.metrics" >"$TMP/two_streams.trace.metrics"
run_sb profile --trace "$TMP/two_streams.trace"
check_rc "a damaged metrics file costs the metrics, not the profile" 0
check_out "it says why there are none" "hardware metrics: none ("
check_out "naming the line" "two_streams.trace.metrics:20: the end line counts 4 ranges"
run_sb profile --trace "$TR/late_side_stream.trace" --rows 1
check_out "without .calls every trial counts" "3 calls"
check_out "a kernel after the end event is H05" "finding H05 (reject)"
check_out "--rows limits the table" "2 more rows"
run_sb profile --trace "$TR/pytorch_only.trace" --json
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["findings"][0]["id"], v["profile"]["kernels"][0]["library"], v["profile"]["trace_complete"])' <<<"$OUT_TXT" 2>&1)
[ "$got" = "H01 aten True" ] && _report ok "--json has the profile and the H01 finding" || _report fail "--json has the profile and the H01 finding" "$got"
run_sb profile --trace "$TR/two_streams.trace" --reference
check_rc "--trace with --reference is a usage error" 2
printf 'stitchprof 1\nkernel 1 2 3\n' >"$TMP/bad.trace"
run_sb profile --trace "$TMP/bad.trace"
check_rc "a damaged trace is an input error" 2
check_err "it names the line" "bad.trace:2:"

# doctor says whether the profiler library is there
STITCHBENCH_PROF_LIB="$TMP/none.so" run_sb doctor --offline
check_out_re "doctor warns when lib/libstitchprof.so is missing, saying how to build it" '^warn +profiler +.*none\.so is missing: .*make'
printf 'not an ELF file' >"$TMP/bogus.so"
STITCHBENCH_PROF_LIB="$TMP/bogus.so" run_sb doctor --offline
check_out_re "doctor warns when it does not load" '^warn +profiler +.*bogus\.so does not load'
