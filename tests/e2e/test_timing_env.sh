#!/usr/bin/env bash
# test_timing_env.sh - what the workers' Python looks like while they time: the garbage collector paused
# inside timed blocks unless eval.timing_gc, and one PYTHONHASHSEED for every worker (eval.hash_seed), so
# two processes running the same Python do not differ by their dict layouts; and the host's time per call
# in the verdict. Both are observed from
# inside the sandboxed candidate (tests/fixtures/candidates/{gc,hash}_probe.py), not from what the
# worker says it did.
source "$(dirname "$0")/lib.sh"
use_cache
FIX="$SB_ROOT/tests/fixtures/candidates"
FAST=(--problem L1/2 --device cpu --trials 1 --perf-trials 3 --json --set checks.static=false
	--set eval.warmup_ms=0 --set eval.warmup_calls=1 "${NO_OPREC[@]}")
field() { python3 -c "import json,sys; v=json.loads(sys.stdin.read()); print($1)" <<<"$OUT_TXT" 2>&1; }
py=$("$SB" doctor 2>/dev/null | awk '$1=="ok" && $2=="python" {print $3}')

# the collector: running in the correctness trials, paused in the timed calls (so H12 sees the +1)
run_sb eval "$FIX/gc_probe.py" "${FAST[@]}"
got=$(field 'v["status"], [f["id"] for f in v["findings"]], v["trials"][0]["pass"], v["settings"]["timing_gc"]')
if [ "$got" = "rejected ['H12'] True False" ]; then _report ok "the collector is paused in timed calls only ($got)"
else _report fail "the collector is paused in timed calls only" "$got; $ERR_TXT"; fi

run_sb eval "$FIX/gc_probe.py" "${FAST[@]}" --set eval.timing_gc=true
got=$(field 'v["status"], v["settings"]["timing_gc"]')
if [ "$got" = "pass True" ]; then _report ok "eval.timing_gc=true leaves it running ($got)"
else _report fail "eval.timing_gc=true leaves it running" "$got; $ERR_TXT"; fi
# the host's time per call is in the verdict beside the measured one (on the CPU they are the same clock)
got=$(field 'v["timing"]["candidate"]["host"]["n"] == v["timing"]["pairs"] == 3, v["timing"]["candidate"]["host"]["median_us"] == v["timing"]["candidate"]["median_us"], v["timing"]["eager"]["lead_us_max"], v["timing"]["candidate"]["exposed_calls"]')
if [ "$got" = "True True 0 0" ]; then _report ok "the verdict has each side's host time per call, no lead on the CPU ($got)"
else _report fail "the verdict has each side's host time per call, no lead on the CPU" "$got; ${OUT_TXT:0:400}"; fi

# the hash seed: the candidate's message carries hash() of a fixed string
probe_hash() { run_sb eval "$FIX/hash_probe.py" "${FAST[@]}" "$@"; field 'v["message"]' | grep -o 'hash_probe -\?[0-9]*'; }
want=$(PYTHONHASHSEED=0 "${py:-python3}" -c 'print("hash_probe %d" % hash("stitchbench hash probe"))')
a=$(probe_hash); b=$(probe_hash)
if [ -n "$a" ] && [ "$a" = "$want" ] && [ "$a" = "$b" ]; then _report ok "by default every candidate worker hashes with PYTHONHASHSEED=0 ($a)"
else _report fail "by default every candidate worker hashes with PYTHONHASHSEED=0" "got '$a' and '$b', want '$want'; $ERR_TXT"; fi

want7=$(PYTHONHASHSEED=7 "${py:-python3}" -c 'print("hash_probe %d" % hash("stitchbench hash probe"))')
c=$(probe_hash --set eval.hash_seed=7)
if [ -n "$c" ] && [ "$c" = "$want7" ]; then _report ok "eval.hash_seed=7 is the seed the worker runs with ($c)"
else _report fail "eval.hash_seed=7 is the seed the worker runs with" "got '$c', want '$want7'"; fi

d=$(probe_hash --set eval.hash_seed=-1); e=$(probe_hash --set eval.hash_seed=-1)
if [ -n "$d" ] && [ -n "$e" ] && [ "$d" != "$e" ]; then _report ok "eval.hash_seed=-1 leaves Python's random seed ($d, $e)"
else _report fail "eval.hash_seed=-1 leaves Python's random seed" "got '$d' and '$e'; $ERR_TXT"; fi
