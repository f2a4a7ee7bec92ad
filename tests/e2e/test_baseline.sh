#!/usr/bin/env bash
# test_baseline.sh - `stitchbench baseline` on the CPU: KernelBench's baseline JSON layout, the
# timing cache, entries of other problems kept when a file is updated, and bad input.
source "$(dirname "$0")/lib.sh"
export STITCHBENCH_CACHE="${STITCHBENCH_TEST_CACHE:-$TMP/cache}-baseline"
out="$TMP/timing"
mkdir -p "$out"
printf '{"level3": {"9_Kept.py": {"mean": 1.0}}}\n' >"$out/baseline_time_torch.json"

run_sb baseline --problems L1/3 --device cpu --perf-trials 4 -o "$out"
check_rc "baseline times a reference" 0
check_out_re "it prints the problem's mean in ms" "^L1/3 +Sum_Over_Dim +[0-9]+\.[0-9]{4} +n/a +no$"
got=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
e = t["level1"]["3_Sum_Over_Dim.py"]
print(sorted(e), e["num_trials"], e["hardware"], e["device"], e["min"] <= e["mean"] <= e["max"], "9_Kept.py" in t["level3"])
' "$out/baseline_time_torch.json" 2>&1)
if [ "$got" = "['device', 'hardware', 'max', 'mean', 'min', 'num_trials', 'std'] 4 cpu cpu True True" ]; then
	_report ok "the file has KernelBench's layout and keeps other entries"; else
	_report fail "the file has KernelBench's layout and keeps other entries" "$got"; fi
if [ ! -e "$out/baseline_time_torch_compile_inductor_default.json" ]; then _report ok "no torch.compile table on the CPU"; else
	_report fail "no torch.compile table on the CPU" "it exists"; fi

run_sb baseline --problems L1/3 --device cpu --perf-trials 4 -o "$out"
check_out_re "a second run reads the cache" "^L1/3 .* yes$"
run_sb baseline --problems L1/3 --device cpu --perf-trials 5 -o "$out"
check_out_re "other settings are not served from the cache" "^L1/3 .* no$"

run_sb baseline --level 7
check_rc "a bad level is an input error" 2
run_sb baseline --device cuda:3 --problems L1/3
check_rc "a GPU that is not there is an environment error" 3
