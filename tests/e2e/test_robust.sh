#!/usr/bin/env bash
# test_robust.sh - robust correctness on the CPU (docs/verdict.md, "Robust correctness"): on L1/2 (ReLU,
# torch.rand inputs) a kernel that copies its input passes the correctness trials and fails the robust
# ones on signed, scaled inputs: the status stays pass, with the finding H17 (rejected under a reject
# policy); an honest kernel and the reference itself pass them; a kernel that dies on a negative element
# is the same finding, not a runtime_error, and is not timed; eval.robust_trials=0 turns them off; a
# reference undefined on signed inputs (log) makes them not applicable. Then metrics: the copying kernel
# counts in correct %, not in correct_robust %.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
FAST=(--device cpu --trials 2 --perf-trials 3 "${NO_OPREC[@]}")

# what a verdict says about its robust trials, on one line
robust_of() {
	python3 -c '
import json, sys
v = json.load(sys.stdin)
r = v["robust"]
h17 = [f for f in v["findings"] if f["id"] == "H17"]
print(v["status"], len(v["trials"]), r["trials"], r["passed"], v["settings"]["robust_trials"],
      "H17:" + (h17[0]["severity"] if h17 else "none"), v["timing"] is not None, sorted(r))' <<<"$OUT_TXT" 2>&1
}
check_robust() { # name want
	local got
	got=$(robust_of)
	if [ "$got" = "$2" ]; then _report ok "$1"; else _report fail "$1" "got:  $got
want: $2
$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["message"]); print(v["robust"])' <<<"$OUT_TXT" 2>&1)"; fi
}
KEYS="['max_abs_err', 'note', 'passed', 'trials']"
jsonl() { python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' <<<"$OUT_TXT" >"$1"; } # the verdict as one line

# relu_cpp_ok.py with its kernel's max(x, 0) dropped, so it copies its input: right wherever the input is
# non-negative, as every input torch.rand draws is; and the same copy writing through a null pointer when
# it meets a negative element. Each under an extension name of its own.
derive() { # out name old new
	python3 - "$FIX/relu_cpp_ok.py" "$@" <<'PY'
import sys
src, out, name, old, new = sys.argv[1:]
text = open(src).read()
assert old in text and 'name="sb_test_relu"' in text, src
open(out, "w").write(text.replace(old, new).replace('name="sb_test_relu"', 'name="%s"' % name))
PY
}
gen_id="$TMP/gen_id"; gen_ref="$TMP/gen_ref"; mkdir -p "$gen_id" "$gen_ref"
derive "$gen_id/level_1_problem_2_sample_0_kernel.py" sb_test_relu_copy 'in[i] > 0.f ? in[i] : 0.f' 'in[i]'
derive "$TMP/crash_negative.py" sb_test_relu_crash 'out[i] = in[i] > 0.f ? in[i] : 0.f;' \
	'{ if (in[i] < 0.f) { volatile float *nowhere = nullptr; *nowhere = in[i]; } out[i] = in[i]; }'
{ cat "$SB_ROOT/kernelbench/suite/level1/2_ReLU.py"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } \
	>"$gen_ref/level_1_problem_2_sample_0_kernel.py"

run_sb eval "$gen_id/level_1_problem_2_sample_0_kernel.py" --problem L1/2 "${FAST[@]}" --json
check_rc "a kernel that copies its input passes L1/2" 0
check_robust "it passes the correctness trials and fails the robust ones: H17 flagged, still timed" \
	"pass 2 2 False 2 H17:flag True $KEYS"
jsonl "$TMP/identity.jsonl"
got=$(python3 -c '
import json, sys
v = json.load(sys.stdin)
r, f = v["robust"], [f for f in v["findings"] if f["id"] == "H17"][0]
print(r["max_abs_err"] >= 1, f["message"].startswith("correct only on the problem") and "signed, scaled" in f["message"],
      f["message"] == r["note"], f["line"], v["seconds"]["robust"] > 0)' <<<"$OUT_TXT" 2>&1)
check_eq "the finding says where it is wrong, the robust note holds it, and the robust seconds are counted" \
	"$got" "True True True 0 True"

run_sb eval "$gen_id/level_1_problem_2_sample_0_kernel.py" --problem L1/2 "${FAST[@]}" --set checks.policy=H17:reject --json
check_rc "under checks.policy H17: reject it exits 1" 1
check_robust "it is rejected by the same finding, and not timed" "rejected 2 2 False 2 H17:reject False $KEYS"
check_eq "the message names H17" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["message"][:4])' <<<"$OUT_TXT")" "H17:"

run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${FAST[@]}" --json
check_robust "an honest ReLU kernel passes the robust trials" "pass 2 2 True 2 H17:none True $KEYS"
got=$(python3 -c 'import json,sys; r=json.load(sys.stdin)["robust"]; print(r["note"], r["max_abs_err"])' <<<"$OUT_TXT" 2>&1)
check_eq "with no note and its largest error" "$got" "None 0.0"

run_sb eval "$gen_ref/level_1_problem_2_sample_0_kernel.py" --problem L1/2 "${FAST[@]}" --set checks.static=false --json
check_robust "the reference as the candidate passes them" "pass 2 2 True 2 H17:none True $KEYS"
jsonl "$TMP/reference.jsonl"

run_sb eval "$TMP/crash_negative.py" --problem L1/2 "${FAST[@]}" --json
check_rc "a kernel that dies on a negative element still passes" 0
check_robust "its death in a robust trial is H17, not a runtime_error, and it is not timed" \
	"pass 2 1 False 2 H17:flag False $KEYS"
got=$(python3 -c 'import json,sys; v=json.load(sys.stdin); print("SIGSEGV" in v["robust"]["note"], "not timed" in v["message"])' <<<"$OUT_TXT" 2>&1)
check_eq "the note names the signal and the message says why it was not timed" "$got" "True True"

run_sb eval "$gen_id/level_1_problem_2_sample_0_kernel.py" --problem L1/2 "${FAST[@]}" --set eval.robust_trials=0 --json
check_robust "eval.robust_trials=0 runs none" "pass 2 0 None 0 H17:none True $KEYS"
check_eq "and says they are off" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["robust"]["note"])' <<<"$OUT_TXT")" \
	"off (eval.robust_trials = 0)"

run_sb eval "$FIX/relu_cpp_wrong.py" --problem L1/2 "${FAST[@]}" --json
check_robust "an incorrect candidate gets no robust trials" "incorrect 2 0 None 2 H17:none False $KEYS"

# log is not defined on signed inputs: the reference's own outputs there are NaN
suite="$TMP/suite"; mkdir -p "$suite/level1"
cat >"$suite/level1/1_Log.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.log(x)


def get_inputs():
    return [torch.rand(64, 64) + 0.01]


def get_init_inputs():
    return []
PY
printf 'import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.log(x)\n' \
	>"$TMP/log_cand.py"
run_sb eval "$TMP/log_cand.py" --problem L1/1 --kernelbench-root "$suite" "${FAST[@]}" --set checks.static=false --json
check_robust "a reference that is NaN on the shifted inputs makes them not applicable, with no finding" \
	"pass 2 1 None 2 H17:none True $KEYS"
check_out "saying why" "not applicable: the reference's own outputs on robust trial 0's inputs hold"

# metrics: the copying kernel is correct, not correct_robust; the reference is both
R="$TMP/results"
run_sb import "$R/robust" "$TMP/identity.jsonl" --agent identity
check_rc "the copying kernel's verdict is imported" 0
run_sb import "$R/robust" "$TMP/reference.jsonl" --agent reference
run_sb metrics "$R/robust" --json
got=$(python3 -c '
import json, sys
j = json.load(sys.stdin)
for a in j["agents"]:
    c = a["levels"]["all"]
    print(a["agent"], c["correct_pct"], c["correct_robust_pct"], c["fast_robust_pct"]["0"], end="; ")' <<<"$OUT_TXT" 2>&1)
check_eq "metrics --json: correct_robust leaves out the robust failure, and so does fast_p_robust" "$got" \
	"identity 100.0 0.0 0.0; reference 100.0 100.0 100.0; "
run_sb metrics "$R/robust"
check_out "the Markdown details have the correct_robust row" "| correct_robust % (no robust trial failed) | 0.0 | 0.0 |"
check_out "beside an unchanged correct %" "| correct % [95% CI] | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] |"
