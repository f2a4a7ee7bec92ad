#!/usr/bin/env bash
# kb_agree.sh - stitchbench under eval.preset=kernelbench against KernelBench's own evaluator, on a GPU node:
# the same generations folder judged by one `eval --samples` batch and by the evaluator's driver (one fresh
# process per candidate), then scripts/bench/kb_compare.py's table. KernelBench's evaluator draws the
# level-1 inputs on the CPU (tens of seconds per candidate), so its level-1 candidates run in
# SB_KB_JOBS processes at once beside the others one at a time; a second pass ("kb2") measures its own
# repeat spread on levels 2 and 3, whose speedups the comparison judges against it.
#
#   scripts/bench/kb_agree.sh CORPUS KB_CHECKOUT KBEVAL_PY OUTDIR
#   SB_KB_PARTS=ours,kb,kb2   which parts (default all three); SB_KB_JOBS=3; SB_KB_FILES='level_2_*' a subset
set -u
[ $# -eq 4 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
corpus=$(cd "$1" && pwd) kb=$(cd "$2" && pwd) kbeval=$3 out=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
parts=",${SB_KB_PARTS:-ours,kb,kb2},"
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

# one pass of the evaluator's driver into FILE over the given candidates, level 1 split into SB_KB_JOBS
kb_pass() { # FILE CAND...
	local dst=$1; shift
	local l1=() rest=() jobs=${SB_KB_JOBS:-3} i pids=()
	for f in "$@"; do case $(basename "$f") in level_1_*) l1+=("$f") ;; *) rest+=("$f") ;; esac; done
	for ((i = 0; i < jobs && i < ${#l1[@]}; i++)); do
		local part=()
		for ((k = i; k < ${#l1[@]}; k += jobs)); do part+=("${l1[$k]}"); done
		python3 "$kbeval" --kb "$kb" --out "$dst.l1.$i" --build-root "/tmp/kbbuild-$i" "${part[@]}" >/dev/null 2>&1 &
		pids+=($!)
	done
	[ ${#rest[@]} -gt 0 ] && python3 "$kbeval" --kb "$kb" --out "$dst.rest" --build-root /tmp/kbbuild-r "${rest[@]}" >/dev/null 2>&1
	for p in "${pids[@]}"; do wait "$p"; done
	cat "$dst".l1.* "$dst.rest" 2>/dev/null >"$dst"
	rm -f "$dst".l1.* "$dst.rest"
}

if [[ $parts == *,kb,* ]]; then
	say "KernelBench's evaluator: ${#files[@]} candidates"
	t0=$(date +%s)
	kb_pass "$out/kb.jsonl" "${files[@]}"
	say "KernelBench's evaluator: $(wc -l <"$out/kb.jsonl") results, $(( $(date +%s) - t0 )) s"
fi
if [[ $parts == *,kb2,* ]]; then
	again=()
	for f in "${files[@]}"; do case $(basename "$f") in level_1_*) ;; *) again+=("$f") ;; esac; done
	say "KernelBench's evaluator again, levels 2 and 3: ${#again[@]} candidates"
	t0=$(date +%s)
	[ ${#again[@]} -gt 0 ] && kb_pass "$out/kb2.jsonl" "${again[@]}"
	say "second pass: $(( $(date +%s) - t0 )) s"
fi
if [ -s "$out/ours.jsonl" ] && [ -s "$out/kb.jsonl" ]; then
	python3 "$root/scripts/bench/kb_compare.py" "$out/ours.jsonl" "$out/kb.jsonl" $( [ -s "$out/kb2.jsonl" ] && echo "$out/kb2.jsonl") \
		>"$out/compare.md"
	tail -n 30 "$out/compare.md"
fi
