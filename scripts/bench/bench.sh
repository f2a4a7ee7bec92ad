#!/usr/bin/env bash
# bench.sh - `make bench`: the verifier's turnaround and timing fidelity on a GPU node, as Markdown
# tables for BENCHMARKS.md. Nothing here asserts: it measures, and says how.
#
#   SB_BENCH_PARTS=build,stages,span,batch   the parts (default: all; `make bench-eval`: build,stages)
#     build   cold and warm builds of typical load_inline candidates, with ninja's steps, and
#             load_inline's own defaults for the trivial one
#     stages  one candidate's verdict seconds by stage: reference uncached, then everything cached,
#             then the core turnaround (static checks, correctness, timing; no torch.compile or profile)
#     span    per bundled problem, the reference's CUDA-event time against its CUPTI kernel span
#     batch   every bundled problem's reference as a candidate, 3 times each in fresh processes, as one
#             `eval --samples` batch: speedup spread around 1.0, CV of the medians, candidates per
#             hour, and the share of the batch's wall time the GPU was idle (nvidia-smi, 200 ms)
#     large   (only when named) one large output: L1/2's ReLU widened to 4096 x SB_BENCH_LARGE_DIM fp32, in each
#             eval.exchange mode of SB_BENCH_LARGE_EXCHANGE (default "shared files")
#             (98304: 1.6 GB in and out; KernelBench's level-1 sizes are 4x that), the reference as the
#             candidate, reference uncached then cached: where the output files cost (about 12 GB of disk)
#     cpucall (only when named, with SB_BENCH_CPU=1) one CPU evaluation at the bundled suite's real size:
#             `eval relu_cpp_ok.py --problem L1/2` (4096 x 4096 fp32), build and reference cached, three
#             times: the verdict's total, the command's wall time, and the seconds the workers' `run`
#             calls spent on the inputs' fingerprints (from the trace); then relu_cpp_wrong.py with the
#             outputs shared (eval.exchange=shared), where the reference worker compares them
#   SB_BENCH_PROBLEMS=L1/2,L2/1   only these bundled problems (span, batch); default: all
#   SB_BENCH_QUICK=1              build: only the defaults' builds, not those they are compared with (as
#                                 written, lean, load_inline's own defaults: ~2.5 min more on a GPU node)
#   SB_BENCH_CPU=1                measure on the CPU (the numbers are then CPU numbers and say so)
#   SB_BENCH_SETTLE_S=150         first import torch again and again until the node has been up this long:
#                                 a freshly started node imports torch in 3-5.6 s for its first minute
#                                 or two, 1.6-2.2 s after (BENCHMARKS.md); 0 measures it as it comes
#
# The tables go to stdout and to $OUT/bench.md (a device call's output folder) or build/bench/, with the
# traces (STITCHBENCH_TRACE=1) of the stages' runs and of the batch beside them.
set -u
cd "$(dirname "$0")/../.."
SB=bin/stitchbench
if [ "${SB_BENCH_CPU:-0}" != 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "bench: skipped: no NVIDIA GPU (set SB_BENCH_CPU=1 to measure on the CPU)"
	exit 0
fi
parts=",${SB_BENCH_PARTS:-build,stages,span,batch},"
want() { [[ "$parts" == *",$1,"* ]]; }
dev=cuda
[ "${SB_BENCH_CPU:-0}" = 1 ] && dev=cpu
py=$($SB doctor 2>/dev/null | awk '$1=="ok" && $2=="python" {print $3}')
py=${py:-python3}
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); hw=${hw:-cpu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
outdir=${OUT:-build/bench}
mkdir -p "$outdir"
md="$outdir/bench.md"
: >"$md"
say() { printf '%s\n' "$*" | tee -a "$md"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

# the bundled problems to measure, as "level id path"
problems=()
for f in kernelbench/suite/level*/[0-9]*_*.py; do
	l=$(basename "$(dirname "$f")" | tr -dc 0-9); id=$(basename "$f" | cut -d_ -f1)
	if [ -n "${SB_BENCH_PROBLEMS:-}" ] && [[ ",$SB_BENCH_PROBLEMS," != *",L$l/$id,"* ]]; then continue; fi
	problems+=("$l $id $f")
done

say "## make bench, $(date -u +%F), $hw, device $dev"
say ""
say "Command: \`SB_BENCH_PARTS=${SB_BENCH_PARTS:-build,stages,span,batch}${SB_BENCH_PROBLEMS:+ SB_BENCH_PROBLEMS=$SB_BENCH_PROBLEMS} make bench\`"
say ""

# the node's warm-up: torch's import times while it settles, in the table's header
settle=${SB_BENCH_SETTLE_S:-150}
imports=()
up() { cut -d' ' -f1 /proc/uptime 2>/dev/null | cut -d. -f1; }
while [ "$settle" -gt 0 ] && [ "$(up || echo "$settle")" -lt "$settle" ]; do
	t=$(now); "$py" -c 'import torch' >/dev/null 2>&1; imports+=("$(since "$t")")
done
t=$(now); "$py" -c 'import torch' >/dev/null 2>&1; imports+=("$(since "$t")")
say "Node up $(up) s; \`import torch\` took ${imports[*]} s (the last just before measuring; SB_BENCH_SETTLE_S=$settle)."
say ""

if [ "$dev" = cuda ]; then
	cands=(tests/fixtures/candidates/cuda/relu_cuda_ok.py tests/adversarial/honest/gemm_cublas.py
	       tests/adversarial/honest/softmax_fstring_source.py)
else
	cands=(tests/fixtures/candidates/relu_cpp_ok.py)
fi
# corpus files may carry a shared source behind a marker: lay each out as the whole candidate
for i in "${!cands[@]}"; do
	c="$work/$(basename "${cands[$i]}")"
	"$py" tests/adversarial/run_corpus.py show "${cands[$i]}" >"$c" 2>/dev/null || cp "${cands[$i]}" "$c"
	cands[$i]=$c
done

# --- (a) builds ----------------------------------------------------------------------------------
if want build; then
	say "### (a) Cold and warm builds"
	say ""
	say "\`scripts/gpu/prebuild.py\`: each build in its own process as the evaluator's worker builds it (device arch only, MAX_JOBS=2), seconds per ninja step in brackets."
	say ""
	say '```'
	if [ "${SB_BENCH_QUICK:-0}" != 1 ]; then # the builds the defaults are compared with
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-written" --jobs 1 --headers as-written --no-split-nvcc "${cands[0]}" 2>&1 | sed 's/^/cold, as written, nvcc whole (eval.lite_headers = eval.lean_headers = eval.split_nvcc = false): /' | tee -a "$md"
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-lean" --jobs 1 --headers lean --no-split-nvcc "${cands[0]}" 2>&1 | sed 's/^/cold, lean, nvcc whole: /' | tee -a "$md"
	fi
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-one" --jobs 1 --no-split-nvcc "${cands[0]}" 2>&1 | sed 's/^/cold, lite, nvcc whole: /' | tee -a "$md"
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-split" --jobs 1 "${cands[0]}" 2>&1 | sed 's/^/cold, alone (the defaults: lite, nvcc split): /' | tee -a "$md"
	[ "${SB_BENCH_QUICK:-0}" = 1 ] ||
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-lean-split" --jobs 1 --headers lean "${cands[0]}" 2>&1 | sed 's/^/cold, lean, nvcc split (eval.lite_headers = false): /' | tee -a "$md"
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-all" --jobs "${#cands[@]}" "${cands[@]}" 2>&1 | sed 's/^/cold, parallel: /' | tee -a "$md"
	"$py" scripts/gpu/prebuild.py --device "${dev/cuda/cuda:0}" --ext-dir "$work/ext-all" --jobs 1 "${cands[@]}" 2>&1 | sed 's/^/warm:           /' | tee -a "$md"
	say '```'
	if [ "$dev" = cuda ] && [ "${SB_BENCH_QUICK:-0}" != 1 ]; then
		t=$(now)
		d=$(cd "$work" && TORCH_EXTENSIONS_DIR="$work/defaults" "$py" -c '
import importlib.util, os, sys
os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
spec = importlib.util.spec_from_file_location("c", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
' "${cands[0]}" >/dev/null 2>&1 && since "$t")
		say ""
		say "load_inline's defaults (every arch torch was built for, its own cache folder), $(basename "${cands[0]}"): ${d:-failed} s"
	fi
	say ""
fi

# --- (b) turnaround by stage ---------------------------------------------------------------------
stage_row() { # label, verdict json file, wall seconds
	"$py" - "$1" "$2" "$3" <<'PY'
import json, sys
label, path, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    v = json.load(open(path))
except ValueError:
    print("| %s | no verdict | | | | | | %.1f |" % (label, wall)); sys.exit()
s = v["seconds"]
cols = ["static", "reference", "build", "correctness", "robust", "reference_worker", "timing", "checks", "profile", "finish"]
rest = s["total"] - sum(s.get(k) or 0 for k in cols)
print("| %s | %s | %s | %.2f | %.2f | %.1f |" % (label, v["status"], " | ".join("%.2f" % (s.get(k) or 0) for k in cols),
                                            rest, s["total"], wall))
PY
}
if want stages; then
	say "### (b) Verifier turnaround by stage"
	say ""
	say "\`stitchbench eval $(basename "${cands[0]}") --problem L1/2 --json\` (default trials; the build cache warm from (a) when it ran). Columns: the verdict's \`seconds\` (docs/verdict.md); \"rest\": the total less the stages; \"wall\": the whole command, the parent's own start-up included."
	say ""
	say "| run | status | static | reference | build | correctness | robust | reference worker | timing | checks | profile | finish | rest | total | wall |"
	say "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	export STITCHBENCH_CACHE="$work/cache"
	mkdir -p "$STITCHBENCH_CACHE"
	[ -d "$work/ext-all" ] && cp -r "$work/ext-all" "$STITCHBENCH_CACHE/ext"
	k=0
	# the last three runs are the core turnaround: static checks, correctness and the timed pairs, nothing else
	for run in "reference uncached" "all cached" "all cached, again" "all cached, no torch.compile, no profile" \
		"the same, again" "the same, a third time"; do
		k=$((k + 1))
		more=()
		[ $k -ge 4 ] && more=(--no-compile --set eval.profile=false)
		t=$(now)
		# each run's trace (worker requests and their times, docs: README, STITCHBENCH_TRACE) beside the table
		STITCHBENCH_TRACE=1 $SB eval "${cands[0]}" --problem L1/2 --device "$dev" --json "${more[@]}" >"$work/v.json" \
			2>"$outdir/bench-stages-trace-$k.log"
		w=$(since "$t")
		stage_row "$run" "$work/v.json" "$w" | tee -a "$md"
	done
	say ""
	say "Each run's \`STITCHBENCH_TRACE=1\` output: \`bench-stages-trace-{1..6}.log\` beside this file."
	say ""
fi

# --- one CPU evaluation at the real size (only when named) ---------------------------------------
if want cpucall; then
	say "### One CPU evaluation of L1/2 at 4096 x 4096"
	say ""
	say "\`STITCHBENCH_TRACE=1 stitchbench eval tests/fixtures/candidates/CAND.py --problem L1/2 --device cpu --trials 2 --perf-trials 3 --set eval.exchange=MODE --json\`, its own cache warmed by a first run. \"fingerprint\": the seconds the workers' \`run\` calls spent on the inputs' checksums, summed over both workers (the trace's \`run\` lines). A wrong candidate with the outputs shared has the reference worker compare 16 M elements that differ in their bits (\`exchange.compare_one\`'s whole path)."
	say ""
	say "| candidate | exchange | run | status | verdict total s | wall s | run calls | fingerprint s |"
	say "|---|---|---|---|---|---|---|---|"
	export STITCHBENCH_CACHE="$work/cache-cpucall"
	for pair in relu_cpp_ok:files relu_cpp_wrong:shared; do
		cand=${pair%%:*} mode=${pair#*:}
		cpu_eval() { STITCHBENCH_TRACE=1 $SB eval "tests/fixtures/candidates/$cand.py" --problem L1/2 --device cpu \
			--trials 2 --perf-trials 3 --set eval.exchange="$mode" --json >"$work/v.json" 2>"$work/cpucall.log"; }
		cpu_eval
		for k in 1 2 3; do
			t=$(now)
			cpu_eval
			w=$(since "$t")
			cp "$work/cpucall.log" "$outdir/bench-cpucall-$cand-$mode-$k.log"
			"$py" - "$cand $mode $k" "$work/v.json" "$w" "$work/cpucall.log" <<'PY' | tee -a "$md"
import json, re, sys
k, path, wall, log = sys.argv[1:]
v = json.load(open(path))
fp = [float(x) for x in re.findall(r"run took [0-9.]+ s \(.*?fingerprint ([0-9.]+)", open(log).read())]
print("| %s | %s | %.2f | %s | %d | %.2f |" % (" | ".join(k.split()), v["status"], v["seconds"]["total"], wall, len(fp),
                                             sum(fp)))
PY
		done
	done
	say ""
	unset STITCHBENCH_CACHE
fi

# --- a large output (only when named) -----------------------------------------------------------
if want large; then
	dim=${SB_BENCH_LARGE_DIM:-98304}
	suite="$work/large"
	mkdir -p "$suite/level1"
	sed -e "s/^DIM = 4096\$/DIM = $dim/" kernelbench/suite/level1/2_ReLU.py >"$suite/level1/2_ReLU.py"
	sed -E 's/\bModel\b/ModelNew/g' "$suite/level1/2_ReLU.py" >"$suite/cand.py"
	mb=$(awk -v d="$dim" 'BEGIN {printf "%.0f", 4096 * d * 4 / 1048576}')
	say "### A large output: L1/2 at 4096 x $dim fp32 ($mb MiB in and out), the reference as the candidate"
	say ""
	say "\`stitchbench eval cand.py --problem L1/2 --kernelbench-root SUITE --no-compile --set eval.profile=false --set checks.static=false --json\`, its own cache. Columns as in (b)."
	say ""
	say "With KernelBench's trial counts: 5 correctness trials, 100 timed pairs (\`--trials 5 --perf-trials 100 --set eval.rse_target=0\`), each exchange mode in \`SB_BENCH_LARGE_EXCHANGE\` (default \`shared files\`; files needs about 10x the output's size free on disk)."
	say ""
	say "| exchange, run | status | static | reference | build | correctness | robust | reference worker | timing | checks | profile | finish | rest | total | wall |"
	say "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	k=0
	for mode in ${SB_BENCH_LARGE_EXCHANGE:-shared files}; do
		for run in "reference uncached" "reference cached"; do
			k=$((k + 1))
			t=$(now)
			STITCHBENCH_CACHE="$work/cache-large-$mode" STITCHBENCH_TRACE=1 $SB eval "$suite/cand.py" --problem L1/2 \
				--kernelbench-root "$suite" --device "$dev" --json --no-compile --set eval.profile=false \
				--set checks.static=false --set eval.exchange="$mode" --trials 5 --perf-trials 100 --set eval.rse_target=0 \
				>"$work/v.json" 2>"$outdir/bench-large-trace-$k.log"
			stage_row "$mode, $run" "$work/v.json" "$(since "$t")" | tee -a "$md"
		done
		rm -rf "$work/cache-large-$mode" # the files mode's reference outputs: 7 times the output's size
	done
	say ""
	say "Traces: \`bench-large-trace-{1..$k}.log\` beside this file (each output's exchange and comparison)."
	say ""
fi

# --- (d) CUDA events against the CUPTI span ------------------------------------------------------
if want span && [ "$dev" = cuda ]; then
	say "### (d) CUDA-event time against the CUPTI kernel span (the reference, \`stitchbench profile --reference\`)"
	say ""
	say "| problem | events us | kernel sum us | span us | events / span | kernels per call |"
	say "|---|---|---|---|---|---|"
	for p in "${problems[@]}"; do
		read -r l id _ <<<"$p"
		$SB profile --reference --problem "L$l/$id" --json 2>/dev/null | "$py" -c '
import json, sys
v = json.load(sys.stdin); p = v["profile"]; n = max(1, p.get("calls") or 1)
k = sum(r["calls"] for r in p["kernels"] if r.get("kind", "kernel") == "kernel")
print("| %s | %.1f | %.1f | %.1f | %.3f | %.1f |" % (sys.argv[1], p["event_us"], p["kernel_sum_us"], p["span_us"],
      p["event_us"] / p["span_us"] if p["span_us"] else float("nan"), k / n))' "L$l/$id" 2>/dev/null | tee -a "$md" ||
			say "| L$l/$id | failed | | | | |"
	done
	say ""
fi

# --- (c) and (e): the fidelity batch ---------------------------------------------------------------
if want batch; then
	b="$work/batch"
	mkdir -p "$b"
	for p in "${problems[@]}"; do
		read -r l id f <<<"$p"
		for s in 0 1 2; do sed -E 's/\bModel\b/ModelNew/g' "$f" >"$b/level_${l}_problem_${id}_sample_${s}_kernel.py"; done
	done
	n=$(ls "$b"/*.py | wc -l)
	export STITCHBENCH_CACHE="$work/cache"
	util_pid=
	if [ "$dev" = cuda ]; then
		nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 200 >"$work/util.log" 2>/dev/null &
		util_pid=$!
	fi
	t=$(now)
	# the reference as a candidate is H01/H04 by design: static checks off, only timing is under test
	# traced: what each evaluation waited for goes straight to bench-batch-trace.log (one stderr line per
	# worker request)
	STITCHBENCH_TRACE=1 $SB eval --samples "$b" -o "$b/v.jsonl" --device "$dev" --no-compile --set checks.static=false \
		--set eval.profile=false >"$outdir/bench-batch-trace.log" 2>&1
	wall=$(since "$t")
	[ -n "$util_pid" ] && kill "$util_pid" 2>/dev/null
	say "### (c) Timing fidelity and (e) throughput: each problem's reference as a candidate, 3 times"
	say ""
	say "One \`stitchbench eval --samples\` batch of $n candidates (static checks off, default trials), $wall s of wall time."
	say ""
	"$py" - "$b/v.jsonl" "$wall" "$work/util.log" <<'PY' | tee -a "$md"
import collections, json, os, statistics, sys
path, wall, util = sys.argv[1], float(sys.argv[2]), sys.argv[3]
by = collections.defaultdict(list)


def clock_range(v):
    c = (v.get("timing") or {}).get("gpu_clock") or {}
    return "%s-%s" % (c["sm_mhz_min"], c["sm_mhz_max"]) if c.get("available") else None


for line in open(path):
    v = json.loads(line)
    by[v["problem"]["ref"]].append(v)
print("| problem | eager median us | speedups | worst abs(s-1) | CV of candidate medians | turnaround s | SM MHz |")
print("|---|---|---|---|---|---|---|")
worst_all, within1, within2, cvs, turn = [], 0, 0, [], []
for ref in sorted(by, key=lambda r: (int(r[1]), int(r.split("/")[1]))):
    vs = by[ref]
    sps = [v["speedup"]["vs_eager"] for v in vs if v.get("speedup")]
    meds = [v["timing"]["candidate"]["median_us"] for v in vs if v.get("timing")]
    worst = max(abs(s - 1) for s in sps) if sps else float("nan")
    cv = statistics.pstdev(meds) / statistics.mean(meds) if len(meds) > 1 else float("nan")
    clk = " ".join(x for x in map(clock_range, vs) if x)
    eager = statistics.median(v["timing"]["eager"]["median_us"] for v in vs if v.get("timing")) if meds else float("nan")
    tt = [v["seconds"]["total"] for v in vs]
    turn += tt
    worst_all += [abs(s - 1) for s in sps]
    cvs.append((eager, cv))
    print("| %s | %.1f | %s | %.4f | %.2f%% | %.1f | %s |" % (ref, eager, " ".join("%.4f" % s for s in sps) or
          ",".join(v["status"] for v in vs), worst, 100 * cv, statistics.median(tt), clk or "-"))
n = len(worst_all)
print()
if n:
    print("Speedups within 1%% of 1.0: %d of %d (%.0f%%); within 2%%: %d (%.0f%%); worst %.4f. CV of the medians "
          "<= 1%% for problems of 50 us and more: %d of %d." % (
              sum(w <= 0.01 for w in worst_all), n, 100.0 * sum(w <= 0.01 for w in worst_all) / n,
              sum(w <= 0.02 for w in worst_all), 100.0 * sum(w <= 0.02 for w in worst_all) / n, max(worst_all),
              sum(1 for e, c in cvs if e >= 50 and c <= 0.01), sum(1 for e, c in cvs if e >= 50)))
total = sum(len(v) for v in by.values())
print("Throughput: %d candidates in %.0f s, %.0f per hour; median turnaround %.1f s." % (
    total, wall, 3600.0 * total / wall if wall else 0, statistics.median(turn) if turn else float("nan")))
if os.path.exists(util) and os.path.getsize(util):
    u = [int(x) for x in open(util).read().split() if x.strip().isdigit()]
    if u:
        print("GPU idle (utilization 0 in nvidia-smi's 200 ms samples): %.0f%% of %d samples." % (
            100.0 * sum(x == 0 for x in u) / len(u), len(u)))
PY
	say ""
	[ -n "${OUT:-}" ] && cp "$b/v.jsonl" "$OUT/bench-batch.jsonl" 2>/dev/null
fi
echo "bench: tables written to $md"
