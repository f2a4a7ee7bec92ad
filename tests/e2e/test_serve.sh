#!/usr/bin/env bash
# test_serve.sh - `stitchbench serve` against real servers on 127.0.0.1 on the CPU (docs/serve.md): tokens,
# bad bodies (malformed JSON, an unknown key, an unknown problem, a huge body), a synchronous batch and its
# rewards, an idempotent retry, a request id reused for another candidate, the asynchronous form with a
# long poll, budgets, priorities, a full queue (429), kill -9 mid-batch and a restart (nothing lost,
# nothing judged twice: the store's rows and the servers' logs counted), a client that hangs up
# mid-request, scripts/serve/sbclient.py over two servers, one killed while it judges, and a served verdict
# replayed by `eval --seeds` (scripts/serve/replay_check.py).
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
H="$SB_ROOT/tests/e2e/serve_http.py"
use_cache
CPU=(--device cpu --trials 2 --perf-trials 3 --set eval.warmup_ms=0 --set eval.warmup_calls=1)
DB="$TMP/out/serve/results.db"
SERVERS=()
cleanup() {
	local p
	for p in "${SERVERS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in $(own_workers); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# start NAME ARGS...: a server on a free port; sets URL and PID (URL empty when it did not come up)
start() {
	local name=$1 i
	shift
	rm -f "$TMP/$name.url"
	"$SB" serve --port 0 --port-file "$TMP/$name.url" --set output.dir="$TMP/out" "${CPU[@]}" "$@" \
		>>"$TMP/$name.out" 2>>"$TMP/$name.err" &
	PID=$!
	SERVERS+=("$PID")
	for i in $(seq 600); do
		[ -s "$TMP/$name.url" ] && break
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	URL=$(cat "$TMP/$name.url" 2>/dev/null)
}
# call METHOD PATH [BODYFILE] [--token T] ...: the answer in $TMP/r, its status in ST, Retry-After in RA
call() {
	python3 "$H" req "$1" "$URL$2" "${@:3}" >"$TMP/r" 2>"$TMP/r.err" || echo "000 -" >"$TMP/r"
	read -r ST RA <"$TMP/r"
}
j() { python3 "$H" get "$TMP/r" "$1" 2>&1; }
mkbody() { local out=$1; shift; python3 "$H" body "$@" >"$TMP/$out.json"; }
# variant NAME BASE [SLEEP_S]: a copy of a fixture with a hash of its own (and a sleep at import: a slow one).
# Each distinct honest candidate costs a C++ build (seconds on 2 cores), so most candidates below are
# copies of torch_matmul.py, which the static checks reject at once; the fixtures themselves are built in
# the suite's warm cache.
variant() {
	{ cat "$FIX/$2"; echo "# variant $1"; [ -z "${3:-}" ] || printf 'import time\ntime.sleep(%s)\n' "$3"; } >"$TMP/$1.py"
}
sha() { sha256sum "$TMP/$1.py" | cut -c1-64; }
# rows [NAME...]: verdicts in the store (of those candidates only)
rows() {
	local s="" n
	for n in "$@"; do s+="$(sha "$n") "; done
	python3 - "$DB" "$s" <<'PY' 2>/dev/null || echo 0
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
shas = sys.argv[2].split()
q = "select candidate_sha256 from verdicts where agent = 'serve'"
print(sum(1 for (s,) in d.execute(q) if not shas or s in shas))
PY
}
# judged LOGNAME NAME: how many times that server's log says it began judging the candidate
judged() { grep -c "judging candidate .*$(sha "$2" | cut -c1-12)" "$TMP/$1.err"; }
wait_rows() { # N NAME...: until the store holds N verdicts of those candidates (60 s at most)
	local want=$1 i
	shift
	for i in $(seq 600); do [ "$(rows "$@")" -ge "$want" ] && return 0; sleep 0.1; done
	return 1
}

export TOK_A="a-$RANDOM$RANDOM$RANDOM" TOK_B="b-$RANDOM$RANDOM$RANDOM" TOK_C="c-$RANDOM$RANDOM$RANDOM"
ARGS_A=(--client a:TOK_A:0 --client b:TOK_B:0:0.001 --client c:TOK_C:10 --queue-max 4 --max-body 1M)
start a "${ARGS_A[@]}"
check_true "the server starts on a free port and writes its endpoint" test -n "$URL"
RC=0 OUT_TXT=$(cat "$TMP/a.out") ERR_TXT=$(cat "$TMP/a.err")
check_out "and says where it listens and that it wants a token" "listening on $URL (device cpu, preset stitchbench, bearer token required"

# ---------- tokens and bad input ----------
call GET /v1/health
check_eq "health answers without a token" "$ST $(j 'j["status"], j["device"], j["devices"], j["running"]')" "200 ('ok', 'cpu', ['cpu'], 0)"
call GET /v1/metrics --token "$TOK_A"
check_eq "on the CPU the metrics sample no GPU, and say so" \
	"$(j 'j["evaluator"]["slots"], j["evaluator"]["gpu_idle"], "CPU" in j["evaluator"]["gpu_note"]')" "(1, None, True)"
cp "$FIX/relu_cpp_ok.py" "$TMP/ok0.py"
cp "$FIX/relu_cpp_wrong.py" "$TMP/wrong0.py"
mkbody ok0 L1/2:"$TMP/ok0.py"
call POST /v1/evaluate "$TMP/ok0.json"
check_eq "a request without a token is 401" "$ST" 401
check_eq "saying how to send one" "$(j '"Bearer" in j["error"]')" True
call POST /v1/evaluate "$TMP/ok0.json" --token wrong
check_eq "a wrong token is 401" "$ST" 401
call GET /v1/metrics
check_eq "the metrics want a token too" "$ST" 401
printf '{"candidates": [{"problem": "L1/2",' >"$TMP/bad.json"
call POST /v1/evaluate "$TMP/bad.json" --token "$TOK_A"
check_eq "malformed JSON is 400" "$ST" 400
check_eq "with where it broke" "$(j '"not JSON: line 1, column" in j["error"]')" True
echo '{"candidate": []}' >"$TMP/typo.json"
call POST /v1/evaluate "$TMP/typo.json" --token "$TOK_A"
check_eq "an unknown key is 400 naming it" "$ST $(j '"unknown key '"'"'candidate'"'"'" in j["error"]')" "400 True"
echo '{"candidates": [{"problem": "L1/999", "source": "x"}]}' >"$TMP/nop.json"
call POST /v1/evaluate "$TMP/nop.json" --token "$TOK_A"
check_eq "an unknown problem is 422 naming it" "$ST $(j '"no problem L1/999" in j["error"]')" "422 True"
call POST /v1/evaluate --huge 2000000 --token "$TOK_A"
check_eq "a body over --max-body is 413" "$ST $(j '"--max-body" in j["error"]')" "413 True"
call GET /v1/evaluate --token "$TOK_A"
check_eq "a known path with the wrong method is 405" "$ST" 405
call GET /v1/health
check_eq "and the server is still up" "$ST" 200
check_eq "nothing was judged or stored for any of them" "$(rows)" 0

# ---------- a synchronous batch, its rewards, a retry ----------
mkbody batch --request-id batch1 L1/2:"$TMP/ok0.py":r-ok L1/1:"$FIX/torch_matmul.py":r-hack L1/2:"$TMP/wrong0.py":r-wrong
call POST /v1/evaluate "$TMP/batch.json" --token "$TOK_A"
cp "$TMP/r" "$TMP/batch.r"
check_eq "a synchronous batch answers every verdict" "$ST $(j '[c["status"] for c in j["candidates"]]')" \
	"200 ['pass', 'rejected', 'incorrect']"
check_eq "the pass earns the StitchCUDA reward: min(s, 5) + 0.3 without a rubric" \
	"$(j 'abs(j["candidates"][0]["reward"] - (min(j["candidates"][0]["speedup"], 5) + 0.3)) < 1e-9')" True
check_eq "the hack and the wrong one earn 0" "$(j '[c["reward"] for c in j["candidates"][1:]]')" "[0.0, 0.0]"
check_eq "the hack's reject finding is named" "$(j '{"id": "H01", "severity": "reject"} in j["candidates"][1]["findings"]')" True
check_eq "with the whole verdicts" "$(j 'all(c["verdict"]["schema"] == 1 for c in j["candidates"])')" True
check_eq "each verdict is in the store" "$(rows ok0 wrong0)" 2
check_eq "three in all" "$(rows)" 3
SECRET=$(j 'j["candidates"][0]["verdict"]["seeds"]["secret"]')
# the builders ran each candidate's build before the evaluator judged it (as eval --samples does)
ahead=$(awk '/serve: built candidate/ { split($0, a, "built candidate "); split(a[2], b, ":"); built[b[1]] = 1 }
	/judging candidate/ { split($0, a, "judging candidate "); split(a[2], b, " "); n++; if (built[b[1]]) k++ }
	END { print k + 0 "/" n + 0 }' "$TMP/a.err")
check_eq "each candidate was built ahead of its evaluation" "$ahead" "3/3"

call POST /v1/evaluate "$TMP/batch.json" --token "$TOK_A"
check_eq "a retried request is answered" "$ST $(j 'j["job_id"]')" "200 $(python3 "$H" get "$TMP/batch.r" 'j["job_id"]')"
check_eq "with the same verdicts (the same secret seeds)" "$(j 'j["candidates"][0]["verdict"]["seeds"]["secret"]')" "$SECRET"
check_eq "and nothing judged again" "$(rows) $(judged a ok0)" "3 1"
mkbody again L1/2:"$TMP/ok0.py"
call POST /v1/evaluate "$TMP/again.json" --token "$TOK_A"
check_eq "the same candidate in a new request is answered from the store" "$ST $(j 'j["candidates"][0]["reused"]') $(judged a ok0)" \
	"200 True 1"
mkbody conflict L1/2:"$TMP/wrong0.py":r-ok
call POST /v1/evaluate "$TMP/conflict.json" --token "$TOK_A"
check_eq "a request id reused for another candidate is 409" "$ST $(j '"r-ok" in j["error"]')" "409 True"

# ---------- the asynchronous form ----------
variant m1 torch_matmul.py
mkbody ok1 --verdicts summary L1/1:"$TMP/m1.py"
call POST /v1/jobs "$TMP/ok1.json" --token "$TOK_A"
JOB=$(j 'j["job_id"]')
check_eq "POST /v1/jobs answers 202 with a job id at once" "$ST ${#JOB}" "202 32"
call GET "/v1/jobs/$JOB?wait=60&verdicts=summary" --token "$TOK_A"
check_eq "a long poll returns it done" "$ST $(j 'j["state"], j["candidates"][0]["status"], "verdict" in j["candidates"][0]')" \
	"200 ('done', 'rejected', False)"
call GET "/v1/jobs/$JOB" --token "$TOK_B"
check_eq "another client's job is 404" "$ST" 404
call GET "/v1/jobs/$JOB?wait=soon" --token "$TOK_A"
check_eq "a bad wait is 400" "$ST" 400
call POST /v1/jobs "$TMP/batch.json" --token "$TOK_A"
check_eq "a request id names one job, whichever form sent it" "$ST $(j 'j["job_id"], j["state"]')" \
	"200 ('$(python3 "$H" get "$TMP/batch.r" 'j["job_id"]')', 'done')"
echo '{"candidates": [{"problem": "L1/2", "source": "x"}], "wait": 5}' >"$TMP/jobwait.json"
call POST /v1/jobs "$TMP/jobwait.json" --token "$TOK_A"
check_eq "wait belongs to /v1/evaluate: a job with it is 400" "$ST" 400

# ---------- a budget ----------
variant m2 torch_matmul.py
mkbody ok2 L1/1:"$TMP/m2.py"
call POST /v1/evaluate "$TMP/ok2.json" --token "$TOK_B"
check_eq "a client's request is judged within its budget" "$ST $(j 'j["candidates"][0]["status"]')" "200 rejected"
variant m3 torch_matmul.py
mkbody ok3 L1/1:"$TMP/m3.py"
call POST /v1/evaluate "$TMP/ok3.json" --token "$TOK_B"
check_eq "and once it is spent, a new evaluation is 403" "$ST $(j '"spent its budget" in j["error"]')" "403 True"
call POST /v1/evaluate "$TMP/again.json" --token "$TOK_B"
check_eq "while a candidate judged already is still answered" "$ST $(j 'j["candidates"][0]["status"]')" "200 pass"

# ---------- priorities, a full queue, then kill -9 mid-batch ----------
for s in s1 s2 s3; do variant $s relu_cpp_ok.py 1; done
mkbody slow --request-id slow L1/2:"$TMP/s1.py" L1/2:"$TMP/s2.py" L1/2:"$TMP/s3.py"
call POST /v1/jobs "$TMP/slow.json" --token "$TOK_A"
SLOW=$(j 'j["job_id"]')
check_eq "a slow batch is accepted" "$ST" 202
variant hi torch_matmul.py
mkbody hi L1/1:"$TMP/hi.py"
call POST /v1/jobs "$TMP/hi.json" --token "$TOK_C"
HI=$(j 'j["job_id"]')
check_eq "a higher-priority client's job too, filling the queue (--queue-max 4)" "$ST" 202
variant late torch_matmul.py
mkbody late L1/1:"$TMP/late.py"
call POST /v1/evaluate "$TMP/late.json" --token "$TOK_A"
check_eq "one more candidate is 429" "$ST $(j '"queue is full" in j["error"]')" "429 True"
check_true "with a Retry-After in seconds" test "$RA" -ge 1
call POST /v1/jobs "$TMP/slow.json" --token "$TOK_A"
check_eq "a retry of the queued batch is not new work: the same job, even with the queue full" "$ST $(j 'j["job_id"]')" "200 $SLOW"
call GET "/v1/jobs/$HI?wait=60" --token "$TOK_C"
check_eq "the higher-priority job ends" "$ST $(j 'j["state"]')" "200 done"
call GET "/v1/jobs/$SLOW" --token "$TOK_A"
check_true "before the earlier, lower-priority batch (2 of its 3 still waiting)" test "$(j 'j["total"] - j["done"]')" -ge 2
call GET /v1/metrics --token "$TOK_A"
check_eq "the metrics count the queue and the verdicts" \
	"$(j 'j["queue"]["max"], j["queue"]["depth"] + j["queue"]["running"] >= 2, j["verdicts"]["since_start"] >= 6, j["verdicts"]["per_hour"] > 0')" \
	"(4, True, True, True)"
check_eq "and each client's usage and budget" "$(j '[(c["name"], c["budget_s"], c["used_s"] > 0) for c in j["clients"]]')" \
	"[('a', None, True), ('b', 0.001, True), ('c', None, True)]"

check_true "a verdict of the slow batch is stored" wait_rows 1 s1 s2 s3
BEFORE=$(python3 - "$DB" <<'PY'
import json, sqlite3, sys
d = sqlite3.connect(sys.argv[1])
print(" ".join(sorted(s + ":" + str((json.loads(j).get("seeds") or {}).get("secret")) for s, j in d.execute(
    "select candidate_sha256, json from verdicts where agent = 'serve'"))))
PY
)
N_BEFORE=$(rows s1 s2 s3)
kill -9 "$PID"
wait "$PID" 2>/dev/null
check_true "kill -9 came while the batch was unfinished" test "$N_BEFORE" -lt 3
start a2 "${ARGS_A[@]}"
check_true "the server starts again on the same run" test -n "$URL"
check_eq "and says what it found unfinished" "$(grep -c 'queued again' "$TMP/a2.err")" 1
call GET "/v1/jobs/$SLOW?wait=90" --token "$TOK_A"
check_eq "the batch killed mid-way ends after the restart, nothing lost" \
	"$ST $(j 'j["state"], [c["status"] for c in j["candidates"]]')" "200 ('done', ['pass', 'pass', 'pass'])"
check_eq "each of its candidates is stored once" "$(rows s1 s2 s3)" 3
AFTER=$(python3 - "$DB" <<'PY'
import json, sqlite3, sys
d = sqlite3.connect(sys.argv[1])
print(" ".join(sorted(s + ":" + str((json.loads(j).get("seeds") or {}).get("secret")) for s, j in d.execute(
    "select candidate_sha256, json from verdicts where agent = 'serve'"))))
PY
)
check_eq "the verdicts stored before the kill are kept as they were (hash:secret seeds)" "$(python3 -c '
import sys
before, after = sys.argv[1].split(), set(sys.argv[2].split())
print(len(before), [b for b in before if b not in after])' "$BEFORE" "$AFTER")" "$(wc -w <<<"$BEFORE") []"
twice=0
for s in s1 s2 s3; do
	n=$(( $(judged a "$s") + $(judged a2 "$s") ))
	stored_before=$(grep -c "$(sha "$s")" <<<"$BEFORE")
	# one evaluation each, and one more only for the one killed while it was judged
	[ "$stored_before" = 1 ] && [ "$(judged a2 "$s")" != 0 ] && twice=1
	[ "$n" -gt 2 ] && twice=1
done
check_eq "no candidate stored before the kill was judged again" "$twice" 0
check_eq "every distinct candidate has one row: the batch's 3, m1, m2, hi and the slow 3" "$(rows)" 9

# ---------- a client that hangs up ----------
variant dc torch_matmul.py
mkbody dc L1/1:"$TMP/dc.py":r-dc
call POST /v1/evaluate "$TMP/dc.json" --token "$TOK_A" --disconnect
check_true "a client that hangs up right after sending still gets its verdict stored" wait_rows 1 dc
call POST /v1/evaluate "$TMP/dc.json" --token "$TOK_A"
check_eq "and its retry is answered from the store" "$ST $(j 'j["candidates"][0]["status"], j["candidates"][0]["reused"]') $(rows dc) $(judged a2 dc)" \
	"200 ('rejected', True) 1 1"

# ---------- the client over two servers, one killed mid-batch ----------
URL_A=$URL
start b --run other
URL_B=$URL
PID_B=$PID
check_true "a second server starts" test -n "$URL_B"
for c in c1 c2; do variant $c relu_cpp_ok.py 1; done
SB_SERVE_TOKEN=$TOK_A python3 "$SB_ROOT/scripts/serve/sbclient.py" --endpoints "$URL_B,$URL_A" --problem L1/2 --chunk 1 \
	"$TMP"/c1.py "$TMP"/c2.py >"$TMP/client.out" 2>"$TMP/client.err" &
CLIENT=$!
for i in $(seq 300); do grep -q "judging candidate" "$TMP/b.err" && break; sleep 0.1; done
kill -9 "$PID_B"
wait "$CLIENT"
RC=$?
OUT_TXT=$(cat "$TMP/client.out") ERR_TXT=$(cat "$TMP/client.err")
check_rc "the client ends the batch after losing an endpoint" 0
check_err "saying which one went down" "$URL_B is down"
check_eq "with one result per candidate, in order, every one judged by the live server" \
	"$(python3 -c 'import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]; print([(x["status"], x["endpoint"] == sys.argv[2]) for x in r])' "$TMP/client.out" "$URL_A")" \
	"[('pass', True), ('pass', True)]"
check_eq "the batch's candidates are in the live server's store once each" "$(rows c1 c2)" 2

# ---------- the served verdicts are eval's on the same seeds ----------
replay() { "$@" >"$TMP/replay.out" 2>"$TMP/replay.err"; RC=$?; OUT_TXT=$(cat "$TMP/replay.out"); ERR_TXT=$(cat "$TMP/replay.err"); }
# replay_served RESULTS PROBLEM FILE [EDIT]: replay_check.py on sbclient's results, the verdict first edited by
# the Python statement EDIT (on `v`), as a forger would
replay_served() {
	local results=$1
	if [ -n "${4:-}" ]; then
		results="$1.edited"
		python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); v = r["verdict"]; exec(sys.argv[2]); print(json.dumps(r))' \
			"$1" "$4" >"$results"
	fi
	replay python3 "$SB_ROOT/scripts/serve/replay_check.py" "$results" --problem "$2" "$3" -- "${CPU[@]}"
}
SB_SERVE_TOKEN=$TOK_A python3 "$SB_ROOT/scripts/serve/sbclient.py" --endpoints "$URL_A" --problem L1/2 --verdicts full \
	"$TMP"/c1.py >"$TMP/full.out" 2>"$TMP/full.err"
check_eq "sbclient --verdicts full answers with the whole verdict and its seeds" \
	"$(python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); print(r["status"], len(r["verdict"]["seeds"]["secret"]))' "$TMP/full.out" 2>&1)" "pass 32"
replay_served "$TMP/full.out" L1/2 "$TMP"/c1.py
check_rc "eval --seeds replays the served verdict" 0
check_out "with the same status, findings and trials" "identical verdicts: 1 of 1 replayed"
replay_served "$TMP/full.out" L1/2 "$TMP"/c1.py 'v["trials"][0]["pass"] = False'
check_rc "a verdict that is not what its seeds give is told apart" 1
check_out "naming what differs" "DIFFERENT in trials"
# a verdict decided before any input was drawn (a static rejection) carries no seeds: a plain evaluation
# replays it, and one forged to pass is told apart
variant st1 torch_matmul.py
SB_SERVE_TOKEN=$TOK_A python3 "$SB_ROOT/scripts/serve/sbclient.py" --endpoints "$URL_A" --problem L1/1 --verdicts full \
	"$TMP"/st1.py >"$TMP/static.out" 2>"$TMP/static.err"
check_eq "a static rejection is answered with no seeds" \
	"$(python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); print(r["status"], r["verdict"].get("seeds"))' "$TMP/static.out" 2>&1)" "rejected None"
replay_served "$TMP/static.out" L1/1 "$TMP"/st1.py
check_rc "eval replays a verdict that drew no seeds" 0
check_out "to the same status and findings" "identical verdicts: 1 of 1 replayed"
replay_served "$TMP/static.out" L1/1 "$TMP"/st1.py 'v["status"] = "pass"; v["findings"] = []'
check_rc "a seedless verdict forged to pass is told apart" 1
check_out "naming what differs" "DIFFERENT in status, findings"
