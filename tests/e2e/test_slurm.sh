#!/usr/bin/env bash
# test_slurm.sh - scripts/slurm/submit.sh against a real single-node Slurm (munged, slurmctld, slurmd from
# Debian's packages) configured and started in a temporary folder: a 4-shard CPU run of a small
# experiment, the merge job after it, the merged statuses against a single-process run, and
# re-submission (a missing shard runs again, a half-done one resumes). Every daemon is stopped at exit.
source "$(dirname "$0")/lib.sh"
for b in munged slurmctld slurmd sbatch squeue scancel sinfo; do
	if ! command -v "$b" >/dev/null && ! [ -x "/usr/sbin/$b" ]; then
		skip "a 4-shard run through Slurm" "$b is not installed (scripts/setup.sh installs slurmctld slurmd slurm-client munge)"
		exit 0
	fi
done
export PATH="$PATH:/usr/sbin"
SD="$TMP/slurm" # short: the munge socket path must fit a sun_path
mkdir -p "$SD/state" "$SD/spool" "$SD/log"
JOBS=""
stop_all() {
	# our jobs first (their processes belong to slurmd's steps), then the daemons by their pid files
	[ -n "$JOBS" ] && scancel $JOBS 2>/dev/null
	for _ in $(seq 50); do [ -z "$(squeue -h -j "${JOBS// /,}" 2>/dev/null)" ] && break; sleep 0.2; done
	for p in slurmd slurmctld munged; do
		[ -s "$SD/$p.pid" ] && kill "$(cat "$SD/$p.pid")" 2>/dev/null
	done
	for p in slurmd slurmctld munged; do
		for _ in $(seq 50); do [ -s "$SD/$p.pid" ] && kill -0 "$(cat "$SD/$p.pid")" 2>/dev/null || break; sleep 0.1; done
	done
	rm -rf "$TMP"
}
trap stop_all EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HOST=$(hostname -s)
CPUS=$(nproc)
dd if=/dev/urandom of="$SD/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$SD/munge.key"
munged -f -S "$SD/munge.sock" --key-file="$SD/munge.key" --log-file="$SD/munged.log" \
	--pid-file="$SD/munged.pid" --seed-file="$SD/munged.seed"
cat >"$SD/slurm.conf" <<CONF
ClusterName=sbtest
SlurmctldHost=$HOST
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$SD/munge.sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$SD/state
SlurmdSpoolDir=$SD/spool
SlurmctldPidFile=$SD/slurmctld.pid
SlurmdPidFile=$SD/slurmd.pid
SlurmctldLogFile=$SD/log/slurmctld.log
SlurmdLogFile=$SD/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$SD/slurm.conf"
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 0.2; done
if ! sinfo -h -o %T 2>/dev/null | grep -q idle; then
	_report fail "Slurm starts in the temporary folder" "sinfo: $(sinfo 2>&1); $(tail -5 "$SD/log/slurmctld.log" "$SD/log/slurmd.log" 2>&1)"
	exit 0
fi
_report ok "Slurm starts in the temporary folder (node $HOST idle)"

sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
STATUSES="SELECT agent, problem, sample, attempt, status FROM verdicts ORDER BY agent, problem, sample, attempt"
EXP="$TMP/exp.yaml"
sed "s|GENERATIONS|$SB_ROOT/tests/fixtures/generations|" "$SB_ROOT/tests/fixtures/slurm/exp.yaml" >"$EXP"
now() { date +%s.%N; }

# ---------- one process ----------
t0=$(now)
STITCHBENCH_CACHE="$TMP/cache-single" run_sb run -c "$EXP" --set output.dir="$TMP/single" --run-id one
t_single=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
check_rc "the single-process run ends" 0
SINGLE=$(sql "$TMP/single/one/results.db" "$STATUSES")
check_true "it judged 8 items with more than one status" test "$(wc -l <<<"$SINGLE")" -eq 8 -a "$(cut -d'|' -f5 <<<"$SINGLE" | sort -u | wc -l)" -ge 2

# ---------- four shards through Slurm ----------
export STITCHBENCH_CACHE="$TMP/cache-slurm"
OUT="$TMP/runs"
submit() { "$SB_ROOT/scripts/slurm/submit.sh" "$EXP" --shards 4 --nodes 4 --output "$OUT" --time 10 "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; OUT_TXT=$(cat "$TMP/out"); ERR_TXT=$(cat "$TMP/err"); }
wait_merge() { # the merge job id from the last submit; waits until it left the queue (10 minutes at most)
	MERGE=$(awk '/^merge:/ {print $3}' <<<"$OUT_TXT")
	ARRAY=$(awk '/^shards:  job/ {print $3}' <<<"$OUT_TXT" | tr -d ,)
	JOBS="$JOBS $MERGE $ARRAY"
	for _ in $(seq 1200); do [ -z "$(squeue -h -j "$MERGE" 2>/dev/null)" ] && return 0; sleep 0.5; done
	return 1
}
t0=$(now)
submit
check_rc "submit.sh submits" 0
check_out_re "it prints the array job and its four tasks" "^shards:  job [0-9]+, array tasks 1,2,3,4 of 4"
check_out_re "it prints the merge job" "^merge:   job [0-9]+ \(after the shards"
check_out "it says where the merged run will be" "merged:  $OUT/slurmtest"
check_true "the merge job waits for the array (afterany)" bash -c "scontrol show job $(awk '/^merge:/ {print $3}' <<<"$OUT_TXT") | grep -q 'Dependency=afterany:$(awk '/^shards:  job/ {print $3}' <<<"$OUT_TXT" | tr -d ,)'"
wait_merge
t_slurm=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
check_true "the merge job wrote the merged store" test -s "$OUT/slurmtest/results.db"
[ -s "$OUT/slurmtest/results.db" ] || { cat "$OUT"/slurmtest-slurm/*.out | sed 's/^/#   /' | tail -40; }
check_eq "the merged run holds the same items with the same statuses as the single-process run" \
	"$(sql "$OUT/slurmtest/results.db" "$STATUSES" 2>&1)" "$SINGLE"
check_eq "it holds one run per shard" "$(sql "$OUT/slurmtest/results.db" "SELECT group_concat(run_id, ' ') FROM (SELECT run_id FROM runs ORDER BY run_id)" 2>&1)" \
	"slurmtest-shard1of4 slurmtest-shard2of4 slurmtest-shard3of4 slurmtest-shard4of4"
check_eq "each shard ran two items and is complete" \
	"$(for i in 1 2 3 4; do printf '%s %s;' "$(sql "$OUT/slurmtest-shard${i}of4/results.db" "SELECT count(*) FROM verdicts" 2>&1)" "$(cat "$OUT/slurmtest-shard${i}of4/complete" 2>&1)"; done)" \
	"2 2 samples ended;2 2 samples ended;2 2 samples ended;2 2 samples ended;"
check_true "each shard's run.json says which shard it is" grep -q '"shard": "3/4"' "$OUT/slurmtest-shard3of4/run.json"
echo "# wall time: single process ${t_single}s, 4 Slurm shards on $CPUS cores (submit to merged) ${t_slurm}s"

# ---------- re-submission ----------
submit
check_rc "submitting a complete, merged experiment again" 0
check_out "does nothing" "nothing to do: all 4 shards are complete and merged"
rm -rf "$OUT/slurmtest-shard3of4"
rm -f "$OUT/slurmtest-shard4of4/complete"
submit
check_rc "after losing shard 3 and shard 4's completion, submit.sh submits again" 0
check_out_re "only shards 3 and 4 run" "^shards:  job [0-9]+, array tasks 3,4 of 4 \(skipped as complete: 2\)"
wait_merge
check_true "shard 4 resumed and found its samples ended" grep -q "2 ended earlier" "$OUT/slurmtest-slurm/shard-4.out"
check_true "shard 1 did not run again (its run.json has one session)" test "$(grep -c '"pid"' "$OUT/slurmtest-shard1of4/run.json")" -eq 1
check_eq "the new merge equals the single-process run again" "$(sql "$OUT/slurmtest/results.db" "$STATUSES" 2>&1)" "$SINGLE"

# ---------- a merge job with a shard missing ----------
rm -rf "$OUT/slurmtest-shard2of4" "$OUT/slurmtest"
sbatch --parsable --wait --output="$TMP/merge-alone.out" "$OUT/slurmtest-slurm/merge.sh" >/dev/null 2>&1
check_true "the merge job refuses to merge while a shard is not complete, and says how to go on" \
	grep -q "shards 2 of 4 are not complete.*submit again" "$TMP/merge-alone.out"
check_true "and writes no merged run" test ! -e "$OUT/slurmtest"
