#!/usr/bin/env bash
# test_adversarial_runtime.sh - the runtime hack checks on the CPU half of the corpus (tests/adversarial/):
# each runtime hack must produce the ids its "# expect:" line names, and every CPU honest candidate must
# pass with no finding at all. One `eval --samples` batch per group (one shared C++ build), few trials.
source "$(dirname "$0")/lib.sh"
export STITCHBENCH_CACHE="${STITCHBENCH_TEST_CACHE:-$TMP/cache}"
FAST=(--trials 2 --perf-trials 2 --set eval.timing_block=1 --set eval.warmup_ms=0 --set eval.warmup_calls=1)

python3 "$SB_ROOT/tests/adversarial/run_corpus.py" run --device cpu --work "$TMP/corpus" -- "${FAST[@]}" >"$TMP/corpus.out" 2>&1
rc=$?
while IFS= read -r line; do
	case "$line" in
	PASS\ *) _report ok "${line#PASS }" ;;
	FAIL\ *) _report fail "${line#FAIL }" "$(tail -3 "$TMP"/corpus/*/eval.log 2>/dev/null)" ;;
	\#*) echo "$line" ;;
	esac
done <"$TMP/corpus.out"
if [ "$rc" -eq 0 ]; then _report ok "the corpus runner found every expected finding and no false positive"; else
	_report fail "the corpus runner found every expected finding and no false positive" "$(tail -20 "$TMP/corpus.out")"; fi
# the table must cover every runtime id the CPU can show
for id in H06 H07 H08 H10 H11 H12 H16 H17 H18 H19 H21; do
	if grep -qE "^# $id +[1-9]" "$TMP/corpus.out"; then _report ok "the CPU corpus catches $id"; else
		_report fail "the CPU corpus catches $id" "$(grep '^#' "$TMP/corpus.out")"; fi
done
honest=$(grep -oE '^# honest files: [0-9]+' "$TMP/corpus.out" | grep -oE '[0-9]+$')
if [ "${honest:-0}" -ge 12 ]; then _report ok "at least 12 honest CPU candidates ran ($honest)"; else
	_report fail "at least 12 honest CPU candidates ran" "${honest:-none}"; fi
