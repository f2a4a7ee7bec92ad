#!/usr/bin/env bash
# kb_agree.sh - stitchbench under eval.preset=kernelbench against KernelBench's own evaluator, on a GPU node:
# the same generations folder judged by one `eval --samples` batch and by the evaluator's driver (one fresh
# process per candidate), then scripts/bench/kb_compare.py's table. The driver runs three passes. "check"
# judges correctness only (no timing) of every candidate, SB_KB_JOBS processes at once (level 1, whose
# inputs KernelBench draws on the CPU in gigabytes, in SB_KB_L1_JOBS), and leaves every build in the
# shared build root. "kb" and "kb2" then time the candidates "check" called correct, one process at a
# time on an otherwise idle GPU, from the warm builds: two runs of the evaluator, whose ratio is its own
# repeat spread, against which the comparison judges our speedups.
#
# With our verdicts already in OUTDIR, "kb" and "kb2" time only the candidates both sides call correct.
#
#   scripts/bench/kb_agree.sh CORPUS KB_CHECKOUT KBEVAL_PY OUTDIR
#   SB_KB_PARTS=ours,check,kb,kb2 (default all); SB_KB_JOBS=8; SB_KB_L1_JOBS=3; SB_KB_FILES='level_2_*'
set -u
[ $# -eq 4 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
corpus=$(cd "$1" && pwd) kb=$(cd "$2" && pwd) kbeval=$3 out=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
parts=",${SB_KB_PARTS:-ours,check,kb,kb2},"
mkdir -p "$out"
files=()
for pat in ${SB_KB_FILES:-level_*}; do
	for f in "$corpus"/$pat; do case $f in *_kernel.py) files+=("$f") ;; esac; done
done
[ ${#files[@]} -gt 0 ] || { echo "kb_agree: no candidates in $corpus" >&2; exit 2; }
say() { echo "[$(date -u +%T)] $*"; }

if [[ $parts == *,ours,* ]]; then
	gen=$(mktemp -d)
	for f in "${files[@]}"; do ln -s "$f" "$gen/$(basename "$f")"; done
	say "ours: ${#files[@]} candidates, eval.preset=kernelbench"
	t0=$(date +%s)
	"$root/bin/stitchbench" eval --samples "$gen" -o "$out/ours.jsonl" --kernelbench-root "$kb" --no-compile \
		--set eval.preset=kernelbench >"$out/ours.log" 2>&1
	say "ours: exit $?, $(( $(date +%s) - t0 )) s"
fi

build=${SB_KB_BUILD:-/tmp/kbbuild}
# N processes of the driver's correctness pass, candidate i in process i mod N: N DST CAND... (pids in $pids)
spread() {
	local n=$1 dst=$2 i k; shift 2
	local all=("$@")
	for ((i = 0; i < n && i < ${#all[@]}; i++)); do
		local part=()
		for ((k = i; k < ${#all[@]}; k += n)); do part+=("${all[$k]}"); done
		python3 "$kbeval" --kb "$kb" --out "$dst.$i" --build-root "$build" --perf 0 "${part[@]}" >/dev/null 2>&1 &
		pids+=($!)
	done
}
# correctness of every candidate, in parallel: FILE CAND...
kb_check() {
	local dst=$1 l1=() rest=(); shift
	pids=()
	for f in "$@"; do case $(basename "$f") in level_1_*) l1+=("$f") ;; *) rest+=("$f") ;; esac; done
	[ ${#l1[@]} -gt 0 ] && spread "${SB_KB_L1_JOBS:-3}" "$dst.a" "${l1[@]}"
	[ ${#rest[@]} -gt 0 ] && spread "${SB_KB_JOBS:-8}" "$dst.b" "${rest[@]}"
	for p in "${pids[@]}"; do wait "$p"; done
	cat "$dst".a.* "$dst".b.* 2>/dev/null >"$dst"
	rm -f "$dst".a.* "$dst".b.*
}
# the candidates check.jsonl calls correct, as paths; with our verdicts at hand, only those we pass too:
# a speedup is compared only where both sides call the candidate correct
correct_ones() {
	python3 - "$out/check.jsonl" "$out/ours.jsonl" "$@" <<'PY'
import json, os, sys
ok = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if isinstance(r.get("result"), dict) and r["result"].get("correct"):
        ok.add(r["file"])
if os.path.exists(sys.argv[2]):
    ours = set()
    for line in open(sys.argv[2]):
        v = json.loads(line)
        if v.get("status") == "pass":
            ours.add(os.path.basename((v.get("candidate") or {}).get("path") or ""))
    ok &= ours
for f in sys.argv[3:]:
    if os.path.basename(f) in ok:
        print(f)
PY
}

if [[ $parts == *,check,* ]]; then
	say "KernelBench's evaluator, correctness: ${#files[@]} candidates"
	t0=$(date +%s)
	kb_check "$out/check.jsonl" "${files[@]}"
	say "correctness: $(wc -l <"$out/check.jsonl") results, $(( $(date +%s) - t0 )) s"
fi
timed=()
[ -s "$out/check.jsonl" ] && mapfile -t timed < <(correct_ones "${files[@]}")
for pass in kb kb2; do
	[[ $parts == *,$pass,* ]] || continue
	say "KernelBench's evaluator, timed ($pass): ${#timed[@]} candidates it called correct, one at a time"
	t0=$(date +%s)
	rm -f "$out/$pass.jsonl"
	[ ${#timed[@]} -gt 0 ] && python3 "$kbeval" --kb "$kb" --out "$out/$pass.jsonl" --build-root "$build" "${timed[@]}" >/dev/null 2>&1
	say "$pass: $( [ -s "$out/$pass.jsonl" ] && wc -l <"$out/$pass.jsonl" || echo 0) results, $(( $(date +%s) - t0 )) s"
done
if [ -s "$out/ours.jsonl" ] && [ -s "$out/check.jsonl" ]; then
	cat "$out/check.jsonl" "$out/kb.jsonl" 2>/dev/null >"$out/kb-all.jsonl" # a timed line overrides its check
	python3 "$root/scripts/bench/kb_compare.py" "$out/ours.jsonl" "$out/kb-all.jsonl" $( [ -s "$out/kb2.jsonl" ] && echo "$out/kb2.jsonl") \
		>"$out/compare.md"
	tail -n 30 "$out/compare.md"
fi
