#!/usr/bin/env bash
# test_agents_paper.sh - the paper's baselines as agents, on the CPU against the fake LLM server on
# 127.0.0.1: cudaforge (Coder and Judge alternate, the Judge's instruction reaches the next Coder prompt,
# a stop after a pass ends it, a stop after a failure is a correction, prose from the Judge is still an
# instruction, the round limit ends it without a Judge call) and kevin (trajectories x turns, each turn's
# prompt holding that trajectory's earlier code, feedback and summary, the history cut to its token budget,
# the best correct attempt kept, a SIGKILL and a resume that sends no recorded call again). Candidates are
# plain PyTorch (H01 and H04 flagged) so no C++ build slows CI.
source "$(dirname "$0")/lib.sh"
source "$SB_ROOT/tests/e2e/fake_llm.sh"
use_cache
export TMP # the checks below run req in a child bash
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
R="$TMP/results"
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
# the text of request N (0-based) to server NAME: every message, roles first
req() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["requests"][int(sys.argv[2])]["body"]["messages"]; print("\n".join("<"+m["role"]+">\n"+m["content"] for m in r))' "$TMP/$1.log" "$2"; }
sysmsg() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"][int(sys.argv[2])]["body"]["messages"][0]["content"].splitlines()[0])' "$TMP/$1.log" "$2"; }

# Candidates. HALF is wrong (incorrect), RELU and CLAMP pass, NOCODE holds no code (format_error).
code() { # body-expression [prose]
	printf '%s\n```python\nimport torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return %s\n```\n' "${2:-Here is the file.}" "$1"
}
HALF=$(code 'x * 0.5' 'SUMMARY-HALF: I scaled the input by one half.')
RELU=$(code 'torch.relu(x)' 'SUMMARY-RELU: torch.relu, elementwise.')
CLAMP=$(code 'torch.clamp(x, min=0.0)' 'SUMMARY-CLAMP: clamp at zero.')
# script NAME ANSWER...: the fake server's answers in order; an answer "DELAY:S:TEXT" waits S seconds and
# is served twice (the request a kill interrupts is asked again)
script() {
	local name=$1; shift
	python3 - "$@" >"$TMP/$name.script" <<'PY'
import json, sys
out = []
for a in sys.argv[1:]:
    e = {"prompt_tokens": 100, "completion_tokens": 50}
    if a.startswith("DELAY:"):
        _, s, a = a.split(":", 2)
        e.update(delay=float(s), repeat=2)
    e["content"] = a
    out.append(e)
print(json.dumps(out))
PY
}

# ---------- cudaforge ----------
# cf: incorrect -> judge "correct" -> pass -> judge "optimize" -> pass -> judge "stop": 6 calls, 3 rounds of 5
script cf "$HALF" \
	'```json
{"action": "correct", "diagnosis": "the output is scaled, not clamped", "instruction": "MARK-CORRECTION: return max(x, 0) elementwise"}
```' \
	"$RELU" \
	'<think>the timings say it is fine</think>{"action": "optimize", "diagnosis": "one pass over memory already", "instruction": "MARK-OPTIMISE: fuse the clamp into one pass"}' \
	"$CLAMP" \
	'```json
{"action": "stop", "diagnosis": "memory-bound and at one pass", "instruction": ""}
```'
# cg: format_error -> judge "stop" (after a failure: taken as a correction) -> incorrect -> judge prose
# (not JSON: its text is the instruction) -> pass; max_rounds 3 ends it with no third Judge call
script cg "I will think about it." \
	'{"action": "stop", "diagnosis": "nothing was written", "instruction": "MARK-WRITE: answer with the file"}' \
	"$HALF" \
	'MARK-PROSE: the values are halved; clamp them at zero instead.' \
	"$RELU"
# kb: kevin, one trajectory of 4 turns with answers that hold no code (format_error, nothing to run) and
# 700 bytes of prose each, under a 300-token history: turn 4 sees turn 3 whole, turn 2 as a line and
# turn 1 left out
long() { python3 -c 'import sys; print(("SUMMARY-" + sys.argv[1] + ": " + "the plan is to vectorise the loop and keep it in registers. " * 20)[:700])' "$1"; }
script kb "$(long T1)" "$(long T2)" "$(long T3)" "$(long T4)"
start_fake cf; start_fake cg; start_fake kb
fake_config "$TMP/cf.yaml" "$(model cf "$PORT_cf"; model cg "$PORT_cg"; model kb "$PORT_kb")" \
	"  - {name: cf, kind: cudaforge, model: cf, max_rounds: 5}
  - {name: cg, kind: cudaforge, model: cg, max_rounds: 3}
  - {name: kb, kind: kevin, model: kb, trajectories: 1, turns: 4, history_tokens: 300}"
run_sb run -c "$TMP/cf.yaml" --run-id cf
check_rc "a run of cudaforge and kevin agents ends with exit 0" 0
D="$R/cf"
check_eq "cf: draft incorrect, the correction passes, the optimisation passes" \
	"$(sql "$D/results.db" "SELECT attempt, stage, status FROM attempts JOIN verdicts USING (agent, problem, sample, attempt) WHERE agent = 'cf' ORDER BY attempt")" \
	"0|draft|incorrect
1|repair_correctness|pass
2|optimize|pass"
coder_sys=$(sysmsg cf 0); judge_sys=$(sysmsg cf 1)
check_true "cf: the Judge has its own system prompt" test "$coder_sys" != "$judge_sys"
check_eq "cf: six calls, Coder and Judge in turn" \
	"$(requests cf) $(for i in 0 1 2 3 4 5; do [ "$(sysmsg cf $i)" = "$coder_sys" ] && printf C || printf J; done)" "6 CJCJCJ"
check_true "cf: the Judge reads the verdict on the draft (the worst element)" bash -c "$(declare -f req); req cf 1 | grep -qE 'worst at'"
check_true "cf: the Judge is asked for a correction after a failure" bash -c "$(declare -f req); req cf 1 | grep -q 'needs a$' && req cf 1 | grep -q '^correction instruction'"
check_true "cf: on the CPU the Judge is told there are no kernel metrics" bash -c "$(declare -f req); req cf 1 | grep -q '^None: this run is on the CPU'"
check_true "cf: the Judge's correction reaches the next Coder prompt" bash -c "$(declare -f req); req cf 2 | grep -q 'MARK-CORRECTION: return max(x, 0)'"
check_true "cf: with the Judge's diagnosis" bash -c "$(declare -f req); req cf 2 | grep -q 'the output is scaled, not clamped'"
check_true "cf: the Judge is asked for an optimisation after a pass, with the timings" bash -c \
	"$(declare -f req); req cf 3 | grep -q '^optimisation instruction' && req cf 3 | grep -q 'Verdict: pass'"
check_true "cf: the optimisation (after the Judge's reasoning block) reaches the Coder" bash -c "$(declare -f req); req cf 4 | grep -q 'MARK-OPTIMISE: fuse'"
check_true "cf: the revising Coder gets the current file" bash -c "$(declare -f req); req cf 4 | grep -q 'return torch.relu(x)'"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stop_reason"], d["attempts"], d["calls"])' "$D/samples/cf/L1_2/s0/summary.json" 2>&1)
check_eq "cf: the Judge's stop after a pass ends the sample: 3 attempts, 6 calls" "$got" "judge_stop 3 6"
check_eq "cf: each Judge answer is kept with its action" \
	"$(for f in "$D"/samples/cf/L1_2/s0/judge-*.json; do python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["attempt"], d["action"])' "$f"; done | tr '\n' ' ')" \
	"0 correct 1 optimize 2 stop "
check_eq "cg: format_error, then the correction (incorrect), then a pass" \
	"$(sql "$D/results.db" "SELECT attempt, stage, status FROM attempts JOIN verdicts USING (agent, problem, sample, attempt) WHERE agent = 'cg' ORDER BY attempt")" \
	"0|draft|format_error
1|repair_compile|incorrect
2|repair_correctness|pass"
check_true "cg: the Judge of an answer without code is told so, not shown an older file" bash -c \
	"$(declare -f req); req cg 1 | grep -q 'held no code that could be read'"
check_true "cg: a stop after a failure is taken as a correction and reaches the Coder" bash -c "$(declare -f req); req cg 2 | grep -q 'MARK-WRITE'"
check_true "cg: a Judge answer that is not JSON is passed on as the instruction" bash -c "$(declare -f req); req cg 4 | grep -q 'MARK-PROSE: the values are halved'"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stop_reason"], d["calls"], "/", " / ".join(d["notes"]))' "$D/samples/cg/L1_2/s0/summary.json" 2>&1)
check_eq "cg: max_rounds 3 ends it after the third candidate, with no Judge call on it; both oddities noted" "$got" \
	"attempts 5 / judge on attempt 0: correct; action stop after a failed candidate; taken as correct / judge on attempt 1: correct; not the JSON asked for (the answer holds no JSON object): its text is the instruction"
check_eq "cg: five requests reached the server" "$(requests cg)" 5

# ---------- kevin: the history budget ----------
check_eq "kb: four turns of one trajectory, oneshot then refine" \
	"$(sql "$D/results.db" "SELECT group_concat(stage || ':' || status, ' ') FROM (SELECT stage, status FROM attempts JOIN verdicts USING (agent, problem, sample, attempt) WHERE agent = 'kb' ORDER BY attempt)")" \
	"oneshot:format_error refine:format_error refine:format_error refine:format_error"
check_true "kb: turn 2 sees turn 1 whole: its summary, the missing code and the feedback" bash -c \
	"$(declare -f req); req kb 1 | grep -q '^### Turn 1 (attempt 0): format_error' && req kb 1 | grep -q '^SUMMARY-T1: the plan' && req kb 1 | grep -q 'Verdict: format_error'"
check_true "kb: the model's prose is its summary, cut at 600 bytes" bash -c "$(declare -f req); req kb 1 | grep -qE '^SUMMARY-T1: .{580,}\.\.\.$'"
check_eq "kb: turn 4 fits 300 tokens: turn 1 left out, turn 2 as one line, turn 3 whole" \
	"$(req kb 3 | grep -E '^\(1 earlier turn left out|^Earlier turns, one line each|^- Turn|^### Turn' | cut -c1-40)" \
	"(1 earlier turn left out to fit the cont
Earlier turns, one line each:
- Turn 2 (attempt 1): format_error: SUMM
### Turn 3 (attempt 2): format_error"
check_true "kb: and says nothing of turn 1's summary" bash -c "$(declare -f req); ! req kb 3 | grep -q SUMMARY-T1"
check_true "no rendered prompt keeps a placeholder" bash -c "! grep -rl '{{' '$D/prompts'"

# ---------- kevin: trajectories x turns, the best, SIGKILL and resume ----------
# 2 trajectories x 2 turns: calls 0, 1 are turn 1 of trajectories 1, 2; calls 2, 3 their turn 2. The
# last call is slow so that the run can be killed while it is in flight.
script kv "$HALF" "$RELU" "$CLAMP" "DELAY:3:$HALF"
start_fake kv
fake_config "$TMP/kv.yaml" "$(model kv "$PORT_kv")" "  - {name: kv, kind: kevin, model: kv, trajectories: 2, turns: 2}"
descendants() { local k; for k in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$k"; echo "$k"; done; }
kill_run() { local o; o=$(descendants "$1"); kill -KILL "$1"; wait "$1" 2>/dev/null; [ -n "$o" ] && kill -KILL $o 2>/dev/null; return 0; }
K="$R/kv"
"$SB" run -c "$TMP/kv.yaml" --run-id kv >/dev/null 2>"$TMP/kv1.err" &
pid=$!
for _ in $(seq 1200); do [ "$(requests kv 2>/dev/null)" = 4 ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
kill_run "$pid"
v1=$(sql "$K/results.db" "SELECT attempt, status, created, candidate_sha256 FROM verdicts ORDER BY attempt")
check_eq "killed during the fourth call: 4 requests, 3 transcripts, 3 attempts judged" \
	"$(requests kv) $(find "$K/transcripts" -name 'call-*.json' | wc -l) $(cut -d'|' -f1,2 <<<"$v1" | tr '\n' ' ')" \
	"4 3 0|incorrect 1|pass 2|pass "
run_sb run --resume "$K"
check_rc "the resume finishes the run" 0
check_eq "only the call in flight was asked again: 5 requests, 4 transcripts" \
	"$(requests kv) $(find "$K/transcripts" -name 'call-*.json' | wc -l)" "5 4"
check_eq "the stored attempts were read back, not judged again" \
	"$(sql "$K/results.db" "SELECT attempt, status, created, candidate_sha256 FROM verdicts WHERE attempt < 3 ORDER BY attempt")" "$v1"
check_eq "turns interleave: oneshot, oneshot, refine, refine" \
	"$(sql "$K/results.db" "SELECT group_concat(stage || ':' || status, ' ') FROM (SELECT stage, status FROM attempts JOIN verdicts USING (agent, problem, sample, attempt) WHERE agent = 'kv' ORDER BY attempt)")" \
	"oneshot:incorrect oneshot:pass refine:pass refine:incorrect"
check_eq "trajectories.json maps attempts to (trajectory, turn)" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["trajectories"], d["turns"], " ".join("%d:%d/%d" % (a["attempt"], a["trajectory"], a["turn"]) for a in d["attempts"]))' "$K/samples/kv/L1_2/s0/trajectories.json")" \
	"2 2 0:0/0 1:1/0 2:0/1 3:1/1"
check_true "turn 2 of trajectory 1 holds its turn 1: the code, the mismatch and the summary" bash -c \
	"$(declare -f req); req kv 2 | grep -q 'return x \* 0.5' && req kv 2 | grep -qE 'worst at' && req kv 2 | grep -q 'SUMMARY-HALF'"
check_true "and nothing of trajectory 2" bash -c "$(declare -f req); ! req kv 2 | grep -q 'SUMMARY-RELU'"
check_true "turn 2 of trajectory 2 holds its passing turn 1 with the speedup" bash -c \
	"$(declare -f req); req kv 3 | grep -q 'return torch.relu(x)' && req kv 3 | grep -qE '^### Turn 1 \(attempt 1\): pass, [0-9.]+x vs eager' && req kv 3 | grep -q 'SUMMARY-RELU' && ! req kv 3 | grep -q 'SUMMARY-HALF'"
best=$(sql "$K/results.db" "SELECT attempt FROM verdicts WHERE agent = 'kv' AND status = 'pass' ORDER BY speedup_eager DESC LIMIT 1")
check_eq "the sample's best is its fastest correct attempt, in best/ and in trajectories.json" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["attempt"], json.load(open(sys.argv[2]))["best"]["attempt"])' "$K/best/kv/L1_2/s0.json" "$K/samples/kv/L1_2/s0/trajectories.json")" "$best $best"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stop_reason"], d["attempts"], d["calls"])' "$K/samples/kv/L1_2/s0/summary.json" 2>&1)
check_eq "the summary: the grid spent, 4 attempts, 4 calls" "$got" "attempts 4 4"
run_sb metrics "$K"
check_rc "metrics reads the run" 0
check_out_re "and counts kevin's problem as correct" 'kv.*100'

stop_fakes
