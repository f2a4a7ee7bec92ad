#!/usr/bin/env bash
# test_cannot_judge.sh - answers the harness cannot judge are said to be so, not blamed on the candidate:
# a file Python cannot parse is format_error with the SyntaxError's line, whatever the static rules would
# say of its text; a CUDA candidate evaluated on the CPU is cannot_judge (exit 3, nothing built, not
# stored, judged again by a rerun, listed apart by import), while a CUDA file that is a hack is still
# rejected. Nothing here builds or runs a candidate.
# tier: fast
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
CPU=(--device cpu --trials 2 --perf-trials 3)
field() { python3 -c 'import json,sys; v=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" <<<"$OUT_TXT" 2>&1; }

# A syntax error in a file with no kernel and PyTorch doing the work: the static rules alone would call it
# a hack (H04, H01); there is no program, so it is format_error and the finding list is empty.
cat >"$TMP/broken.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x
PY
run_sb eval "$TMP/broken.py" --problem L1/2 "${CPU[@]}" --json
check_rc "a file Python cannot parse exits 1" 1
got=$(field '(v["status"], v["findings"], "SyntaxError" in v["message"], "line 7" in v["message"] or "line 6" in v["message"])')
if [ "$got" = "('format_error', [], True, True)" ]; then _report ok "it is format_error with the SyntaxError and its line, no hack finding"
else _report fail "it is format_error with the SyntaxError and its line, no hack finding" "$got"; fi
run_sb eval "$FIX/syntax_error.py" --problem L1/2 "${CPU[@]}"
check_out "the fixture's missing colon is named with its line" "SyntaxError: expected ':' (line 6"
check_out "and the line itself is shown" "line 6:     def forward(self, x)"
# an indentation error is a SyntaxError too
printf 'import torch.nn as nn\nclass ModelNew(nn.Module):\ndef forward(self, x):\n    return x\n' >"$TMP/indent.py"
run_sb eval "$TMP/indent.py" --problem L1/2 "${CPU[@]}"
check_out "an IndentationError is format_error" "IndentationError"

# CUDA on the CPU: cannot_judge, exit 3, before any build (the seconds say nothing was built)
run_sb eval "$FIX/cuda/relu_cuda_ok.py" --problem L1/2 "${CPU[@]}" --json
check_rc "a CUDA candidate on the CPU exits 3 (environment)" 3
got=$(field '(v["status"], v["findings"], "__global__" in v["message"], v["seconds"]["build"] == 0)')
if [ "$got" = "('cannot_judge', [], True, True)" ]; then _report ok "it is cannot_judge, names the CUDA kernel, builds nothing"
else _report fail "it is cannot_judge, names the CUDA kernel, builds nothing" "$got"; fi
# a Triton kernel too
cat >"$TMP/triton_relu.py" <<'PY'
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(y_ptr + i, tl.maximum(tl.load(x_ptr + i, mask=m), 0.0), mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
PY
run_sb eval "$TMP/triton_relu.py" --problem L1/2 "${CPU[@]}"
check_rc "a Triton candidate on the CPU exits 3" 3
check_out "it says why: a Triton kernel" "cannot_judge"
# a hack is a hack on any machine: a CUDA file whose forward calls torch.relu is rejected, not excused
sed 's/return ext.relu_fwd(x)/return torch.relu(x)/' "$FIX/cuda/relu_cuda_ok.py" >"$TMP/cuda_hack.py"
if grep -q 'torch.relu(x)' "$TMP/cuda_hack.py"; then
	run_sb eval "$TMP/cuda_hack.py" --problem L1/2 "${CPU[@]}" --json
	got=$(field '(v["status"], [f["id"] for f in v["findings"]][:1])')
	if [ "$got" = "('rejected', ['H01'])" ]; then _report ok "a CUDA hack on the CPU is still rejected H01"
	else _report fail "a CUDA hack on the CPU is still rejected H01" "$got"; fi
else
	_report fail "a CUDA hack on the CPU is still rejected H01" "the fixture's forward line changed: $(grep -n 'return' "$FIX/cuda/relu_cuda_ok.py")"
fi

# A batch: one CPU candidate, one CUDA candidate. The CUDA one is counted apart and the batch exits 3;
# --run stores only the judged one; a rerun with the same output file tries the CUDA one again.
gen="$TMP/gen"; mkdir -p "$gen"
cp "$TMP/broken.py" "$gen/level_1_problem_2_sample_0_kernel.py"
cp "$FIX/cuda/relu_cuda_ok.py" "$gen/level_1_problem_2_sample_1_kernel.py"
R="$TMP/results"
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}" --run cj --set output.dir="$R"
check_rc "a batch with a cannot_judge file exits 3" 3
check_out "the summary counts it apart" "1 judged: 0 pass, 0 incorrect, 0 compile_error, 0 runtime_error, 0 timeout, 0 rejected, 1 format_error, 1 cannot_judge, 0 harness_error"
check_err "and says where it can be judged" "on a machine with a GPU"
got=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select group_concat(status) from verdicts").fetchone()[0])' "$R/cj/results.db" 2>&1)
if [ "$got" = "format_error" ]; then _report ok "the run store holds the judged verdict only"; else _report fail "the run store holds the judged verdict only" "$got"; fi
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}"
check_out "a rerun judges the cannot_judge file again, not the judged one" "0 judged: 0 pass, 0 incorrect, 0 compile_error, 0 runtime_error, 0 timeout, 0 rejected, 0 format_error, 1 cannot_judge"
run_sb import "$TMP/imp" "$TMP/v.jsonl" --agent m
check_rc "import of a file with cannot_judge lines succeeds" 0
check_out "import stores the judged verdict" "imported 1 verdict"
check_out "and lists the cannot_judge lines apart, with their files" "left out 2 cannot_judge lines"
check_out "naming the problem and the file" "L1/2 $gen/level_1_problem_2_sample_1_kernel.py"

# In a run: the samples agent's CUDA answer is left unfinished and recorded as not judged; metrics leave
# the problem out of the agent's rates (counted for nobody) and the report says "not judged" for it.
sgen="$TMP/sgen"; mkdir -p "$sgen"
cp "$FIX/cuda/relu_cuda_ok.py" "$sgen/level_1_problem_2_sample_0_kernel.py"
cat >"$TMP/cj.yaml" <<YAML
name: cj
problems:
  select: [L1/2]
agents:
  - name: theirs
    kind: samples
    samples: 1
    samples_dir: $sgen
eval:
  device: cpu
  trials: 2
  perf_trials: 3
output:
  dir: $R
  report: false
YAML
run_sb run -c "$TMP/cj.yaml" --run-id cjrun
check_rc "a run with an attempt it cannot judge exits 1 (a sample is unfinished)" 1
check_err "it says why the sample is unfinished" "1 with an attempt this machine cannot judge: cannot_judge"
check_err "and names what cannot run here" "theirs L1/2 s0: not judged: the candidate has a __global__ CUDA kernel"
got=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("select count(*) from verdicts").fetchone()[0], "|",
      db.execute("select count(*) from reference_failures where message like \"not judged:%\"").fetchone()[0])' "$R/cjrun/results.db" 2>&1)
check_eq "no verdict is stored; the sample is recorded as not judged" "$got" "0 | 1"
run_sb metrics "$R/cjrun"
check_rc "metrics over it" 0
check_out "the problem is left out of the agent's rates" "| not judged (left out) | 1 | 1 |"
check_out "and named with the reason" "L1/2 (theirs: not judged: the candidate has a \\_\\_global\\_\\_ CUDA kernel"
run_sb report "$R/cjrun" -o "$TMP/rep"
check_true "the report's outcome table says not judged" grep -q "| L1/2 | ReLU | not judged |" "$TMP/rep/report.md"
