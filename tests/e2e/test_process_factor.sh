#!/usr/bin/env bash
# test_process_factor.sh - eval.process_factor on the CPU ("on"; "auto" is the GPU only): the candidate's
# worker loads the reference and times it in pairs with the reference worker before the candidate loads;
# the verdict's speedup vs eager is the uncorrected one divided by that factor, the intervals combined at
# their unfavourable ends and never narrower than the uncorrected one;
# and the candidate, imported after, finds nothing of the reference in its process.
source "$(dirname "$0")/lib.sh"
use_cache
FIX="$SB_ROOT/tests/fixtures/candidates"
FAST=(--problem L1/2 --device cpu --trials 1 --perf-trials 20 --json --set checks.static=false
	--set eval.warmup_ms=0 --set eval.warmup_calls=1 "${NO_OPREC[@]}")
field() { python3 -c "import json,sys; v=json.loads(sys.stdin.read()); print($1)" <<<"$OUT_TXT" 2>&1; }
# the reference itself as the candidate
cp "$SB_ROOT/kernelbench/suite/level1/2_ReLU.py" "$TMP/ref_as_cand.py"
printf '\n\nModelNew = Model\n' >>"$TMP/ref_as_cand.py"

run_sb eval "$TMP/ref_as_cand.py" "${FAST[@]}" --set eval.process_factor=on
got=$(field 'v["status"], v["timing"]["process_factor"]["measured"], v["timing"]["process_factor"]["applied"], v["timing"]["process_factor"]["pairs"] >= 20')
if [ "$got" = "pass True True True" ]; then _report ok "process_factor=on measures the factor on the CPU ($got)"
else _report fail "process_factor=on measures the factor on the CPU" "$got; ${ERR_TXT:0:600}"; fi
got=$(field '(lambda f, s: (abs(s["vs_eager"] * f["value"] / s["vs_eager_uncorrected"] - 1) < 1e-9,
	abs(s["vs_eager_ci95"][0] / min(s["vs_eager_uncorrected_ci95"][0], s["vs_eager_uncorrected_ci95"][0] / f["ci95"][1]) - 1) < 1e-9,
	abs(s["vs_eager_ci95"][1] / max(s["vs_eager_uncorrected_ci95"][1], s["vs_eager_uncorrected_ci95"][1] / f["ci95"][0]) - 1) < 1e-9,
	f["ci95"][0] <= f["value"] <= f["ci95"][1], f["reference_us"] > 0, f["in_candidate_us"] > 0))(v["timing"]["process_factor"], v["speedup"])')
if [ "$got" = "(True, True, True, True, True, True)" ]; then _report ok "vs_eager is the uncorrected speedup divided by the factor, intervals combined, spanning the uncorrected"
else _report fail "vs_eager is the uncorrected speedup divided by the factor, intervals combined, spanning the uncorrected" "$got; ${OUT_TXT:0:800}"; fi

run_sb eval "$TMP/ref_as_cand.py" --problem L1/2 --device cpu --trials 1 --perf-trials 20 --set checks.static=false "${NO_OPREC[@]}" \
	--set eval.warmup_ms=0 --set eval.warmup_calls=1 --set eval.process_factor=on
check_out_re "the text verdict shows the factor and the speedup before it" 'process factor +[0-9.]+ +\(95% CI [0-9.]+-[0-9.]+, [0-9]+ pairs.*which was [0-9.]+x before'

# auto is the GPU's only; off is off: no factor, the speedup is the uncorrected one
for mode in auto off; do
	run_sb eval "$TMP/ref_as_cand.py" "${FAST[@]}" --set eval.process_factor=$mode
	got=$(field 'v["status"], v["timing"]["process_factor"], v["speedup"]["vs_eager"] == v["speedup"]["vs_eager_uncorrected"]')
	if [ "$got" = "pass None True" ]; then _report ok "process_factor=$mode on the CPU: no factor ($got)"
	else _report fail "process_factor=$mode on the CPU: no factor" "$got; ${ERR_TXT:0:600}"; fi
done

# what the candidate finds in its process: no module, and no more tensors than without the factor
run_sb eval "$FIX/ref_leftovers.py" "${FAST[@]}" --set eval.process_factor=off
base=$(field 'v["message"]' | grep -o 'modules=[0-9]* tensors=[0-9]*')
run_sb eval "$FIX/ref_leftovers.py" "${FAST[@]}" --set eval.process_factor=on
with=$(field 'v["message"]' | grep -o 'modules=[0-9]* tensors=[0-9]*')
if [ -n "$base" ] && [ "$with" = "$base" ] && [ "${base%% *}" = "modules=0" ]; then
	_report ok "the candidate finds nothing of the reference the factor loaded ($with)"
else _report fail "the candidate finds nothing of the reference the factor loaded" "off: '$base', on: '$with'; $ERR_TXT"; fi
