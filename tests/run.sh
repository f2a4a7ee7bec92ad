#!/usr/bin/env bash
# run.sh - runs the tests CI runs (cmocka unit tests, end-to-end tests of the binary, pytest worker
# tests), side by side, and ends with one line: "N passed, N failed" (", N skipped" when some skipped).
#
# Usage: tests/run.sh [--fast] [-j N] [NAME...]
#   --fast   the edit-loop tier: unit tests, the end-to-end files marked "# tier: fast" (no evaluation)
#            and the pytest files marked "# tier: fast" (no evaluation)
#   -j N     files run at once (default: nproc + 2, at least 3: the files wait on workers, servers and
#            timeouts often enough that more of them than cores keeps the cores busy); $SB_TEST_JOBS too
#   NAME     only these files (test_eval, test_shapes, ..., or kind:name: unit:test_stage); a NAME that
#            selects nothing is an error (exit 2), not an empty pass
#
# Each file is one job with a log of its own, counted when it ends. A job's line says its counts and wall
# time; the end lists the slowest files. Files whose assertions are sensitive to load run afterwards, one
# at a time (SERIAL below). The probe, the references and the fixtures' builds are made once, before the
# end-to-end files start, in a shared cache that every file not testing the cache itself reads
# (tests/e2e/lib.sh, use_cache).
set -u
cd "$(dirname "$0")/.."
export SB_SOURCE_ROOT="$PWD"

# Load-sensitive files: timing and clock checks that judge a machine's noise, and limits measured in
# seconds (test_suite: each bundled problem's CPU cost against a calibration workload timed beside it,
# which caches shared with other jobs would skew; the honest corpus: the parent's clock finds no H08 in
# it). They run alone, after the rest.
SERIAL=(test_timing_cpu test_timing_env test_process_factor test_suite test_adversarial_honest)
# The longest files start first, so that the pool's last minutes are not one long file alone; the rest
# follow in the order of their size.
LONG_FIRST=(test_eval test_adversarial_runtime test_run test_audit test_prestart pytest:test_facts test_report
	test_run_recovery test_robust test_fork_server test_slurm test_store)
JOB_TIMEOUT=${SB_TEST_JOB_TIMEOUT:-1200}

fast=0 jobs=${SB_TEST_JOBS:-}
only=()
while [ $# -gt 0 ]; do
	case "$1" in
	--fast) fast=1 ;;
	-j) jobs=$2; shift ;;
	-j*) jobs=${1#-j} ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) only+=("${1%.sh}") ;;
	esac
	shift
done
if [ -z "$jobs" ]; then
	jobs=$(( $(nproc 2>/dev/null || echo 2) + 2 ))
	[ "$jobs" -lt 3 ] && jobs=3
fi

# The logs go when every test passed; after a failure they stay (the shared cache does not), and the
# last line but one says where.
logdir=$(mktemp -d)
keep_logs=0
trap '[ "$keep_logs" = 1 ] && rm -rf "$logdir/cache" "$logdir/warm-gen" || rm -rf "$logdir"' EXIT
export STITCHBENCH_TEST_CACHE="$logdir/cache"
mkdir -p "$STITCHBENCH_TEST_CACHE" "$logdir/jobs"

py=""
for cand in "${STITCHBENCH_PYTHON:-}" python3 /usr/bin/python3; do
	[ -n "$cand" ] || continue
	if "$cand" -c 'import torch, pytest' >/dev/null 2>&1; then py=$cand; break; fi
done

selected() { # kind:name; a NAME selects it as test_x or as kind:test_x (unit:, e2e:, pytest:)
	[ ${#only[@]} -eq 0 ] && return 0
	local o
	for o in "${only[@]}"; do [ "$o" = "$1" ] || [ "$o" = "${1#*:}" ] && return 0; done
	return 1
}
is_fast() { grep -qE '^# tier: fast' "$1"; }

# The jobs: "kind:name" and a path.
declare -A path
names=()
for t in build/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	n=$(basename "$t"); selected "unit:$n" || continue
	names+=("unit:$n"); path["unit:$n"]=$t
done
for t in tests/e2e/test_*.sh; do
	n=$(basename "$t" .sh); selected "e2e:$n" || continue
	[ "$fast" = 1 ] && ! is_fast "$t" && continue
	names+=("e2e:$n"); path["e2e:$n"]=$t
done
if [ -n "$py" ]; then
	for t in tests/worker/test_*.py; do
		n=$(basename "$t" .py); selected "pytest:$n" || continue
		[ "$fast" = 1 ] && ! is_fast "$t" && continue
		names+=("pytest:$n"); path["pytest:$n"]=$t
	done
fi

# a NAME that selects nothing is a typo or a file not built: say so rather than pass with nothing run
for o in ${only[@]+"${only[@]}"}; do
	hit=0
	for n in ${names[@]+"${names[@]}"}; do [ "$o" = "$n" ] || [ "$o" = "${n#*:}" ] && hit=1; done
	if [ "$hit" = 0 ]; then
		echo "tests/run.sh: '$o' selects no test file (names: test_x, or unit:test_x, e2e:test_x, pytest:test_x; unit tests must be built first: make test; --fast leaves out the files not marked fast)" >&2
		exit 2
	fi
done

in_list() { # name list...
	local x=$1 y; shift
	for y in "$@"; do [ "$x" = "$y" ] && return 0; done
	return 1
}
# order: the unit tests (seconds; they need no warm cache), the long files, then by file size (bytes);
# the serial ones apart
pool=() tail=()
for n in "${names[@]}"; do [[ $n == unit:* ]] && pool+=("$n"); done
for l in "${LONG_FIRST[@]}"; do
	for n in "${names[@]}"; do
		{ [ "$n" = "e2e:$l" ] || [ "$n" = "$l" ]; } && ! in_list "${n#*:}" "${SERIAL[@]}" && pool+=("$n")
	done
done
while read -r _ n; do
	in_list "$n" "${pool[@]}" && continue
	if in_list "${n#*:}" "${SERIAL[@]}"; then tail+=("$n"); else pool+=("$n"); fi
done < <(for n in "${names[@]}"; do
	[[ $n == unit:* ]] || echo "$(wc -c <"${path[$n]}") $n"; done | sort -k1,1nr -k2)

# Runs one job; writes its log, and "rc seconds" to its .done file; prints its line.
run_job() { # name
	local n=$1 p=${path[$1]} log="$logdir/jobs/${1//:/_}.log" t0=$EPOCHREALTIME rc
	case $n in
	unit:*) CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "$JOB_TIMEOUT" "$p" >"$log" 2>&1 ;;
	e2e:*) timeout -k 10 "$JOB_TIMEOUT" bash "$p" >"$log" 2>&1 ;;
	pytest:*) timeout -k 10 "$JOB_TIMEOUT" "$py" -m pytest -q -p no:cacheprovider "$p" >"$log" 2>&1 ;;
	esac
	rc=$?
	local secs
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "$rc $secs" >"$logdir/jobs/${1//:/_}.done"
	printf '   %-34s %s  (%.0f s)%s\n' "$n" "$(counts "$n" "$log" "$rc")" "$secs" \
		"$([ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "  TIMED OUT after $JOB_TIMEOUT s")"
}

# "P ok, F failed, S skipped" of one log; P F S on stdout when $2 is "raw"
tap_counts() { # log -> p f s
	local log=$1 sc s f p
	# cmocka writes a skipped test as "not ok N # SKIP name", lib.sh as "ok N - name # SKIP reason"
	sc=$(grep -cE '^not ok [0-9]+ # SKIP' "$log")
	s=$(( $(grep -cE '^ok [0-9]+ .*# SKIP' "$log") + sc ))
	f=$(( $(grep -cE '^not ok [0-9]+' "$log") - sc ))
	p=$(( $(grep -cE '^ok [0-9]+' "$log") - s + sc ))
	echo "$p $f $s"
}
pytest_counts() { # log rc -> p f s
	local summary p f s
	summary=$(grep -E '(passed|failed|error|skipped|no tests ran)' "$1" | tail -n 1)
	p=$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
	f=$(grep -oE '[0-9]+ (failed|errors?)' <<<"$summary" | awk '{n += $1} END {print n + 0}')
	s=$(grep -oE '[0-9]+ skipped' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
	echo "${p:-0} ${f:-0} ${s:-0}"
}
job_counts() { # name log rc -> p f s (a job that ended badly without a failed test counts one failure)
	local p f s
	case $1 in
	pytest:*) read -r p f s < <(pytest_counts "$2") ;;
	*) read -r p f s < <(tap_counts "$2") ;;
	esac
	if [ "$3" != 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	case $1 in unit:*|e2e:*) grep -qE '^(not )?ok ' "$2" || f=$((f > 0 ? f : 1)) ;; esac
	echo "$p $f $s"
}
counts() { # name log rc
	local p f s
	read -r p f s < <(job_counts "$@")
	echo "$p ok, $f failed, $s skipped"
}

# The shared cache, warmed once: the probe, the small suite's L1/2 reference and the builds of the C++
# fixtures most files judge. Unit tests run meanwhile (they need none of it).
warm() {
	local gen="$logdir/warm-gen" small
	small=$(python3 tests/fixtures/suite_small.py) || return 1
	mkdir -p "$gen"
	local i=0 f
	for f in relu_cpp_ok relu_cpp_wrong null_deref; do
		cp "tests/fixtures/candidates/$f.py" "$gen/level_1_problem_2_sample_${i}_kernel.py"; i=$((i + 1))
	done
	STITCHBENCH_CACHE="$STITCHBENCH_TEST_CACHE" STITCHBENCH_TEST_SUITE="$small" \
		bin/stitchbench eval --samples "$gen" -o "$logdir/warm.jsonl" --device cpu --trials 1 --perf-trials 1 \
		--set eval.build_jobs=2 >"$logdir/warm.log" 2>&1
}

started=$(date +%s)
echo "== ${#pool[@]} files side by side ($jobs at a time), then ${#tail[@]} alone; logs under $logdir"
if [ -z "$py" ]; then
	echo "   no Python with torch and pytest: worker tests cannot run (run scripts/setup.sh)"
fi
warm_pid=""
if [ "$fast" = 0 ] && [ -x bin/stitchbench ] && [ -n "$py" ]; then
	warm &
	warm_pid=$!
fi
running=0
for n in "${pool[@]}"; do
	# end-to-end and pytest files start once the shared cache is warm
	if [ -n "$warm_pid" ] && [[ $n != unit:* ]]; then
		wait "$warm_pid" || { echo "   warming the shared cache failed (each file builds what it needs):"; tail -5 "$logdir/warm.log" | sed 's/^/     /'; }
		warm_pid=""
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	run_job "$n" &
done
wait
for n in "${tail[@]}"; do run_job "$n"; done

pass=0 fail=0 skip=0
failed_names=()
for n in "${names[@]}"; do
	log="$logdir/jobs/${n//:/_}.log"
	read -r rc _ <"$logdir/jobs/${n//:/_}.done"
	read -r p f s < <(job_counts "$n" "$log" "$rc")
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		failed_names+=("$n")
		echo "-- $n (exit $rc):"
		case $n in
		pytest:*) tail -40 "$log" | sed 's/^/    /' ;;
		*) if grep -qE '^not ok [0-9]+ -' "$log"; then grep -E -A6 '^not ok [0-9]+ -' "$log" | sed 's/^/    /'
		   else tail -20 "$log" | sed 's/^/    /'; fi ;;
		esac
	fi
done

echo "== the 10 slowest files (wall seconds; $(( $(date +%s) - started )) s in all)"
for n in "${names[@]}"; do
	read -r _ secs <"$logdir/jobs/${n//:/_}.done"
	echo "$secs $n"
done | sort -k1,1gr | head -10 | awk '{printf "   %7.1f  %s\n", $1, $2}'

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
[ -z "$py" ] && { fail=$((fail + 1)); echo "failed: pytest (no interpreter)"; }
if [ "$fail" -gt 0 ]; then keep_logs=1; echo "logs kept in $logdir/jobs"; fi
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
