#!/usr/bin/env bash
# test_llm_doctor.sh - `stitchbench doctor --config` probes each configured model: a reachable
# endpoint with its latency and whether it serves the model, one that takes no key (api_key_env: null)
# and a replay cassette with its count of recorded calls pass; an unset API key variable (named, never
# its value) and an endpoint with nothing listening (named by its URL) fail, with exit 3.
source "$(dirname "$0")/lib.sh"
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

cat >"$TMP/script.json" <<'JSON'
[{"body": {"object": "list", "data": [{"id": "m1"}]}},
 {"body": {"object": "list", "data": [{"id": "m1"}, {"id": "m2"}]}},
 {"body": {"object": "list", "data": [{"id": "m1"}]}},
 {"body": {"object": "list", "data": [{"id": "m1"}]}}]
JSON
python3 "$SB_ROOT/tests/fake_llm/server.py" "$TMP/script.json" "$TMP/requests.json" >"$TMP/port" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do grep -q PORT "$TMP/port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/^PORT/ {print $2}' "$TMP/port")
# a port of 127.0.0.1 that nothing listens on
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
nreq() { if [ -f "$TMP/requests.json" ]; then python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' "$TMP/requests.json"; else echo 0; fi; }

key="sk-e2e-$$-$RANDOM$RANDOM"
printf '{"key": {"agent": "a", "problem": "L1/1", "sample": 0, "call": 0}, "response": {"text": "x"}, "usage": {}}\n' \
	>"$TMP/cassette.jsonl"
cat >"$TMP/exp.yaml" <<YAML
models:
  - name: local
    api_base: http://127.0.0.1:$port/v1
    model: m1
    api_key_env: SB_E2E_KEY
  - name: open
    api_base: http://127.0.0.1:$port/v1
    model: m3
    api_key_env: null
  - name: rec
    provider: replay
    cassette: $TMP/cassette.jsonl
YAML

SB_E2E_KEY=$key run_sb doctor --config "$TMP/exp.yaml"
check_rc "the key set and every endpoint up: doctor passes" 0
check_out_re "a reachable endpoint: latency and the served model" \
	"^ok +llm +local: http://127.0.0.1:$port/v1 [0-9]+ ms, 1 model listed, including m1$"
check_out_re "an endpoint that takes no key (api_key_env: null) passes without one; a model it does not list is only said" \
	"^ok +llm +open: http://127.0.0.1:$port/v1 [0-9]+ ms, 2 models listed, but not m3$"
check_out_re "a cassette is counted" "^ok +llm +rec: replay from .*cassette.jsonl: 1 recorded call$"
if grep -qF -- "$key" <<<"$OUT_TXT$ERR_TXT"; then _report fail "the key is never printed" "$OUT_TXT"; else
	_report ok "the key is never printed"; fi
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["requests"]; print(r[0]["headers"].get("Authorization"), "|", r[1]["headers"].get("Authorization"))' "$TMP/requests.json" 2>&1)
check_eq "the probe sent the key to the endpoint, and none where api_key_env is null" "$got" "Bearer $key | None"

# What would stop a run fails doctor: an API key variable that is not set, and nothing listening.
cat >"$TMP/bad.yaml" <<YAML
models:
  - name: local
    api_base: http://127.0.0.1:$port/v1
    model: m1
    api_key_env: SB_E2E_KEY
  - name: nokey
    api_base: http://127.0.0.1:$port/v1
    model: m1
    api_key_env: SB_E2E_UNSET_KEY
  - name: down
    api_base: http://127.0.0.1:$dead/v1
    model: m1
    api_key_env: null
YAML
before=$(nreq)
SB_E2E_KEY=$key run_sb doctor --config "$TMP/bad.yaml"
check_rc "an unset key variable or an endpoint with nothing listening fails doctor: exit 3" 3
check_out_re "an unset key variable is a fail naming the model, the variable and what to do" \
	"^fail +llm +nokey: model nokey: \\\$SB_E2E_UNSET_KEY \(its api_key_env\) is not set or empty: export the API key in it, or set models.nokey.api_key_env to null if http://127.0.0.1:$port/v1 takes no key$"
check_out_re "nothing listening is a fail naming the URL and what to do" \
	"^fail +llm +down: GET http://127.0.0.1:$dead/v1/models: .*nothing answers there .*: start the server, or point models.down.api_base at one that answers$"
check_out_re "the working endpoint beside them is ok" "^ok +llm +local: http://127.0.0.1:$port/v1 "
check_out_re "the summary counts the two" "^summary: [0-9]+ ok, [0-9]+ warn, 2 fail$"
check_eq "a model without its key is not probed (only local was)" "$(($(nreq) - before))" 1
run_sb doctor --config "$TMP/bad.yaml"
check_out_re "the key variable of each model is checked" "^fail +llm +local: model local: \\\$SB_E2E_KEY \(its api_key_env\) is not set"
SB_E2E_KEY=$key run_sb doctor --offline --config "$TMP/bad.yaml"
check_rc "--offline still checks the key variables (no network needed): exit 3" 3
check_out_re "the unset one fails" "^fail +llm +nokey: model nokey: \\\$SB_E2E_UNSET_KEY"
check_out_re "the endpoints are not contacted" "^skip +llm +down: http://127.0.0.1:$dead/v1 not probed \(--offline\)$"
check_eq "no request was made" "$(($(nreq) - before))" 1

# A key given as a header: literally (shown and stored redacted) or from a variable that headers_env names
# (the variable's name is shown, its value never).
lit="lit-$$-$RANDOM$RANDOM" hdr="hdr-$$-$RANDOM$RANDOM"
cat >"$TMP/hdr.yaml" <<YAML
models:
  - name: gw
    api_base: http://127.0.0.1:$port/v1
    model: m1
    api_key_env: null
    headers: {Authorization: "Bearer $lit", X-Team: blue}
    headers_env: {X-Api-Key: SB_E2E_HDR}
YAML
SB_E2E_HDR=$hdr run_sb doctor --config "$TMP/hdr.yaml"
check_out_re "headers and headers_env reach the endpoint" "^(ok|warn) +llm +gw: http://127.0.0.1:$port/v1 [0-9]+ ms, 1 model listed"
if grep -qF -- "$lit" <<<"$OUT_TXT$ERR_TXT" || grep -qF -- "$hdr" <<<"$OUT_TXT$ERR_TXT"; then
	_report fail "doctor prints neither a secret-looking header nor a headers_env value" "$OUT_TXT"; else
	_report ok "doctor prints neither a secret-looking header nor a headers_env value"; fi
check_out "the resolved configuration shows the secret header redacted" '"Authorization": "[REDACTED]"'
check_out "and the other headers as they are" '"X-Team": "blue"'
check_out "and the variable headers_env names" '"X-Api-Key": "SB_E2E_HDR"'
got=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["requests"][3]["headers"]; print(h.get("Authorization"), h.get("X-Api-Key"), h.get("X-Team"))' "$TMP/requests.json" 2>&1)
if [ "$got" = "Bearer $lit $hdr blue" ]; then _report ok "the probe sent all three headers with their values"; else
	_report fail "the probe sent all three headers with their values" "$got"; fi
run_sb doctor --config "$TMP/hdr.yaml"
check_rc "an unset headers_env variable fails doctor too (a run refuses to start without it)" 3
check_out_re "it is named" "^fail +llm +gw: model gw: headers_env.X-Api-Key names \\\$SB_E2E_HDR, which is not set"
# the configuration a run stores (here through import, which writes config.yaml the same way)
SB_E2E_HDR=$hdr run_sb import "$TMP/run" "$SB_ROOT/tests/fixtures/verdicts/shard_a.jsonl" -c "$TMP/hdr.yaml"
check_rc "a run made with that configuration" 0
if [ -s "$TMP/run/config.yaml" ] && ! grep -qF -- "$lit" "$TMP/run/config.yaml" && ! grep -qF -- "$hdr" "$TMP/run/config.yaml" &&
	grep -qF '"Authorization": "[REDACTED]"' "$TMP/run/config.yaml"; then
	_report ok "stores no secret header value in its config.yaml"; else
	_report fail "stores no secret header value in its config.yaml" "$(grep -A3 headers "$TMP/run/config.yaml")"; fi
