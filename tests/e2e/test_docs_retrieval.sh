#!/usr/bin/env bash
# test_docs_retrieval.sh - documentation retrieval end to end (agents[].docs): stitchcuda against the fake
# LLM server drafts a C++ extension that fails to build (a header this CPU machine lacks: gcc stops at
# once), and the repair_compile prompt the server receives holds the fixture passage written about that
# header, while the same run's agent without docs gets none; what was given is recorded for the user.
source "$(dirname "$0")/lib.sh"
use_cache
source "$SB_ROOT/tests/e2e/fake_llm.sh"
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
FIX="$SB_ROOT/tests/fixtures"
R="$TMP/results"
trap 'stop_fakes; rm -rf "$TMP"' EXIT

# The answers: a plan, a draft whose build fails on cuda_runtime.h, then a plain PyTorch repair (flagged,
# not rejected, by this config) that passes and ends the sample.
A="$TMP/answers"
mkdir -p "$A"
cat >"$A/call-0000.md" <<'EOF'
```json
{"summary": "an elementwise C++ kernel", "implementation_steps": ["one pass over the data"],
 "expected_bottlenecks": ["bandwidth"], "correctness_risks": ["none"], "constraints": ["fp32"]}
```
EOF
python3 - "$FIX/candidates/relu_cpp_ok.py" "$A/call-0001.md" <<'PY'
import sys
src = open(sys.argv[1]).read()
# -include makes gcc read the header before anything else, so the build fails in about a second
src = src.replace('functions=["relu_fwd"],', 'functions=["relu_fwd"], extra_cflags=["-include", "cuda_runtime.h"],')
assert "cuda_runtime.h" in src
open(sys.argv[2], "w").write("```python\n" + src + "```\n")
PY
cat >"$A/call-0002.md" <<'EOF'
```python
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
```
EOF
python3 - "$A" >"$TMP/docs.script" <<'PY'
import glob, json, os, sys
print(json.dumps([{"content": open(f).read(), "prompt_tokens": 100, "completion_tokens": 50}
                  for f in sorted(glob.glob(os.path.join(sys.argv[1], "call-*.md")))]))
PY
cp "$TMP/docs.script" "$TMP/plain.script"
start_fake docs
start_fake plain

config() { # file docs-folder
	cat >"$1" <<EOF
name: docs
problems: {levels: [1], select: [L1/2]}
models:
$(model docs "$PORT_docs"; model plain "$PORT_plain")
agents:
  - {name: withdocs, kind: stitchcuda, model: docs, target_speedup: 0, docs: "$2", docs_tokens: 600}
  - {name: plain, kind: stitchcuda, model: plain, target_speedup: 0}
eval: {device: cpu, trials: 2, perf_trials: 3, warmup_ms: 10, timing_cap_s: 10}
checks: {policy: {H01: flag, H04: flag}}
output: {dir: $R}
EOF
}
# the user message of request N the server received
user_msg() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["requests"]; print(r[int(sys.argv[2])]["body"]["messages"][-1]["content"])' "$TMP/$1.log" "$2"; }
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }

# ---------- a folder that cannot be indexed stops the run before any call ----------
config "$TMP/missing.yaml" "$TMP/no-such-folder"
run_sb run -c "$TMP/missing.yaml" --run-id missing --agents withdocs
check_rc "a missing docs folder is an input error: exit 2" 2
check_err "it names the agent and the folder" "agent withdocs: agents[].docs: $TMP/no-such-folder: No such file or directory"
check_eq "no request reached the server" "$(requests docs)" "0"

# ---------- with and without docs, in one run ----------
config "$TMP/run.yaml" "$FIX/docs"
run_sb run -c "$TMP/run.yaml" --run-id both
check_rc "the run ends with exit 0" 0
check_eq "each agent: compile_error, then a pass after repair_compile" \
	"$(sql "$R/both/results.db" "SELECT agent, attempt, a.stage, status FROM verdicts JOIN attempts a USING (agent, problem, sample, attempt) ORDER BY agent, attempt")" \
	"plain|0|draft|compile_error
plain|1|repair_compile|pass
withdocs|0|draft|compile_error
withdocs|1|repair_compile|pass"
check_eq "each server got the plan, the draft and the repair" "$(requests docs) $(requests plain)" "3 3"

fixed=$(user_msg docs 2)
check_true "the repair prompt holds the passage written about the missing header" \
	grep -qF "A CPU-only build cannot see cuda_runtime.h: the header ships with the CUDA toolkit" <<<"$fixed"
check_true "it says where the passage comes from: file, line and heading path" \
	grep -qE '^\[1\] guides/toolkit\.html, line [0-9]+, "Building extensions > Headers on machines without CUDA"$' <<<"$fixed"
check_true "and what it searched for: the header from gcc's diagnostic and the stage" \
	grep -qE '^Documentation that may help .*searched for: .*cuda_runtime.*compile\):$' <<<"$fixed"
check_true "the passages sit between the feedback and the code" \
	python3 -c 'import sys; t=sys.stdin.read(); a=t.index("cuda_runtime.h: No such file"); b=t.index("Documentation that may help"); c=t.index("Your last code:"); sys.exit(not a < b < c)' <<<"$fixed"
check_true "the draft's prompt has no documentation (only repairs get it)" \
	bash -c '! grep -q "Documentation that may help" <<<"$1"' _ "$(user_msg docs 1)"
plain=$(user_msg plain 2)
check_true "without docs the same repair prompt says nothing about documentation" \
	bash -c '! grep -qiE "documentation|CPU-only build cannot see" <<<"$1"' _ "$plain"
check_true "and keeps the template's layout: the feedback's block, blank lines, the code" \
	python3 -c 'import sys; sys.exit("or directory\n(3 of 6 lines shown: the lines mentioning errors)\n```\n\n\nYour last code:" not in sys.stdin.read())' <<<"$plain"

S="$R/both/samples/withdocs/L1_2/s0"
check_eq "what was given is recorded: docs-call-0002.json with the query and each passage" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["call"], d["stage"], d["attempt"], d["status"], d["budget_tokens"], "cuda_runtime" in d["query"], d["passages"][0]["file"], d["passages"][0]["heading"], d["tokens"] <= 600)' "$S/docs-call-0002.json" 2>&1)" \
	"2 repair_compile 0 compile_error 600 True guides/toolkit.html Building extensions > Headers on machines without CUDA True"
check_true "and noted in the sample's summary" \
	python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["notes"]; sys.exit(not any(x.startswith("docs for call 2 (repair_compile): ") and "guides/toolkit.html:" in x for x in n))' "$S/summary.json"
check_true "the agent without docs records none" test -z "$(find "$R/both/samples/plain" -name 'docs-call-*')"
check_eq "the index is one database in the cache, keyed by content" "$(ls "$STITCHBENCH_CACHE/docs" | grep -cE '^[0-9a-f]{64}\.db$')" "1"

stop_fakes
