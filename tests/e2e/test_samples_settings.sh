#!/usr/bin/env bash
# test_samples_settings.sh - `eval --samples` over an output file whose lines were judged with other
# settings neither reuses nor mixes them unasked: it refuses (exit 2) naming the file, the line and each
# differing setting with both values, and with --rejudge judges those files again, appending new lines;
# the newest line of a file is the one a rerun goes by, and `import` refuses the mixed file. One tiny CPU
# candidate is judged twice.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
CPU=(--device cpu --trials 2 --perf-trials 3 --set eval.warmup_ms=0 --set eval.warmup_calls=1)
count() { wc -l <"$TMP/v.jsonl" | tr -d ' '; }
trials_of() { python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["settings"]["trials"]) for l in open(sys.argv[1])))' "$1" 2>&1; }

gen="$TMP/gen"; mkdir -p "$gen"
cp "$FIX/relu_cpp_ok.py" "$gen/level_1_problem_2_sample_0_kernel.py"
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}"
check_rc "the folder is judged" 0
check_out "its one file" "1 judged: 1 pass"

run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}"
check_rc "a rerun with the same settings succeeds" 0
check_out "and skips the file judged with them" "0 judged"
check_eq "nothing is appended" "$(count)" 1

run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}" --trials 3
check_rc "a rerun with other trials is refused" 2
check_err "naming the file and the line" "$TMP/v.jsonl:1 was judged with other settings"
check_err "and the setting with both values" "eval.trials: 2 in that line vs 3 in this invocation"
check_err "and what to do" "pass --rejudge"
check_eq "the file is unchanged" "$(count)" 1

run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}" --set checks.static=false "${NO_OPREC[@]}"
check_rc "a checks key the verdict records counts too" 2
check_err "named with both values" "checks.static: true in that line vs false in this invocation"

run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}" --trials 3 --rejudge
check_rc "--rejudge judges with the new settings" 0
check_out "the file judged with the old ones again" "1 judged: 1 pass"
check_err "and says so" "1 judged before with other settings, judged again (--rejudge)"
check_eq "the old line stays, the new one is appended" "$(trials_of "$TMP/v.jsonl")" "2 3"

run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}" --trials 3
check_rc "the newest line of a file is the one a rerun goes by" 0
check_out "so the file is skipped with the new settings" "0 judged"
run_sb eval --samples "$gen" -o "$TMP/v.jsonl" "${CPU[@]}"
check_rc "and refused with the old ones" 2
check_err "naming the newest line" "$TMP/v.jsonl:2 was judged with other settings"
check_err "with both values" "eval.trials: 3 in that line vs 2 in this invocation"
check_eq "still two lines" "$(count)" 2

# a line of a file that is not in the folder counts too: one output file holds one setting
python3 -c '
import json, sys
v = json.loads(open(sys.argv[1]).readlines()[-1])
v["candidate"]["sha256"] = "0" * 64
v["settings"]["trials"] = 5
v["settings"]["identity"]["eval.trials"] = 5
print(json.dumps(v))' "$TMP/v.jsonl" >"$TMP/other.jsonl"
cat "$TMP/v.jsonl" "$TMP/other.jsonl" >"$TMP/w.jsonl"
run_sb eval --samples "$gen" -o "$TMP/w.jsonl" "${CPU[@]}" --trials 3
check_rc "a line of another folder's file with other settings is refused too" 2
check_err "named by its line" "$TMP/w.jsonl:3 was judged with other settings"

run_sb import "$TMP/imp" "$TMP/v.jsonl"
check_rc "import refuses the file that mixes settings" 2
check_err "at its first line of other settings" "$TMP/v.jsonl:2: the verdict's settings differ"

run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 --rejudge
check_rc "--rejudge without --samples is a usage error" 2
