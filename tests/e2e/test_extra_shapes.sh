#!/usr/bin/env bash
# test_extra_shapes.sh - H18 (eval.extra_shapes): both workers build the model with the problem's upper-case
# integer constants halved and run it once; a candidate specialised to the given shapes is wrong or fails
# there. Off by default; flag by default, reject by policy; an honest candidate stays clean.
source "$(dirname "$0")/lib.sh"
use_cache
FAST=(--device cpu --trials 1 --perf-trials 2 --set eval.warmup_ms=0 --json)
ids() { python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print(v["status"], " ".join(f["id"] for f in v["findings"]) or "-")' <<<"$OUT_TXT" 2>&1; }
msg() { python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print(" ".join(f["message"] for f in v["findings"] if f["id"] == "H18"))' <<<"$OUT_TXT" 2>&1; }

# a softmax that flattens its input into rows of the problem's row length, written in: the corpus's
# h18_fixed_row_length.py with the small suite's DIM (256) in place of the bundled suite's (4096)
python3 "$SB_ROOT/tests/adversarial/run_corpus.py" show "$SB_ROOT/tests/adversarial/runtime/h18_fixed_row_length.py" |
	sed 's/^ROW = 4096 /ROW = 256 /' >"$TMP/rows.py"
if ! grep -q '^ROW = 256 ' "$TMP/rows.py"; then echo "not ok 1 - h18_fixed_row_length.py no longer writes in ROW = 4096"; exit 1; fi
run_sb eval "$TMP/rows.py" --problem L1/4 "${FAST[@]}"
got=$(ids)
if [ "$got" = "pass -" ]; then _report ok "by default the shape-specialised softmax passes: nothing else can see it"
else _report fail "by default the shape-specialised softmax passes" "$got $ERR_TXT"; fi

run_sb eval "$TMP/rows.py" --problem L1/4 "${FAST[@]}" --set eval.extra_shapes=true
got=$(ids)
if [ "$got" = "pass H18" ]; then _report ok "with eval.extra_shapes it is flagged H18"; else _report fail "with eval.extra_shapes it is flagged H18" "$got $ERR_TXT"; fi
m=$(msg)
if grep -qF '"DIM":[256,128]' <<<"$m" && grep -qF "the outputs are wrong" <<<"$m"; then
	_report ok "the finding names the halved constants and what went wrong"
else _report fail "the finding names the halved constants and what went wrong" "$m"; fi

run_sb eval "$TMP/rows.py" --problem L1/4 "${FAST[@]}" --set eval.extra_shapes=true --set checks.policy=H18:reject
got=$(ids)
check_rc "H18 set to reject: exit 1" 1
if [ "$got" = "rejected H18" ]; then _report ok "H18 set to reject: rejected"; else _report fail "H18 set to reject: rejected" "$got"; fi

# a ReLU that reshapes to the problem's 256 x 256: at other shapes it raises instead of being wrong
cat >"$TMP/view.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp_min(x.view(256, 256), 0.0)
PY
run_sb eval "$TMP/view.py" --problem L1/2 "${FAST[@]}" --set eval.extra_shapes=true --set checks.static=false "${NO_OPREC[@]}"
got=$(ids)
if [ "$got" = "pass H18" ] && grep -qF "the candidate failed" <<<"$(msg)"; then _report ok "a candidate that raises at other shapes is flagged H18 (the candidate failed)"
else _report fail "a candidate that raises at other shapes is flagged H18" "$got $(msg)"; fi

# an honest C++ candidate computes any shape: clean
run_sb eval "$SB_ROOT/tests/fixtures/candidates/relu_cpp_ok.py" --problem L1/2 "${FAST[@]}" --set eval.extra_shapes=true
got=$(ids)
if [ "$got" = "pass -" ]; then _report ok "an honest candidate stays clean at other shapes"; else _report fail "an honest candidate stays clean at other shapes" "$got"; fi
