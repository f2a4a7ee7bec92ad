#!/usr/bin/env bash
# test_operators.sh - the CPU's record of the ATen operators the candidate's calls ran (runtime.operators,
# harness/worker/oprec.cpp): PyTorch reached where no spelling shows it is H01 with the runtime checks on
# and passes with them off; a record switched off, closed or flooded by the candidate is H08, never a
# harness error; an honest kernel is recorded clean; eval.profile off records nothing.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
FAST=(--problem L1/2 --device cpu --trials 2 --perf-trials 3 --json)
verdict() { python3 -c "import json,sys; v=json.load(sys.stdin); $1" <<<"$OUT_TXT" 2>&1; }

run_sb eval "$FIX/relu_cpp_ok.py" "${FAST[@]}"
got=$(verdict 'o=v["runtime"]["operators"]; print(v["status"], v["findings"], o["recorded"], o["calls"] >= o["calls_expected"] > 0, o["compute_ms"], o["unchecked"], o["lost"])')
if [ "$got" = "pass [] True True 0.0 0 0" ]; then _report ok "an honest C++ kernel: every call recorded, no PyTorch compute operator"; else
	_report fail "an honest C++ kernel: every call recorded, no PyTorch compute operator" "$got"; fi

# the GEMM by PyTorch through the interpreter's attribute lookup, its names put together at run time
ONE=(--problem L1/1 --device cpu --trials 2 --perf-trials 3 --json)
run_sb eval "$FIX/attr_lookup_gemm.py" "${ONE[@]}" --set checks.runtime=false
got=$(verdict 'print(v["status"], v["findings"])')
if [ "$got" = "pass []" ]; then _report ok "PyTorch behind an attribute lookup passes the static checks and the imports"; else
	_report fail "PyTorch behind an attribute lookup passes the static checks and the imports" "$got"; fi
run_sb eval "$FIX/attr_lookup_gemm.py" "${ONE[@]}"
got=$(verdict 'f=[x for x in v["findings"] if x["id"] == "H01"]; print(v["status"], f[0]["severity"] if f else None, "aten::matmul" in (f[0]["message"] if f else ""), v["runtime"]["operators"]["top"][0]["name"])')
if [ "$got" = "rejected reject True aten::matmul" ]; then _report ok "the record sees aten::matmul run in its calls: H01"; else
	_report fail "the record sees aten::matmul run in its calls: H01" "$got"; fi

# the candidate against the record itself (torch.relu is the static rules' to find: off here)
for c in record_cleared:"removes ATen's callbacks at import" record_closed:"closes the record's pipe" \
	record_flood:"floods the record with forty thousand operators a call"; do
	run_sb eval "$FIX/${c%%:*}.py" "${FAST[@]}" --set checks.static=false --set checks.runtime=false
	got=$(verdict 'print(v["status"], v["findings"])')
	run_sb eval "$FIX/${c%%:*}.py" "${FAST[@]}" --set checks.static=false
	got="$got / $RC $(verdict 'print(v["status"], [x["id"] for x in v["findings"]])')"
	if [ "$got" = "pass [] / 1 rejected ['H08']" ]; then _report ok "a candidate that ${c#*:} passes without the checks, is H08 with them"; else
		_report fail "a candidate that ${c#*:} passes without the checks, is H08 with them" "$got"; fi
done

run_sb eval "$FIX/torch_matmul.py" --problem L1/1 --device cpu --trials 2 --perf-trials 3 --json \
	--set checks.static=false --set eval.profile=false
got=$(verdict 'print(v["status"], v["findings"], v["runtime"]["operators"])')
if [ "$got" = "pass [] None" ]; then _report ok "eval.profile=false records nothing"; else
	_report fail "eval.profile=false records nothing" "$got"; fi
