#!/usr/bin/env bash
# run.sh - runs every test CI runs (cmocka unit tests, end-to-end tests of the binary, pytest
# worker tests) and ends with one line: "N passed, N failed" (", N skipped" when some skipped).
set -u
cd "$(dirname "$0")/.."
export SB_SOURCE_ROOT="$PWD"
pass=0 fail=0 skip=0
failed_names=()

# TAP lines from cmocka (CMOCKA_MESSAGE_OUTPUT=TAP) and from tests/e2e/lib.sh.
count_tap() {
	local name=$1 log=$2 p f s
	# cmocka writes a skipped test as "not ok N # SKIP name", lib.sh as "ok N - name # SKIP reason"
	local sc
	sc=$(grep -cE '^not ok [0-9]+ # SKIP' "$log" || true)
	s=$(( $(grep -cE '^ok [0-9]+ .*# SKIP' "$log" || true) + sc ))
	f=$(( $(grep -cE '^not ok [0-9]+' "$log" || true) - sc ))
	p=$(( $(grep -cE '^ok [0-9]+' "$log" || true) - s + sc ))
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		failed_names+=("$name")
		grep -E -A6 '^not ok' "$log" | sed 's/^/    /'
	fi
}

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

echo "== unit tests (cmocka)"
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$logdir/$name.log" 2>&1
	rc=$?
	if ! grep -qE '^(not )?ok ' "$logdir/$name.log"; then
		echo "    $name produced no test results (exit $rc)"; cat "$logdir/$name.log" | sed 's/^/    /'
		fail=$((fail + 1)); failed_names+=("$name"); continue
	fi
	count_tap "$name" "$logdir/$name.log"
	printf '   %-28s %s\n' "$name" "$(grep -cE '^ok ' "$logdir/$name.log") ok, $(grep -cE '^not ok [0-9]+ -' "$logdir/$name.log") failed, $(grep -cE '# SKIP' "$logdir/$name.log") skipped"
done

echo "== end-to-end tests"
for t in tests/e2e/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	bash "$t" >"$logdir/$name.log" 2>&1
	count_tap "$name" "$logdir/$name.log"
	printf '   %-28s %s\n' "$name" "$(grep -cE '^ok ' "$logdir/$name.log") ok, $(grep -cE '^not ok' "$logdir/$name.log") failed"
done

echo "== worker tests (pytest)"
py=""
for cand in "${STITCHBENCH_PYTHON:-}" python3 /usr/bin/python3; do
	[ -n "$cand" ] || continue
	if "$cand" -c 'import torch, pytest' >/dev/null 2>&1; then py=$cand; break; fi
done
if [ -z "$py" ]; then
	echo "   no Python with torch and pytest: worker tests cannot run (run scripts/setup.sh)"
	fail=$((fail + 1)); failed_names+=("pytest: no interpreter")
else
	"$py" -m pytest -q -p no:cacheprovider tests/worker >"$logdir/pytest.log" 2>&1
	rc=$?
	summary=$(tail -n 1 "$logdir/pytest.log")
	echo "   $summary"
	p=$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
	f=$(grep -oE '[0-9]+ (failed|errors?)' <<<"$summary" | awk '{n += $1} END {print n + 0}')
	s=$(grep -oE '[0-9]+ skipped' <<<"$summary" | grep -oE '[0-9]+' || echo 0)
	pass=$((pass + p)); fail=$((fail + ${f:-0})); skip=$((skip + s))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		fail=$((fail + 1)); failed_names+=("pytest (exit $rc)")
	fi
	[ "$rc" -ne 0 ] && { sed 's/^/    /' "$logdir/pytest.log" | tail -40; failed_names+=("pytest"); }
fi

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
