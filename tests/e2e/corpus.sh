# corpus.sh - sourced after lib.sh by the adversarial corpus's end-to-end files.
# corpus_run GROUP: runs the CPU corpus files whose name holds GROUP (run_corpus.py --only) with few trials,
# one `eval --samples` batch per group; one assertion per file, and one that the runner found every
# expected finding and no false positive. Leaves the runner's output in $TMP/corpus.out.
FAST=(--trials 2 --perf-trials 2 --set eval.timing_block=1 --set eval.warmup_ms=0 --set eval.warmup_calls=1)

corpus_run() { # group
	local rc line
	python3 "$SB_ROOT/tests/adversarial/run_corpus.py" run --device cpu --only "$1" --work "$TMP/corpus" \
		-- "${FAST[@]}" >"$TMP/corpus.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		PASS\ *) _report ok "${line#PASS }" ;;
		FAIL\ *) _report fail "${line#FAIL }" "$(tail -3 "$TMP"/corpus/*/eval.log 2>/dev/null)" ;;
		\#*) echo "$line" ;;
		esac
	done <"$TMP/corpus.out"
	if [ "$rc" -eq 0 ]; then _report ok "the corpus runner found every expected finding and no false positive ($1)"; else
		_report fail "the corpus runner found every expected finding and no false positive ($1)" "$(tail -20 "$TMP/corpus.out")"; fi
}
