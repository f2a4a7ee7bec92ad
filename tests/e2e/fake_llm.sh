# fake_llm.sh - the fake OpenAI-compatible server of tests/fake_llm/server.py for the end-to-end tests
# that source it after lib.sh: start_fake NAME starts one on a free port of 127.0.0.1 serving the script
# $TMP/NAME.script and logging to $TMP/NAME.log, requests NAME counts what it received, stop_fakes ends
# every server the test started; model NAME PORT writes a models: entry for it and fake_config an
# experiment on the CPU over L1/2 with those models and agents (results under $R).
FAKE_PID=""
start_fake() { # name: starts server.py, sets PORT_<name> and FAKEPID_<name>
	python3 "$SB_ROOT/tests/fake_llm/server.py" "$TMP/$1.script" "$TMP/$1.log" >"$TMP/$1.out" 2>&1 &
	FAKE_PID="$FAKE_PID $!"
	printf -v "FAKEPID_$1" '%s' "$!"
	for _ in $(seq 100); do grep -q PORT "$TMP/$1.out" 2>/dev/null && break; sleep 0.1; done
	printf -v "PORT_$1" '%s' "$(awk '/PORT/ {print $2}' "$TMP/$1.out")"
}
requests() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' "$TMP/$1.log"; }
stop_fakes() { for p in $FAKE_PID; do kill "$p" 2>/dev/null; done; return 0; }
model() { # name port [max_concurrent]: one models: entry for the fake server on that port
	printf '  - {name: %s, provider: openai, api_base: "http://127.0.0.1:%s/v1", model: fake-model, api_key_env: null, max_concurrent: %s, timeout_s: 30}\n' "$1" "$2" "${3:-1}"
}
fake_config() { # file model-block agent-block [name]: a small CPU experiment over L1/2
	cat >"$1" <<EOF
name: ${4:-fake}
problems: {levels: [1], select: [L1/2]}
models:
$2
agents:
$3
eval: {device: cpu, trials: 2, perf_trials: 3, warmup_ms: 10, timing_cap_s: 10}
checks: {policy: {H01: flag, H04: flag}}
output: {dir: $R}
EOF
}
