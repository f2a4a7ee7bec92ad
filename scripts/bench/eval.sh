#!/usr/bin/env bash
# eval.sh - `make bench-eval`: the evaluator's cold build time and warm turnaround, printed as a
# Markdown table for BENCHMARKS.md. Meant for a GPU node; SB_BENCH_CPU=1 runs it on the CPU (its
# numbers are then CPU numbers and say so). Nothing here asserts: it measures.
set -u
cd "$(dirname "$0")/../.."
SB=bin/stitchbench
if [ "${SB_BENCH_CPU:-0}" != 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "bench-eval: skipped: no NVIDIA GPU (set SB_BENCH_CPU=1 to measure on the CPU)"
	exit 0
fi
dev=cuda; fix=tests/fixtures/candidates/cuda/relu_cuda_ok.py; extra=()
if [ "${SB_BENCH_CPU:-0}" = 1 ]; then dev=cpu; fix=tests/fixtures/candidates/relu_cpp_ok.py; extra=(--perf-trials 10); fi
py=$($SB doctor 2>/dev/null | awk '$1=="ok" && $2=="python" {print $3}')
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); hw=${hw:-cpu}
work=$(mktemp -d)
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

echo "## bench-eval, $(date -u +%F), $hw, device $dev"
echo
# (a) cold build: our build (arch-only, cache dir keyed by source) against load_inline's defaults
export STITCHBENCH_CACHE="$work/cache"
t=$(now); $SB eval "$fix" --problem L1/2 --device "$dev" --trials 1 --perf-trials 0 >/dev/null 2>&1; ours_total=$(since "$t")
ours_build=$("$py" -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["seconds"]["build"])' \
	< <(STITCHBENCH_CACHE="$work/cache2" $SB eval "$fix" --problem L1/2 --device "$dev" --trials 1 --perf-trials 0 --json 2>/dev/null))
defaults=$(cd "$work" && "$py" - "$OLDPWD/$fix" <<'PY' 2>/dev/null
import importlib.util, os, sys, tempfile, time
os.environ["TORCH_EXTENSIONS_DIR"] = tempfile.mkdtemp()
os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
t = time.time()
spec = importlib.util.spec_from_file_location("c", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print("%.1f" % (time.time() - t))
PY
)
echo "| cold build of $(basename "$fix") | stitchbench | load_inline defaults |"
echo "|---|---|---|"
echo "| seconds | $ours_build (eval total $ours_total) | ${defaults:-failed} |"
echo
# (b) warm turnaround: the reference as a candidate, caches warm, default trial counts
# (the static checks are off: the reference copied as a candidate is exactly what H01 rejects)
echo "| problem | warm turnaround s (trials 5, timing) | speedup |"
echo "|---|---|---|"
for f in kernelbench/suite/level1/[0-9]*_*.py; do
	id=$(basename "$f" | cut -d_ -f1)
	sed -E 's/\bModel\b/ModelNew/g' "$f" >"$work/cand_$id.py"
	$SB eval "$work/cand_$id.py" --problem "L1/$id" --device "$dev" "${extra[@]}" --no-compile --set checks.static=false >/dev/null 2>&1 # warms the caches
	t=$(now)
	sp=$($SB eval "$work/cand_$id.py" --problem "L1/$id" --device "$dev" "${extra[@]}" --no-compile --set checks.static=false --json 2>/dev/null |
		"$py" -c 'import json,sys; v=json.load(sys.stdin); print("%.4f" % v["speedup"]["vs_eager"] if v["speedup"] else v["status"])')
	echo "| L1/$id | $(since "$t") | $sp |"
done
rm -rf "$work"
