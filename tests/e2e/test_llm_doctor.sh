#!/usr/bin/env bash
# test_llm_doctor.sh - `stitchbench doctor --config` probes each configured model: a reachable
# endpoint with its latency and whether it serves the model, an unreachable one, a missing API key
# variable (named, never its value) and a replay cassette with its count of recorded calls.
source "$(dirname "$0")/lib.sh"
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

cat >"$TMP/script.json" <<'JSON'
[{"body": {"object": "list", "data": [{"id": "m1"}]}},
 {"body": {"object": "list", "data": [{"id": "m1"}, {"id": "m2"}]}}]
JSON
python3 "$SB_ROOT/tests/fake_llm/server.py" "$TMP/script.json" "$TMP/requests.json" >"$TMP/port" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do grep -q PORT "$TMP/port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT/ {print $2}' "$TMP/port")

key="sk-e2e-$$-$RANDOM$RANDOM"
printf '{"key": {"agent": "a", "problem": "L1/1", "sample": 0, "call": 0}, "response": {"text": "x"}, "usage": {}}\n' \
	>"$TMP/cassette.jsonl"
cat >"$TMP/exp.yaml" <<YAML
models:
  - name: local
    api_base: http://127.0.0.1:$port/v1
    model: m1
    api_key_env: SB_E2E_KEY
  - name: nokey
    api_base: http://127.0.0.1:$port/v1
    model: m3
    api_key_env: SB_E2E_UNSET_KEY
  - name: down
    api_base: http://127.0.0.1:9/v1
    model: m1
    api_key_env: SB_E2E_KEY
  - name: rec
    provider: replay
    cassette: $TMP/cassette.jsonl
YAML

SB_E2E_KEY=$key run_sb doctor --config "$TMP/exp.yaml"
check_rc "unreachable endpoints do not fail doctor" 0
check_out_re "a reachable endpoint: latency and the served model" \
	"^ok +llm +local: http://127.0.0.1:$port/v1 [0-9]+ ms, 1 model listed, including m1$"
check_out_re "a missing key variable is a warning naming it" \
	"^warn +llm +nokey: .* 2 models listed, but not m3; \\\$SB_E2E_UNSET_KEY \(its API key variable\) is not set$"
check_out_re "an unreachable endpoint is a warning naming the URL" "^warn +llm +down: GET http://127.0.0.1:9/v1/models: "
check_out_re "a cassette is counted" "^ok +llm +rec: replay from .*cassette.jsonl: 1 recorded call$"
if grep -qF -- "$key" <<<"$OUT_TXT$ERR_TXT"; then _report fail "the key is never printed" "$OUT_TXT"; else
	_report ok "the key is never printed"; fi
if grep -qF "Bearer $key" "$TMP/requests.json"; then _report ok "the probe sent the key to the endpoint"; else
	_report fail "the probe sent the key to the endpoint" "$(cat "$TMP/requests.json")"; fi
