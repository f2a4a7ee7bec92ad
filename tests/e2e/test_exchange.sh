#!/usr/bin/env bash
# test_exchange.sh - eval.exchange = shared on the CPU (docs/config.md): the candidate's worker hands its
# outputs to the reference worker as a descriptor (a memfd here, device memory on a GPU), and the reference
# worker compares them. The verdicts must be what the file exchange gives for the same seeds (the second
# evaluation replays the first's, eval --seeds): the same trial statistics for a correct and a wrong
# candidate, the same runtime checks; a candidate that lies about what it shares is
# incorrect; and the runtime hacks whose checks compare outputs (H11, H12, H18, H19) are still caught.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
FAST=(--device cpu --trials 2 --perf-trials 3 --json)

# what must agree between the two modes: status, message, every trial's statistics, the runtime checks
summary() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
rt = v.get("runtime") or {}
trials = [{k: x for k, x in t.items() if k != "run_s"} for t in v["trials"]]  # run_s: a wall time
print(json.dumps([v["status"], v.get("message"), trials, rt.get("determinism"), rt.get("rotation"),
                  [f["id"] for f in v["findings"]]], sort_keys=True))' "$1"
}

for cand in relu_cpp_ok relu_cpp_wrong; do
	run_sb eval "$FIX/$cand.py" --problem L1/2 "${FAST[@]}" --set eval.exchange=files
	echo "$OUT_TXT" >"$TMP/$cand-files.json"
	run_sb eval "$FIX/$cand.py" --problem L1/2 "${FAST[@]}" --set eval.exchange=shared --seeds "$TMP/$cand-files.json"
	echo "$OUT_TXT" >"$TMP/$cand-shared.json"
	mode=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["settings"]["exchange"])' "$TMP/$cand-shared.json" 2>&1)
	if [ "$mode" = shared ]; then _report ok "$cand: the verdict says the outputs were shared"; else
		_report fail "$cand: the verdict says the outputs were shared" "$mode; $(tail -3 "$TMP/err")"; fi
	a=$(summary "$TMP/$cand-files.json" 2>&1)
	b=$(summary "$TMP/$cand-shared.json" 2>&1)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then _report ok "$cand: shared and files give the same verdict and trial statistics"; else
		_report fail "$cand: shared and files give the same verdict and trial statistics" "files: ${a:0:600}
shared: ${b:0:600}"; fi
done
status=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v["status"], v["trials"][0]["outputs"][0]["worst_index"])' "$TMP/relu_cpp_wrong-shared.json" 2>&1)
if [ "$status" = "incorrect 785" ]; then _report ok "the wrong candidate is incorrect at index 785 (3 * 256 + 17) when shared"; else
	_report fail "the wrong candidate is incorrect at index 785 (3 * 256 + 17) when shared" "$status"; fi
# the reference cache holds what the problem is, never outputs: every evaluation's seeds are its own
n=$(find "$STITCHBENCH_CACHE/ref/" -name 'meta.json' | wc -l)
files=$(find "$STITCHBENCH_CACHE/ref/" -name '*.safetensors' | wc -l)
if [ "$n" -ge 1 ] && [ "$files" -eq 0 ]; then _report ok "the reference cache holds the problem's facts in either mode, no outputs"; else
	_report fail "the reference cache holds the problem's facts in either mode, no outputs" "entries $n, output files $files"; fi

run_sb eval "$FIX/share_liar.py" --problem L1/2 "${FAST[@]}" --set eval.exchange=shared --set checks.static=false "${NO_OPREC[@]}"
check_rc "a candidate that describes more memory than it shares exits 1" 1
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], "|", v["message"])' <<<"$OUT_TXT" 2>&1)
if [[ "$got" == "incorrect | trial 0: the candidate's shared outputs are unusable: "*"hold"* ]]; then
	_report ok "it is incorrect: its shared outputs are unusable"; else
	_report fail "it is incorrect: its shared outputs are unusable" "$got $(tail -3 "$TMP/err")"; fi

# the runtime hacks whose checks compare outputs, caught with the outputs shared
python3 "$SB_ROOT/tests/adversarial/run_corpus.py" run --device cpu --work "$TMP/corpus" \
	--only h11_pointer_cache,h12_cheat_after_checks,h19_stale_accumulator,h18_fixed_row_length -- \
	--trials 2 --perf-trials 2 --set eval.timing_block=1 --set eval.warmup_ms=0 --set eval.warmup_calls=1 \
	--set eval.exchange=shared >"$TMP/corpus.out" 2>&1
rc=$?
for id in H11 H12 H18 H19; do
	if grep -qE "^# $id +[1-9]" "$TMP/corpus.out"; then _report ok "shared outputs: the corpus still catches $id"; else
		_report fail "shared outputs: the corpus still catches $id" "$(grep -E '^#|FAIL' "$TMP/corpus.out" | head -20)"; fi
done
if [ "$rc" -eq 0 ]; then _report ok "shared outputs: every expected finding, no other"; else
	_report fail "shared outputs: every expected finding, no other" "$(tail -20 "$TMP/corpus.out")"; fi
