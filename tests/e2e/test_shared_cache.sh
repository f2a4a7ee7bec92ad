#!/usr/bin/env bash
# test_shared_cache.sh - the suite's shared warm cache (tests/run.sh, lib.sh's use_cache) cannot change a
# verdict: its entries are keyed by content (the probe by the interpreter and its environment, references by
# the problem's hash and settings, builds by the candidate's bytes and build settings). One generations folder
# (a pass, an incorrect answer, a crash, a compile error, a file that does not parse) is judged with the
# shared cache, warm, and again with a private cache made empty, and every verdict must decide the same.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
gen="$TMP/gen"; mkdir -p "$gen"
cp "$FIX/relu_cpp_ok.py" "$gen/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/relu_cpp_wrong.py" "$gen/level_1_problem_2_sample_1_kernel.py"
cp "$FIX/null_deref.py" "$gen/level_1_problem_2_sample_2_kernel.py"
sed -e 's/    return y;/    return y/' -e 's/name="sb_test_relu"/name="sb_test_relu_unterminated"/' "$FIX/relu_cpp_ok.py" \
	>"$gen/level_1_problem_2_sample_3_kernel.py"
cp "$FIX/syntax_error.py" "$gen/level_1_problem_2_sample_4_kernel.py"
EVAL=(--samples "$gen" --device cpu --trials 2 --perf-trials 3 --set checks.static=false "${NO_OPREC[@]}")
SUMMARY="5 judged: 1 pass, 1 incorrect, 1 compile_error, 1 runtime_error, 0 timeout, 0 rejected, 1 format_error"
# what each verdict took from the cache: "sample: reference_cached build-cached..."
cached() { python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    s = v["candidate"]["path"].split("_sample_")[1].split("_")[0]
    print("%s:%s:%s" % (s, v["reference_cached"], ",".join(str(b["cached"]) for b in v.get("builds") or [])))' "$1" | sort | tr '\n' ' '; }

# Run alone, this file's cache is its own: a first judging warms it as the suite's warm step would.
[ -n "${STITCHBENCH_TEST_CACHE:-}" ] || "$SB" eval "${EVAL[@]}" -o "$TMP/warmup.jsonl" >/dev/null 2>&1

run_sb eval "${EVAL[@]}" -o "$TMP/warm.jsonl"
check_out "the folder is judged with the shared cache" "$SUMMARY"
got=$(cached "$TMP/warm.jsonl")
if [[ "$got" == "0:True:True 1:True:True 2:True:True "* ]]; then _report ok "the shared cache was warm: references and builds came from it ($got)"
else _report fail "the shared cache was warm: references and builds came from it" "$got"; fi

STITCHBENCH_CACHE="$TMP/cold" run_sb eval "${EVAL[@]}" -o "$TMP/cold.jsonl"
check_out "and with an empty private cache" "$SUMMARY"
# A batch builds its candidates ahead of judging them, so the verdicts' own build flags cannot tell; the
# folder can: the private cache now holds its own probe, the reference and the three builds that compile.
got="$(cached "$TMP/cold.jsonl")| $(ls "$TMP/cold/ext" | wc -l) builds, $(ls "$TMP/cold/ref" | wc -l) reference, $(ls "$TMP/cold/probe" | wc -l) probe"
if [[ "$got" == "0:False:"*"| 3 builds, 1 reference, 1 probe" ]]; then _report ok "the private cache was cold: its probe, reference and builds were made ($got)"
else _report fail "the private cache was cold: its probe, reference and builds were made" "$got"; fi

got=$(python3 "$SB_ROOT/tests/e2e/same_verdicts.py" "$TMP/warm.jsonl" "$TMP/cold.jsonl" 2>&1)
check_eq "the shared warm cache and a cold private one give the same verdicts" "$got" "5 verdicts agree"
