# lib.sh - a tiny TAP producer for the end-to-end tests: each check prints "ok N - name" or
# "not ok N - name" with the evidence, and tests/run.sh adds them up.
# Usage: source it, then call run_sb ARGS... and the check_* functions.
set -u
SB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SB="$SB_ROOT/bin/stitchbench"
_n=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

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
