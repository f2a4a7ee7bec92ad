# lib.sh - a tiny TAP producer for the end-to-end tests: each check prints "ok N - name" or
# "not ok N - name" with the evidence, and tests/run.sh adds them up.
# Usage: source it, then call run_sb ARGS... and the check_* functions.
set -u
SB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SB="$SB_ROOT/bin/stitchbench"
_n=0
# The tests' own Python (JSON, SQLite, small servers): an interpreter itself rather than a version
# manager's shim, which costs half a second a call on a busy 2-core machine. Any Python 3 will do.
PY3=$(command -v /usr/bin/python3 || command -v python3)
python3() { "$PY3" "$@"; }
export PY3
export -f python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The problems: the bundled suite at small shapes (written by tests/fixtures/suite_small.py), so that a CPU
# evaluation moves kilobytes. A test about size itself runs a command with STITCHBENCH_TEST_SUITE= (the
# real suite); `STITCHBENCH_TEST_SUITE= make test` runs every test at the real sizes.
SMALL_SUITE=$(python3 "$SB_ROOT/tests/fixtures/suite_small.py") || { echo "Bail out! the small suite: see above"; exit 1; }
export STITCHBENCH_TEST_SUITE="${STITCHBENCH_TEST_SUITE-$SMALL_SUITE}"

# PyTorch probes: candidates that are PyTorch code on purpose (a sandbox or timing probe, the reference as
# its own candidate) to test something other than the checks that judge that. The CPU's record of the ATen
# operators that ran (eval.profile, test_operators.sh) rejects them H01 for the PyTorch they run, so it is
# off for them: run_sb eval PROBE.py ... "${NO_OPREC[@]}".
NO_OPREC=(--set eval.profile=false)

# use_cache [private]: this file's STITCHBENCH_CACHE. Its work, lock and kept-worker folders are its own;
# the entries keyed by content (the Python probe, references, builds) are the suite's shared warm cache
# ($STITCHBENCH_TEST_CACHE, made by tests/run.sh) unless the file tests the cache itself ("private").
# Run alone, a file gets a private cache either way.
use_cache() {
	export STITCHBENCH_CACHE="$TMP/cache"
	mkdir -p "$STITCHBENCH_CACHE"
	[ "${1:-}" = private ] && return 0
	[ -n "${STITCHBENCH_TEST_CACHE:-}" ] || return 0
	local d
	for d in probe ref ext; do
		mkdir -p "$STITCHBENCH_TEST_CACHE/$d"
		ln -sfn "$STITCHBENCH_TEST_CACHE/$d" "$STITCHBENCH_CACHE/$d"
	done
}

# The worker processes (fork servers, candidate and reference workers) this file started: those whose
# folder is under $TMP. Other files run side by side, so a pattern alone would see their workers too.
own_workers() {
	local p
	for p in $(pgrep -f "$SB_ROOT/harness/worker/(worker|template)\.py"); do
		case "$(readlink "/proc/$p/cwd" 2>/dev/null)" in "$TMP"/*) echo "$p" ;; esac
	done
}

# Runs the binary; leaves stdout in $OUT_TXT, stderr in $ERR_TXT, the exit code in $RC.
run_sb() {
	"$SB" "$@" >"$TMP/out" 2>"$TMP/err"
	RC=$?
	OUT_TXT=$(cat "$TMP/out")
	ERR_TXT=$(cat "$TMP/err")
}

_report() { # status name evidence
	_n=$((_n + 1))
	if [ "$1" = ok ]; then
		echo "ok $_n - $2"
	else
		echo "not ok $_n - $2"
		printf '%s\n' "$3" | head -20 | sed 's/^/#   /'
	fi
}

check_rc() { # name expected
	if [ "$RC" -eq "$2" ]; then _report ok "$1"; else
		_report fail "$1" "exit $RC, expected $2; stderr: $ERR_TXT; stdout: ${OUT_TXT:0:600}"; fi
}
check_out() { # name fixed-string
	if grep -qF -- "$2" <<<"$OUT_TXT"; then _report ok "$1"; else
		_report fail "$1" "stdout lacks '$2': ${OUT_TXT:0:1200}"; fi
}
check_err() { # name fixed-string
	if grep -qF -- "$2" <<<"$ERR_TXT"; then _report ok "$1"; else
		_report fail "$1" "stderr lacks '$2': ${ERR_TXT:0:1200}"; fi
}
check_eq() { # name got want
	if [ "$2" = "$3" ]; then _report ok "$1"; else _report fail "$1" "got:  $2
want: $3"; fi
}
# The headline cells' values without their [lo, hi] intervals (Markdown may escape the brackets): the
# points are checked against numbers worked out by hand, the intervals by tests of their own.
points() { sed -E 's/ \\?\[[-+]?[0-9.]+x?, [-+]?[0-9.]+x?\\?\]//g'; }
check_out_points() { # name fixed-string
	if grep -qF -- "$2" <<<"$(points <<<"$OUT_TXT")"; then _report ok "$1"; else
		_report fail "$1" "stdout, intervals left out, lacks '$2': ${OUT_TXT:0:1200}"; fi
}
grep_points() { # fixed-string file
	points <"$2" | grep -qF -- "$1"
}
check_out_re() { # name regex
	if grep -qE -- "$2" <<<"$OUT_TXT"; then _report ok "$1"; else
		_report fail "$1" "stdout does not match /$2/: ${OUT_TXT:0:1200}"; fi
}
check_true() { # name command...
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then _report ok "$name"; else _report fail "$name" "failed: $*"; fi
}
skip() { # name reason
	_n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"
}
