#!/usr/bin/env bash
# test_timing_cpu.sh - eval.timing_cpu: both workers' threads pinned to one CPU while they time. The
# candidate (tests/fixtures/candidates/pin_probe.py) computes a right ReLU unless its thread can run on one
# CPU only, so the checked timed outputs (H12: the first pinned call is wrong) say from inside the sandbox
# whether the pin happened, independently of what the worker reports in timing.pinned.
source "$(dirname "$0")/lib.sh"
use_cache
PROBE="$SB_ROOT/tests/fixtures/candidates/pin_probe.py"
FAST=(--problem L1/2 --device cpu --trials 1 --perf-trials 3 --json --set checks.static=false
	--set eval.warmup_ms=0 --set eval.warmup_calls=1 "${NO_OPREC[@]}")
field() { python3 -c "import json,sys; v=json.loads(sys.stdin.read()); print($1)" <<<"$OUT_TXT" 2>&1; }

ncpu=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
last=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
if [ "$ncpu" -lt 2 ]; then
	skip "a pinned candidate runs its timed calls on one CPU" "this machine lets us use $ncpu CPU: pinned and unpinned look alike"
	skip "unpinned, the same candidate passes" "one CPU"
else
	run_sb eval "$PROBE" "${FAST[@]}" --set eval.timing_cpu="$last"
	got=$(field 'v["status"], [f["id"] for f in v["findings"]], "timed call 0 " in v["message"]')
	if [ "$got" = "rejected ['H12'] True" ]; then _report ok "a pinned candidate runs its timed calls on CPU $last only ($got)"
	else _report fail "a pinned candidate runs its timed calls on CPU $last only" "$got; $ERR_TXT"; fi

	run_sb eval "$PROBE" "${FAST[@]}"
	got=$(field 'v["status"], v["timing"]["cpu"], v["timing"]["pinned"], v["settings"]["timing_lead_us"]')
	if [ "$got" = "pass None False 0" ]; then _report ok "unpinned (the default), the same candidate passes ($got)"
	else _report fail "unpinned (the default), the same candidate passes" "$got; $ERR_TXT"; fi
fi

# a CPU this process may not use is refused before anything runs, naming the ones it may
run_sb eval "$PROBE" --problem L1/2 --device cpu --set eval.timing_cpu=4095
check_rc "eval.timing_cpu outside this process's CPUs is an input error" 2
check_err "the error names the CPUs it may use" "eval.timing_cpu: CPU 4095 is not one stitchbench may run on here (it may use "

# With the expected outputs cached, the reference worker's `load` is sent at the evaluation's start and
# draws the timing inputs itself (off the evaluation's path): the only `timing_setup` request is then the
# candidate's, and the two sides' inputs still agree (or the verdict would say they differ).
RELU="$SB_ROOT/tests/fixtures/candidates/relu_cpp_ok.py"
run_sb eval "$RELU" "${FAST[@]}"   # the reference outputs, cached
STITCHBENCH_TRACE=1 run_sb eval "$RELU" "${FAST[@]}"
got="$(field 'v["status"], v["reference_cached"], v["timing"]["pairs"] > 0') $(grep -c 'timing_setup took' <<<"$ERR_TXT")"
if [ "$got" = "pass True True 1" ]; then _report ok "the reference's timing inputs come with its early load ($got)"
else _report fail "the reference's timing inputs come with its early load" "$got; $ERR_TXT"; fi
# and the trace says where each load's seconds went, the reference's timing inputs among them
if grep -q 'load took .*(torch_import [0-9.]*, .*timing_inputs [0-9.]*)' <<<"$ERR_TXT" &&
	grep -q 'load took .*(.*import [0-9.]*, construct [0-9.]*)' <<<"$ERR_TXT"; then
	_report ok "the trace shows each load's phases"
else _report fail "the trace shows each load's phases" "$(grep 'load took' <<<"$ERR_TXT")"; fi

# A candidate that reads a block's later inputs in its first call (tests/fixtures/candidates/block_frontload.py:
# from the worker's frame, so the static rules are off here) and does the block's work there. With the runtime
# checks off one request carries a block, and it passes faster by the paired median than by its blocks' sums.
# With them on each call is a request of its own: no later input is in the process, and it gains nothing
# (the blocks' sums and the cap on moved work are tested with a worker that moves work: unit test_timing).
# An honest C++ ReLU under the same settings is no finding.
BLOCKS=(--problem L1/2 --device cpu --trials 1 --perf-trials 40 --json --set checks.static=false "${NO_OPREC[@]}")
FRONT="$SB_ROOT/tests/fixtures/candidates/block_frontload.py"
run_sb eval "$FRONT" "${BLOCKS[@]}" --set checks.runtime=false
got=$(field 'v["status"], v["speedup"]["vs_eager"] > 1.5 * v["timing"]["trusted_clock"]["block_speedup"]')
if [ "$got" = "pass True" ]; then _report ok "with the runtime checks off, work moved between calls passes fast ($got)"
else _report fail "with the runtime checks off, work moved between calls passes fast" "$got; $ERR_TXT"; fi
run_sb eval "$FRONT" "${BLOCKS[@]}"
got=$(field '(lambda tc, s: (v["status"], [f["id"] for f in v["findings"] if f["id"] == "H08"], tc["block_capped"], tc["block_gap"] < 1.25, s["vs_eager"] < 1.25 * tc["block_speedup"]))(v["timing"]["trusted_clock"], v["speedup"])')
if [ "$got" = "('pass', [], False, True, True)" ]; then
	_report ok "with them on, each call's inputs come with its own request: nothing to move ($got)"
else _report fail "with them on, each call's inputs come with its own request: nothing to move" "$got; $(field 'v["timing"]["trusted_clock"]')"; fi
run_sb eval "$RELU" "${BLOCKS[@]}"
got=$(field 'v["status"], [f["id"] for f in v["findings"] if f["id"] == "H08"]')
if [ "$got" = "pass []" ]; then _report ok "an honest kernel timed the same way is no H08 ($got)"
else _report fail "an honest kernel timed the same way is no H08" "$got; $ERR_TXT"; fi
