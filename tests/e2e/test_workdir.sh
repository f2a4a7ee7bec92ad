#!/usr/bin/env bash
# test_workdir.sh - the candidate's output files go as soon as they are compared, seen from inside the
# sandbox: tests/fixtures/candidates/files_probe.py computes a right ReLU unless more than two trial files
# sit in its folder while it runs, which happens from the fourth trial on if none is removed. With
# --keep-workdir everything stays for inspection (and the probe then fails, at trial 3).
source "$(dirname "$0")/lib.sh"
export STITCHBENCH_CACHE="$TMP/cache-workdir"
PROBE="$SB_ROOT/tests/fixtures/candidates/files_probe.py"
FAST=(--problem L1/2 --device cpu --perf-trials 3 --json --set checks.static=false
	--set eval.warmup_ms=0 --set eval.warmup_calls=1 "${NO_OPREC[@]}")
field() { python3 -c "import json,sys; v=json.loads(sys.stdin.read()); print($1)" <<<"$OUT_TXT" 2>&1; }

run_sb eval "$PROBE" "${FAST[@]}"
got=$(field 'v["status"], len(v["trials"]), v["timing"]["revalidated"]')
if [ "$got" = "pass 5 True" ]; then _report ok "compared outputs are removed while the evaluation runs ($got)"
else _report fail "compared outputs are removed while the evaluation runs" "$got; $ERR_TXT"; fi
left=$(find "$STITCHBENCH_CACHE/work" -name '*.safetensors' 2>/dev/null | wc -l)
if [ "$left" = 0 ]; then _report ok "nothing is left in the work folders afterwards"
else _report fail "nothing is left in the work folders afterwards" "$left files: $(find "$STITCHBENCH_CACHE/work" -name '*.safetensors')"; fi

run_sb eval "$PROBE" "${FAST[@]}" --keep-workdir
got=$(field 'v["status"], v["message"].split(",")[0]')
if [[ "$got" == "incorrect trial 3"* ]]; then _report ok "--keep-workdir keeps every trial's outputs (the probe fails at trial 3)"
else _report fail "--keep-workdir keeps every trial's outputs (the probe fails at trial 3)" "$got; $ERR_TXT"; fi
kept=$(cd "$STITCHBENCH_CACHE"/work/eval-*/cand 2>/dev/null && ls trial_*.safetensors | tr '\n' ' ')
if [ "$kept" = "trial_0.safetensors trial_1.safetensors trial_2.safetensors trial_3.safetensors trial_4.safetensors " ]; then
	_report ok "the kept folder holds them all"
else _report fail "the kept folder holds them all" "$kept"; fi
