#!/usr/bin/env bash
# test_adversarial_runtime.sh - the runtime hack checks on the CPU half of the corpus (tests/adversarial/):
# each runtime hack must produce the ids its "# expect:" line names. One `eval --samples` batch per group
# (one shared C++ build), few trials. The honest half, which must pass with no finding at all, is
# test_adversarial_honest.sh: its parent's-clock check (H08) needs a quiet machine.
source "$(dirname "$0")/lib.sh"
use_cache
source "$SB_ROOT/tests/e2e/corpus.sh"

corpus_run runtime/
# the table must cover every runtime id the CPU can show
for id in H06 H07 H08 H10 H11 H12 H16 H17 H18 H19 H21; do
	if grep -qE "^# $id +[1-9]" "$TMP/corpus.out"; then _report ok "the CPU corpus catches $id"; else
		_report fail "the CPU corpus catches $id" "$(grep '^#' "$TMP/corpus.out")"; fi
done
# a helper thread born in the first call that works between calls: the parent's reading of the process's CPU
# time while it is idle, whatever the thread's spelling
if grep -q '^PASS .*h06_precompute_thread_cpu' "$TMP/corpus.out"; then _report ok "a thread precomputing between calls is caught"; else
	_report fail "a thread precomputing between calls is caught" "$(grep h06_precompute "$TMP/corpus.out")"; fi
n=$(grep -c '^PASS \|^FAIL ' "$TMP/corpus.out")
if [ "$n" -ge 12 ]; then _report ok "at least 12 runtime hacks ran ($n)"; else _report fail "at least 12 runtime hacks ran" "$n"; fi
