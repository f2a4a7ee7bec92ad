#!/usr/bin/env bash
# fork_batch.sh - the fidelity batch (every bundled problem's reference as a candidate, 3 times; the options of
# gpu-check.sh's fidelity section) once per eval.fork_server setting, on a GPU node, each with a fresh cache:
# wall time, GPU idle (nvidia-smi utilization 0 in samples 100 ms apart), speedups within 1% and 2% of 1.0,
# the level-1 evaluations' seconds.total, and the seconds spent waiting for a worker's `hello`.
#   SB_FORK_MODES="true false"   the settings to run, in order (default: both)
# Writes util-*.log, trace-*.log (STITCHBENCH_TRACE) and v-*.jsonl under build/fork_batch (and $OUT when set).
set -u
cd "$(dirname "$0")/../.."
SB=$PWD/bin/stitchbench
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "fork_batch: skipped: no NVIDIA GPU"
	exit 0
fi
W=$PWD/build/fork_batch
rm -rf "$W"
mkdir -p "$W/all"
for f in kernelbench/suite/level*/[0-9]*_*.py; do
	l=$(basename "$(dirname "$f")" | tr -dc 0-9); id=$(basename "$f" | cut -d_ -f1)
	for s in 0 1 2; do sed -E 's/\bModel\b/ModelNew/g' "$f" >"$W/all/level_${l}_problem_${id}_sample_${s}_kernel.py"; done
done
python3 -c "import torch"; python3 -c "import torch" # the node's page cache, as for every later import
opts=(--no-compile --trials 2 --set checks.static=false --set eval.profile=false)
batch() {
	local mode=$1 u t0
	export STITCHBENCH_CACHE=$W/c-$mode
	nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -i 0 -lms 100 >"$W/util-$mode.log" 2>/dev/null &
	u=$!
	t0=$(date +%s.%N)
	STITCHBENCH_TRACE=1 timeout 600 "$SB" eval --samples "$W/all" -o "$W/v-$mode.jsonl" "${opts[@]}" --set eval.fork_server="$mode" \
		>"$W/trace-$mode.log" 2>&1
	echo "batch fork_server=$mode rc=$? wall $(python3 -c "print('%.1f' % ($(date +%s.%N) - $t0))") s"
	kill "$u"
	python3 - "$W/util-$mode.log" "$W/v-$mode.jsonl" "$mode" "$W/trace-$mode.log" <<'PY'
import collections, json, re, sys
u = [l.split(",") for l in open(sys.argv[1]) if "," in l]
v = [int(x[1]) for x in u if x[1].strip().isdigit()]
print(sys.argv[3], "util samples", len(v), "idle %.0f%%" % (100.0 * sum(x == 0 for x in v) / max(1, len(v))),
      "mean util %.1f" % (sum(v) / max(1, len(v))))
by = collections.defaultdict(list)
tot, forked, n = [], 0, 0
for line in open(sys.argv[2]):
    j = json.loads(line)
    n += 1
    forked += j.get("candidate_worker_forked", False)
    by[j["problem"]["ref"]].append(j["speedup"]["vs_eager"] if j.get("speedup") else j["status"])
    if j["problem"]["ref"].startswith("L1/"):
        tot.append(j["seconds"]["total"])
n1 = sum(1 for x in by.values() for s in x if isinstance(s, float) and abs(s - 1) <= 0.01)
n2 = sum(1 for x in by.values() for s in x if isinstance(s, float) and abs(s - 1) <= 0.02)
print(sys.argv[3], "verdicts", n, "forked", forked, "within1", n1, "within2", n2)
tot.sort()
if tot:
    print(sys.argv[3], "L1 totals: median %.2f, <=3s %d of %d, max %.2f" % (tot[len(tot) // 2], sum(t <= 3 for t in tot),
                                                                         len(tot), tot[-1]))
w = [float(m.group(1)) for m in re.finditer(r"waited ([0-9.]+) s for the spare worker's hello", open(sys.argv[4]).read())]
print(sys.argv[3], "waited for spare hello: %.1f s total over %d" % (sum(w), len(w)))
for k in sorted(by):
    print("  ", k, " ".join("%.4f" % s if isinstance(s, float) else s for s in by[k]))
PY
}
for m in ${SB_FORK_MODES:-true false}; do batch "$m"; done
if [ -n "${OUT:-}" ]; then (cd "$W" && tar czf "$OUT/fork_batch.tgz" util-*.log trace-*.log v-*.jsonl); fi
