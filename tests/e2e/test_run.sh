#!/usr/bin/env bash
# test_run.sh - `stitchbench run` end to end on the CPU: every agent kind through the replay provider
# (tests/fixtures/cassettes/loop), then stitchcuda and oneshot against the fake LLM server on 127.0.0.1,
# the concurrency limit, Ctrl-C and resume, and SIGKILL at two moments followed by resumes that lose no
# attempt and send no recorded call again (counted by the server).
source "$(dirname "$0")/lib.sh"
use_cache
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
FIX="$SB_ROOT/tests/fixtures"
CASS="$FIX/cassettes/loop"
R="$TMP/results"
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }

# ---------- every agent through the replay provider ----------
python3 "$SB_ROOT/scripts/cassette.py" "$CASS" "$TMP/loop.jsonl" >/dev/null
LOOP=(-c "$FIX/run/loop.yaml" --set "models.cassette.cassette=$TMP/loop.jsonl"
      --set "agents.samples.samples_dir=$FIX/generations" --set "output.dir=$R")
run_sb run "${LOOP[@]}" --run-id loop
check_rc "a run of every agent kind ends with exit 0" 0
check_out "it says every sample ended" "run loop: 7 of 7 samples ended, 0 unfinished"
D="$R/loop"
check_eq "stitchcuda: re-ask, format_error, a syntax error (format_error), replan, incorrect, rejected hack, replan, pass" \
	"$(sql "$D/results.db" "SELECT a.attempt, a.stage, v.status FROM attempts a JOIN verdicts v USING (agent, problem, sample, attempt) WHERE agent = 'stitchcuda' ORDER BY a.attempt")" \
	"0|draft|format_error
1|repair_compile|format_error
2|draft|incorrect
3|repair_correctness|rejected
4|draft|pass"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stop_reason"], d["calls"], d["plans"], " / ".join(d["notes"]))' "$D/samples/stitchcuda/L1_2/s0/summary.json" 2>&1)
check_eq "its summary: stopped at the target after 9 calls and 3 plans, the re-ask and both replans noted" "$got" \
	"target 9 3 plan (call 0): not a valid plan: the answer holds no JSON object; asked again / replan 1 (compile_failures) after 2 attempts / replan 2 (wrong_results) after 4 attempts"
P="$D/prompts/stitchcuda/L1_2/s0"
check_true "the planner is told a CPU run has no kernel profile of the reference" \
	bash -c "grep -A1 '^Profile of the reference:' '$P/call-0000.md' | grep -q '^None: this run is on the CPU'"
check_true "the replanner gets the same profile text" \
	bash -c "grep -A1 '^Profile of the reference:' '$P/call-0004.md' | grep -q '^None: this run is on the CPU'"
check_true "the re-ask quotes the parse error" grep -q "Your answer could not be used as a plan: the answer holds no JSON object" "$P/call-0001.md"
check_true "repair_compile gets the format_error message" grep -q "no code defining class ModelNew" "$P/call-0003.md"
check_true "the first replan says why" grep -q "the last attempts did not compile" "$P/call-0004.md"
check_true "repair_correctness gets the worst element of a failing trial" grep -qE "trial 0 \(seed [0-9]+\): out0: .*worst at" "$P/call-0006.md"
check_true "the second replan gets the hack finding with its rule text" grep -qE "H22 at line 1[0-9]: .*environ" "$P/call-0007.md"
check_true "the draft after a replan renders the newest plan" grep -q "third plan: the plain operator" "$P/call-0008.md"
check_true "no rendered prompt keeps a placeholder" bash -c "! grep -rl '{{' '$D/prompts'"
check_eq "the other agents: refine, best-of-n, oneshot, torch-eager, samples (a missing file is format_error)" \
	"$(sql "$D/results.db" "SELECT agent, sample, attempt, a.stage, status FROM verdicts v JOIN attempts a USING (agent, problem, sample, attempt) WHERE agent != 'stitchcuda' ORDER BY agent, sample, attempt")" \
	"best2|0|0|oneshot|incorrect
best2|0|1|oneshot|pass
oneshot|0|0|oneshot|pass
refine|0|0|oneshot|incorrect
refine|0|1|refine|pass
samples|0|0|sample|pass
samples|1|0|sample|format_error
torch-eager|0|0|reference|pass"
check_eq "refine's second call is one conversation: system, user, assistant, then the feedback as user" \
	"$(grep -oE '^<!-- (system|user|assistant) -->' "$D/prompts/refine/L1_2/s0/call-0001.md" | tr -d '<!-> ' | tr '\n' ' ')$(sed -n '/^<!-- assistant -->/,$p' "$D/prompts/refine/L1_2/s0/call-0001.md" | grep -q 'worst at' && echo feedback)" \
	"system user assistant user feedback"
check_eq "every LLM call is in llm_calls and has a transcript" \
	"$(sql "$D/results.db" "SELECT count(*) FROM llm_calls") $(find "$D/transcripts" -name 'call-*.json' | wc -l)" "14 14"
check_true "the best solution per agent, problem and sample is kept" test -s "$D/best/stitchcuda/L1_2/s0.py" -a -s "$D/best/samples/L1_2/s0.json"
check_true "the best of best2 is its second draw" grep -q '"attempt": 1' "$D/best/best2/L1_2/s0.json"
check_true "config.yaml, run.json and hardware.json are written" test -s "$D/config.yaml" -a -s "$D/run.json" -a -s "$D/hardware.json"
check_true "run.log has one line per attempt" test "$(grep -c ' attempt [0-9]* (' "$D/run.log")" -eq 13
tsum() { find "$1/transcripts" -name 'call-*.json' -print0 | sort -z | xargs -0 sha256sum | sha256sum; }
t0=$(tsum "$D")
run_sb run --resume "$D"
check_rc "resuming a finished run is a no-op with exit 0" 0
check_out "it finds every sample ended" "7 of 7 samples ended, 0 unfinished; 0 attempts in this session"
check_eq "nothing was evaluated or asked again" "$(sql "$D/results.db" "SELECT count(*) FROM verdicts") $(tsum "$D")" "13 $t0"
run_sb run "${LOOP[@]}" --run-id loop
check_rc "starting a run whose id exists is refused" 2
check_err "it points at --resume" "continue it with --resume loop"

# ---------- the fake LLM server ----------
source "$SB_ROOT/tests/e2e/fake_llm.sh"
# A script serving the answers of a cassette folder in order; extra JSON fields per call: "N:{...}".
script_of() { # dir [call:json]...
	python3 - "$@" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
extra = dict(a.split(":", 1) for a in sys.argv[2:])
out = []
for i, f in enumerate(sorted(glob.glob(os.path.join(d, "call-*.md")))):
    e = {"content": open(f).read(), "prompt_tokens": 100, "completion_tokens": 50}
    e.update(json.loads(extra.get(str(i), "{}")))
    out.append(e)
print(json.dumps(out))
PY
}
# stitchcuda and oneshot, each on its own server, in one run
mkdir -p "$TMP/sc" && cp "$CASS/stitchcuda/L1_2/s0/call-0001.md" "$TMP/sc/call-0000.md" && cp "$CASS/oneshot/L1_2/s0/call-0000.md" "$TMP/sc/call-0001.md"
script_of "$TMP/sc" >"$TMP/a.script"
script_of "$CASS/oneshot/L1_2/s0" >"$TMP/b.script"
start_fake a "$TMP/a.script"
start_fake b "$TMP/b.script"
fake_config "$TMP/fake.yaml" "$(model a "$PORT_a" 2; model b "$PORT_b" 2)" "  - {name: sc, kind: stitchcuda, model: a, target_speedup: 0}
  - {name: one, kind: oneshot, model: b}"
run_sb run -c "$TMP/fake.yaml" --run-id fake
check_rc "stitchcuda and oneshot against the fake server end with exit 0" 0
check_eq "stitchcuda planned, drafted and passed; oneshot passed" \
	"$(sql "$R/fake/results.db" "SELECT agent, attempt, status FROM verdicts ORDER BY agent, attempt")" "one|0|pass
sc|0|pass"
check_eq "each server got exactly the calls of its agent" "$(requests a) $(requests b)" "2 1"
check_true "the server received the rendered plan in the coder's prompt" \
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["requests"]; sys.exit("first plan: an elementwise kernel" not in r[1]["body"]["messages"][1]["content"])' "$TMP/a.log"
check_eq "tokens and the model are stored per call" "$(sql "$R/fake/results.db" "SELECT agent, call, model, prompt_tokens, completion_tokens FROM llm_calls ORDER BY agent, call")" \
	"one|0|b|100|50
sc|0|a|100|50
sc|1|a|100|50"

# An agent whose model names an API key variable that is not set: the run refuses to start (exit 3) before
# it makes a folder or a call; an agent without an LLM is not held up by a model it does not use.
python3 -c 'import json; print(json.dumps([{"content": "no code today"}]))' >"$TMP/k.script"
start_fake k "$TMP/k.script"
fake_config "$TMP/key.yaml" "  - {name: mk, provider: openai, api_base: \"http://127.0.0.1:$PORT_k/v1\", model: fake-model, api_key_env: SB_TEST_RUN_KEY, max_concurrent: 1, timeout_s: 30}" \
	"  - {name: one, kind: oneshot, model: mk}
  - {name: eager, kind: torch-eager}"
kreq() { if [ -f "$TMP/k.log" ]; then requests k; else echo 0; fi; }
unset SB_TEST_RUN_KEY
run_sb run -c "$TMP/key.yaml" --run-id nokey
check_rc "a run whose agent's API key variable is unset refuses to start: exit 3" 3
check_err "it names the agent, the model, the variable and what to do" \
	"agent one: model mk: \$SB_TEST_RUN_KEY (its api_key_env) is not set or empty: export the API key in it, or set models.mk.api_key_env to null if http://127.0.0.1:$PORT_k/v1 takes no key"
check_true "it made no run folder" test ! -e "$R/nokey"
check_eq "and sent no request" "$(kreq)" 0
run_sb run -c "$TMP/key.yaml" --run-id nokey-eager --agents eager
check_rc "torch-eager alone runs: the model it does not use needs no key" 0
check_eq "it sent no request either" "$(kreq)" 0
key="sk-run-$$-$RANDOM$RANDOM"
SB_TEST_RUN_KEY=$key run_sb run -c "$TMP/key.yaml" --run-id withkey --agents one
check_rc "with the variable set the run goes on (an answer without code: format_error)" 0
check_eq "and its call carries the key" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"][0]["headers"].get("Authorization"))' "$TMP/k.log")" "Bearer $key"

# the concurrency limit: four oneshot samples, answers without code (no evaluation), 1 s each
python3 -c 'import json; print(json.dumps([{"content": "no code today", "delay": 1, "repeat": 8}]))' >"$TMP/c.script"
start_fake c "$TMP/c.script"
fake_config "$TMP/conc.yaml" "$(model c "$PORT_c" 2)" "  - {name: one, kind: oneshot, model: c, samples: 4}"
run_sb run -c "$TMP/conc.yaml" --run-id conc
check_rc "four samples with answers that hold no code end (as format_error attempts)" 0
check_eq "at most max_concurrent (2) requests were in flight, and 2 were" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["max_in_flight"])' "$TMP/c.log") $(requests c)" "2 4"

# Ctrl-C: the call in flight finishes and is kept, nothing new starts; --resume does not ask it again
# the first call is long enough (6 s) for the poll below to see it in flight on a busy machine
python3 -c 'import json; print(json.dumps([{"content": "no code today", "delay": 6}, {"content": "no code today", "delay": 1, "repeat": 7}]))' >"$TMP/i.script"
start_fake i "$TMP/i.script"
fake_config "$TMP/int.yaml" "$(model i "$PORT_i" 1)" "  - {name: one, kind: oneshot, model: i, samples: 3}"
"$SB" run -c "$TMP/int.yaml" --run-id int --jobs 1 >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
for _ in $(seq 300); do [ "$(requests i 2>/dev/null)" = 1 ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
RC=$?
check_eq "Ctrl-C during a call: exit 1, the run says it stopped" "$RC $(grep -c 'stopped' "$TMP/int.out")" "1 1"
check_eq "the call in flight finished and was recorded; no other was sent" \
	"$(requests i) $(find "$R/int/transcripts" -name 'call-*.json' | wc -l)" "1 1"
run_sb run --resume int --set "output.dir=$R"
check_rc "--resume after Ctrl-C finishes the run" 0
check_eq "the recorded call was served from its transcript: 3 samples, 3 requests in all" \
	"$(requests i) $(sql "$R/int/results.db" "SELECT count(*) FROM verdicts WHERE status = 'format_error'")" "3 3"

# SIGKILL twice, at the moments that matter, then resume. The evaluator's workers of a killed run do not
# notice that their parent died (they wait for commands forever), so the test ends them itself.
descendants() { # pid: every process below it
	local k
	for k in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$k"; echo "$k"; done
}
kill_run() { # pid: SIGKILL it and, after it, what it had started
	local orphans
	orphans=$(descendants "$1")
	kill -KILL "$1"; wait "$1" 2>/dev/null
	[ -n "$orphans" ] && kill -KILL $orphans 2>/dev/null
	return 0
}
mkdir -p "$TMP/k" && cp "$CASS/stitchcuda/L1_2/s0/call-0001.md" "$TMP/k/call-0000.md" && cp "$CASS/stitchcuda/L1_2/s0/call-0005.md" "$TMP/k/call-0001.md" &&
	cp "$CASS/stitchcuda/L1_2/s0/call-0008.md" "$TMP/k/call-0002.md"
script_of "$TMP/k" '2:{"delay": 3, "repeat": 2}' >"$TMP/k.script"
start_fake k "$TMP/k.script"
fake_config "$TMP/kill.yaml" "$(model k "$PORT_k" 2)" "  - {name: sc, kind: stitchcuda, model: k, target_speedup: 0}"
K="$R/kill"
"$SB" run -c "$TMP/kill.yaml" --run-id kill >/dev/null 2>"$TMP/kill1.err" &
pid=$!
for _ in $(seq 1200); do [ -s "$K/candidates/sc/L1_2/s0/attempt-00.py" ] && break; sleep 0.05; done
kill_run "$pid"
t1=$(tsum "$K")
check_eq "killed during the first evaluation: 2 calls sent, 2 recorded, no verdict yet" \
	"$(requests k) $(find "$K/transcripts" -name 'call-*.json' | wc -l) $(sql "$K/results.db" "SELECT count(*) FROM verdicts")" "2 2 0"
"$SB" run --resume "$K" >/dev/null 2>"$TMP/kill2.err" &
pid=$!
for _ in $(seq 1200); do [ "$(requests k)" = 3 ] && break; sleep 0.05; done
kill_run "$pid"
v1=$(sql "$K/results.db" "SELECT attempt, status, created, candidate_sha256 FROM verdicts")
check_eq "resumed and killed during the third call: only that call was sent, attempt 0 was judged and stored" \
	"$(requests k) $(find "$K/transcripts" -name 'call-*.json' | wc -l) $(cut -d'|' -f1,2 <<<"$v1")" "3 2 0|incorrect"
check_eq "the recorded transcripts were not rewritten" "$(tsum "$K")" "$t1"
run_sb run --resume "$K"
check_rc "the second resume finishes the run" 0
check_eq "only the call in flight at the kill was asked again: 4 requests for 3 recorded calls" \
	"$(requests k) $(find "$K/transcripts" -name 'call-*.json' | wc -l)" "4 3"
check_eq "attempt 0 is the one stored before the kill; attempt 1 passed" \
	"$(sql "$K/results.db" "SELECT attempt, status, created, candidate_sha256 FROM verdicts WHERE attempt = 0") $(sql "$K/results.db" "SELECT status FROM verdicts WHERE attempt = 1")" \
	"$v1 pass"
check_eq "no LLM call is stored twice and none is missing" "$(sql "$K/results.db" "SELECT group_concat(call) FROM llm_calls")" "0,1,2"
check_true "the store is intact" python3 -c 'import sqlite3,sys; sys.exit(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0] != "ok")' "$K/results.db"

stop_fakes
