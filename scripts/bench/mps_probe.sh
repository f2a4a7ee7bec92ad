#!/usr/bin/env bash
# mps_probe.sh - does CUDA MPS take away a launch-bound model's per-process GPU time (BENCHMARKS.md, a
# launch-bound model's GPU time)? Under MPS every client process submits through one server
# context, so the per-process state that puts L3/4 at ~240 or ~256 us may be gone. Runs
# process_spread.py on the problems given (default L3/4 and L3/3), P processes each, first without MPS,
# then with a private MPS control daemon (its own pipe and log folders under a temporary folder, stopped
# at the end; the GPU's compute mode is not touched). Prints both tables. Not run by any test.
#
# Usage (a GPU node): bash scripts/bench/mps_probe.sh [P] [PROBLEM.py ...]
set -u
cd "$(dirname "$0")/../.."
P=${1:-6}
shift 2>/dev/null || true
probs=("$@")
[ ${#probs[@]} -gt 0 ] || probs=(kernelbench/suite/level3/4_Deep_Narrow_MLP.py kernelbench/suite/level3/3_Transformer_Block.py)
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "mps_probe: skipped: no NVIDIA GPU"
	exit 0
fi
if ! command -v nvidia-cuda-mps-control >/dev/null; then
	echo "mps_probe: skipped: nvidia-cuda-mps-control is not installed on this node"
	exit 0
fi
dir=$(mktemp -d)
stop_mps() { CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log" nvidia-cuda-mps-control <<<quit >/dev/null 2>&1; }
trap 'stop_mps; rm -rf "$dir"' EXIT
for p in "${probs[@]}"; do
	echo "== $p, without MPS"
	python3 scripts/bench/process_spread.py "$p" "$P" 150
done
mkdir -p "$dir/pipe" "$dir/log"
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"
if ! nvidia-cuda-mps-control -d; then
	echo "mps_probe: the MPS control daemon did not start"
	exit 1
fi
for p in "${probs[@]}"; do
	echo "== $p, with MPS"
	python3 scripts/bench/process_spread.py "$p" "$P" 150
done
echo "== MPS server log (tail)"
tail -5 "$dir/log/server.log" 2>/dev/null || echo "(no server log: did any client connect?)"
