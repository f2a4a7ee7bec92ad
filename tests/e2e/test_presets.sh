#!/usr/bin/env bash
# test_presets.sh - eval.preset on the CPU: each preset's trials, timing method and policy reach the verdict,
# a key given on the command line wins over the preset, and a run holds one preset (a resume with another
# is refused). The timing method is checked by arithmetic on the verdict's own samples: the speedup must be
# the median of the pair ratios under stitchbench and the mean over the mean under kernelbench.
source "$(dirname "$0")/lib.sh"
use_cache
OK="$SB_ROOT/tests/fixtures/candidates/relu_cpp_ok.py"
# relu_cpp_ok.py's kernel run on what torch.relu already computed: a PyTorch op in forward beside a kernel of
# its own, which stitchbench's policy rejects (H01) and KernelBench's static checker only warns about; the
# same C++ source, so one build serves both
WRAP="$TMP/relu_cpp_torch_op.py"
sed 's/return ext.relu_fwd(x)/return ext.relu_fwd(torch.relu(x))/' "$OK" >"$WRAP"
grep -q 'ext.relu_fwd(torch.relu(x))' "$WRAP" || { echo "not ok 1 - relu_cpp_ok.py no longer has the line this test edits"; exit 1; }
FAST=(--problem L1/2 --device cpu --json --set eval.warmup_ms=0 --set eval.warmup_calls=1)
field() { python3 -c "import json,sys,statistics as st; v=json.loads(sys.stdin.read()); print($1)" <<<"$OUT_TXT" 2>&1; }
# the speedup recomputed from the verdict's samples: median of per-pair ratios, or mean over mean
METHOD='(lambda e, c, s: (round(s["vs_eager"] / st.median([a / b for a, b in zip(e, c)]), 9), round(s["vs_eager"] / (st.mean(e) / st.mean(c)), 9)))(v["timing"]["samples"]["eager_us"], v["timing"]["samples"]["candidate_us"], v["speedup"])'

run_sb eval "$OK" "${FAST[@]}" --perf-trials 12
got=$(field 'v["status"], v["settings"]["preset"], v["settings"]["timing_lead_us"], v["timing"]["method"], v["timing"]["gpu_only"]')
check_eq "the default preset is stitchbench, timed end to end, paired (no GPU-only diagnostic on the CPU)" "$got" \
	"pass stitchbench 0 paired_median None"
got=$(field "$METHOD[0]")
check_eq "stitchbench's speedup is the median of the verdict's pair ratios" "$got" "1.0"

run_sb eval "$OK" "${FAST[@]}" --set eval.preset=kernelbench --perf-trials 12
got=$(field 'v["status"], v["settings"]["preset"], v["settings"]["trials"], v["settings"]["perf_trials"], v["timing"]["method"], v["timing"]["pairs"], v["timing"]["stop_reason"]')
check_eq "kernelbench: its 5 trials, the given --perf-trials 12 over its 100, all of them timed" "$got" \
	"pass kernelbench 5 12 unpaired_mean 12 max_pairs"
got=$(field "$METHOD[1]")
check_eq "kernelbench's speedup is the reference's mean over the candidate's" "$got" "1.0"

run_sb eval "$OK" "${FAST[@]}" --set eval.preset=stitchcuda
got=$(field 'v["status"], v["settings"]["preset"], v["settings"]["trials"], v["settings"]["perf_trials"], v["timing"]["method"], v["timing"]["pairs"]')
check_eq "stitchcuda: its verifier's 5 and 10 trials, KernelBench's method" "$got" "pass stitchcuda 5 10 unpaired_mean 10"

# A PyTorch op in forward beside a kernel: rejected by stitchbench's policy, a flagged pass under KernelBench's.
run_sb eval "$WRAP" "${FAST[@]}" --perf-trials 3
got=$(field 'v["status"], sorted({f["id"] for f in v["findings"] if f["severity"] == "reject"})')
check_eq "stitchbench rejects a torch op in forward (H01)" "$got" "rejected ['H01']"
run_sb eval "$WRAP" "${FAST[@]}" --perf-trials 3 --set eval.preset=kernelbench
got=$(field 'v["status"], sorted({(f["id"], f["severity"]) for f in v["findings"] if f["id"] == "H01"})')
check_eq "kernelbench passes it with H01 as a flag" "$got" "pass [('H01', 'flag')]"
run_sb eval "$WRAP" "${FAST[@]}" --perf-trials 3 --set eval.preset=kernelbench --set checks.policy=H01:reject
got=$(field 'v["status"]')
check_eq "a policy given beside the preset wins" "$got" "rejected"

# One run, one preset: a resume under another preset is refused, naming both.
gen="$TMP/gen"; mkdir -p "$gen"
cp "$OK" "$gen/level_1_problem_2_sample_0_kernel.py"
EVAL=(--samples "$gen" --set "output.dir=$TMP/results" --device cpu --trials 2 --perf-trials 3)
run_sb eval "${EVAL[@]}" -o "$TMP/a.jsonl" --run presetrun
check_rc "a run under the default preset" 0
run_sb eval "${EVAL[@]}" -o "$TMP/b.jsonl" --run presetrun --set eval.preset=kernelbench --trials 2 --perf-trials 3
check_rc "resuming it under kernelbench is refused" 2
check_err "naming the presets" 'eval.preset: "stitchbench" in the stored run vs "kernelbench" in this invocation'
