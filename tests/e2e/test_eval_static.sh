#!/usr/bin/env bash
# test_eval_static.sh - the static checks inside `stitchbench eval`: a reward hack is rejected before any
# worker starts, with its findings in the verdict; policy and checks.static change what happens.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
FAST=(--device cpu --trials 2 --perf-trials 0) # no timing: the checks come before it
verdict() { python3 -c "import json,sys; v=json.load(sys.stdin); $1" <<<"$OUT_TXT" 2>&1; }

run_sb eval "$FIX/torch_matmul.py" --problem L1/1 "${FAST[@]}" --json
check_rc "a candidate that calls torch.matmul is not a pass" 1
got=$(verdict 'f={x["id"]: x for x in v["findings"]}; print(v["status"], v["message"][:4], sorted(f), f["H01"]["severity"], f["H01"]["line"], f["H01"]["col"])')
if [ "$got" = "rejected H01: ['H01', 'H04'] reject 9 16" ]; then _report ok "it is rejected with H01 (line 9, column 16) and H04"; else
	_report fail "it is rejected with H01 (line 9, column 16) and H04" "$got"; fi
got=$(verdict 'print(v["seconds"]["total"] < 1, v["trials"], v["timing"], v["log_tail"], "torch.matmul" in v["message"])')
if [ "$got" = "True [] None None True" ]; then _report ok "before any worker started (under a second, no trials, no log)"; else
	_report fail "before any worker started (under a second, no trials, no log)" "$got"; fi

run_sb eval "$FIX/torch_matmul.py" --problem L1/1 "${FAST[@]}"
check_out "the text verdict names the finding" "rejected"
check_out "and says what to do" "cuBLAS"

run_sb eval "$FIX/torch_matmul.py" --problem L1/1 "${FAST[@]}" --json --set checks.policy=H01:flag,H04:flag
got=$(verdict 'print(v["status"], sorted(set(x["severity"] for x in v["findings"])), len(v["trials"]))')
if [ "$got" = "pass ['flag'] 2" ]; then _report ok "with H01 and H04 flagged it runs, passes and keeps the findings"; else
	_report fail "with H01 and H04 flagged it runs, passes and keeps the findings" "$got"; fi

# (and with eval.profile off: the CPU's record of ATen operators would see torch.matmul run, test_operators.sh)
run_sb eval "$FIX/torch_matmul.py" --problem L1/1 "${FAST[@]}" --json --set checks.static=false "${NO_OPREC[@]}"
got=$(verdict 'print(v["status"], v["findings"])')
if [ "$got" = "pass []" ]; then _report ok "with checks.static=false no static finding is made"; else
	_report fail "with checks.static=false no static finding is made" "$got"; fi

# C++ kept in a docstring and handed to load_inline through __doc__ is read as the extension's source.
cat >"$TMP/docstring_cxx.py" <<'PY'
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


def _source():
    """
    #include <torch/extension.h>
    torch::Tensor relu_fwd(torch::Tensor x) { return at::cpu::relu(x); }
    """


_ext = load_inline(name="docstring_cxx", cpp_sources=_source.__doc__, functions=["relu_fwd"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_fwd(x)
PY
run_sb eval "$TMP/docstring_cxx.py" --problem L1/2 "${FAST[@]}" --json
got=$(verdict 'f=[x for x in v["findings"] if x["id"] == "H01"]; print(v["status"], f[0]["line"], v["trials"], "at::cpu::relu" in v["message"])')
if [ "$got" = "rejected 8 [] True" ]; then _report ok "C++ in a docstring given to load_inline is rejected before any worker starts"; else
	_report fail "C++ in a docstring given to load_inline is rejected before any worker starts" "$got"; fi

# A file Python cannot tokenise is the worker's syntax error to report (format_error), not a finding.
printf 'import torch\nx = "never closed\nclass ModelNew:\n    pass\n' >"$TMP/unterminated.py"
run_sb eval "$TMP/unterminated.py" --problem L1/2 "${FAST[@]}" --json
got=$(verdict 'print(v["status"], v["findings"])')
if [ "$got" = "format_error []" ]; then _report ok "an unterminated string is a format_error from the worker"; else
	_report fail "an unterminated string is a format_error from the worker" "$got"; fi

# --samples: a rejected candidate is not built, and its verdict line says why.
gen="$TMP/gen"; mkdir -p "$gen"
cp "$FIX/torch_matmul.py" "$gen/level_1_problem_1_sample_0_kernel.py"
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${FAST[@]}"
got=$(python3 -c 'import json,sys; v=json.loads(open(sys.argv[1]).readline()); print(v["status"], v["message"][:3])' "$TMP/v.jsonl" 2>&1)
if [ "$got" = "rejected H01" ]; then _report ok "--samples writes the rejected verdict"; else _report fail "--samples writes the rejected verdict" "$got $OUT_TXT $ERR_TXT"; fi
