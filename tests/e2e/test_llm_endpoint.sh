#!/usr/bin/env bash
# test_llm_endpoint.sh - a run against endpoints that cannot help: a closed port (each call fails at once,
# and the run stops after three in a row, saying how to continue) and answers cut at the token limit
# (the attempt's message says which limit to raise).
# tier: fast (no evaluation: tests/README.md)
source "$(dirname "$0")/lib.sh"
use_cache
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
R="$TMP/results"
experiment() { # file api_base samples
	cat >"$1" <<EOF
name: endpoint
problems: {levels: [1], select: [L1/2]}
models:
  - {name: m, provider: openai, api_base: "$2", model: fake-model, api_key_env: null, max_concurrent: 1, max_tokens: 300}
agents:
  - {name: one, kind: oneshot, model: m, samples: $3}
eval: {device: cpu, trials: 2, perf_trials: 3, warmup_ms: 10, timing_cap_s: 10}
output: {dir: $R}
EOF
}

# ---------- nothing listening ----------
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
experiment "$TMP/closed.yaml" "http://127.0.0.1:$closed/v1" 6
start=$(date +%s)
run_sb run -c "$TMP/closed.yaml" --run-id closed --jobs 1
took=$(($(date +%s) - start))
check_rc "a run against a closed port ends with unfinished samples: exit 1" 1
check_out "it stopped" "run closed: 0 of 6 samples ended, 6 unfinished (stopped)"
check_err "saying the endpoint is down, with its URL" "http://127.0.0.1:$closed/v1/chat/completions (model fake-model): "
check_err "after three calls in a row" "nothing answered 3 calls in a row there: the endpoint is down"
check_err "and how to continue once it answers" "then continue with: stitchbench run --resume $R/closed"
check_out "continue: names the run" "continue: stitchbench run --resume $R/closed"
n=$(find "$R/closed/transcripts" -name 'call-*.json' | wc -l)
attempts=$(python3 -c 'import glob, json, sys; print(sorted({json.load(open(f))["timing"]["attempts"] for f in glob.glob(sys.argv[1] + "/transcripts/**/call-*.json", recursive=True)}))' "$R/closed" 2>&1)
if [ "$n" = 3 ] && [ "$attempts" = "[1]" ]; then _report ok "three calls were made, one request each, then no sample started"; else
	_report fail "three calls were made, one request each, then no sample started" "$n calls; attempts per call: $attempts"; fi
if [ "$took" -lt 60 ]; then _report ok "it took seconds, not minutes of backoff (${took} s)"; else
	_report fail "it took seconds, not minutes of backoff" "${took} s"; fi

# ---------- an answer cut at the token limit ----------
python3 -c 'import json; print(json.dumps([{"content": "Let me think about the kernel. First, the grid", "finish_reason": "length", "completion_tokens": 300}]))' >"$TMP/cut.script"
python3 "$SB_ROOT/tests/fake_llm/server.py" "$TMP/cut.script" "$TMP/cut.log" >"$TMP/cut.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do grep -q PORT "$TMP/cut.out" 2>/dev/null && break; sleep 0.1; done
experiment "$TMP/cut.yaml" "http://127.0.0.1:$(awk '/PORT/ {print $2}' "$TMP/cut.out")/v1" 1
run_sb run -c "$TMP/cut.yaml" --run-id cut
check_rc "a run whose answer was cut at the token limit ends" 0
msg=$(python3 -c 'import sqlite3, sys, json; print(json.loads(sqlite3.connect(sys.argv[1]).execute("SELECT json FROM verdicts").fetchone()[0])["message"])' "$R/cut/results.db" 2>&1)
want="the answer holds no code defining class ModelNew: the answer was cut at the token limit (finish_reason=length, 300 completion tokens); raise models.m.max_tokens (now 300)"
if grep -qF -- "$want" <<<"$msg"; then _report ok "the format_error says the answer was cut and which limit to raise"; else
	_report fail "the format_error says the answer was cut and which limit to raise" "$msg"; fi
check_true "the sample's notes say so too" grep -qF "raise models.m.max_tokens (now 300)" "$R/cut/samples/one/L1_2/s0/summary.json"
