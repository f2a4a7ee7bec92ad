#!/usr/bin/env bash
# bench_compare.sh - `make bench-compare`: does `metrics` tell two agents apart only when the data does?
#
# Eight elementwise problems (written into the state folder: y = f(x) over BATCH x DIM fp32), and three
# agents' files for each, all with one hand-written kernel per problem (CUDA on a GPU, a C++ loop on the
# CPU), so every pass is clean and timed:
#   fast   applies the kernel twice (the second result is returned),
#   twin   the same bytes as fast's files (two agents that wrote identical code),
#   slow   applies it three times: 1.5x fast's work on every problem.
# Each agent's folder is judged by `eval --samples`, the verdicts imported into one run as three agents,
# each agent's pass judged SB_CMP_REPEATS more times (`metrics --repeats`), and `metrics` asked for its
# pairs. The expected answers: "no difference" for fast against twin; fast and twin each faster than slow,
# with an interval above 1.0. On a loaded or shared CPU the verdicts are expected to warn about noise, and
# fast against twin must still never be called different. Prints the pairs' lines and PASS/FAIL per claim.
#
#   SB_CMP_STATE=DIR       keep the problems, files, verdicts and runs in DIR (default: a temporary one)
#   SB_CMP_REPEATS=K       extra evaluations of each best attempt (default 3)
#   SB_CMP_DIM=N           elements per row (default 4096; 2048 rows)
#   SB_CMP_CPU=1           judge on the CPU even where a GPU is present
#   SB_CMP_EVAL_ARGS=...   more `eval` options (e.g. --no-compile)
# The summary goes to stdout and, with $OUT set (a device call's output folder), to $OUT/bench-compare.md.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
SB=$root/bin/stitchbench
[ -x "$SB" ] || { echo "bench-compare: $SB is missing: run make first" >&2; exit 2; }
PY=${STITCHBENCH_PYTHON:-python3}
state=${SB_CMP_STATE:-$(mktemp -d)}
mkdir -p "$state"
state=$(cd "$state" && pwd)
repeats=${SB_CMP_REPEATS:-3}
dim=${SB_CMP_DIM:-4096}
device=cuda
if [ "${SB_CMP_CPU:-0}" = 1 ] || ! nvidia-smi -L >/dev/null 2>&1; then device=cpu; fi

# The problems and the three agents' folders, written by one small generator so that the files of
# `twin` are fast's bytes, not a re-rendering of them.
"$PY" - "$state" "$device" "$dim" <<'EOF' || exit 2
import os, sys
state, device, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
# name, the torch expression of the reference, the same function in C on a float v
OPS = [("ReLU", "torch.relu(x)", "v > 0.f ? v : 0.f"),
       ("Sigmoid", "torch.sigmoid(x)", "1.f / (1.f + expf(-v))"),
       ("Tanh", "torch.tanh(x)", "tanhf(v)"),
       ("Swish", "x * torch.sigmoid(x)", "v / (1.f + expf(-v))"),
       ("Softsign", "x / (1 + torch.abs(x))", "v / (1.f + fabsf(v))"),
       ("HardTanh", "torch.clamp(x, -1.0, 1.0)", "fminf(fmaxf(v, -1.f), 1.f)"),
       ("LeakyReLU", "torch.nn.functional.leaky_relu(x, 0.01)", "v > 0.f ? v : 0.01f * v"),
       ("Softplus", "torch.nn.functional.softplus(x)", "v > 20.f ? v : log1pf(expf(v))")]
PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {expr}


def get_inputs():
    return [torch.randn(2048, {dim})]


def get_init_inputs():
    return []
'''
CUDA = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void op_kernel(const float *__restrict__ in, float *__restrict__ out, int64_t n) {{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {{
        float v = in[i];
        out[i] = {c};
    }}
}}

torch::Tensor op_fwd(torch::Tensor x, int64_t passes) {{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "expects a contiguous CUDA tensor");
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    int blocks = (int)std::min<int64_t>((n + 255) / 256, 65535);
    for (int64_t p = 0; p < passes; p++)
        op_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}}
"""
CPP = "torch::Tensor op_fwd(torch::Tensor x, int64_t passes);"
ext = load_inline(name="sb_cmp_{name}", cpp_sources=CPP, cuda_sources=CUDA, functions=["op_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.op_fwd(x, {passes})
'''
CPU = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor op_fwd(torch::Tensor x, int64_t passes) {{
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float *in = xc.data_ptr<float>();
    float *out = y.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t p = 0; p < passes; p++)
        for (int64_t i = 0; i < n; i++) {{
            float v = in[i];
            out[i] = {c};
        }}
    return y;
}}
"""
ext = load_inline(name="sb_cmp_cpu_{name}", cpp_sources=CPP, functions=["op_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.op_fwd(x, {passes})
'''
lvl = os.path.join(state, "problems", "level1")
os.makedirs(lvl, exist_ok=True)
for agent in ("fast", "twin", "slow"):
    os.makedirs(os.path.join(state, "files", agent), exist_ok=True)
tmpl = CUDA if device == "cuda" else CPU
for i, (name, expr, c) in enumerate(OPS, 1):
    with open(os.path.join(lvl, "%d_%s.py" % (i, name)), "w") as f:
        f.write(PROBLEM.format(expr=expr, dim=dim))
    fname = "level_1_problem_%d_sample_0_kernel.py" % i
    fast = tmpl.format(name=name.lower() + "2", c=c, passes=2)
    for agent, text in (("fast", fast), ("twin", fast), ("slow", tmpl.format(name=name.lower() + "3", c=c, passes=3))):
        with open(os.path.join(state, "files", agent, fname), "w") as f:
            f.write(text)
EOF

export STITCHBENCH_CACHE=${STITCHBENCH_CACHE:-$state/cache}
common=(--kernelbench-root "$state/problems" --device "$device")
# shellcheck disable=SC2206
extra=(${SB_CMP_EVAL_ARGS:-})
summary=$state/bench-compare.md
: >"$summary"
say() { printf '%s\n' "$*" | tee -a "$summary"; }
start=$(date +%s)
for agent in fast twin slow; do
	"$SB" eval --samples "$state/files/$agent" -o "$state/$agent.jsonl" "${common[@]}" "${extra[@]}" \
		>"$state/$agent.out" 2>"$state/$agent.log"
	rc=$?
	if [ $rc -gt 1 ]; then
		echo "bench-compare: eval --samples of $agent failed (exit $rc); see $state/$agent.log" >&2
		tail -5 "$state/$agent.log" >&2
		exit 2
	fi
done
say "### bench-compare: $(date -u '+%F %H:%M UTC'), device $device$( [ "$device" = cuda ] && printf ', %s' "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)")"
say ""
say "Command: \`SB_CMP_REPEATS=$repeats SB_CMP_DIM=$dim${SB_CMP_EVAL_ARGS:+ SB_CMP_EVAL_ARGS='$SB_CMP_EVAL_ARGS'} make bench-compare\`; $($SB --version | head -1); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
say ""
rm -rf "${state:?}/run"
for x in fast twin slow; do
	"$SB" import "$state/run" "$state/$x.jsonl" --agent "$x" --kernelbench-root "$state/problems" \
		--set "eval.device=$device" >>"$state/import.log" 2>&1 ||
		{ echo "bench-compare: import of $x failed; see $state/import.log" >&2; exit 2; }
done
# the first call judges the repeats, the second finds them stored
for fmt in text json; do
	"$SB" metrics "$state/run" --repeats "$repeats" $( [ $fmt = json ] && echo --json) \
		>"$state/metrics.$fmt" 2>"$state/metrics.$fmt.log" ||
		{ echo "bench-compare: metrics failed; see $state/metrics.$fmt.log" >&2; tail -5 "$state/metrics.$fmt.log" >&2; exit 2; }
done
say '```'
tee -a "$summary" <"$state/metrics.text"
say '```'
say ""
fails=0
check() { # check A B WANT: WANT is "no difference" or "faster" (A against B)
	local a=$1 b=$2 want=$3 got
	got=$("$PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))
for p in m.get("pairs", []):
    if {p["a"], p["b"]} == {sys.argv[2], sys.argv[3]}:
        w = p["speed"]
        if p["a"] != sys.argv[2]:
            w = {"faster": "slower", "slower": "faster"}.get(w, w)
        print("%s\t%s" % (w, p["sentence"]))' "$state/metrics.json" "$a" "$b")
	if [ "${got%%$'\t'*}" = "$want" ]; then
		say "PASS: $a against $b: $want (expected). ${got#*$'\t'}"
	else
		say "FAIL: $a against $b: expected $want, got: ${got:-no pair in the metrics}"
		fails=$((fails + 1))
	fi
}
check fast twin "no difference"
check fast slow faster
check twin slow faster
noisy=$(cat "$state"/{fast,twin,slow}.jsonl | grep -c '"noisy": *true' || true)
say "Verdicts with a noise warning: $noisy of $(cat "$state"/{fast,twin,slow}.jsonl | wc -l). Wall time: $(( $(date +%s) - start )) s."
[ -n "${OUT:-}" ] && cp "$summary" "$OUT/bench-compare.md"
[ "$fails" -eq 0 ]
