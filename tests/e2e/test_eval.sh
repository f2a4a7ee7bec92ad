#!/usr/bin/env bash
# test_eval.sh - `stitchbench eval` on the CPU with real candidates (tests/fixtures/candidates):
# pass, incorrect with the right worst index, compile_error, runtime_error from a segfault, timeout,
# sandbox walls (network, writes outside, file size, forks), bad input, --samples with resume, and
# eval.split_nvcc reaching the worker.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
FAST=(--device cpu --trials 2 --perf-trials 3)
# These candidates misbehave on purpose (no kernel, sockets, forks): the sandbox and the verdicts
# are under test here, so the static checks, which would reject them first, are off for them.
SANDBOX=("${FAST[@]}" --set checks.static=false "${NO_OPREC[@]}")

run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${FAST[@]}" --json
check_rc "a correct load_inline C++ candidate passes" 0
status=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], len(v["trials"]), v["timing"]["clock"], v["speedup"]["vs_eager"] > 0, v["timing"]["revalidated"])' <<<"$OUT_TXT" 2>&1)
if [ "$status" = "pass 2 host True True" ]; then _report ok "its JSON verdict has trials, host timing, a speedup and re-validation"; else
	_report fail "its JSON verdict has trials, host timing, a speedup and re-validation" "$status"; fi
# every stage has its seconds, and the stages account for the total (the rest is bookkeeping between them)
got=$(python3 -c '
import json, sys
s = json.load(sys.stdin)["seconds"]
stages = ["static", "reference", "build", "correctness", "robust", "reference_worker", "timing", "checks", "profile", "finish"]
parts = sum(s[k] for k in stages)
print(all(s[k] >= 0 for k in stages), s["build"] > 0 and s["correctness"] > 0 and s["timing"] > 0 and s["finish"] > 0,
      parts <= s["total"] + 1e-6, s["total"] - parts < 1.0 + 0.05 * s["total"], round(s["total"] - parts, 3))' <<<"$OUT_TXT" 2>&1)
if [[ "$got" == "True True True True "* ]]; then _report ok "its seconds by stage add up to its total (unaccounted: ${got##* } s)"
else _report fail "its seconds by stage add up to its total" "$got; $(python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])' <<<"$OUT_TXT" 2>&1)"; fi

# OpenMP over every CPU: glibc's signal 33 and libgomp's pool come with the first parallel region, and the
# pool sleeps between calls, so nothing runs while the worker is idle
run_sb eval "$FIX/relu_openmp_ok.py" --problem L1/2 "${FAST[@]}" --json
check_rc "an honest OpenMP candidate passes" 0
got=$(python3 -c '
import json, sys
v = json.load(sys.stdin)
idle = v["runtime"]["idle"]
print(v["status"], [f["id"] for f in v["findings"]], idle is not None and idle["cpu_ms"] < 8 <= idle["wall_ms"],
      any("32 and 33" in s for s in v["runtime"]["skipped"]))' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "pass [] True False" ]; then _report ok "with no finding, idle after its calls, signals 32 and 33 judged"; else
	_report fail "with no finding, idle after its calls, signals 32 and 33 judged" "$got"; fi

# a handler of its own on glibc's signal 33 through a raw rt_sigaction: the sandbox's filter refuses it
run_sb eval "$FIX/signal33_raw.py" --problem L1/2 "${SANDBOX[@]}"
check_rc "a raw rt_sigaction on signal 33 fails the candidate" 1
check_out "the kernel refused it" "rt_sigaction(33): Operation not permitted"

run_sb eval "$FIX/relu_cpp_wrong.py" --problem L1/2 "${FAST[@]}" --json
check_rc "a wrong candidate exits 1" 1
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); o=v["trials"][0]["outputs"][0]; print(v["status"], o["worst_index"], o["worst_coord"], round(o["max_abs_error"], 3), v["timing"])' <<<"$OUT_TXT" 2>&1)
# L1/2 of the small suite is 256 x 256: [3, 17] is flat index 3 * 256 + 17
if [ "$got" = "incorrect 785 [3, 17] 0.5 None" ]; then _report ok "it is incorrect, worst element [3, 17] (index 785), error 0.5, not timed"; else
	_report fail "it is incorrect, worst element [3, 17] (index 785), error 0.5, not timed" "$got"; fi

run_sb eval "$FIX/syntax_error.py" --problem L1/2 "${SANDBOX[@]}"
check_rc "a syntax error exits 1" 1
check_out "a syntax error is format_error" "L1/2 $FIX/syntax_error.py: format_error"
check_out "it names the line" "line 6"
printf '# only a comment\n\n' >"$TMP/empty.py"
run_sb eval "$TMP/empty.py" --problem L1/2 "${FAST[@]}" --json
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], v["findings"], "empty" in v["message"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "format_error [] True" ]; then _report ok "an empty candidate is format_error, with no hack finding"; else
	_report fail "an empty candidate is format_error, with no hack finding" "$got"; fi

run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 --gpus 0
check_rc "--gpus without --samples is a usage error" 2
check_err "saying a single file is judged on one device" "a single file is judged on one device"
mkdir -p "$TMP/gpus" && cp "$FIX/relu_cpp_ok.py" "$TMP/gpus/level_1_problem_2_sample_0_kernel.py"
run_sb eval --samples "$TMP/gpus" -o "$TMP/gpus.jsonl" --gpus 0 "${FAST[@]}"
check_rc "--gpus where torch sees no GPU is refused before anything is judged" 3
check_err "naming what torch sees" "torch sees no GPU here"
check_true "and no verdict line is written" test ! -s "$TMP/gpus.jsonl"

run_sb eval "$FIX/null_deref.py" --problem L1/2 "${FAST[@]}"
check_out "a NULL dereference in the extension is runtime_error" ": runtime_error"
check_out "it names the signal" "SIGSEGV"

start=$(date +%s)
run_sb eval "$FIX/infinite_loop.py" --problem L1/2 "${SANDBOX[@]}" --timeout 15
took=$(( $(date +%s) - start ))
check_out "an infinite loop is a timeout" ": timeout"
if [ "$took" -lt 60 ]; then _report ok "the timeout is reached within the limit ($took s)"; else
	_report fail "the timeout is reached within the limit" "took $took s"; fi

# stitchbench killed with SIGKILL while the candidate spins: no worker, relay or child may outlive it
# (they would hold GPU memory on a GPU node). Found by their working folders under a cache of our own.
killcache="$TMP/killcache"
procs_under() { # prints the pids whose working folder is under $1
	local p cwd
	for p in /proc/[0-9]*; do
		cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
		case "$cwd" in "$1"/*) echo "${p#/proc/}" ;; esac
	done
}
STITCHBENCH_CACHE="$killcache" "$SB" eval "$FIX/infinite_loop.py" --problem L1/2 "${SANDBOX[@]}" --timeout 300 \
	>/dev/null 2>&1 &
sbpid=$!
for _ in $(seq 1 120); do
	[ "$(procs_under "$killcache/work" | wc -l)" -ge 2 ] && break
	sleep 0.5
done
sleep 3 # the candidate is inside forward now
before=$(procs_under "$killcache/work" | wc -l)
kill -9 "$sbpid"
wait "$sbpid" 2>/dev/null
left=""
for _ in $(seq 1 30); do
	left=$(procs_under "$killcache/work")
	[ -z "$left" ] && break
	sleep 0.5
done
if [ "$before" -ge 2 ] && [ -z "$left" ]; then _report ok "a SIGKILLed stitchbench leaves no worker behind ($before were running)"; else
	_report fail "a SIGKILLed stitchbench leaves no worker behind" "before: $before; left: $(for p in $left; do tr '\0' ' ' </proc/$p/cmdline; echo; done)"
	for p in $left; do kill -9 "$p" 2>/dev/null; done
fi

run_sb eval "$FIX/huge_write.py" --problem L1/2 "${SANDBOX[@]}"
check_out "a 1 GiB write is stopped" ": runtime_error"
check_out "by the file-size limit" "File too large"

# A listener on 127.0.0.1 that the candidate tries to reach.
port_file="$TMP/port"; hits="$TMP/hits"
python3 - "$port_file" "$hits" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5); s.settimeout(120)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
try:
    while True:
        c, _ = s.accept(); open(sys.argv[2], "a").write("hit\n"); c.close()
except OSError:
    pass
PY
listener=$!
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
port=$(cat "$port_file")
cat >"$TMP/net.py" <<PY
# tries to reach a server on the host; inside the sandbox it must fail, and then the output is honest
import socket
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        s = socket.socket()
        s.settimeout(3)
        try:
            s.connect(("127.0.0.1", $port))
        except OSError:
            return torch.relu(x)
        raise RuntimeError("connected to the host from inside the sandbox")
PY
run_sb eval "$TMP/net.py" --problem L1/2 "${SANDBOX[@]}"
check_rc "a TCP connect to 127.0.0.1 fails inside the sandbox" 0
if [ ! -s "$hits" ]; then _report ok "the listener saw no connection"; else _report fail "the listener saw no connection" "$(cat "$hits")"; fi
kill "$listener" 2>/dev/null

outside="$TMP/outside-$$"
cat >"$TMP/escape.py" <<PY
# writes outside its folder and reads the reference cache; both must fail
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            open("$outside", "w").write("escaped")
        except OSError:
            pass
        try:
            os.listdir("$STITCHBENCH_CACHE/ref")
            raise RuntimeError("could list the reference cache")
        except PermissionError:
            pass
        return torch.relu(x)
PY
run_sb eval "$TMP/escape.py" --problem L1/2 "${SANDBOX[@]}"
check_rc "reading the reference cache fails inside the sandbox" 0
if [ ! -e "$outside" ]; then _report ok "a write outside its folder fails"; else _report fail "a write outside its folder fails" "$outside exists"; fi

run_sb eval "$FIX/forker.py" --problem L1/2 "${SANDBOX[@]}"
check_rc "a candidate that forks a detached child still gets its verdict" 1
check_out "the parent sees the child alive after the import (H06)" "other process of the candidate's"
sleep 1
if ! pgrep -f 'sleep 3599.125' >/dev/null; then _report ok "its detached child does not outlive the evaluation"; else
	_report fail "its detached child does not outlive the evaluation" "$(pgrep -af 'sleep 3599.125')"; pkill -f 'sleep 3599.125'; fi

# Wrong answers of every shape: each is a verdict with a reason, never a crash. One --samples batch (one
# fork server, one reference worker): the verdicts, not the command line, are under test here.
wrong="$TMP/wrong"; mkdir -p "$wrong"
cases=("nan:incorrect:NaN" "half:incorrect:dtype F16 != expected F32" "narrow:incorrect:shape [256, 100] != expected [256, 256]"
	"huge:runtime_error:output_too_large" "tuple:incorrect:returned 2 outputs, the reference 1"
	"notensor:runtime_error:not a tensor or a tuple of tensors" "nomodelnew:format_error:defines no ModelNew")
mk() { # sample body-of-forward
	printf 'import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        %s\n' "$2" \
		>"$wrong/level_1_problem_2_sample_$1_kernel.py"
}
mk 0 'return torch.relu(x) * float("nan")'
mk 1 'return torch.relu(x).half()'
mk 2 'return torch.relu(x)[:, :100]'
# past the outputs' limit (twice the reference's bytes + 16 MiB): 80 copies of a 256 KiB output
mk 3 'return torch.relu(x).repeat(80, 1)'
mk 4 'return torch.relu(x), x'
mk 5 'return 3'
printf 'import torch.nn as nn\n\n\nclass Model2(nn.Module):\n    pass\n' >"$wrong/level_1_problem_2_sample_6_kernel.py"
run_sb eval --samples "$wrong" -o "$TMP/wrong.jsonl" "${SANDBOX[@]}"
check_out "the batch judges all seven" "7 judged: 0 pass, 4 incorrect, 0 compile_error, 2 runtime_error"
for i in "${!cases[@]}"; do
	IFS=: read -r name status why <<<"${cases[$i]}"
	got=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    if v["candidate"]["path"].endswith("_sample_%s_kernel.py" % sys.argv[2]):
        print(v["status"], "|", v["message"], "|", json.dumps(v.get("detail")))' "$TMP/wrong.jsonl" "$i" 2>&1)
	if [[ "$got" == "$status |"* ]] && grep -qF -- "$why" <<<"$got"; then _report ok "$name: $status ($why)"; else
		_report fail "$name: $status ($why)" "$got"; fi
done

run_sb eval "$TMP/missing.py" --problem L1/2 --device cpu
check_rc "a missing candidate file is an input error" 2
run_sb eval "$FIX/relu_cpp_ok.py" --problem L9/1 --device cpu
check_rc "an unknown problem is an input error" 2
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/99 --device cpu
check_err "a problem that is not in the suite is named" "no problem L1/99"
run_sb eval "$FIX/relu_cpp_ok.py" --device cpu
check_err "a missing --problem is explained" "add --problem L<level>/<id>"
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 --tolerance loose
check_rc "a bad tolerance preset is an input error" 2

# A KernelBench generations folder: one good, one broken, one misnamed file.
gen="$TMP/gen"; mkdir -p "$gen"
cp "$FIX/relu_cpp_ok.py" "$gen/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/syntax_error.py" "$gen/level_1_problem_2_sample_1_kernel.py"
cp "$FIX/relu_cpp_ok.py" "$gen/notes.py"
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${SANDBOX[@]}"
check_rc "--samples judges a generations folder" 0
check_out "it counts the verdicts" "2 judged: 1 pass, 0 incorrect, 0 compile_error, 0 runtime_error, 0 timeout, 0 rejected, 1 format_error"
check_err "a misnamed file is reported" "notes.py: not named level_L_problem_ID_sample_S_kernel.py"
lines=$(wc -l <"$TMP/v.jsonl")
if [ "$lines" = 2 ]; then _report ok "one JSONL verdict per file"; else _report fail "one JSONL verdict per file" "$lines lines"; fi
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${SANDBOX[@]}"
check_out "a second run skips what is already judged" "0 judged"
lines=$(wc -l <"$TMP/v.jsonl")
if [ "$lines" = 2 ]; then _report ok "and keeps the earlier verdicts"; else _report fail "and keeps the earlier verdicts" "$lines lines"; fi

# Two candidates of one problem in one process: the second is timed against the reference worker the
# first one left running (eval.keep_reference_worker), the same verdict otherwise; switched off, never.
gen2="$TMP/gen2"; mkdir -p "$gen2"
cp "$FIX/relu_cpp_ok.py" "$gen2/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/relu_cpp_ok.py" "$gen2/level_1_problem_2_sample_1_kernel.py"
reused() { python3 -c 'import json, sys; print(" ".join("%s:%s" % (json.loads(l)["status"], json.loads(l)["reference_worker_reused"]) for l in open(sys.argv[1])))' "$1"; }
run_sb eval --samples "$gen2" -o "$TMP/keep.jsonl" "${FAST[@]}"
got=$(reused "$TMP/keep.jsonl")
if [ "$got" = "pass:False pass:True" ]; then _report ok "the second evaluation of a problem reuses the reference worker"
else _report fail "the second evaluation of a problem reuses the reference worker" "$got"; fi
check_true "no kept worker's folder is left behind" bash -c "[ -z \"\$(ls -A '$STITCHBENCH_CACHE/refw')\" ]"
# Two problems in one batch: the second problem's reference worker was started during the first's
# evaluation (torch imported, nothing loaded) and is the one the second evaluation used.
gen4="$TMP/gen4"; mkdir -p "$gen4"
sed -E 's/\bModel\b/ModelNew/g' "$SB_ROOT/kernelbench/suite/level1/3_Sum_Over_Dim.py" >"$gen4/level_1_problem_3_sample_0_kernel.py"
cp "$FIX/relu_cpp_ok.py" "$gen4/level_1_problem_2_sample_0_kernel.py"
run_sb eval --samples "$gen4" -o "$TMP/spare.jsonl" "${FAST[@]}" --set checks.static=false "${NO_OPREC[@]}"
got=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    print(v["problem"]["ref"], v["status"], v["reference_worker_prestarted"], v["reference_worker_reused"])
' "$TMP/spare.jsonl" 2>&1 | tr '\n' ' ')
if [ "$got" = "L1/2 pass False False L1/3 pass True False " ]; then
	_report ok "the next problem's reference worker is started ahead and used ($got)"
else _report fail "the next problem's reference worker is started ahead and used" "$got"; fi
check_true "and no reference folder is left behind" bash -c "[ -z \"\$(ls -A '$STITCHBENCH_CACHE/refw')\" ]"
run_sb eval --samples "$gen2" -o "$TMP/nokeep.jsonl" "${FAST[@]}" --set eval.keep_reference_worker=false
got=$(reused "$TMP/nokeep.jsonl")
if [ "$got" = "pass:False pass:False" ]; then _report ok "eval.keep_reference_worker=false starts a new one each time"
else _report fail "eval.keep_reference_worker=false starts a new one each time" "$got"; fi
# ...and its candidates' workers are still started ahead, with each new reference's folder out of reach
# of a worker started before that folder existed (tests/fixtures/candidates/peek_ref.py counts those it can list)
gen3="$TMP/gen3"
mkdir -p "$gen3"
cp "$gen2/level_1_problem_2_sample_0_kernel.py" "$gen3/level_1_problem_2_sample_0_kernel.py"
cp "$SB_ROOT/tests/fixtures/candidates/peek_ref.py" "$gen3/level_1_problem_2_sample_1_kernel.py"
run_sb eval --samples "$gen3" -o "$TMP/nokeep3.jsonl" "${FAST[@]}" --set eval.keep_reference_worker=false --set checks.static=false "${NO_OPREC[@]}"
got=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    print(v["status"], v["candidate_worker_prestarted"], "peek_ref readable" in (v["message"] or "") and v["message"].split("peek_ref readable ")[1].split()[0])
' "$TMP/nokeep3.jsonl" 2>&1 | tr '\n' ' ')
if [ "$got" = "pass False False runtime_error True 0 " ]; then
	_report ok "without kept reference workers, the next candidate's worker is prestarted and can list no reference folder ($got)"
else _report fail "without kept reference workers, the next candidate's worker is prestarted and can list no reference folder" "$got"; fi
check_true "no reference folder is left behind" bash -c "[ -z \"\$(ls -A '$STITCHBENCH_CACHE/refw')\" ]"

# eval.split_nvcc reaches the candidate's worker, which then compiles .cu files through nvcc_split.py
# (torch 2.x reads PYTORCH_NVCC; the wrapper itself is tested in tests/worker/test_nvcc_split.py). The
# candidate shows its environment in the compile error it raises.
printf 'import os\nraise RuntimeError("PYTORCH_NVCC=%%s" %% os.environ.get("PYTORCH_NVCC", "unset"))\nclass ModelNew: pass\n' >"$TMP/nvcc_env.py"
run_sb eval "$TMP/nvcc_env.py" --problem L1/2 "${SANDBOX[@]}" --json
check_out "by default (eval.split_nvcc=true) the worker compiles CUDA through nvcc_split.py" "harness/worker/nvcc_split.py"
run_sb eval "$TMP/nvcc_env.py" --problem L1/2 "${SANDBOX[@]}" --set eval.split_nvcc=false --json
check_out "eval.split_nvcc=false leaves nvcc as it is" "PYTORCH_NVCC=unset"
