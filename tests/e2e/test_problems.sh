#!/usr/bin/env bash
# test_problems.sh - `stitchbench problems` on the bundled suite, on a generated upstream-style
# checkout of 100/100/50/20 problems with broken files mixed in, and with bad selectors and roots.
# tier: fast (no evaluation: tests/README.md)
source "$(dirname "$0")/lib.sh"

nfiles=$(ls "$SB_ROOT"/kernelbench/suite/level*/[0-9]*_*.py | wc -l)
run_sb problems
check_rc "lists the bundled suite" 0
check_out "the count line matches the files on disk" "$nfiles problems ("
check_out_re "rows carry id, name, hash and path" "^L1/1 +[A-Za-z_]+ +[0-9a-f]{12} level1/1_"

run_sb problems --json
check_rc "--json exits 0" 0
n_json=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["problems"]), len(d["skipped"]), all(len(p["sha256"])==64 for p in d["problems"]))' <<<"$OUT_TXT")
if [ "$n_json" = "$nfiles 0 True" ]; then _report ok "--json is valid JSON with every problem"; else
	_report fail "--json is valid JSON with every problem" "got: $n_json"; fi

run_sb problems --level 2
n2=$(ls "$SB_ROOT"/kernelbench/suite/level2/[0-9]*_*.py | wc -l)
check_out "--level 2 lists level 2 only" "$n2 problems (L2: $n2)"

run_sb problems --problems L1/1-3,L3/1
check_out "selectors pick exactly what they name" "4 problems (L1: 3, L3: 1)"

run_sb problems --problems L1/x
check_rc "a malformed selector is a usage error" 2
check_err "and is explained" "'L1/x' is not a problem selector"

run_sb problems --kernelbench-root /nonexistent/KernelBench
check_rc "a missing root is an input error" 2
check_err "and names the flag" "--kernelbench-root"

# An upstream-style checkout: KernelBench/level1..4 with 100/100/50/20 problems plus broken files.
kb="$TMP/kb"
body='import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    return [torch.rand(4)]

def get_init_inputs():
    return []
'
for spec in 1:100 2:100 3:50 4:20; do
	l=${spec%%:*}; n=${spec##*:}
	mkdir -p "$kb/KernelBench/level$l"
	for i in $(seq 1 "$n"); do printf '%s' "$body" >"$kb/KernelBench/level$l/${i}_Problem_$i.py"; done
done
printf 'import torch\n' >"$kb/KernelBench/level1/101_Broken.py"
printf '%s' "$body" >"$kb/KernelBench/level2/notes_v2.py"
run_sb problems --kernelbench-root "$kb"
check_rc "an upstream checkout lists, broken files notwithstanding" 0
check_out "upstream counts are 100/100/50/20" "270 problems (L1: 100, L2: 100, L3: 50, L4: 20)"
check_err "a file without Model is reported with the reason" "skipped level1/101_Broken.py: no top-level \`class Model\`"
check_err "a badly named file is reported" "skipped level2/notes_v2.py: file name is not ID_Name.py"
run_sb problems --kernelbench-root "$kb/KernelBench" --level 4
check_out "the folder holding level1/ works as a root too" "20 problems (L4: 20)"
run_sb problems --set problems.root="$kb" --set problems.levels=3
check_out "--set reaches the problems section" "50 problems (L3: 50)"
