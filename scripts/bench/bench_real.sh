#!/usr/bin/env bash
# bench_real.sh - `make bench-real`: every upstream KernelBench level 1-3 reference judged as a candidate,
# then the real LLM-written candidates of real-dev, with their tables written into BENCHMARKS.md.
#
# Part "upstream": each problem's reference with Model renamed ModelNew, written into a temporary
# generations folder (level_L_problem_N_sample_0_kernel.py), judged by one `eval --samples` batch with the
# static checks off and H01/H04 flags (a reference is PyTorch doing the work by design, which the kernel
# trace also sees; the fidelity batch of bench.sh does the same).
# Part "realdev": the corpus files as they are, every check on, and our verdict beside the manifest's
# `their_verdict`. Each part has a fresh cache of its own, so its numbers do not depend on the other.
# For each part: the statuses, non-pass verdicts by cause (the candidate's or the harness's, the rule in
# scripts/bench/real_tables.py and BENCHMARKS.md), verdicts per hour, and the GPU's idle share
# (nvidia-smi, 200 ms samples of GPU 0).
#
#   SB_BENCH_PARTS=upstream,realdev        the parts (default: both)
#   SB_BENCH_PROBLEMS=L1/1-5,L2/1          upstream problems, stitchbench's selector (L1/19, L1/1-10, L3/*, L2);
#                                          default: every problem of levels 1-3 (250)
#   SB_BENCH_REAL_FILES='level_1_*,...'    real-dev files, shell patterns over the file names; default: all
#   SB_BENCH_KB_ROOT=PATH                  the upstream checkout (or its KernelBench/ folder); default: the
#                                          first of ../shared/kernelbench-upstream and shared/kernelbench-upstream
#   SB_BENCH_CORPUS=PATH                   the real-dev folder (its *.py and manifest.tsv); default: the first
#                                          of ../shared/corpus/real-dev and shared/corpus/real-dev
#   SB_BENCH_EVAL_ARGS='--no-compile ...'  more `eval` options for both parts (default: none, eval's defaults)
#   SB_BENCH_MD=BENCHMARKS.md              the file whose bench-real section is replaced
#   SB_BENCH_TRACE=1                       STITCHBENCH_TRACE for the batches (their logs; 0: off)
#   SB_BENCH_STATE=DIR                     keep each part's folder, verdicts, cache, wall time and GPU
#                                          samples in DIR: run again with the same DIR and settings, and the
#                                          batch goes on where it stopped (eval --samples skips what its
#                                          JSONL holds); the tables cover all of it. Default: a temporary one
#   SB_BENCH_TIME_S=N                      stop each part's batch after N s (SIGTERM) and print the tables of
#                                          what it judged; the files it did not reach are counted apart
#   SB_BENCH_CPU=1                         run on the CPU (the numbers are then CPU numbers and say so)
# Options --kernelbench-root, --corpus, --problems, --files and --md set the same as the variables above.
#
# The section goes to stdout, to $OUT/bench-real.md (a device call's output folder) or build/bench/, and
# into SB_BENCH_MD; with $OUT set, the updated SB_BENCH_MD is also copied there. The batches' verdicts
# (bench-real-PART.jsonl) and stderr (bench-real-PART.log) are copied beside the section.
set -u
caller=$PWD
abs() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$caller" "$1" ;; esac; }
usage() {
	sed -n '/^#   SB_BENCH_PARTS/,/^# Options/p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
}
kb=${SB_BENCH_KB_ROOT:+$(abs "$SB_BENCH_KB_ROOT")}
corpus=${SB_BENCH_CORPUS:+$(abs "$SB_BENCH_CORPUS")}
md=${SB_BENCH_MD:+$(abs "$SB_BENCH_MD")}
sel=${SB_BENCH_PROBLEMS:-}
files=${SB_BENCH_REAL_FILES:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--kernelbench-root) kb=$(abs "${2:?--kernelbench-root needs a folder}"); shift ;;
	--corpus) corpus=$(abs "${2:?--corpus needs a folder}"); shift ;;
	--problems) sel=${2:?--problems needs a selector}; shift ;;
	--files) files=${2:?--files needs patterns}; shift ;;
	--md) md=$(abs "${2:?--md needs a file}"); shift ;;
	-h | --help) usage ;;
	*) echo "bench-real: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
cd "$(dirname "$0")/../.." || exit 2
root=$PWD
SB=$root/bin/stitchbench
md=${md:-$root/BENCHMARKS.md}
parts=",${SB_BENCH_PARTS:-upstream,realdev},"
want() { [[ "$parts" == *",$1,"* ]]; }
for p in ${parts//,/ }; do
	[[ "$p" == upstream || "$p" == realdev ]] || { echo "bench-real: SB_BENCH_PARTS: unknown part '$p' (upstream, realdev)" >&2; exit 2; }
done
if [ ! -x "$SB" ]; then
	echo "bench-real: $SB is missing: run make first (make bench-real builds it)" >&2
	exit 2
fi
if [ "${SB_BENCH_CPU:-0}" != 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "bench-real: skipped: no NVIDIA GPU (set SB_BENCH_CPU=1 to run it on the CPU)"
	exit 0
fi
dev=cuda
[ "${SB_BENCH_CPU:-0}" = 1 ] && dev=cpu

# the inputs: given, or beside the repository, or copied into it (a device call sends shared/ along)
first_dir() { for d in "$@"; do [ -d "$d" ] && { printf '%s' "$d"; return 0; }; done; return 1; }
if want upstream; then
	[ -n "$kb" ] || kb=$(first_dir "$root/../shared/kernelbench-upstream" "$root/shared/kernelbench-upstream") || {
		echo "bench-real: no upstream KernelBench checkout at ../shared/kernelbench-upstream or shared/kernelbench-upstream: set SB_BENCH_KB_ROOT=PATH or --kernelbench-root PATH (or leave the part out: SB_BENCH_PARTS=realdev)" >&2
		exit 2
	}
	[ -d "$kb" ] || { echo "bench-real: SB_BENCH_KB_ROOT $kb: not a folder" >&2; exit 2; }
fi
if want realdev; then
	[ -n "$corpus" ] || corpus=$(first_dir "$root/../shared/corpus/real-dev" "$root/shared/corpus/real-dev") || {
		echo "bench-real: no real-dev corpus at ../shared/corpus/real-dev or shared/corpus/real-dev: set SB_BENCH_CORPUS=PATH or --corpus PATH (or leave the part out: SB_BENCH_PARTS=upstream)" >&2
		exit 2
	}
	[ -f "$corpus/manifest.tsv" ] || { echo "bench-real: $corpus/manifest.tsv is missing: SB_BENCH_CORPUS must name the real-dev folder (its *.py and manifest.tsv)" >&2; exit 2; }
	# its problems are upstream problems: judged against the upstream checkout
	[ -n "$kb" ] || kb=$(first_dir "$root/../shared/kernelbench-upstream" "$root/shared/kernelbench-upstream") || {
		echo "bench-real: real-dev is judged against upstream KernelBench: set SB_BENCH_KB_ROOT=PATH or --kernelbench-root PATH" >&2
		exit 2
	}
fi

py=$($SB doctor 2>/dev/null | awk '$1=="ok" && $2=="python" {print $3}')
py=${py:-python3}
tables=$root/scripts/bench/real_tables.py
# a folder as the reader knows it: relative when it lies in or beside the repository
rel() { local r; r=$(realpath -m --relative-to="$root" "$1"); case "$r" in ../../*) realpath -m "$1" ;; *) printf '%s' "$r" ;; esac; }
hw=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
[ "$dev" = cpu ] && hw="CPU ($(nproc) cores), no GPU used"
work=$(mktemp -d)
util_pid=
trap '[ -n "$util_pid" ] && kill "$util_pid" 2>/dev/null; rm -rf "$work"' EXIT
state=$work
if [ -n "${SB_BENCH_STATE:-}" ]; then
	state=$(abs "$SB_BENCH_STATE")
	mkdir -p "$state" || exit 2
fi
outdir=${OUT:-$root/build/bench}
mkdir -p "$outdir"
sec="$outdir/bench-real.md"
: >"$sec"
say() { printf '%s\n' "$*" | tee -a "$sec"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }
read -r -a eval_args <<<"${SB_BENCH_EVAL_ARGS:-}"
failed=0

shown=""
for v in SB_BENCH_CPU SB_BENCH_PARTS SB_BENCH_PROBLEMS SB_BENCH_REAL_FILES SB_BENCH_EVAL_ARGS; do
	[ -n "${!v:-}" ] && shown="$shown$v='${!v}' "
done
[ -n "$sel" ] && [ "$sel" != "${SB_BENCH_PROBLEMS:-}" ] && shown="${shown}SB_BENCH_PROBLEMS='$sel' "
[ -n "$files" ] && [ "$files" != "${SB_BENCH_REAL_FILES:-}" ] && shown="${shown}SB_BENCH_REAL_FILES='$files' "
torch=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)
say "### Last run: $(date -u '+%F %H:%M UTC'), $hw, device $dev"
say ""
say "Command: \`${shown}make bench-real\`; $($SB --version | head -1), torch ${torch:-unknown}."
say ""

# One batch: eval --samples over a folder, GPU samples around it, then its tables. Its verdicts, stderr,
# wall seconds (one line per invocation) and GPU samples accumulate in $state, so a batch stopped by
# SB_BENCH_TIME_S goes on when the script runs again with the same SB_BENCH_STATE.
#   batch NAME TITLE FOLDER MANIFEST EVAL-OPTIONS...
batch() {
	local name=$1 title=$2 g=$3 manifest=$4
	shift 4
	local jsonl="$state/$name.jsonl" log="$state/$name.log" util="$state/$name.util" walls="$state/$name.wall"
	if [ "$dev" = cuda ]; then
		nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 200 >>"$util" 2>/dev/null &
		util_pid=$!
	fi
	local t rc limit=()
	# SIGTERM, then SIGKILL a minute later if it is still finishing (its workers die with it)
	[ -n "${SB_BENCH_TIME_S:-}" ] && limit=(timeout -s TERM -k 60 "$SB_BENCH_TIME_S")
	t=$(now)
	STITCHBENCH_CACHE="$state/cache-$name" STITCHBENCH_TRACE=${SB_BENCH_TRACE:-1} "${limit[@]}" \
		"$SB" eval --samples "$g" -o "$jsonl" --kernelbench-root "$kb" --device "$dev" "$@" "${eval_args[@]}" \
		>>"$log" 2>&1
	rc=$?
	since "$t" >>"$walls"
	echo >>"$walls"
	[ -n "$util_pid" ] && kill "$util_pid" 2>/dev/null && wait "$util_pid" 2>/dev/null
	util_pid=
	local stopped=()
	if [ "$rc" = 124 ] && [ -n "${SB_BENCH_TIME_S:-}" ]; then
		stopped=(--stopped "$SB_BENCH_TIME_S")
	elif [ "$rc" -ge 2 ]; then
		failed=1
		say "\`eval --samples\` exited $rc; its last lines (the whole log: bench-real-$name.log):"
		say ""
		say '```'
		grep -v ': trace: ' "$log" | tail -5 | tee -a "$sec"
		say '```'
		say ""
	fi
	"$py" "$tables" part --title "$title" --samples "$g" --jsonl "$jsonl" --log "$log" --walls "$walls" --util "$util" \
		${manifest:+--manifest "$manifest"} "${stopped[@]}" \
		--command "stitchbench eval --samples DIR --device $dev $(printf '%s ' "$@" "${eval_args[@]}")" | tee -a "$sec"
	cp "$jsonl" "$outdir/bench-real-$name.jsonl" 2>/dev/null
	cp "$log" "$outdir/bench-real-$name.log"
}

# Both folders are laid out before either batch runs, so a wrong selection costs no device time.
if want upstream; then
	up="$state/upstream"
	rm -rf "$up" && mkdir -p "$up"
	# the problems as "level id path", from stitchbench's own suite reader and selector
	if ! "$SB" problems --kernelbench-root "$kb" --level 1,2,3 ${sel:+--problems "$sel"} --json >"$work/problems.json" \
		2>"$work/problems.err"; then
		echo "bench-real: stitchbench problems failed: $(cat "$work/problems.err")" >&2
		exit 2
	fi
	"$py" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["problems"]: print(p["level"], p["id"], p["path"])' "$work/problems.json" >"$work/problems.txt"
	while read -r l id f; do
		sed -E 's/\bModel\b/ModelNew/g' "$f" >"$up/level_${l}_problem_${id}_sample_0_kernel.py"
	done <"$work/problems.txt"
fi
if want realdev; then
	rd="$state/realdev"
	rm -rf "$rd" && mkdir -p "$rd"
	IFS=, read -r -a pats <<<"${files:-*}"
	for f in "$corpus"/level_*_kernel.py; do
		b=$(basename "$f")
		for p in "${pats[@]}"; do
			# shellcheck disable=SC2053 # the pattern is a glob on purpose
			if [[ "$b" == $p ]]; then cp "$f" "$rd/$b"; break; fi
		done
	done
	if [ -z "$(ls "$rd")" ]; then
		echo "bench-real: no real-dev file of $corpus matches SB_BENCH_REAL_FILES='$files'" >&2
		exit 2
	fi
fi

want upstream && batch upstream "Upstream KernelBench references as candidates, from $(rel "$kb")" "$up" "" \
	--set checks.static=false --set checks.policy=H01:flag,H04:flag
want realdev && batch realdev "real-dev: real LLM-written candidates, from $(rel "$corpus")" "$rd" "$corpus/manifest.tsv"

"$py" "$tables" splice --file "$md" --section "$sec" && echo "bench-real: section written into $md"
[ -n "${OUT:-}" ] && [ "$md" != "$OUT/$(basename "$md")" ] && cp "$md" "$OUT/" 2>/dev/null
echo "bench-real: tables in $sec, verdicts and logs beside it"
exit $failed
