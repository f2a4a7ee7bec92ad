#!/usr/bin/env bash
# test_shard.sh - `run --shard I/N` and `run --gpus` without Slurm or a GPU: three shards run one after
# the other and merged equal one unsharded run (same items, same statuses), each shard's id and items,
# a shard's resume keeping its shard and selection, RUN/complete, and the errors of both options.
source "$(dirname "$0")/lib.sh"
use_cache
R="$TMP/results"
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
# only the samples agent: one candidate file (L1/2 sample 0), every other item a format_error without
# an evaluation, so seven items cost one evaluation
EXP=(-c "$SB_ROOT/tests/fixtures/slurm/exp.yaml" --set "agents.given.samples_dir=$SB_ROOT/tests/fixtures/generations"
     --set "output.dir=$R" --agents given --samples 2 --problems L1/2-4,L1/7)
STATUSES="SELECT agent, problem, sample, attempt, status FROM verdicts ORDER BY agent, problem, sample, attempt"

run_sb run "${EXP[@]}" --run-id whole
check_rc "the unsharded run ends" 0
WHOLE=$(sql "$R/whole/results.db" "$STATUSES")
check_true "it holds 8 items" test "$(wc -l <<<"$WHOLE")" -eq 8
check_true "an unsharded run that ended writes RUN/complete" grep -q "8 samples ended" "$R/whole/complete"

for i in 1 2 3; do
	run_sb run "${EXP[@]}" --shard "$i/3" --run-id exp
	check_rc "shard $i/3 ends" 0
done
check_out "a shard's run id is <id>-shardIofN" "run exp-shard3of3: 2 of 2 samples ended"
check_eq "shards hold 3, 3 and 2 items: item k of the order (problem, agent, sample) in shard k mod 3 + 1" \
	"$(for i in 1 2 3; do sql "$R/exp-shard${i}of3/results.db" "SELECT group_concat(problem || ':' || sample, ' ') FROM (SELECT problem, sample FROM verdicts ORDER BY rowid)"; done)" \
	"L1/2:0 L1/3:1 L1/7:0
L1/2:1 L1/4:0 L1/7:1
L1/3:0 L1/4:1"
run_sb merge "$R/merged" "$R"/exp-shard{1,2,3}of3
check_rc "the three shards merge" 0
check_eq "the merge has the unsharded run's items and statuses" "$(sql "$R/merged/results.db" "$STATUSES")" "$WHOLE"
run_sb merge "$R/overlap" "$R/exp-shard1of3" "$R/whole"
check_rc "a shard and the whole run overlap, so they do not merge" 2

# resuming a shard keeps its shard; its selection may not change
rm "$R/exp-shard2of3/complete"
run_sb run --resume "$R/exp-shard2of3"
check_rc "a shard resumes" 0
check_out "with its own items only, found ended" "run exp-shard2of3: 3 of 3 samples ended, 0 unfinished; 0 attempts"
check_true "and writes RUN/complete again" test -s "$R/exp-shard2of3/complete"
run_sb run --resume "$R/exp-shard2of3" --samples 3
check_rc "a shard's resume with another selection is refused" 2
check_err "it says why" "the run is shard 2/3, whose items depend on its selection"
run_sb run --resume "$R/exp-shard2of3" --shard 1/3
check_rc "--shard with --resume is refused" 2
run_sb run "${EXP[@]}" --shard 4/3
check_rc "--shard 4/3 is refused" 2
check_err "it says what a shard is" "expected I/N with 1 <= I <= N"
run_sb run "${EXP[@]}" --shard 1/3 --run-id exp
check_rc "starting a shard that exists is refused" 2
check_err "pointing at --resume" "continue it with --resume exp-shard1of3"

run_sb run "${EXP[@]}" --shard 3/3
check_out "without --run-id a shard's id is the config's name (no date: every shard must find it)" "run slurmtest-shard3of3: 2 of 2"

# --gpus where torch sees no GPU
if ! nvidia-smi -L >/dev/null 2>&1; then
	run_sb run "${EXP[@]}" --run-id g --gpus all
	check_rc "--gpus without a GPU is an environment error" 3
	check_err "it says torch sees no GPU" "torch sees no GPU"
	check_true "and leaves no run behind" test ! -e "$R/g"
else
	skip "--gpus without a GPU" "this machine has a GPU (scripts/gpu-check.sh section gpus covers --gpus)"
fi
