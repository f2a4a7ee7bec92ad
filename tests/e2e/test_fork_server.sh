#!/usr/bin/env bash
# test_fork_server.sh - eval.fork_server (docs/worker.md "The fork server"), on the CPU: an evaluation's two
# workers are forked from the server, neither importing torch itself; a forked candidate worker must find itself
# in the same process as an exec'd one (descriptors, environment, PID namespace, credentials, capabilities,
# limits, what it may write, no network); how it ended must still reach the verdict (a signal, through the
# server's status pipe); a batch forks every worker; nothing is left running; and with no server (no library,
# or one that dies at its start) workers are exec'd as before.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
FAST=(--device cpu --trials 2 --perf-trials 3 --json)
# the probe opens a socket on purpose: the static checks, which would reject it first, are off
PROBE=("${FAST[@]}" --set checks.static=false "${NO_OPREC[@]}")

field() { # FILE python-expression-of-v
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# what the probe saw, from its message: PROBE{json}EBORP
probe_of() {
	python3 -c '
import json, re, sys
v = json.load(open(sys.argv[1]))
m = re.search(r"PROBE(\{.*\})EBORP", (v.get("message") or "") + (v.get("detail") or "") + (v.get("log_tail") or ""))
print(json.dumps(json.loads(m.group(1)), sort_keys=True) if m else "no probe in: " + json.dumps(v.get("message")))' "$1" 2>&1
}

for mode in true false; do
	run_sb eval "$FIX/proc_probe.py" --problem L1/2 "${PROBE[@]}" --set eval.fork_server=$mode
	echo "$OUT_TXT" >"$TMP/probe-$mode.json"
	echo "$ERR_TXT" >"$TMP/probe-$mode.err"
done
got=$(field "$TMP/probe-true.json" '(v["candidate_worker_forked"], v["status"])')
if [ "$got" = "(True, 'runtime_error')" ]; then _report ok "with the fork server on, the probe's worker was forked"; else
	_report fail "with the fork server on, the probe's worker was forked" "$got; $(tail -5 "$TMP/probe-true.err")"; fi
got=$(field "$TMP/probe-false.json" 'v["candidate_worker_forked"]')
if [ "$got" = False ]; then _report ok "with it off, the worker was exec'd"; else
	_report fail "with it off, the worker was exec'd" "$got"; fi
forked=$(probe_of "$TMP/probe-true.json")
execd=$(probe_of "$TMP/probe-false.json")
if [[ "$forked" == "{"* ]] && [ "$forked" = "$execd" ]; then
	_report ok "a forked worker finds the same process as an exec'd one (descriptors, environment, PID, credentials, limits, signals, walls)"
else
	_report fail "a forked worker finds the same process as an exec'd one" "$(python3 - "$forked" "$execd" <<'PY' 2>&1
import json, sys
try:
    a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("%s: forked %s, exec'd %s" % (k, a.get(k), b.get(k)))
except ValueError:
    print("forked:", sys.argv[1][:300]); print("exec'd:", sys.argv[2][:300])
PY
)"
fi
# its only descriptors are the worker's own: stdin, the two output pipes and the command channel
got=$(python3 -c 'import json,sys; p=json.loads(sys.argv[1]); print(sorted(p["fds"].items()))' "$forked" 2>&1)
if [ "$got" = "[('0', '/dev/null'), ('1', 'pipe'), ('2', 'pipe'), ('3', 'socket'), ('4', 'socket')]" ]; then
	_report ok "the forked worker holds no descriptor of the server's (0-4 only)"
else
	_report fail "the forked worker holds no descriptor of the server's (0-4 only)" "$got"
fi
got=$(python3 -c 'import json,sys; p=json.loads(sys.argv[1]); print(p["network"], p["pid"])' "$forked" 2>&1)
if [[ "$got" != connected* ]]; then _report ok "the forked worker reaches no network ($got)"; else
	_report fail "the forked worker reaches no network" "$got"; fi

# every worker of an evaluation is forked: the builder's and the candidate's (sandboxed) and the reference's
# (trusted, no sandbox); none imported torch itself (worker.py reports torch_import 0 for a forked worker)
STITCHBENCH_CACHE="$TMP/fresh" STITCHBENCH_TRACE=1 run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${FAST[@]}"
loads=$(grep -c "load took" <<<"$ERR_TXT")
imports=$(grep "load took" <<<"$ERR_TXT" | grep -vc "torch_import 0.000")
forks=$(grep -c "fork server: worker [0-9]* forked" <<<"$ERR_TXT")
if [ "$RC" = 0 ] && [ "$forks" = 3 ] && [ "$loads" -ge 3 ] && [ "$imports" = 0 ]; then
	_report ok "an evaluation forks its builder, its reference worker and its candidate's; none imports torch ($loads loads)"
else
	_report fail "an evaluation forks its builder, its reference worker and its candidate's" "rc $RC, $forks forks, $loads loads, $imports with an import: $(grep -E 'load took|forked' <<<"$ERR_TXT")"
fi

# a signal that ends a forked worker reaches the verdict through the server's status pipe
run_sb eval "$FIX/null_deref.py" --problem L1/2 "${FAST[@]}"
got=$(python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print(v["candidate_worker_forked"], v["status"], "SIGSEGV" in v["message"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "True runtime_error True" ]; then _report ok "a forked worker's segfault is runtime_error naming SIGSEGV"; else
	_report fail "a forked worker's segfault is runtime_error naming SIGSEGV" "$got; ${OUT_TXT:0:400}"; fi

# a batch: every worker forked (the ones started ahead too), every candidate judged
b="$TMP/batch"
mkdir -p "$b"
for s in 0 1 2; do cp "$FIX/relu_cpp_ok.py" "$b/level_1_problem_2_sample_${s}_kernel.py"; done
STITCHBENCH_TRACE=1 "$SB" eval --samples "$b" -o "$b/v.jsonl" --device cpu --trials 2 --perf-trials 3 >"$TMP/out" 2>"$TMP/err"
RC=$?
got=$(python3 -c '
import json, sys
vs = [json.loads(l) for l in open(sys.argv[1])]
print(len(vs), sorted(set((v["status"], v["candidate_worker_forked"]) for v in vs)), sum(v["candidate_worker_prestarted"] for v in vs))' "$b/v.jsonl" 2>&1)
if [ "$RC" = 0 ] && [ "$got" = "3 [('pass', True)] 2" ]; then _report ok "a batch of 3 forks every worker, the 2 started ahead too, and all pass"; else
	_report fail "a batch of 3 forks every worker, the 2 started ahead too, and all pass" "rc $RC; $got; $(tail -5 "$TMP/err")"; fi
forks=$(grep -c "fork server: worker [0-9]* forked" "$TMP/err")
starts=$(grep -c "fork server: started" "$TMP/err")
if [ "$starts" = 1 ] && [ "$forks" -ge 3 ]; then _report ok "one server for the whole batch, $forks workers forked from it (the builds' too)"; else
	_report fail "one server for the whole batch" "$starts started, $forks forked"; fi

# nothing outlives the invocation: no server, no worker, no server folder
left=""
for p in /proc/[0-9]*; do
	cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
	case "$cwd" in "$STITCHBENCH_CACHE/work"/*) left="$left ${p#/proc/}:$cwd" ;; esac
done
dirs=$(ls -d "$STITCHBENCH_CACHE"/work/forkserver-* 2>/dev/null)
if [ -z "$left" ] && [ -z "$dirs" ]; then _report ok "after the batch no process and no server folder is left"; else
	_report fail "after the batch no process and no server folder is left" "processes:$left; folders: $dirs"; fi

# no server: the library is missing, or it is no library and the server dies at its start
for lib in "$TMP/missing.so" "$FIX/relu_cpp_ok.py"; do
	STITCHBENCH_SPAWN_LIB="$lib" run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${FAST[@]}"
	got=$(python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print(v["status"], v["candidate_worker_forked"])' <<<"$OUT_TXT" 2>&1)
	if [ "$got" = "pass False" ] && grep -q "fork server" <<<"$ERR_TXT"; then
		_report ok "with $(basename "$lib") as the library the worker is exec'd, the candidate passes, and a warning says why"
	else
		_report fail "with $(basename "$lib") as the library the worker is exec'd and passes" "$got; $ERR_TXT"
	fi
done
run_sb doctor --offline
check_out_re "doctor says the fork server's library loads" "^ok +forking +.*libsbspawn.so loads"
STITCHBENCH_SPAWN_LIB="$TMP/missing.so" run_sb doctor --offline
check_out_re "doctor warns when it is missing" "^warn +forking +.*missing.so is missing"
echo "1..$_n"
