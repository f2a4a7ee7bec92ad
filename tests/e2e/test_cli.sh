#!/usr/bin/env bash
# test_cli.sh - the binary's front door: usage, --help, --version, help <command>, unknown
# commands and options, exit codes (DESIGN §10), and the static linking promise of DESIGN §3.
# tier: fast (no evaluation: tests/README.md)
source "$(dirname "$0")/lib.sh"

run_sb
check_rc "no command is a usage error" 2
check_err "usage goes to stderr" "usage: stitchbench"

run_sb --help
check_rc "--help exits 0" 0
check_out "--help lists doctor" "   doctor"
check_out "--help lists problems" "   problems"
check_out "--help documents exit codes" "Exit codes: 0 success, 1 evaluated but failed, 2 usage or input error, 3 environment error"

run_sb --version
check_rc "--version exits 0" 0
check_out_re "--version names the version" "^stitchbench [0-9]+\.[0-9]+\.[0-9]+ "
check_out "--version names the static libraries" "libyaml"

run_sb frobnicate
check_rc "an unknown command is a usage error" 2
check_err "an unknown command is named" "'frobnicate' is not a stitchbench command"

run_sb --frob doctor
check_rc "an unknown global option is a usage error" 2

run_sb help problems
check_rc "help problems exits 0" 0
help_text=$OUT_TXT
check_out "help problems shows its usage" "usage: stitchbench problems"
run_sb problems --help
if [ "$OUT_TXT" = "$help_text" ]; then _report ok "problems --help equals help problems"; else
	_report fail "problems --help equals help problems" "they differ"; fi

run_sb help nosuch
check_rc "help for an unknown command is a usage error" 2

run_sb problems --no-such-option
check_rc "an unknown command option is a usage error" 2
check_err "the bad option is named with where to look" "option '--no-such-option' is not known; see 'stitchbench help problems'"

# Runs from any working directory: the binary finds its tree from its own path.
(cd / && "$SB" problems >/dev/null 2>&1)
RC=$?
check_rc "runs from another directory" 0

STITCHBENCH_HOME=/nonexistent run_sb problems
check_rc "a wrong STITCHBENCH_HOME is an environment error" 3
check_err "and says what to do" "STITCHBENCH_HOME=/nonexistent does not hold harness/worker/"

libs=$(ldd "$SB" 2>&1)
if grep -qE 'libyaml|libjansson|libsqlite3|libmicrohttpd' <<<"$libs"; then
	_report fail "libyaml, jansson, SQLite and libmicrohttpd are linked statically" "$libs"
else
	_report ok "libyaml, jansson, SQLite and libmicrohttpd are linked statically"
fi
