#!/usr/bin/env bash
# test_hostile.sh - candidates that attack their own worker: end it, kill or stop it, flood its output,
# flood its reply channel. Each gets a verdict of its own (exit 1, never 2 or 3: the harness never reports
# its own failure for them), and a correct candidate evaluated right after still passes.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
QUICK=(--device cpu --trials 1 --perf-trials 0 --set checks.static=false "${NO_OPREC[@]}" --json)

verdict() { python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], "|", v["message"])' <<<"$OUT_TXT" 2>&1; }

run_sb eval "$FIX/hostile_exit.py" --problem L1/2 "${QUICK[@]}"
check_rc "a candidate that ends its worker exits 1" 1
got=$(verdict)
if [[ "$got" == "runtime_error | "*"status 7"* ]]; then _report ok "it is runtime_error with the exit status"; else
	_report fail "it is runtime_error with the exit status" "$got"; fi

# without a PID namespace the signals reach the worker itself
t0=$(date +%s)
STITCHBENCH_SANDBOX_DISABLE=pidns run_sb eval "$FIX/hostile_stop.py" --problem L1/2 "${QUICK[@]}" \
	--set eval.timeout_s=300
took=$(( $(date +%s) - t0 ))
check_rc "a candidate that stops its worker exits 1" 1
got=$(verdict)
if [[ "$got" == "runtime_error | "*"stopped"* ]] && [ "$took" -lt 120 ]; then _report ok "it is runtime_error (stopped) in ${took} s, not the 300 s timeout"
else _report fail "it is runtime_error (stopped), well before the timeout" "$got; took ${took} s"; fi

STITCHBENCH_SANDBOX_DISABLE=pidns run_sb eval "$FIX/hostile_kill.py" --problem L1/2 "${QUICK[@]}"
check_rc "a candidate that kills its worker exits 1" 1
got=$(verdict)
if [[ "$got" == "runtime_error | "*"SIGKILL"* ]]; then _report ok "it is runtime_error (killed by SIGKILL)"; else
	_report fail "it is runtime_error (killed by SIGKILL)" "$got"; fi

# inside its namespace the worker is init: its own SIGKILL does nothing, and it is judged on its answer
run_sb eval "$FIX/hostile_kill.py" --problem L1/2 "${QUICK[@]}"
got=$(verdict)
if [[ "$got" == "pass | "* ]] || grep -q '"pid_namespace": false' <<<"$OUT_TXT"; then
	_report ok "in its PID namespace its own SIGKILL cannot end it ($got)"
else _report fail "in its PID namespace its own SIGKILL cannot end it" "$got"; fi

run_sb eval "$FIX/hostile_flood.py" --problem L1/2 "${QUICK[@]}"
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], len(v["log_tail"] or "") <= 140000, "flood" in (v["log_tail"] or ""))' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "pass True True" ]; then _report ok "256 MiB on stdout: judged as usual, a bounded tail kept"; else
	_report fail "256 MiB on stdout: judged as usual, a bounded tail kept" "$got"; fi

run_sb eval "$FIX/hostile_channel.py" --problem L1/2 "${QUICK[@]}"
check_rc "a candidate that floods its reply channel exits 1" 1
got=$(verdict)
if [[ "$got" == "runtime_error | "*"64 MiB"* ]]; then _report ok "its oversized reply is refused as runtime_error"; else
	_report fail "its oversized reply is refused as runtime_error" "$got"; fi

run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 --device cpu --trials 1 --perf-trials 2
check_rc "a correct candidate evaluated after them still passes" 0
