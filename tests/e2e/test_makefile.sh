#!/usr/bin/env bash
# test_makefile.sh - `make demo` on a machine where scripts/setup.sh installs the static libraries: the
# Makefile is copied into a tiny project whose setup step creates them (empty archives) and whose
# compiler answers -print-file-name as gcc does, from that folder only. The link must find them the
# first time, so the paths are looked up when the link runs, not when make reads the Makefile, and the
# build waits for setup under -j.
# tier: fast (no evaluation: tests/README.md)
source "$(dirname "$0")/lib.sh"
P="$TMP/proj"
L="$TMP/libs"
mkdir -p "$P/scripts" "$P/harness/core" "$P/harness/eval/proc" "$L"
cp "$SB_ROOT/Makefile" "$SB_ROOT/VERSION" "$P/"
cat >"$P/harness/main.c" <<'C'
int main(void) { return 0; }
C
# the files lib/libsbspawn.so is made of
for f in harness/eval/proc/forkchild harness/core/proc harness/eval/proc/sandbox harness/eval/proc/sandbox_caps harness/core/strbuf; do
	echo "int $(basename "$f")_unit;" >"$P/$f.c"
done
# setup: the libraries appear only now, as the packages of scripts/setup.sh would put them
cat >"$P/scripts/setup.sh" <<SH
for n in yaml jansson sqlite3 microhttpd; do ar rcs "$L/lib\$n.a"; done
SH
cat >"$P/scripts/demo.sh" <<'SH'
echo fake-run >build/demo-run
SH
# a compiler that knows only the libraries of $L (gcc prints the bare name for one it cannot find)
cat >"$TMP/cc" <<SH
#!/bin/sh
case "\$1" in
-print-file-name=*) n=\${1#*=}; if [ -e "$L/\$n" ]; then echo "$L/\$n"; else echo "\$n"; fi; exit 0 ;;
esac
exec cc "\$@"
SH
chmod +x "$TMP/cc"
# bin/stitchbench here is the fake main: the demo's doctor, problems and report lines just run it
make -j4 -C "$P" demo CC="$TMP/cc" CUDA_HOME="$TMP/no-cuda" >"$TMP/out" 2>"$TMP/err"
RC=$?
OUT_TXT=$(cat "$TMP/out")
ERR_TXT=$(cat "$TMP/err")
check_rc "make demo links the first time, with the libraries setup installed" 0
check_out "the link names the libraries where setup put them" "$L/libjansson.a"
check_true "the binary was made" test -x "$P/bin/stitchbench"
