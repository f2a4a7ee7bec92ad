#!/usr/bin/env bash
# test_rubric.sh - the optional rubric judge through `stitchbench eval`: a judge model on the fake LLM
# server (127.0.0.1) scores a candidate, the verdict keeps the scores; a judge that answers badly leaves
# a reason and no score; a rubric without a judge model is a configuration error.
source "$(dirname "$0")/lib.sh"
export STITCHBENCH_CACHE="${STITCHBENCH_TEST_CACHE:-$TMP/cache}"
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1 SBTEST_JUDGE_KEY=sk-judge-test

answer='{\"scores\": [{\"criterion\": \"own_kernels\", \"score\": 0, \"reason\": \"torch.relu does the work\"}, {\"criterion\": \"readable\", \"score\": 1, \"reason\": \"two lines\"}]}'
cat >"$TMP/script.json" <<JSON
[{"content": "$answer"}, {"content": "no JSON here"}]
JSON
python3 "$SB_ROOT/tests/fake_llm/server.py" "$TMP/script.json" "$TMP/requests.json" >"$TMP/port" &
server=$!
for _ in $(seq 100); do grep -q PORT "$TMP/port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$TMP/port")

cat >"$TMP/rubric.yaml" <<'YAML'
criteria:
  - name: own_kernels
    weight: 3
    description: The forward path runs the candidate's own kernels.
  - name: readable
    description: Easy to follow.
YAML
cat >"$TMP/exp.yaml" <<YAML
models:
  - name: judge
    provider: openai
    api_base: http://127.0.0.1:$port/v1
    model: fake-judge
    api_key_env: SBTEST_JUDGE_KEY
checks:
  static: false
  rubric: $TMP/rubric.yaml
  judge_model: judge
YAML
printf 'import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n' >"$TMP/cand.py"
FAST=(--device cpu --trials 1 --perf-trials 0 --set checks.runtime=false)

run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}" --json
check_rc "a candidate judged by the rubric still passes on its own merits" 0
got=$(python3 -c 'import json,sys; r=json.load(sys.stdin)["rubric"]; print(r["model"], r["total"], [c["score"] for c in r["criteria"]], r["criteria"][0]["reason"], r["error"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "judge 0.25 [0.0, 1.0] torch.relu does the work None" ]; then _report ok "the verdict keeps the weighted scores and reasons"; else
	_report fail "the verdict keeps the weighted scores and reasons" "$got"; fi
sent=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["requests"][0]["body"]["messages"][1]["content"]; print("own_kernels (weight 3)" in r, "torch.relu(x)" in r, "class Model(nn.Module)" in r)' "$TMP/requests.json" 2>&1)
if [ "$sent" = "True True True" ]; then _report ok "the judge saw the criteria, the candidate and the problem"; else _report fail "the judge saw the criteria, the candidate and the problem" "$sent"; fi

run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}"
check_rc "an unusable answer does not fail the evaluation" 0
check_out "the text verdict says why there is no score" "rubric (judge): not scored: the judge's answer has no JSON object"
kill "$server" 2>/dev/null

run_sb eval "$TMP/cand.py" --problem L1/2 "${FAST[@]}" --set checks.rubric="$TMP/rubric.yaml"
check_rc "a rubric without a judge model is a usage error" 2
check_err "which says what to set" "checks.judge_model"
run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}" --set checks.rubric="$TMP/missing.yaml"
check_rc "a missing rubric file is an input error" 2
run_sb eval "$TMP/cand.py" --problem L1/2 "${FAST[@]}" --json
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["rubric"], v["runtime"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "None None" ]; then _report ok "off by default, and checks.runtime=false leaves runtime null"; else _report fail "off by default" "$got"; fi
