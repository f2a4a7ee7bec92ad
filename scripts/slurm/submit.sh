#!/usr/bin/env bash
# submit.sh - runs an experiment on a Slurm cluster: a job array with one `stitchbench run --shard I/N`
# per task and a merge job after it (afterany); submitted again, only the shards not yet complete run.
# docs/scaleout.md describes the options, the files and the re-submission rules.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: scripts/slurm/submit.sh EXP.yaml [--shards N] [--nodes N] [--gpus-per-node G] [--partition P]
                               [--time T] [--cpus-per-task C] [--run-id ID] [--output DIR]
                               [--sbatch ARG]... [--dry-run] [-- RUN_OPTIONS...]

Submits a job array of N shards (task I runs 'stitchbench run --shard I/N', or --resume when the shard
was started before) and a merge job that waits for all of them (--dependency=afterany) and writes the
merged run with 'stitchbench merge' once every shard is complete. Prints the job ids and the paths.

  --shards N          shards, one array task each (default: --nodes)
  --nodes N           nodes used at once: at most N array tasks run at the same time (default 1)
  --gpus-per-node G   GPUs per task (--gres=gpu:G), used through 'run --gpus all'; 0 runs on the CPU
                      with the config's eval.device (default 0)
  --partition P, --time T, --cpus-per-task C   passed to sbatch for every shard task
  --run-id ID         the base id: shards are ID-shardIofN, the merged run ID (default: the config's
                      name, else the file's name)
  --output DIR        where the runs go (default: the config's output.dir, else results), relative to
                      the current directory
  --sbatch ARG        one more sbatch option for every job (repeat: --sbatch --account=X)
  --dry-run           print the sbatch commands instead of running them
  -- RUN_OPTIONS      passed to every 'stitchbench run' (e.g. -- --set eval.trials=5 --jobs 8); the
                      selection (agents, samples, problems) belongs in EXP.yaml, not here

Submitted again with the same EXP.yaml, --shards, --run-id and --output: shards holding RUN/complete
are skipped, started ones resume, and the merge job runs again. Nothing to do when every shard is
complete and the merged run exists.
USAGE
}

die() { echo "submit.sh: $*" >&2; exit 2; }

EXP="" SHARDS="" NODES=1 GPUS=0 PARTITION="" TIME="" CPUS="" RUN_ID="" OUTPUT="" DRY=0
SBATCH_EXTRA=() RUN_EXTRA=()
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--shards) SHARDS=${2:?--shards needs a number}; shift 2 ;;
	--nodes) NODES=${2:?--nodes needs a number}; shift 2 ;;
	--gpus-per-node) GPUS=${2:?--gpus-per-node needs a number}; shift 2 ;;
	--partition) PARTITION=${2:?--partition needs a name}; shift 2 ;;
	--time) TIME=${2:?--time needs a limit}; shift 2 ;;
	--cpus-per-task) CPUS=${2:?--cpus-per-task needs a number}; shift 2 ;;
	--run-id) RUN_ID=${2:?--run-id needs an id}; shift 2 ;;
	--output) OUTPUT=${2:?--output needs a folder}; shift 2 ;;
	--sbatch) SBATCH_EXTRA+=("${2:?--sbatch needs an option}"); shift 2 ;;
	--dry-run) DRY=1; shift ;;
	--) shift; RUN_EXTRA=("$@"); break ;;
	-*) die "option '$1' is not known; see --help" ;;
	*) [ -z "$EXP" ] || die "one experiment file only ('$EXP' and '$1')"; EXP=$1; shift ;;
	esac
done
[ -n "$EXP" ] || { usage >&2; exit 2; }
[ -r "$EXP" ] || die "$EXP: not readable; give the experiment's YAML file"
num() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] || die "$1 $2: expected a whole number from $3"; }
num --nodes "$NODES" 1
num --gpus-per-node "$GPUS" 0
SHARDS=${SHARDS:-$NODES}
num --shards "$SHARDS" 1
[ -z "$CPUS" ] || num --cpus-per-task "$CPUS" 1
for a in "${RUN_EXTRA[@]}"; do
	case "$a" in --agents* | --problems* | --samples* | --shard* | --resume* | --run-id* | -c | --config*)
		die "run option $a: put the selection in the experiment file (agents, their samples, problems.select) and the id in --run-id; a shard resumed later must see the same items" ;;
	esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SB=${STITCHBENCH:-$HERE/bin/stitchbench}
[ -x "$SB" ] || die "$SB is not built; run make (or set STITCHBENCH to the binary)"
command -v sbatch >/dev/null || [ "$DRY" = 1 ] || die "sbatch is not on PATH: is this a Slurm login node?"
EXP=$(cd "$(dirname "$EXP")" && pwd)/$(basename "$EXP")

# top-level "name:" and "dir:" under "output:" of the YAML, plain scalars only (else give the options)
yaml_key() { # section key
	awk -v sec="$1" -v key="$2" '
		/^[^ #]/ { insec = (sec == "" || $0 ~ "^" sec ":") }
		insec && ((sec == "" && $0 ~ "^" key ":") || (sec != "" && $0 ~ "^  +" key ":")) {
			sub("^ *" key ": *", ""); sub(" +#.*$", ""); gsub(/^["'\'']|["'\'']$/, ""); print; exit }' "$EXP"
}
if [ -z "$RUN_ID" ]; then
	RUN_ID=$(yaml_key "" name)
	[ -n "$RUN_ID" ] && [ "$RUN_ID" != null ] || RUN_ID=$(basename "$EXP" .yaml)
fi
[[ "$RUN_ID" =~ ^[A-Za-z0-9._-]+$ ]] || die "run id '$RUN_ID': letters, digits, '.', '_' and '-' only; give --run-id"
if [ -z "$OUTPUT" ]; then
	OUTPUT=$(yaml_key output dir)
	[ -n "$OUTPUT" ] && [ "$OUTPUT" != null ] || OUTPUT=results
fi
mkdir -p "$OUTPUT"
OUTPUT=$(cd "$OUTPUT" && pwd)
MERGED=$OUTPUT/$RUN_ID
JOBDIR=$OUTPUT/$RUN_ID-slurm
mkdir -p "$JOBDIR"
shard_dir() { echo "$OUTPUT/$RUN_ID-shard${1}of$SHARDS"; }

MISSING=()
for ((i = 1; i <= SHARDS; i++)); do
	[ -f "$(shard_dir "$i")/complete" ] || MISSING+=("$i")
done
if [ ${#MISSING[@]} -eq 0 ] && [ -f "$MERGED/results.db" ]; then
	echo "nothing to do: all $SHARDS shards are complete and merged in $MERGED"
	exit 0
fi

q() { local s="" a; for a in "$@"; do s+="${s:+ }$(printf '%q' "$a")"; done; printf '%s' "$s"; }
GPU_OPT=()
[ "$GPUS" -gt 0 ] && GPU_OPT=(--gpus all)
# The task script decides between a fresh start and --resume when it starts, not at submission: a
# shard killed after this submission resumes when its task is requeued.
cat >"$JOBDIR/shard.sh" <<SCRIPT
#!/usr/bin/env bash
# shard.sh - written by scripts/slurm/submit.sh: one array task = shard \$SLURM_ARRAY_TASK_ID of $SHARDS
set -u
I=\${SLURM_ARRAY_TASK_ID:?not in a job array}
D=$(q "$OUTPUT")/$(q "$RUN_ID")-shard\${I}of$SHARDS
if [ -f "\$D/complete" ]; then echo "shard \$I/$SHARDS is complete already (\$D)"; exit 0; fi
if [ -f "\$D/results.db" ] || [ -f "\$D/run.json" ]; then
	exec $(q "$SB") run --resume "\$D" $(q "${GPU_OPT[@]}" "${RUN_EXTRA[@]}")
fi
exec $(q "$SB") run -c $(q "$EXP") --shard "\$I/$SHARDS" --run-id $(q "$RUN_ID") --set output.dir=$(q "$OUTPUT") $(q "${GPU_OPT[@]}" "${RUN_EXTRA[@]}")
SCRIPT
cat >"$JOBDIR/merge.sh" <<SCRIPT
#!/usr/bin/env bash
# merge.sh - written by scripts/slurm/submit.sh: merges the $SHARDS shards once every one is complete
set -u
M=$(q "$MERGED")
inputs=() missing=()
for ((i = 1; i <= $SHARDS; i++)); do
	d=$(q "$OUTPUT")/$(q "$RUN_ID")-shard\${i}of$SHARDS
	inputs+=("\$d")
	[ -f "\$d/complete" ] || missing+=("\$i")
done
if [ \${#missing[@]} -gt 0 ]; then
	echo "merge: shards \${missing[*]} of $SHARDS are not complete (see $(q "$JOBDIR")/shard-*.out); submit again to run them: scripts/slurm/submit.sh $(q "$EXP") --shards $SHARDS --run-id $(q "$RUN_ID") --output $(q "$OUTPUT")" >&2
	exit 1
fi
rm -rf "\$M.new"
$(q "$SB") merge "\$M.new" "\${inputs[@]}" || exit \$?
rm -rf "\$M"
mv "\$M.new" "\$M"
echo "merged $SHARDS shards into \$M"
SCRIPT
chmod +x "$JOBDIR/shard.sh" "$JOBDIR/merge.sh"

COMMON=("${SBATCH_EXTRA[@]}")
[ -n "$PARTITION" ] && COMMON+=(--partition="$PARTITION")
TASK=(--nodes=1 --ntasks=1)
[ -n "$TIME" ] && TASK+=(--time="$TIME")
[ -n "$CPUS" ] && TASK+=(--cpus-per-task="$CPUS")
[ "$GPUS" -gt 0 ] && TASK+=(--gres=gpu:"$GPUS")
submit() { # prints the job id
	if [ "$DRY" = 1 ]; then echo "sbatch $(q "$@")" >&2; echo "DRYRUN"; return; fi
	local out
	out=$(sbatch --parsable "$@") || die "sbatch failed: sbatch $(q "$@")"
	echo "${out%%;*}"
}
LIST=$(IFS=,; echo "${MISSING[*]}")
ARRAY_ID=""
DEP=()
if [ ${#MISSING[@]} -gt 0 ]; then
	ARRAY_ID=$(submit "${COMMON[@]}" "${TASK[@]}" --job-name="sb-$RUN_ID" --array="$LIST%$NODES" \
		--output="$JOBDIR/shard-%a.out" --chdir="$PWD" "$JOBDIR/shard.sh")
	DEP=(--dependency=afterany:"$ARRAY_ID")
fi
MERGE_ID=$(submit "${COMMON[@]}" "${DEP[@]}" --nodes=1 --ntasks=1 --job-name="sb-$RUN_ID-merge" \
	--output="$JOBDIR/merge.out" --chdir="$PWD" "$JOBDIR/merge.sh")

if [ -n "$ARRAY_ID" ]; then
	echo "shards:  job $ARRAY_ID, array tasks $LIST of $SHARDS (skipped as complete: $((SHARDS - ${#MISSING[@]})))"
else
	echo "shards:  all $SHARDS complete; nothing to run"
fi
echo "merge:   job $MERGE_ID (after the shards, whatever their exit)"
echo "runs:    $OUTPUT/$RUN_ID-shard{1..$SHARDS}of$SHARDS"
echo "merged:  $MERGED (stitchbench metrics $MERGED)"
echo "logs:    $JOBDIR/shard-*.out, $JOBDIR/merge.out"
