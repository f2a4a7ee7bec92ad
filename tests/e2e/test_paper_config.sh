#!/usr/bin/env bash
# test_paper_config.sh - configs/stitchcuda-paper.yaml, the StitchCUDA paper's reproduction config: it
# loads and validates as it is (doctor prints it resolved), its 50 problems follow the documented
# subset rule and resolve against an upstream KernelBench checkout when ../shared/kernelbench-upstream
# exists, each row names its own endpoint and key variable, and a run of its four agents, answered by
# the fake LLM server on 127.0.0.1, yields StitchCUDA's table with one row per agent and level.
# The run swaps the 50 upstream problems for one bundled problem per level (50 CPU evaluations of
# upstream shapes would take hours) and keeps the config's agents, models and stitchcuda preset; the
# candidates are plain PyTorch, so H04 (no custom kernel) is a flag here rather than a reject, which
# also makes every pass a partial hack in the table.
source "$(dirname "$0")/lib.sh"
source "$SB_ROOT/tests/e2e/fake_llm.sh"
use_cache
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
CFG=configs/stitchcuda-paper.yaml
UPSTREAM=../shared/kernelbench-upstream
R="$TMP/results"
cd "$SB_ROOT" # problems.root is relative to where stitchbench runs: the repository root
KEYS=(STITCHCUDA_CODER_API_KEY CUDAFORGE_API_KEY KEVIN_API_KEY QWEN3_API_KEY)
for k in "${KEYS[@]}"; do export "$k=test-key"; done

# ---------- the config as it is ----------
run_sb doctor -c "$CFG" --offline
# A bad config exits 2; 3 is a failed check of this machine (no upstream checkout, say), 0 none.
check_true "doctor accepts the config as it is (exit $RC)" test "$RC" != 2
check_out "its resolved configuration is printed" "# resolved configuration from $CFG"
check_out "the stitchcuda preset: 5 correctness and 10 timed trials" "preset: stitchcuda"
check_out "the preset's timed trials" "perf_trials: 10"
agents=$(python3 -c '
import re, sys
text = sys.stdin.read().split("# resolved configuration", 1)[1]
sec = "\n" + text.split("\nagents:\n", 1)[1].split("\neval:", 1)[0]
for block in sec.split("\n  - ")[1:]:
    f = dict(re.findall(r"^\s*(name|kind|model): \"?([^\"\n]*)\"?$", "  " + block, re.M))
    print(f["name"], f["kind"], f["model"])' <<<"$OUT_TXT" 2>&1)
check_eq "four agents, the paper's four rows, each on its own model" "$agents" "stitchcuda stitchcuda stitchcuda-coder
cudaforge cudaforge cudaforge-model
kevin-32b kevin kevin-32b
stitchcuda-no-rl stitchcuda qwen3-32b"
select=$(python3 -c '
import json, re, sys
m = re.search(r"^  select: (\[.*\])$", sys.stdin.read(), re.M)
print(" ".join(json.loads(m.group(1))))' <<<"$OUT_TXT" 2>&1)
# The documented rule: per level, the upstream ids (L1 1-100, L2 1-100, L3 1-50) whose
# sha256("stitchcuda-paper:L<level>/<id>") sorts lowest, 20 / 20 / 10, in id order.
rule() { # ids_of_level -> the subset, as selectors
	python3 - "$@" <<'PY'
import hashlib, sys
out = []
for level, n, ids in ((1, 20, sys.argv[1]), (2, 20, sys.argv[2]), (3, 10, sys.argv[3])):
    ids = [int(i) for i in ids.split(",")]
    key = lambda i: hashlib.sha256(("stitchcuda-paper:L%d/%d" % (level, i)).encode()).hexdigest()
    out += ["L%d/%d" % (level, i) for i in sorted(sorted(ids, key=key)[:n])]
print(" ".join(out))
PY
}
seqs() { seq -s, 1 "$1"; }
check_eq "problems.select is the documented rule's 20 + 20 + 10 problems" "$select" "$(rule "$(seqs 100)" "$(seqs 100)" "$(seqs 50)")"

if [ -d "$UPSTREAM/KernelBench/level1" ]; then
	run_sb problems -c "$CFG" --json
	check_rc "problems lists the config's selection from the upstream checkout" 0
	got=$(python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join(p["ref"] for p in j["problems"]))' <<<"$OUT_TXT" 2>&1)
	check_eq "all 50 resolve, in order" "$got" "$select"
	ids() { ls "$UPSTREAM/KernelBench/level$1" | sed -n 's/^\([0-9]*\)_.*\.py$/\1/p' | sort -n | paste -sd,; }
	check_eq "the rule over the checkout's own ids picks the same problems" "$(rule "$(ids 1)" "$(ids 2)" "$(ids 3)")" "$select"
else
	skip "the 50 problems resolve against the upstream checkout" "$UPSTREAM is not here (CI has no ../shared)"
	skip "the rule over the checkout's own ids picks the same problems" "$UPSTREAM is not here"
fi

# Each row's key variable is checked before anything starts: one unset stops the run, naming it.
BUNDLED=(--set problems.root=null --set problems.select=L1/2,L2/4,L3/1)
( unset KEVIN_API_KEY; "$SB" run -c "$CFG" "${BUNDLED[@]}" --set "output.dir=$R" >"$TMP/out" 2>"$TMP/err" ); RC=$?
ERR_TXT=$(cat "$TMP/err"); OUT_TXT=$(cat "$TMP/out")
check_rc "a row whose key variable is unset stops the run" 3
check_err "naming the variable" "KEVIN_API_KEY"
check_true "before a run folder is made" test ! -e "$R"

# ---------- a run of the four rows against the fake server ----------
code() { # body [init] [prose]
	printf '%s\n```python\nimport torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n%s\n\n    def forward(self, x):\n        return %s\n```\n' \
		"${3:-Here is the file.}" "${2:-    def __init__(self):
        super().__init__()}" "$1"
}
MLP_INIT='    def __init__(self, in_features, hidden_sizes, out_features):
        super().__init__()
        layers = []
        width = in_features
        for hidden in hidden_sizes:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, out_features))
        self.net = nn.Sequential(*layers)'
RELU=$(code 'torch.relu(x)')                                       # L1/2: pass
HALF=$(code 'x * 0.5')                                             # L1/2: incorrect
TGS=$(code 'torch.sigmoid(torch.tanh(x).mean(dim=(1, 2, 3)))')     # L2/4: pass
TGSW=$(code 'torch.tanh(x).mean(dim=(1, 2, 3))')                   # L2/4: incorrect (no sigmoid)
MLP=$(code 'self.net(x)' "$MLP_INIT")                              # L3/1: pass
MLPW=$(code 'self.net(x) * 0.5' "$MLP_INIT")                       # L3/1: incorrect
PLAN='```json
{"summary": "one kernel", "implementation_steps": ["write it"], "expected_bottlenecks": [], "correctness_risks": [], "constraints": []}
```'
STOP='{"action": "stop", "diagnosis": "nothing left to gain", "instruction": ""}'
CORRECT='{"action": "correct", "diagnosis": "the output is wrong", "instruction": "apply the sigmoid"}'
script() { # name answer...: the fake server's answers, in the order its agent asks
	local name=$1; shift
	python3 -c 'import json, sys; print(json.dumps([{"content": a, "prompt_tokens": 100, "completion_tokens": 50} for a in sys.argv[1:]]))' \
		"$@" >"$TMP/$name.script"
}
# With one sample at a time the run goes problem by problem (L1/2, L2/4, L3/1), so each server gets its
# agent's calls in that order. The StitchCUDA rows stop at their first pass (target_speedup 0): their
# number of calls does not hang on how fast plain PyTorch times against itself.
# stitchcuda: plan and a passing draft on each problem.
script sc "$PLAN" "$RELU" "$PLAN" "$TGS" "$PLAN" "$MLP"
# cudaforge (2 rounds): L1/2 passes and the Judge stops; L2/4 fails twice (a correction between);
# L3/1 passes and the Judge stops.
script cf "$RELU" "$STOP" "$TGSW" "$CORRECT" "$TGSW" "$MLP" "$STOP"
# kevin (1 trajectory of 2 turns): L1/2 wrong then right; L2/4 and L3/1 wrong twice.
script kv "$HALF" "$RELU" "$TGSW" "$TGSW" "$MLPW" "$MLPW"
# stitchcuda-no-rl: L1/2 passes; L2/4 is repaired after a wrong draft; L3/1 never gets a valid plan.
script nr "$PLAN" "$RELU" "$PLAN" "$TGSW" "$TGS" "no plan here" "still no plan"
start_fake sc; start_fake cf; start_fake kv; start_fake nr
base() { printf 'http://127.0.0.1:%s/v1' "$1"; }
run_sb run -c "$CFG" "${BUNDLED[@]}" --run-id paper --jobs 1 --device cpu \
	--set "models.stitchcuda-coder.api_base=$(base "$PORT_sc")" --set "models.cudaforge-model.api_base=$(base "$PORT_cf")" \
	--set "models.kevin-32b.api_base=$(base "$PORT_kv")" --set "models.qwen3-32b.api_base=$(base "$PORT_nr")" \
	--set agents.stitchcuda.target_speedup=0 --set agents.stitchcuda-no-rl.target_speedup=0 \
	--set agents.cudaforge.max_rounds=2 --set agents.kevin-32b.trajectories=1 --set agents.kevin-32b.turns=2 \
	--set checks.policy=H04:flag --set "output.dir=$R" --set output.report=false
check_rc "the four rows run to the end" 0
check_eq "each endpoint got exactly its agent's calls (sc cf kv nr)" "$(requests sc) $(requests cf) $(requests kv) $(requests nr)" "6 7 6 7"
check_true "the run kept the config's preset" grep -q 'preset: "\{0,1\}stitchcuda' "$R/paper/config.yaml"
check_true "agents that read kernel metrics turn them on for the run (kept for a resume)" grep -q 'profile_metrics: "\{0,1\}cupti' "$R/paper/config.yaml"
got=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for a, p, s in db.execute("SELECT agent, problem, group_concat(status, \",\") FROM (SELECT agent, problem, status FROM attempts JOIN verdicts USING (agent, problem, sample, attempt) ORDER BY agent, problem, attempt) GROUP BY agent, problem ORDER BY agent, problem"):
    print(a, p, s)' "$R/paper/results.db" 2>&1)
check_eq "the verdicts the scripts were written for" "$got" "cudaforge L1/2 pass
cudaforge L2/4 incorrect,incorrect
cudaforge L3/1 pass
kevin-32b L1/2 incorrect,pass
kevin-32b L2/4 incorrect,incorrect
kevin-32b L3/1 incorrect,incorrect
stitchcuda L1/2 pass
stitchcuda L2/4 pass
stitchcuda L3/1 pass
stitchcuda-no-rl L1/2 pass
stitchcuda-no-rl L2/4 incorrect,pass
stitchcuda-no-rl L3/1 format_error"

# ---------- the paper's table ----------
run_sb metrics "$R/paper" --protocol stitchcuda
check_rc "metrics --protocol stitchcuda" 0
check_out "StitchCUDA's columns" "| agent | level | success | average speedup vs eager | average over timed passes (n) | Fast1 | partial hacks |"
table=$(grep -E '^\| (stitchcuda|cudaforge|kevin-32b|stitchcuda-no-rl) \| (L[123]|all) \| [0-9.]+% \(' <<<"$OUT_TXT")
# The speeds are measured (plain PyTorch against itself, about 1x): their cells are checked for form
# (Sx), and Fast1 for its denominator; a level without a pass averages exactly 0. Agents sort by name.
shape=$(sed -E 's/ 0\.000x / ZERO /g; s/ [0-9]+\.[0-9]{3}x / Sx /g; s/ ZERO / 0.000x /g; s/ [0-9.]+% \(([0-9]+)\/([0-9]+)\) \| ([^|]*) \|$/ F(\2) | \3 |/' <<<"$table")
check_eq "one row per agent and level: success, average speedup, its timed passes, Fast1, partial hacks" "$shape" \
	"| cudaforge | L1 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| cudaforge | L2 | 0.0% (0/1) | 0.000x | n/a (0) | F(1) | 0.0% (0/1) |
| cudaforge | L3 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| cudaforge | all | 66.7% (2/3) | Sx | Sx (2) | F(3) | 66.7% (2/3) |
| kevin-32b | L1 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| kevin-32b | L2 | 0.0% (0/1) | 0.000x | n/a (0) | F(1) | 0.0% (0/1) |
| kevin-32b | L3 | 0.0% (0/1) | 0.000x | n/a (0) | F(1) | 0.0% (0/1) |
| kevin-32b | all | 33.3% (1/3) | Sx | Sx (1) | F(3) | 33.3% (1/3) |
| stitchcuda | L1 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| stitchcuda | L2 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| stitchcuda | L3 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| stitchcuda | all | 100.0% (3/3) | Sx | Sx (3) | F(3) | 100.0% (3/3) |
| stitchcuda-no-rl | L1 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| stitchcuda-no-rl | L2 | 100.0% (1/1) | Sx | Sx (1) | F(1) | 100.0% (1/1) |
| stitchcuda-no-rl | L3 | 0.0% (0/1) | 0.000x | n/a (0) | F(1) | 0.0% (0/1) |
| stitchcuda-no-rl | all | 66.7% (2/3) | Sx | Sx (2) | F(3) | 66.7% (2/3) |"
run_sb metrics "$R/paper"
check_out "the preset's run shows the table without the option" "| agent | level | success | average speedup vs eager |"

stop_fakes
