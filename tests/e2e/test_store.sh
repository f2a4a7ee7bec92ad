#!/usr/bin/env bash
# test_store.sh - run stores end to end from hand-written verdicts (tests/fixtures/verdicts): import, merge of
# two shards equal to one run, refusals that name the differing settings, CSV export, export read back by
# import, metrics (problems whose reference failed among them), eval --run.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/verdicts"
# the fixture verdicts name the bundled suite's problems by their hashes: that suite, not its small twin
export STITCHBENCH_TEST_SUITE=
R="$TMP/results"
verdicts_in() { "$SB" export "$1" | wc -l; }
# The verdicts of an export, each as the exact text stored: the row's last member, "verdict".
verdict_text() { python3 -c 'import sys; [print(l[l.index(",\"verdict\":") + 11:-2]) for l in sys.stdin]'; }

run_sb import "$R/single" "$FIX/shard_a.jsonl" "$FIX/shard_b.jsonl"
check_rc "import stores verdict JSONL in a new run" 0
check_out "it counts them" "imported 9 verdicts into $R/single/results.db (0 already there)"
check_true "the run directory has its config.yaml" test -s "$R/single/config.yaml"
run_sb import "$R/single" "$FIX/shard_a.jsonl"
check_out "importing again changes nothing: a key is written once" "imported 0 verdicts into $R/single/results.db (4 already there)"
got=$(python3 - "$R/single/results.db" <<'PY' 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("PRAGMA journal_mode").fetchone()[0], db.execute("SELECT version FROM schema_version").fetchone()[0],
      db.execute("SELECT count(*) FROM verdicts").fetchone()[0], db.execute("SELECT count(*) FROM trials").fetchone()[0],
      db.execute("SELECT count(*) FROM findings").fetchone()[0], db.execute("SELECT name FROM problems WHERE ref = 'L1/2'").fetchone()[0])
PY
)
if [ "$got" = "wal 2 9 27 2 ReLU" ]; then _report ok "the store is WAL, schema 2, 9 verdicts with their 27 trials and 2 findings, problem names from the suite"; else
	_report fail "the store is WAL, schema 2, 9 verdicts with their 27 trials and 2 findings, problem names from the suite" "$got"; fi

# Two shards merged equal the single run.
run_sb import "$R/a" "$FIX/shard_a.jsonl"
run_sb import "$R/b" "$FIX/shard_b.jsonl"
run_sb merge "$R/merged" "$R/a" "$R/b"
check_rc "two shards merge" 0
check_out "merge says what it copied" "merged 2 inputs (2 runs): 9 verdicts, 0 LLM calls into $R/merged/results.db"
"$SB" export "$R/merged" | sort >"$TMP/merged.jsonl"
"$SB" export "$R/single/results.db" | sort >"$TMP/single.jsonl"
if [ -s "$TMP/single.jsonl" ] && cmp -s "$TMP/merged.jsonl" "$TMP/single.jsonl"; then _report ok "the merged export equals the single run's"; else
	_report fail "the merged export equals the single run's" "$(diff "$TMP/merged.jsonl" "$TMP/single.jsonl" | head -5)"; fi
same=$(python3 -c 'import json,sys; a=[json.loads(l)["verdict"] for l in open(sys.argv[1])]; b=[json.loads(l) for f in sys.argv[2:] for l in open(f)]; k=lambda v: json.dumps(v, sort_keys=True); print(sorted(map(k,a)) == sorted(map(k,b)))' \
	"$TMP/merged.jsonl" "$FIX/shard_a.jsonl" "$FIX/shard_b.jsonl" 2>&1)
if [ "$same" = True ]; then _report ok "export gives back the imported verdicts"; else _report fail "export gives back the imported verdicts" "$same"; fi
run_sb merge "$R/merged" "$R/a" "$R/b"
check_rc "merging into an existing store is refused" 2
check_err "it says why" "exists; merge writes a new store"

# Refusals that name what differs.
run_sb import "$R/single" "$FIX/other_gpu.jsonl"
check_rc "a verdict made with other settings does not join a run" 2
check_err "it names the line" "other_gpu.jsonl:1: run single in $R/single/results.db was made with other settings"
check_err "and the setting with both values" "eval.trials: 5 in the stored run vs 3 in this invocation"
run_sb import "$R/c" "$FIX/other_gpu.jsonl"
run_sb merge "$R/mc" "$R/a" "$R/c"
check_rc "merge refuses runs with other settings" 2
check_err "it names eval.trials with both values" "eval.trials: 5 in $R/a vs 3 in $R/c"
check_err "it names the GPU" "gpu: \"NVIDIA H200\" in $R/a vs \"NVIDIA A100-SXM4-80GB\" in $R/c"
check_err "it names the torch version" "torch: \"2.11.0+cu130\" in $R/a vs \"2.5.1+cu124\" in $R/c"
check_true "a refused merge leaves no store behind" test ! -e "$R/mc/results.db" -a ! -e "$R/mc/results.db.partial"
run_sb merge "$R/mc" "$R/a" "$R/c" --force
check_rc "--force merges them anyway" 0
check_err "and still lists the differences" "eval.trials: 5 in $R/a vs 3 in $R/c"
if [ "$(verdicts_in "$R/mc")" = 5 ]; then _report ok "the forced merge holds both runs' verdicts"; else
	_report fail "the forced merge holds both runs' verdicts" "$(verdicts_in "$R/mc") lines"; fi
# Every public and hidden key is part of a run's identity, read from the verdict's settings.identity;
# a verdict without one (all of the fixtures) reads as the defaults of its preset.
python3 - "$FIX/shard_b.jsonl" >"$TMP/tf32.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    v["settings"]["identity"] = {"eval.tf32": True, "eval.timing_block": 32}
    print(json.dumps(v))
PY
run_sb import "$R/tf32" "$TMP/tf32.jsonl"
run_sb merge "$R/mt" "$R/a" "$R/tf32"
check_rc "merge refuses runs with another hidden or public key" 2
check_err "it names eval.tf32 with both values" "eval.tf32: false in $R/a vs true in $R/tf32"
check_err "and eval.timing_block" "eval.timing_block: 10 in $R/a vs 32 in $R/tf32"
run_sb import "$R/tf32" "$FIX/shard_a.jsonl"
check_rc "import refuses verdicts of another identity into a run" 2
check_err "naming the key" "eval.tf32: true in the stored run vs false in this invocation"
run_sb import "$R/d" "$FIX/changed_problem.jsonl"
run_sb merge "$R/md" "$R/a" "$R/d"
check_rc "merge refuses a problem whose file differs" 2
check_err "it names the problem and both hashes" "problem L1/1: sha256 cb9558fec9f9... in $R/a vs 000000000000... in $R/d"
run_sb merge "$R/mm" "$R/a" "$R/single"
check_rc "overlapping shards are refused" 2
check_err "naming the key and both shards" "samples L1/1 sample 0 attempt 0 is in both $R/a and $R/single"
run_sb merge "$R/mm" "$R/a" "$R/single" --force
check_rc "even with --force" 2
run_sb merge "$R/mx" "$R/a" "$TMP/nothing"
check_rc "a missing input is an input error" 2
run_sb export "$FIX/shard_a.jsonl"
check_rc "a file that is not a store is an input error" 2
check_err "it says so" "is not an SQLite database, so not a results store"

# CSV, read back by Python's csv module.
# Every JSONL row says whose verdict it is: the key and stage, the same values as the CSV's columns.
"$SB" export "$R/merged" >"$TMP/v.jsonl"
got=$(python3 - "$TMP/v.jsonl" <("$SB" export "$R/merged" --format csv) <<'PY' 2>&1
import csv, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
table = list(csv.DictReader(open(sys.argv[2], newline="")))
keys = [list(r)[:5] for r in rows]
same = [(r["agent"], r["problem"], str(r["sample"]), str(r["attempt"]), r["stage"] or "") ==
        (c["agent"], c["problem"], c["sample"], c["attempt"], c["stage"]) for r, c in zip(rows, table)]
print(len(rows), len(table), keys[0], all(same), all(r["verdict"]["problem"]["ref"] == r["problem"] for r in rows))
PY
)
check_eq "export --format jsonl rows carry the key and stage, row for row as in the CSV" "$got" \
	"9 9 ['agent', 'problem', 'sample', 'attempt', 'stage'] True True"
run_sb export "$R/merged" --format csv -o "$TMP/v.csv"
check_rc "export --format csv -o FILE" 0
got=$(python3 - "$TMP/v.csv" <<'PY' 2>&1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
wrong = [r for r in rows if r["problem"] == "L1/3" and r["sample"] == "0"][0]
rej = [r for r in rows if r["status"] == "rejected"][0]
print(len(rows), rows[0]["problem"], rows[0]["speedup_eager"], wrong["message"], wrong["compiled"], wrong["correct"],
      rej["hack"], repr(wrong["speedup_eager"]), float(rows[0]["speedup_eager_ci95_lo"]) == 1.5 * 0.99)
PY
)
want='9 L1/1 1.5 trial 0: out0: 417 of 4096 elements differ, worst "expected 0.5" at [3, 17] 1 0 1 '"''"' True'
if [ "$got" = "$want" ]; then _report ok "the CSV parses: 9 rows, quoted commas and quotes, flags, empty missing numbers"; else
	_report fail "the CSV parses: 9 rows, quoted commas and quotes, flags, empty missing numbers" "got:  $got
want: $want"; fi
if head -1 "$TMP/v.csv" | grep -q $'\r$'; then _report ok "CSV lines end in CRLF (RFC 4180)"; else _report fail "CSV lines end in CRLF (RFC 4180)" "$(head -1 "$TMP/v.csv" | od -c | tail -3)"; fi
run_sb export "$R/merged" --format xml
check_rc "an unknown format is a usage error" 2

# A verdict timed on a busy machine (timing.noise.noisy) is read back from the store and warned about.
python3 - "$FIX/shard_a.jsonl" >"$TMP/noisy.jsonl" <<'PY'
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    v = json.loads(line)
    v["timing"]["noise"] = {"measured": True, "noisy": i == 0, "cpus": 2, "others_pct": 60.0 if i == 0 else 1.0,
                            "steal_pct": 0.0, "reference_cv": 0.01, "why": "other processes took 60% of the 2 CPUs' time" if i == 0 else ""}
    print(json.dumps(v))
PY
run_sb import "$R/noisy" "$TMP/noisy.jsonl"
run_sb metrics "$R/noisy"
check_out "metrics warn about the verdict timed on a busy machine" "Warning: 1 of the 2 timed problems of samples were timed on a busy machine"
run_sb metrics "$R/noisy" --json
got=$(python3 -c 'import json,sys; c=json.load(sys.stdin)["agents"][0]["levels"]["all"]; print(c["timed"], c["timed_noisy"])' <<<"$OUT_TXT" 2>&1)
check_eq "and --json counts it" "$got" "2 1"

# fast_p against a published baseline (KernelBench's baseline_time_torch.json): the baseline's mean over
# the candidate's (0.1 ms in every fixture), for each representative clean pass: L1/1 2x, L1/2 0.5x, L2/1
# 3x; L1/4, L2/2 and L2/3 have no entry; 7 problems in the denominator; faster than p means above it
# (L1/2 at exactly 0.5x is not in fast_0.5, L1/1 at 2x not in fast_2).
cat >"$TMP/baseline_time_torch.json" <<'JSON'
{"level1": {"1_Square_GEMM.py": {"mean": 0.2, "hardware": "NVIDIA H100"}, "2_ReLU.py": {"mean": 0.05, "hardware": "NVIDIA H100"},
            "3_Sum.py": {"mean": 1.0, "hardware": "NVIDIA H100"}},
 "level2": {"1_Fused.py": {"mean": 0.3, "hardware": "NVIDIA H100"}}}
JSON
run_sb metrics "$R/merged" --baseline "$TMP/baseline_time_torch.json"
check_rc "metrics --baseline" 0
check_out "it names the file's hardware" "(hardware: NVIDIA H100)"
check_out "and says the candidates ran elsewhere" "The candidates were timed on NVIDIA H200, not on the baseline's hardware"
check_out "fast_p and the geomean against the baseline, the problems without an entry listed" \
	"| samples | 7 | 42.9 | 28.6 | 28.6 | 28.6 | 28.6 | 14.3 | 1.442x (3) | L1/4, L2/2, L2/3 |"
run_sb metrics "$R/merged" --baseline "$TMP/baseline_time_torch.json" --json
got=$(python3 -c 'import json,sys; b=json.load(sys.stdin)["vs_baseline"]; a=b["agents"][0]; print(b["hardware"], round(a["fast_pct"]["1"], 1), round(a["geomean"], 3), a["without_baseline"])' <<<"$OUT_TXT" 2>&1)
check_eq "and in --json" "$got" "NVIDIA H100 28.6 1.442 3"
echo '{"nothing": 1}' >"$TMP/bad_baseline.json"
run_sb metrics "$R/merged" --baseline "$TMP/bad_baseline.json"
check_rc "a file without timings is an input error" 2
check_err "that says what the layout is" "no timing in it"

# KernelBench's eval_results.json: one agent and one level; ms; a hack is not correct there either.
run_sb export "$R/merged" --format kernelbench
check_rc "kernelbench: a run with two levels needs --level" 2
check_err "it says why and what to add" "add --level 1, 2 or 3"
run_sb export "$R/merged" --format kernelbench --level 1 -o "$TMP/eval_results.json"
check_rc "export --format kernelbench --level 1" 0
got=$(python3 - "$TMP/eval_results.json" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
e = r["1"]
print(sorted(r), [(x["sample_id"], x["correctness"], x["runtime"], x["runtime_stats"].get("num_trials")) for x in e],
      e[0]["metadata"]["hardware"], r["3"][0]["correctness"], r["3"][0]["runtime"], r["4"][0]["compiled"],
      sorted(e[0]) == ["compiled", "correctness", "metadata", "runtime", "runtime_stats", "sample_id"])
PY
)
check_eq "its layout: problem ids, one entry per sample, ms, the GPU named, failures at -1" "$got" \
	"['1', '2', '3', '4'] [(0, True, 0.1, 3), (1, True, 0.1, 3)] NVIDIA H200 False -1.0 False True"
run_sb export "$R/merged" --format kernelbench --level 2
got=$(python3 -c 'import json,sys; r=json.load(sys.stdin); x=r["2"][0]; print(x["correctness"], x["compiled"], x["runtime"], x["metadata"]["stitchbench_status"], x["metadata"]["stitchbench_findings"])' <<<"$OUT_TXT" 2>&1)
check_eq "a rejected hack is not correct, with its status and finding in metadata" "$got" "False True -1.0 rejected H10"
run_sb export "$R/merged" --format kernelbench --level 1 --agent nobody
check_rc "an agent the run lacks is an input error" 2
check_err "naming the agents it has" "no verdicts of agent 'nobody' (the run has samples)"
run_sb export "$R/merged" --level 1
check_rc "--level without --format kernelbench is a usage error" 2

# Metrics, worked out by hand in tests/fixtures/verdicts/README.md.
run_sb metrics "$R/merged"
check_rc "metrics prints the table" 0
check_out_points "agents as rows, levels as columns: correct / fast_1 / geomean" "| samples | 50.0 / 25.0 / 1.225x | 33.3 / 0.0 / 0.500x | 42.9 / 14.3 / 0.909x |"
check_out_re "each headline number carries its 95% interval" '^\| samples \| 50\.0 \[[0-9.]+, [0-9.]+\] / 25\.0 \[[0-9.]+, [0-9.]+\] / 1\.225x \[[0-9.]+, [0-9.]+\] \| '
check_out "and the table's heading says so" "## correct % / fast_1 % / geometric-mean speedup vs eager, each [95% interval]"
check_out "fast_0.5 counts 0.5 as not faster" "| fast_0.5 % | 50.0 | 0.0 | 28.6 |"
check_out "hack % counts the rejected candidate" "| hack % | 0.0 | 33.3 | 14.3 |"
check_out "geomean vs compiled is n/a without a compiled side" "| geomean vs compiled (n) | 0.980x (2) | n/a (0) | 0.980x (2) |"
check_out "no LLM calls: tokens are n/a" "| tokens to first correct | n/a | n/a | n/a |"
run_sb metrics "$R/merged" --by best
check_out_points "--by best takes the best sample" "| samples | 75.0 / 50.0 / 1.957x | 33.3 / 0.0 / 0.500x | 57.1 / 28.6 / 1.392x |"
run_sb metrics "$R/a" "$R/b" --json
got=$(python3 -c 'import json,sys; j=json.load(sys.stdin); a=[x["agent"] for x in j["agents"]]; c=j["agents"][1]["levels"]["1"]; print(a, c["problems"], c["fast_pct"]["1"], j["by"])' <<<"$OUT_TXT" 2>&1)
if [ "$got" = "['samples@a', 'samples@b'] 2 50.0 first" ]; then _report ok "metrics of two runs keeps same-named agents apart, as JSON"; else
	_report fail "metrics of two runs keeps same-named agents apart, as JSON" "$got"; fi
run_sb metrics "$R/mc"
check_err "metrics warns when runs were made with other settings" "eval.trials: 5 in run a of $R/mc vs 3 in run c of $R/mc"
run_sb import "$R/two" "$FIX/shard_a.jsonl" --agent base --model qwen3-32b
run_sb import "$R/two" "$FIX/shard_b.jsonl"
run_sb metrics "$R/two"
check_out_points "two agents of one run are two rows; base's 4 problems without a verdict count as failures" \
	"| base | 50.0 / 25.0 / 1.225x | 0.0 / 0.0 / n/a | 28.6 / 14.3 / 1.225x |"
check_out "the table says what the rates are over" "a problem without a verdict counting as a failure (--denominator all)"
check_out "and how many problems had no verdict" "| no verdict (counted as failed) | 1 | 3 | 4 |"
check_err "an agent that lacks verdicts for some problems of its run is named" \
	"agent base has verdicts for 3 of the 7 problems in $R/two; the 4 without one count as failures"
run_sb metrics "$R/two" --denominator judged
check_out_points "--denominator judged rates base over its 3 problems" "| base | 66.7 / 33.3 / 1.225x | - | 66.7 / 33.3 / 1.225x |"
check_out "and says so" "problems without one are left out (--denominator judged)"
run_sb metrics "$R/two" --json
check_eq "--json names the denominator and counts the problems without a verdict" \
	"$(python3 -c 'import json,sys; j=json.load(sys.stdin); c=j["agents"][0]["levels"]["all"]; print(j["denominator"], c["problems"], c["problems_without_verdict"])' <<<"$OUT_TXT" 2>&1)" \
	"all 7 4"
run_sb metrics "$R/two" --denominator some
check_rc "a bad --denominator is a usage error" 2
check_err "naming both choices" "--denominator some: use all or judged"
# What export writes, import reads: the key and stage from each row, so the run comes back whole.
"$SB" export "$R/two" >"$TMP/two.jsonl"
run_sb import "$R/two_back" "$TMP/two.jsonl"
check_rc "import reads the rows of export --format jsonl" 0
check_out "every row is a verdict" "imported 9 verdicts into $R/two_back/results.db (0 already there)"
check_eq "its export gives the same rows back" "$("$SB" export "$R/two_back" | cmp - "$TMP/two.jsonl" 2>&1 && echo same)" same
metrics_json() { "$SB" metrics "$1" --json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); j.pop("inputs"); print(json.dumps(j, sort_keys=True))'; }
check_eq "and metrics agree" "$(metrics_json "$R/two_back")" "$(metrics_json "$R/two")"
run_sb import "$R/two_back" "$TMP/two.jsonl"
check_out "importing the rows again changes nothing" "imported 0 verdicts into $R/two_back/results.db (9 already there)"
# rows and bare verdicts in one file; --agent renames the rows' agent
{ head -1 "$TMP/two.jsonl"; tail -1 "$FIX/shard_b.jsonl"; } >"$TMP/mixed.jsonl"
run_sb import "$R/mixed" "$TMP/mixed.jsonl" --agent renamed
check_out "a file may mix rows and bare verdicts" "imported 2 verdicts into $R/mixed/results.db (0 already there)"
check_eq "both under the agent --agent names" "$("$SB" export "$R/mixed" --format csv | python3 -c 'import csv,sys; print(sorted((r["agent"], r["problem"]) for r in csv.DictReader(sys.stdin)))')" \
	"[('renamed', 'L1/1'), ('renamed', 'L2/3')]"
python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); r["problem"]="L1/2"; print(json.dumps(r))' <"$TMP/two.jsonl" >"$TMP/wrong_key.jsonl"
run_sb import "$R/wrong" "$TMP/wrong_key.jsonl"
check_rc "a row whose key disagrees with its verdict is refused" 2
check_err "naming the line and both problems" "wrong_key.jsonl:1: the row says problem L1/2 but its verdict is for L1/1"

# A problem whose reference failed is the problem's failure, not the agent's: out of the denominator.
cp -r "$R/two" "$R/reffail"
printf '%s\n' '{"agents": ["base", "samples"], "problems": ["L1/1", "L1/2", "L1/3", "L1/4", "L1/5", "L2/1", "L2/2",' \
	'"L2/3"], "samples": {"base": 1, "samples": 1}}' >"$R/reffail/run.json"
python3 - "$R/reffail/results.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO problems (ref, level, id, name, sha256) VALUES ('L1/5', 1, 5, NULL, '00')")
# the table as docs/store.md describes it, with the rows a run writes when a problem's reference raised
db.execute("CREATE TABLE reference_failures (agent TEXT NOT NULL REFERENCES agents(name), problem TEXT NOT NULL "
           "REFERENCES problems(ref), sample INTEGER NOT NULL, message TEXT NOT NULL, created TEXT NOT NULL, "
           "PRIMARY KEY (agent, problem, sample))")
for agent in ("base", "samples"):
    db.execute("INSERT INTO reference_failures VALUES (?, 'L1/5', 0, 'the reference raised ZeroDivisionError', "
               "'2026-01-01T00:00:00Z')", (agent,))
db.commit()
PY
run_sb metrics "$R/reffail"
check_rc "metrics of a run with a reference failure" 0
check_out "says which problem could not be judged, and why, in a line of its own" \
	"1 problem could not be judged: its reference failed, or the machine could not run the candidate; the harness's, the problem's or the machine's failure, not the agent's, so it is left out of the rates of the agents without a verdict for it: L1/5 (base, samples: the reference raised ZeroDivisionError)."
check_out_points "the rates stay those over the 7 problems judged or without a verdict" \
	"| base | 50.0 / 25.0 / 1.225x | 0.0 / 0.0 / n/a | 28.6 / 14.3 / 1.225x |"
check_out "the problem is counted apart" "| not judged (left out) | 1 | 0 | 1 |"
check_err "the coverage warning counts it apart" \
	"agent base has verdicts for 3 of the 8 problems in $R/reffail; the 4 without one count as failures (--denominator judged leaves them out); the 1 not judged (reference failed, cannot_judge) is left out"
run_sb metrics "$R/reffail" --denominator judged --json
check_eq "--denominator judged leaves it out too, and --json lists it" \
	"$(python3 -c 'import json,sys; j=json.load(sys.stdin); c=j["agents"][0]["levels"]["all"]; print(c["problems"], c["problems_reference_failed"], [(f["agent"], f["problem"]) for f in j["reference_failures"]])' <<<"$OUT_TXT" 2>&1)" \
	"3 1 [('base', 'L1/5'), ('samples', 'L1/5')]"

run_sb import "$R/two" "$FIX/shard_a.jsonl" --agent base --model gpt
check_rc "one agent name cannot stand for two models" 2
check_err "it says which" "agent base is stored in $R/two/results.db as kind samples, model qwen3-32b"
run_sb metrics "$R/merged" --by worst
check_rc "a bad --by is a usage error" 2

for cmd in import merge metrics export; do
	run_sb help "$cmd"
	check_out "help $cmd explains its exit codes" "Exit codes:"
done

# eval --samples --run: verdicts go to the run's store as well as to the JSONL (a quick CPU evaluation).
use_cache
export STITCHBENCH_TEST_SUITE="$SMALL_SUITE"
gen="$TMP/gen"; mkdir -p "$gen"
printf 'import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n' \
	>"$gen/level_1_problem_2_sample_0_kernel.py"
cp "$SB_ROOT/tests/fixtures/candidates/syntax_error.py" "$gen/level_1_problem_2_sample_1_kernel.py"
EVAL=(--samples "$gen" --set "output.dir=$R" --device cpu --trials 2 --perf-trials 3)
run_sb eval "${EVAL[@]}" -o "$TMP/e.jsonl" --run evalrun
check_rc "eval --samples --run judges the folder" 0
check_out "it names the run's store" "stored in run evalrun: $R/evalrun/results.db"
check_true "the run directory has its config.yaml" test -s "$R/evalrun/config.yaml"
"$SB" export "$R/evalrun" | verdict_text | sort >"$TMP/e_store.jsonl"
sort "$TMP/e.jsonl" >"$TMP/e_file.jsonl"
if [ "$(wc -l <"$TMP/e_store.jsonl")" = 2 ] && cmp -s "$TMP/e_store.jsonl" "$TMP/e_file.jsonl"; then
	_report ok "the store holds exactly the verdicts of the JSONL"; else
	_report fail "the store holds exactly the verdicts of the JSONL" "$(diff "$TMP/e_store.jsonl" "$TMP/e_file.jsonl" | head -4)"; fi
got=$("$SB" export "$R/evalrun" --format csv | python3 -c 'import csv,sys; print(sorted((r["agent"], r["problem"], r["sample"], r["attempt"]) for r in csv.DictReader(sys.stdin)))' 2>&1)
if [ "$got" = "[('samples', 'L1/2', '0', '0'), ('samples', 'L1/2', '1', '0')]" ]; then
	_report ok "keyed by agent samples, the file name's sample, attempt 0"; else _report fail "keyed by agent samples, the file name's sample, attempt 0" "$got"; fi
run_sb eval "${EVAL[@]}" -o "$TMP/e2.jsonl" --run evalrun
check_out "a second run with another JSONL skips what the run holds" "0 judged"
run_sb eval "${EVAL[@]}" -o "$TMP/e.jsonl" --run evalrun2
check_err "verdicts only in the JSONL are pointed to import" "2 verdicts already in $TMP/e.jsonl are not in run evalrun2"
run_sb eval "${EVAL[@]}" --run evalrun --trials 3
check_rc "resuming a run with other settings is refused" 2
check_err "naming them" "eval.trials: 2 in the stored run vs 3 in this invocation"
run_sb eval "${EVAL[@]}" --run evalrun --set eval.tf32=true --set eval.robust_trials=0 --set eval.warmup_ms=7
check_rc "resuming a run with another public or hidden key is refused" 2
check_err "naming eval.tf32" "eval.tf32: false in the stored run vs true in this invocation"
check_err "naming eval.robust_trials" "eval.robust_trials: 2 in the stored run vs 0 in this invocation"
check_err "naming eval.warmup_ms" "eval.warmup_ms: 100 in the stored run vs 7 in this invocation"
run_sb eval "${EVAL[@]}" --run evalrun --set eval.fork_server=false --set eval.build_jobs=1
check_rc "an internal key is not part of the identity: the run resumes" 0
check_out "and skips what it holds" "0 judged"
run_sb eval "$gen/level_1_problem_2_sample_0_kernel.py" --problem L1/2 --run x
check_rc "--run with a single file is a usage error" 2
run_sb eval "${EVAL[@]}" --run ../escape
check_rc "a run id that is not a folder name is refused" 2
