#!/usr/bin/env bash
# test_run_recovery.sh - `stitchbench run` when things go wrong around it, on the CPU and mostly without
# evaluations (a samples agent whose folder is empty: every attempt is a format_error): an empty
# selection, a closed output, --set on --resume, a results store emptied, damaged or moved aside, a
# narrowed resume, a problem whose reference raises, two processes on one run, what a process killed
# with SIGKILL leaves in the cache, and output.report.
source "$(dirname "$0")/lib.sh"
use_cache
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
R="$TMP/results"
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
mkdir -p "$TMP/empty"
cat >"$TMP/s.yaml" <<YAML
name: s
problems: {levels: [1], select: [L1/1-3]}
agents:
  - {name: sa, kind: samples, samples: 2, samples_dir: $TMP/empty}
  - {name: sb, kind: samples, samples: 1, samples_dir: $TMP/empty}
eval: {device: cpu}
output: {dir: $R, report: false}
YAML

# ---------- the selection ----------
run_sb run -c "$TMP/s.yaml" --problems ""
check_rc "--problems \"\" is a usage error, not every problem" 2
check_err "it says what to pass" 'run: --problems "" names nothing; give one or more, like L1/19'
run_sb run -c "$TMP/s.yaml" --agents ,
check_rc "--agents , is a usage error too" 2
check_true "neither made a run" test ! -e "$R"

# ---------- a closed output: the run goes on and stores everything ----------
# the read end is closed before the run starts, so its first line meets EPIPE (SIGPIPE by default)
closed_run() { python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)
print(subprocess.run(sys.argv[1:], stdout=w, stderr=w).returncode)' "$SB" "$@"; }
got=$(closed_run run -c "$TMP/s.yaml" --run-id pipe)
check_eq "run with its output closed ends with exit 0, not SIGPIPE" "$got" 0
check_eq "every sample was stored and ended" \
	"$(sql "$R/pipe/results.db" "SELECT count(*) FROM verdicts") $(cat "$R/pipe/complete" 2>&1)" "9 9 samples ended"
check_true "run.log has the final line" grep -q "finished: 9 of 9 samples ended" "$R/pipe/run.log"

# ---------- --resume with --set: a lost endpoint ----------
source "$SB_ROOT/tests/e2e/fake_llm.sh"
trap 'stop_fakes; rm -rf "$TMP"' EXIT
oneshot_config() { # file port samples
	cat >"$1" <<YAML
name: o
problems: {levels: [1], select: [L1/2]}
models:
  - {name: m, provider: openai, api_base: "http://127.0.0.1:$2/v1", model: fake-model, api_key_env: null, max_concurrent: 1, timeout_s: 30}
agents:
  - {name: one, kind: oneshot, model: m, samples: $3}
eval: {device: cpu}
output: {dir: $R, report: false}
YAML
}
python3 -c 'import json; print(json.dumps([{"content": "no code today", "delay": 2}, {"content": "no code today", "repeat": 8}]))' >"$TMP/a.script"
start_fake a
oneshot_config "$TMP/o.yaml" "$PORT_a" 3
"$SB" run -c "$TMP/o.yaml" --run-id lost --jobs 1 >"$TMP/lost.out" 2>"$TMP/lost.err" &
pid=$!
for _ in $(seq 100); do [ "$(requests a 2>/dev/null)" = 1 ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
RC=$?
check_eq "stopped after the first call: exit 1, 1 request" "$RC $(requests a)" "1 1"
kill "$FAKEPID_a"
python3 -c 'import json; print(json.dumps([{"content": "no code today", "repeat": 8}]))' >"$TMP/b.script"
start_fake b
run_sb run --resume lost --set "output.dir=$R" --set models.m.temperature=0.9
check_rc "--set of a model key that changes what is measured is refused on --resume" 2
check_err "it names the key and what may change" "--set models.m.temperature changes what the run measures"
run_sb run --resume lost --set "output.dir=$R" --set agents.one.max_attempts=4
check_rc "so is an agents. key" 2
run_sb run --resume lost --set "output.dir=$R" --set "models.m.api_base=http://127.0.0.1:$PORT_b/v1"
check_rc "--resume --set models.m.api_base (the endpoint moved) finishes the run" 0
check_eq "the new endpoint got the two calls not recorded; the first was not sent again" \
	"$(requests a) $(requests b) $(sql "$R/lost/results.db" "SELECT count(*) FROM llm_calls")" "1 2 3"
check_true "the run's config.yaml still holds the address it began with" grep -q "127.0.0.1:$PORT_a/v1" "$R/lost/config.yaml"

# ---------- the store is the truth of what ended ----------
run_sb run -c "$TMP/s.yaml" --run-id st
check_rc "a run of 9 format_error samples" 0
S="$R/st"
: >"$S/results.db"
run_sb run --resume "$S"
check_rc "resuming a run whose results.db was emptied ends with exit 0" 0
check_err "it says the store was made anew" "results.db was missing or empty: a new one is made"
check_err "and that the samples it lacks run again" "9 samples whose summary.json says ended but whose attempts results.db lacks run again"
check_out "it ran them: 9 attempts in this session" "9 of 9 samples ended, 0 unfinished; 9 attempts in this session"
check_eq "the store holds every verdict again" "$(sql "$S/results.db" "SELECT count(*) FROM verdicts")" 9
head -c 3000 "$S/results.db" >"$TMP/trunc.db" && cp "$TMP/trunc.db" "$S/results.db"
rm -f "$S/results.db-wal" "$S/results.db-shm"
run_sb run --resume "$S"
check_rc "a truncated store stops the resume with exit 2" 2
check_err "saying what is wrong" "results.db is damaged (preparing a statement: database disk image is malformed)"
check_err "the way forward" "move it aside (mkdir $S/damaged && mv $S/results.db* $S/damaged/) and resume again"
check_true "and removing complete: the run's results are not all readable" test ! -e "$S/complete"
echo garbage >"$S/results.db"
run_sb run --resume "$S"
check_err "a file that is no database is named as such" "results.db is not an SQLite database; move it aside"
mkdir "$S/damaged" && mv "$S"/results.db* "$S/damaged/"
run_sb run --resume "$S"
check_rc "moved aside, the resume makes a new store and ends" 0
check_eq "with every verdict" "$(sql "$S/results.db" "SELECT count(*) FROM verdicts") $(cat "$S/complete")" "9 9 samples ended"

# a narrowed resume does not mark the run complete while samples outside it wait
rm "$S/samples/sb/L1_3/s0/summary.json" "$S/complete"
run_sb run --resume "$S" --agents sa --problems L1/1-3
check_rc "a resume narrowed to ended samples ends with exit 0" 0
check_out "it says the run is not complete" "the run is not complete: 1 of its samples outside this selection have not ended"
check_true "and writes no complete" test ! -e "$S/complete"
check_eq "run.json keeps the whole selection" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["agents"], d["samples"])' "$S/run.json")" \
	"['sa', 'sb'] {'sa': 2, 'sb': 1}"
rm "$S/samples/sa/L1_2/s1/summary.json"
run_sb run --resume "$S" --samples 1
check_out "a resume with fewer --samples ends sb's sample but leaves sa's second one outside" \
	"the run is not complete: 1 of its samples outside this selection have not ended"
check_true "it does not shrink the run" grep -q '"sa": 2' "$S/run.json"
check_true "nor mark it complete" test ! -e "$S/complete"
run_sb run --resume "$S"
check_rc "the whole resume ends the last sample" 0
check_eq "and marks the run complete" "$(cat "$S/complete")" "9 samples ended"

# ---------- a problem whose reference raises ----------
# L1/1 raises while the file $TMP/broken exists, so a resume can find it working again
mkdir -p "$TMP/suite/level1"
cat >"$TMP/suite/level1/1_Broken.py" <<PY
# L1/1 Broken: raises while $TMP/broken exists.
import os
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if os.path.exists("$TMP/broken"):
            raise RuntimeError("this reference is broken")
        return x * 2


def get_inputs():
    return [torch.rand(64, 64)]


def get_init_inputs():
    return []
PY
sed -e 's/L1\/1 Broken: raises while .* exists./L1\/2 Add_One./' -e '/os.path.exists/,+1d' -e 's/x \* 2/x + 1/' \
	"$TMP/suite/level1/1_Broken.py" >"$TMP/suite/level1/2_Add_One.py"
cat >"$TMP/rf.yaml" <<YAML
name: rf
problems: {root: $TMP/suite, levels: [1], select: [L1/1-2]}
agents:
  - {name: te, kind: torch-eager, samples: 2}
  - {name: sa, kind: samples, samples: 1, samples_dir: $TMP/empty}
eval: {device: cpu, trials: 2, perf_trials: 3, warmup_ms: 10, timing_cap_s: 10}
output: {dir: $R, report: false}
YAML
touch "$TMP/broken"
run_sb run -c "$TMP/rf.yaml" --run-id rf
F="$R/rf"
check_rc "a run with a problem whose reference raises goes on and ends with exit 1 (unfinished)" 1
check_out "the final line says why" "3 of 6 samples ended, 3 unfinished"
check_out "and names the problem" "reference failed: L1/1: 3 samples could not be judged"
check_err "the failure is said once, with the reference's error" "L1/1: the reference failed while computing the expected outputs: runtime_error: RuntimeError: this reference is broken; its samples are left unfinished"
check_err "the sample that met it was not judged" "te L1/1 s0: unfinished: reference_failed: not judged"
check_err "the problem's other samples were not run" "te L1/1 s1: unfinished: reference_failed: not run"
check_eq "the other problem's samples ran: te passed twice, sa a format_error" \
	"$(sql "$F/results.db" "SELECT agent, sample, status FROM verdicts ORDER BY agent, sample")" "sa|0|format_error
te|0|pass
te|1|pass"
check_eq "the store records the samples the reference kept from being judged, as the problem's failure" \
	"$(sql "$F/results.db" "SELECT agent, problem, sample, message LIKE '%this reference is broken%' FROM reference_failures ORDER BY agent, sample")" \
	"sa|L1/1|0|1
te|L1/1|0|1
te|L1/1|1|1"
check_true "the run is not complete" test ! -e "$F/complete"
run_sb run --resume "$F"
check_rc "a resume tries the problem again (still broken: exit 1)" 1
check_eq "its first sample met the reference again" "$(grep -c 'te L1/1 s0: unfinished: reference_failed: not judged' "$F/run.log")" 2
rm "$TMP/broken"
run_sb run --resume "$F"
check_rc "once the reference works, the resume ends the run" 0
check_eq "every sample of L1/1 was judged" "$(sql "$F/results.db" "SELECT count(*) FROM verdicts WHERE problem = 'L1/1'")" 3
check_eq "and the records are gone" "$(sql "$F/results.db" "SELECT count(*) FROM reference_failures")" 0
check_true "the run is complete" test -s "$F/complete"

# eval --samples over the same problems: the file the broken reference kept from being judged gets a
# harness_error line (accounted for, never the candidate's status), exit 1, and a rerun judges it
gen="$TMP/gen-rf"; mkdir -p "$gen"
sed -e 's/class Model(/class ModelNew(/' -e '/os.path.exists/,+1d' "$TMP/suite/level1/1_Broken.py" \
	>"$gen/level_1_problem_1_sample_0_kernel.py"
sed -e 's/class Model(/class ModelNew(/' "$TMP/suite/level1/2_Add_One.py" >"$gen/level_1_problem_2_sample_0_kernel.py"
touch "$TMP/broken"
STITCHBENCH_CACHE="$TMP/cache-rf" run_sb eval --samples "$gen" -o "$TMP/rf.jsonl" -c "$TMP/rf.yaml" --set checks.static=false "${NO_OPREC[@]}"
check_rc "eval --samples with a reference that fails ends with exit 1" 1
check_eq "files that never name the extension loader cost the builder nothing: no build published" \
	"$(find "$TMP/cache-rf/ext" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" 0
check_out "its summary counts the harness's failure apart" "1 judged: 1 pass, 0 incorrect, 0 compile_error, 0 runtime_error, 0 timeout, 0 rejected, 0 format_error, 0 cannot_judge, 1 harness_error"
check_err "and says a rerun tries it again" "1 file was not judged (harness_error"
check_eq "the JSONL holds a line for each file, the failed one harness_error with the reference's error" \
	"$(python3 -c 'import json, sys
for l in open(sys.argv[1]):
    v = json.loads(l)
    print(v["problem"]["ref"], v["status"], "this reference is broken" in (v["message"] or ""))' "$TMP/rf.jsonl")" "L1/1 harness_error True
L1/2 pass False"
run_sb import "$R/rf-imp" "$TMP/rf.jsonl" -c "$TMP/rf.yaml"
check_rc "import takes the JSONL" 0
check_out "and leaves the harness_error line out" "left out 1 harness_error line"
check_eq "only the judged file is stored" "$(sql "$R/rf-imp/results.db" "SELECT problem, status FROM verdicts")" "L1/2|pass"
rm "$TMP/broken"
run_sb eval --samples "$gen" -o "$TMP/rf.jsonl" -c "$TMP/rf.yaml" --set checks.static=false "${NO_OPREC[@]}"
check_rc "once the reference works, the rerun ends with exit 0" 0
check_out "it judges only the file that had the harness_error" "1 judged: 1 pass"

# ---------- two processes: the run lock; leftovers of a kill -9 swept, a live process's kept ----------
descendants() { # pid: every process below it
	local k
	for k in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$k"; echo "$k"; done
}
kill_run() { # pid: SIGKILL it and what it had started (the workers do not notice their parent died)
	local orphans
	orphans=$(descendants "$1")
	kill -KILL "$1"; wait "$1" 2>/dev/null
	[ -n "$orphans" ] && kill -KILL $orphans 2>/dev/null
	return 0
}
C=$STITCHBENCH_CACHE
# L1/3 sleeps 3 s in forward, so that an evaluation (and its reference outputs) lasts long enough to be caught
# (the folder's name in it makes its hash, and so its reference outputs, this test's own in a shared cache)
sed -e "s|L1/2 Add_One.|L1/3 Slow: sleeps in forward (made in $TMP).|" -e 's/^import torch$/import time\nimport torch/' \
	-e 's/        return x + 1/        time.sleep(3)\n        return x + 1/' \
	"$TMP/suite/level1/2_Add_One.py" >"$TMP/suite/level1/3_Slow.py"
sed -e 's/select: \[L1\/1-2\]/select: [L1\/3]/' -e '/kind: samples/d' -e 's/samples: 2/samples: 1/' "$TMP/rf.yaml" >"$TMP/slow.yaml"
# a live run, evaluating (for 12 s and more: four forward calls for the reference outputs alone)
"$SB" run -c "$TMP/slow.yaml" --run-id live >/dev/null 2>"$TMP/live.err" &
L=$!
for _ in $(seq 600); do compgen -G "$C/work/eval-$L-*" >/dev/null && break; sleep 0.05; done
# a run killed with SIGKILL while it computes the reference outputs
"$SB" run -c "$TMP/slow.yaml" --run-id dead >/dev/null 2>"$TMP/dead.err" &
A=$!
for _ in $(seq 600); do compgen -G "$C/work/eval-$A-*" >/dev/null && compgen -G "$C/ref/*.tmp-$A" >/dev/null && break; sleep 0.05; done
check_true "a run killed while it computes the reference outputs leaves its work folder and ref/*.tmp-PID" \
	bash -c "compgen -G '$C/work/eval-$A-*' && compgen -G '$C/ref/*.tmp-$A'"
kill_run "$A"
mkdir -p "$C/work/eval-AbC123" # an older build's name: no pid, so no owner to ask
run_sb run --resume live --set "output.dir=$R"
check_rc "a second process on a run that is in use is refused" 2
check_err "it says who holds it" "run live is in use by pid $L on"
check_eq "run.json keeps the one session" \
	"$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sessions"]))' "$R/live/run.json")" 1
run_sb run -c "$TMP/s.yaml" --run-id sweep
check_rc "the next evaluating process starts" 0
check_err "and says it swept" "work folders and temporary entries that ended processes left in $C"
check_true "the killed run's work folder is gone" bash -c "! compgen -G '$C/work/eval-$A-*'"
check_true "so are its reference outputs in the making and its owner lock" \
	bash -c "! compgen -G '$C/ref/*.tmp-$A' && ! compgen -G '$C/locks/owner-$A-*'"
check_true "the live run's work folder and reference outputs in the making are untouched" \
	bash -c "compgen -G '$C/work/eval-$L-*' && compgen -G '$C/ref/*.tmp-$L'"
check_true "a folder without an owner's pid is left alone" test -d "$C/work/eval-AbC123"
kill_run "$L"

# ---------- output.report ----------
run_sb run -c "$TMP/s.yaml" --run-id rep --set output.report=true
check_rc "a run with output.report ends with exit 0" 0
check_out "it says where its report is" "report:   $TMP/reports/rep/report.md and $TMP/reports/rep/report.html"
check_true "the report is beside the results folder" test -s "$TMP/reports/rep/report.html" -a -s "$TMP/reports/rep/report.md"
check_true "it is the run's: its title, and a row for each agent" \
	bash -c "grep -qx '# stitchbench report: rep' '$TMP/reports/rep/report.md' && grep -q '^| sa |' '$TMP/reports/rep/report.md' && grep -q '^| sb |' '$TMP/reports/rep/report.md'"
run_sb run -c "$TMP/s.yaml" --run-id norep
check_true "output.report: false writes none" test ! -e "$TMP/reports/norep"
