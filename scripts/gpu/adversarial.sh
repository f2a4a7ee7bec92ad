#!/usr/bin/env bash
# adversarial.sh - judges an adversarial corpus in the layout of ../shared/corpus/adversarial-dev (cpu/ and
# gpu/ with a manifest.tsv each, problems in kbroot/) and prints, per part, the hacks caught and missed and
# the honest files rejected (false positives). The corpus is read where it is; nothing is copied.
#
# Usage: scripts/gpu/adversarial.sh [CORPUS] [--parts cpu,gpu] [--batch] [--out FILE.tsv] [-- EXTRA eval OPTIONS]
#   CORPUS  default $SB_ADVERSARIAL_CORPUS, else ../shared/corpus/adversarial-dev
#   --parts the manifests to run; default cpu, and gpu too where nvidia-smi sees a GPU
#   --batch judge each part as one `eval --samples` batch (a generations folder of links to the files, in
#           manifest order per problem): the builds run side by side, the evaluations share the workers;
#           the batch's verdicts are kept beside --out as OUT-PART.jsonl
#
# A hack counts as caught when its verdict is not `pass` or carries a hack finding; an honest file is a
# false positive when it does not pass or carries a `reject` finding (the corpus's README). The files of
# one part share one cache, in manifest order (a planter runs before its victim). One row per file goes
# to --out (default: adversarial-<time>.tsv in the current folder). Exit 0 when every hack was caught and
# no honest file rejected, 1 otherwise, 2 on bad usage.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
SB="$here/bin/stitchbench"
corpus="${SB_ADVERSARIAL_CORPUS:-$here/../shared/corpus/adversarial-dev}"
parts="" batch=0 out="adversarial-$(date -u +%Y%m%d-%H%M%S).tsv"
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--parts) parts=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--batch) batch=1; shift ;;
	--) shift; extra=("$@"); break ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "adversarial.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) corpus=$1; shift ;;
	esac
done
if [ ! -d "$corpus/kbroot" ]; then
	echo "adversarial.sh: $corpus has no kbroot/: give the corpus folder (see --help)" >&2
	exit 2
fi
[ -x "$SB" ] || { echo "adversarial.sh: $SB is missing: run make first" >&2; exit 2; }
gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && gpu=1
[ -n "$parts" ] || { parts=cpu; [ "$gpu" = 1 ] && parts=cpu,gpu; }

# one verdict (stdin) against what the manifest expects: status, hack findings, caught/MISSED/clean/FALSE_POSITIVE
judge='
import json, sys
expect = sys.argv[1]
try:
    v = json.loads(sys.stdin.read())
except ValueError:
    print("harness_failure\t-\tharness_failure"); raise SystemExit
hacks = [f for f in v.get("findings", []) if f["id"].startswith("H")]
status = v["status"]
if expect == "caught":
    judged = "caught" if status != "pass" or hacks else "MISSED"
else:
    judged = "clean" if status == "pass" and not any(f["severity"] == "reject" for f in hacks) else "FALSE_POSITIVE"
print("%s\t%s\t%s" % (status, ",".join("%s:%s" % (f["id"], f["severity"]) for f in hacks) or "-", judged))
'

printf 'part\tcandidate\tproblem\texpect\tids\tstatus\tfindings\tjudged\tseconds\n' >"$out"
missed=0 fps=0
for part in ${parts//,/ }; do
	manifest="$corpus/$part/manifest.tsv"
	[ -f "$manifest" ] || { echo "adversarial.sh: no $manifest" >&2; exit 2; }
	device=cpu
	[ "$part" = gpu ] && device=cuda
	if [ "$device" = cuda ] && [ "$gpu" = 0 ]; then
		echo "== $part: skipped: no NVIDIA GPU here"
		continue
	fi
	cache=$(mktemp -d)
	nh=0 nc=0 no=0 nfp=0
	echo "== $part ($device)"
	if [ "$batch" = 1 ]; then
		# each file becomes the next sample of its problem; the batch's verdicts are matched back by name
		mkdir "$cache/gen"
		declare -A next=()
		while IFS=$'\t' read -r cand prob _; do
			case "$cand" in ''|'#'*) continue ;; esac
			l=${prob#L}; l=${l%%/*}; id=${prob#*/}
			k=${next[$prob]:-0}; next[$prob]=$((k + 1))
			ln -s "$(cd "$corpus/$part" && pwd)/$cand" "$cache/gen/level_${l}_problem_${id}_sample_${k}_kernel.py"
			printf '%s\t%s\n' "$cand" "level_${l}_problem_${id}_sample_${k}_kernel.py" >>"$cache/names"
		done <"$manifest"
		unset next
		t0=$(date +%s)
		STITCHBENCH_CACHE="$cache" "$SB" eval --samples "$cache/gen" -o "$cache/verdicts.jsonl" \
			--kernelbench-root "$corpus/kbroot" --device "$device" "${extra[@]}" 2>"$cache/err" | tail -1
		echo "  batch: $(( $(date +%s) - t0 )) s"
		cp "$cache/verdicts.jsonl" "${out%.tsv}-$part.jsonl" 2>/dev/null
	fi
	while IFS=$'\t' read -r cand prob expect ids _; do
		case "$cand" in ''|'#'*) continue ;; esac
		t0=$(date +%s)
		if [ "$batch" = 1 ]; then
			name=$(awk -F'\t' -v c="$cand" '$1 == c { print $2; exit }' "$cache/names")
			json=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    path = v.get("candidate", {}).get("path", "")
    if path.endswith("/" + sys.argv[2]) or path.endswith("/" + sys.argv[3]):
        print(line.strip())
        break' "$cache/verdicts.jsonl" "$name" "$cand" 2>&1)
		else
			json=$(STITCHBENCH_CACHE="$cache" "$SB" eval "$corpus/$part/$cand" --problem "$prob" \
				--kernelbench-root "$corpus/kbroot" --device "$device" --json "${extra[@]}" 2>"$cache/err")
		fi
		row=$(python3 -c "$judge" "$expect" <<<"$json" 2>&1)
		IFS=$'\t' read -r status findings judged <<<"$row"
		secs=$(( $(date +%s) - t0 ))
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$part" "$cand" "$prob" "$expect" "$ids" "$status" "$findings" \
			"$judged" "$secs" >>"$out"
		printf '  %-34s %-6s %-15s %-16s %s\n' "$cand" "$prob" "$judged" "$status" "$findings"
		if [ "$judged" = harness_failure ] && [ "$batch" = 1 ]; then
			echo "    the batch wrote no verdict for it: $(grep -F "$name" "$cache/err" | grep -v ': trace: ' | tail -1)"
		elif [ "$judged" = harness_failure ]; then
			echo "    stitchbench failed: $(tail -2 "$cache/err")"
		fi
		if [ "$expect" = caught ]; then
			nh=$((nh + 1)); [ "$judged" = caught ] && nc=$((nc + 1))
		else
			no=$((no + 1)); [ "$judged" = FALSE_POSITIVE ] && nfp=$((nfp + 1))
		fi
	done <"$manifest"
	echo "$part: $nc of $nh hacks caught, $nfp of $no honest files rejected"
	missed=$((missed + nh - nc))
	fps=$((fps + nfp))
	rm -rf "$cache"
done
echo "rows in $out"
[ "$missed" = 0 ] && [ "$fps" = 0 ]
