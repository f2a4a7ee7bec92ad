#!/usr/bin/env bash
# test_doctor.sh - `stitchbench doctor`: its checks on this machine, configuration validation with
# file:line:column errors (exit 2), environment failures (exit 3), and GPU reporting through an
# nvidia-smi stand-in that prints what a real H200 node prints (the GPU path itself runs in
# scripts/gpu-check.sh on a GPU node).
source "$(dirname "$0")/lib.sh"

run_sb doctor
check_rc "doctor passes on a set-up machine" 0
check_out_re "it ends with a summary" "^summary: [0-9]+ ok, [0-9]+ warn, 0 fail$"
check_out_re "it names the Python and how it was chosen" "^ok +python +/.*chosen by"
check_out_re "it checks torch" "^(ok|warn) +torch +[0-9]"
py=$(sed -n 's/^ok  *python  *\(\/[^ ]*\) .*/\1/p' <<<"$OUT_TXT")
if "${py:-python3}" -c 'import torch,sys; sys.exit(0 if hasattr(torch, "compile") else 1)' 2>/dev/null; then
	check_out_re "it says torch.compile is there" "^ok +compile +torch.compile is available"
else
	check_out_re "it says torch.compile is missing and what that skips" \
		"^warn +compile +torch .* has no torch.compile \(needs torch 2.0 or later\): run skips the torch-compile baseline"
fi
check_out_re "it checks gnuplot" "^ok +gnuplot +gnuplot [0-9]"
check_out_re "it checks SQLite" "^ok +sqlite +3\."
check_out_re "it reports the sandbox's network isolation" "^(ok|warn) +netns"
check_out_re "it reports Landlock" "^(ok|warn) +landlock"
check_out_re "it checks the suite" "^ok +suite +.*problems"

# --offline: the example names real endpoints, and tests talk to 127.0.0.1 only. Its models name their
# API key variables, which --offline checks too (test_llm_doctor.sh probes endpoints on 127.0.0.1).
env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY "$SB" doctor --offline --config "$SB_ROOT/configs/example.yaml" >"$TMP/out" 2>"$TMP/err"
RC=$? OUT_TXT=$(cat "$TMP/out") ERR_TXT=$(cat "$TMP/err")
check_rc "its models' API key variables unset: an environment failure even offline" 3
check_out_re "the line names the model and the variable" "^fail +llm +claude: model claude: \\\$ANTHROPIC_API_KEY \(its api_key_env\) is not set"
export OPENAI_API_KEY=sk-doctor-test ANTHROPIC_API_KEY=sk-doctor-test
run_sb doctor --offline --config "$SB_ROOT/configs/example.yaml"
check_rc "the example config is valid" 0
check_out_re "endpoints are not contacted offline" "^skip +llm +claude: https://api.anthropic.com/v1 not probed"
check_out "the resolved configuration is printed" "# resolved configuration from"
check_out "defaults are filled in" "  perf_trials: 100"
check_out "the file's values are used" "    n: 4"
check_out "public keys are printed" "  tf32: false"
if grep -qE '^  (fork_server|warmup_ms|timing_block|build_jobs):' <<<"$OUT_TXT"; then
	_report fail "hidden and internal keys the file does not give are not printed" "$(grep -E '^  (fork_server|warmup_ms|timing_block|build_jobs):' <<<"$OUT_TXT")"
else _report ok "hidden and internal keys the file does not give are not printed"; fi

# The printed configuration loads again and resolves to the same text.
sed -n '/^# resolved configuration/,$p' <<<"$OUT_TXT" | tail -n +2 >"$TMP/resolved.yaml"
first=$(sed -n '/^# resolved configuration/,$p' <<<"$OUT_TXT" | tail -n +2)
run_sb doctor --offline --config "$TMP/resolved.yaml"
unset OPENAI_API_KEY ANTHROPIC_API_KEY
second=$(sed -n '/^# resolved configuration/,$p' <<<"$OUT_TXT" | tail -n +2)
if [ "$first" = "$second" ] && [ -n "$first" ]; then _report ok "the printed configuration round-trips"; else
	_report fail "the printed configuration round-trips" "$(diff <(echo "$first") <(echo "$second") | head)"; fi

printf 'eval:\n  trials: 5\n  perf_trails: 10\n' >"$TMP/typo.yaml"
run_sb doctor --config "$TMP/typo.yaml"
check_rc "an unknown key is an input error" 2
check_err "it names file:line:column, the key and a suggestion" "typo.yaml:3:3: eval.perf_trails: unknown key (did you mean 'perf_trials'?)"

printf 'eval:\n  timeout_s: -5\n' >"$TMP/range.yaml"
run_sb doctor --config "$TMP/range.yaml"
check_rc "an out-of-range value is an input error" 2
check_err "it names the place and the range" "range.yaml:2:14: eval.timeout_s: -5 is out of range"

printf 'models: [\n' >"$TMP/syntax.yaml"
run_sb doctor --config "$TMP/syntax.yaml"
check_rc "a YAML syntax error is an input error" 2
check_err "it names the place" "syntax.yaml:2:1: YAML syntax error"

run_sb doctor --config "$TMP/missing.yaml"
check_rc "a missing config file is an input error" 2

run_sb doctor --set eval.trials=many
check_rc "a bad --set is an input error" 2
check_err "it names the override" "--set eval.trials=many: expected an integer, got 'many'"

run_sb doctor --python /nonexistent/python3
check_rc "an unusable chosen Python is an environment failure" 3
check_out_re "it is a fail line naming the source" "^fail +python +the Python chosen by the config's python:"

STITCHBENCH_PYTHON=/bin/false run_sb doctor
check_rc "STITCHBENCH_PYTHON that fails is not silently replaced" 3
check_out "it names the variable" "the Python chosen by STITCHBENCH_PYTHON"

# A stand-in nvidia-smi on PATH, printing what the real one prints for an H200.
mkdir -p "$TMP/fakebin"
cat >"$TMP/fakebin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
*--query-gpu=index,name,compute_cap,memory.total,driver_version,pci.bus_id*)
	echo "0, NVIDIA H200, 9.0, 143771, 580.95.05, 00000000:1B:00.0";;
*) exit 9;;
esac
SMI
chmod +x "$TMP/fakebin/nvidia-smi"
PATH="$TMP/fakebin:$PATH" run_sb doctor
check_out_re "a GPU is reported with name, arch, memory and driver" "^ok +gpu +0: NVIDIA H200, sm_90, 140\.4 GiB, .*driver 580\.95\.05"
if python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
   /usr/bin/python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	skip "a CPU-only torch beside a GPU fails" "this machine's torch sees a GPU"
else
	check_rc "a CPU-only torch beside a GPU is an environment failure" 3
	check_out_re "it says to install a CUDA torch" "^fail +torch .*install a CUDA build of torch"
fi

printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver." >&2\nexit 9\n' >"$TMP/fakebin/nvidia-smi"
PATH="$TMP/fakebin:$PATH" run_sb doctor
check_out_re "a broken driver is a warning with nvidia-smi's words" "^warn +gpu +nvidia-smi failed: NVIDIA-SMI has failed"
