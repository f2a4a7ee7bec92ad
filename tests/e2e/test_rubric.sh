#!/usr/bin/env bash
# test_rubric.sh - the optional rubric judge through `stitchbench eval`: a judge model on the fake LLM
# server (127.0.0.1) scores a candidate, the verdict keeps the scores; a judge that answers badly leaves
# a reason and no score; a rubric without a judge model is a configuration error. Then through
# `stitchbench run`: the stored verdicts of an LLM agent and of the samples agent carry the scores, an
# attempt without code (format_error) and the torch-eager reference are not shown to the judge, each
# judge call has its own transcript in the run, and a resume asks the judge nothing again. The verdict's
# reward follows the scores and the speedup; it is null where no score or no speedup exists.
source "$(dirname "$0")/lib.sh"
use_cache
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1 SBTEST_JUDGE_KEY=sk-judge-test

answer='{\"scores\": [{\"criterion\": \"own_kernels\", \"score\": 0, \"reason\": \"torch.relu does the work\"}, {\"criterion\": \"readable\", \"score\": 1, \"reason\": \"two lines\"}]}'
sc='{\"scores\": [{\"criterion\": \"anti_hacking\", \"score\": 1, \"reason\": \"a\"}, {\"criterion\": \"bottleneck_coverage\", \"score\": 0.5, \"reason\": \"b\"}, {\"criterion\": \"cuda_perf_quality\", \"score\": 0.5, \"reason\": \"c\"}, {\"criterion\": \"multi_component_focus\", \"score\": 0, \"reason\": \"d\"}]}'
cat >"$TMP/script.json" <<JSON
[{"content": "$answer"}, {"content": "no JSON here"}, {"content": "$answer"}, {"content": "$sc"}]
JSON
start_server() { # script.json log.json: starts the fake LLM server, sets $server and $port
	python3 "$SB_ROOT/tests/fake_llm/server.py" "$1" "$2" >"$1.port" &
	server=$!
	for _ in $(seq 100); do grep -q PORT "$1.port" 2>/dev/null && break; sleep 0.1; done
	port=$(awk '/PORT/ {print $2}' "$1.port")
}
start_server "$TMP/script.json" "$TMP/requests.json"

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
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["speedup"], v["reward"], v["rubric"]["reward_lambda"])' <<<"$OUT_TXT" 2>&1)
check_eq "a pass that was not timed has no reward; the rubric says which lambda applies" "$got" "None None 0.5"
sent=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["requests"][0]["body"]["messages"][1]["content"]; print("own_kernels (weight 3)" in r, "torch.relu(x)" in r, "class Model(nn.Module)" in r)' "$TMP/requests.json" 2>&1)
if [ "$sent" = "True True True" ]; then _report ok "the judge saw the criteria, the candidate and the problem"; else _report fail "the judge saw the criteria, the candidate and the problem" "$sent"; fi

run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}"
check_rc "an unusable answer does not fail the evaluation" 0
check_out "the text verdict says why there is no score" "rubric (judge): not scored: the judge's answer has no JSON object"
run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}" --json --perf-trials 3 --set eval.warmup_ms=0 \
	--set eval.warmup_calls=1 --set eval.timing_block=1 --set checks.reward_lambda=2
got=$(python3 -c '
import json, sys
v = json.load(sys.stdin)
s = v["speedup"]["vs_eager"]
want = (min(s, 5) + 0.3) * (1 + 2 * (0.25 - 0.5))  # total 0.25, lambda 2
print(v["status"], abs(v["reward"] - want) < 1e-9 * want, v["rubric"]["reward_lambda"])' <<<"$OUT_TXT" 2>&1)
check_eq "a timed pass earns (min(s, 5) + 0.3) x (1 + lambda x (total - 0.5))" "$got" "pass True 2.0"
# StitchCUDA's protocol with a judge model and no rubric of its own: the bundled four criteria
run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}" --json --set checks.rubric=null --set eval.preset=stitchcuda
got=$(python3 -c 'import json,sys; r=json.load(sys.stdin)["rubric"]; print([c["name"] for c in r["criteria"]], r["total"])' <<<"$OUT_TXT" 2>&1)
check_eq "eval.preset=stitchcuda scores StitchCUDA's rubric when only a judge model is named" "$got" \
	"['anti_hacking', 'bottleneck_coverage', 'cuda_perf_quality', 'multi_component_focus'] 0.5"
kill "$server" 2>/dev/null

run_sb eval "$TMP/cand.py" --problem L1/2 "${FAST[@]}" --set checks.rubric="$TMP/rubric.yaml"
check_rc "a rubric without a judge model is a usage error" 2
check_err "which says what to set" "checks.judge_model"
run_sb eval "$TMP/cand.py" --problem L1/2 -c "$TMP/exp.yaml" "${FAST[@]}" --set checks.rubric="$TMP/missing.yaml"
check_rc "a missing rubric file is an input error" 2
run_sb eval "$TMP/cand.py" --problem L1/2 "${FAST[@]}" --json
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["rubric"], v["runtime"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "None None" ]; then _report ok "off by default, and checks.runtime=false leaves runtime null"; else _report fail "off by default" "$got"; fi

# ---------- stitchbench run ----------
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
requests() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' "$1"; }
cat >"$TMP/judge.json" <<JSON
[{"content": "$answer", "repeat": 2}]
JSON
start_server "$TMP/judge.json" "$TMP/judge.log"
judge_server=$server judge_port=$port
python3 -c 'import json,sys; print(json.dumps([{"content": open(sys.argv[1]).read()}]))' \
	"$SB_ROOT/tests/fixtures/cassettes/loop/oneshot/L1_2/s0/call-0000.md" >"$TMP/coder.json"
start_server "$TMP/coder.json" "$TMP/coder.log"
coder_server=$server
cat >"$TMP/run.yaml" <<YAML
name: judged
problems: {levels: [1], select: [L1/2]}
models:
  - {name: judge, provider: openai, api_base: "http://127.0.0.1:$judge_port/v1", model: fake-judge, api_key_env: SBTEST_JUDGE_KEY}
  - {name: coder, provider: openai, api_base: "http://127.0.0.1:$port/v1", model: fake-coder, api_key_env: SBTEST_JUDGE_KEY}
agents:
  - {name: one, kind: oneshot, model: coder}
  - {name: samples, kind: samples, samples: 2, samples_dir: "$SB_ROOT/tests/fixtures/generations"}
  - {name: torch-eager, kind: torch-eager}
eval: {device: cpu, trials: 1, perf_trials: 0}
checks: {static: false, runtime: false, rubric: "$TMP/rubric.yaml", judge_model: judge}
output: {dir: "$TMP/results"}
YAML
D="$TMP/results/judged"
run_sb run -c "$TMP/run.yaml" --run-id judged
check_rc "a run with a rubric ends with exit 0" 0
got=$(sql "$D/results.db" "SELECT agent, sample, attempt, status, json_extract(json, '$.rubric.total'), json_extract(json, '$.rubric.criteria[0].reason'), json_extract(json, '$.rubric.model'), json_type(json, '$.reward') FROM verdicts ORDER BY agent, sample, attempt" 2>&1)
want="one|0|0|pass|0.25|torch.relu does the work|judge|null
samples|0|0|pass|0.25|torch.relu does the work|judge|null
samples|1|0|format_error|None|None|None|null
torch-eager|0|0|pass|None|None|None|null"
if [ "$got" = "$want" ]; then _report ok "the stored verdicts carry the scores; format_error and torch-eager have none"; else
	_report fail "the stored verdicts carry the scores; format_error and torch-eager have none" "got:  $got
want: $want"; fi
if [ "$(requests "$TMP/judge.log") $(requests "$TMP/coder.log")" = "2 1" ]; then _report ok "the judge was asked once per candidate with code"; else
	_report fail "the judge was asked once per candidate with code" "judge $(requests "$TMP/judge.log"), coder $(requests "$TMP/coder.log")"; fi
check_true "each judge call is a transcript of the run, keyed judge.<agent> with the attempt as the call" \
	test -s "$D/transcripts/judge.one/L1_2/s0/call-0000.json" -a -s "$D/transcripts/judge.samples/L1_2/s0/call-0000.json"
check_true "the agent's own call keeps its key" test -s "$D/transcripts/one/L1_2/s0/call-0000.json"
sent=$(python3 -c 'import json,sys; print(sorted("torch.relu(x)" in r["body"]["messages"][1]["content"] for r in json.load(open(sys.argv[1]))["requests"]))' "$TMP/judge.log" 2>&1)
if [ "$sent" = "[True, True]" ]; then _report ok "the run's judge saw the candidates"; else _report fail "the run's judge saw the candidates" "$sent"; fi
run_sb run --resume "$D"
check_rc "resuming the finished run is a no-op" 0
if [ "$(requests "$TMP/judge.log")" = 2 ]; then _report ok "a resume asks the judge nothing again"; else
	_report fail "a resume asks the judge nothing again" "$(requests "$TMP/judge.log") judge requests"; fi
kill "$judge_server" "$coder_server" 2>/dev/null

run_sb run -c "$TMP/run.yaml" --set checks.judge_model=null --run-id unjudged
check_rc "run: a rubric without a judge model is a usage error" 2
check_err "run: which says what to set" "checks.judge_model"
check_true "and no run directory is left behind" test ! -e "$TMP/results/unjudged/results.db"
