#!/usr/bin/env bash
# test_boundary.sh - the trust boundary (docs/threat-model.md) on the CPU: seeds drawn per evaluation and
# replayed from a verdict; the parent's clock against reported times (H08); repeated inputs against a
# cache by content (H11); signal handlers seen in /proc (H06); the build cache out of a candidate's reach
# and a /dev/shm of its own; the memory limit.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/candidates"
use_cache
QUICK=(--device cpu --trials 2 --perf-trials 3 --json)
OFF=(--set checks.static=false "${NO_OPREC[@]}")
field() { python3 -c "import json,sys; v=json.loads(sys.stdin.read()); print($1)" <<<"$OUT_TXT" 2>&1; }

# seeds: a fresh secret every evaluation, recorded; --seeds replays one exactly
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${QUICK[@]}"
echo "$OUT_TXT" >"$TMP/first.json"
a=$(field 'v["seeds"]["secret"], v["seeds"]["replayed"], [t["seed"] for t in v["trials"]]')
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${QUICK[@]}"
b=$(field 'v["seeds"]["secret"], v["seeds"]["replayed"], [t["seed"] for t in v["trials"]]')
if [[ "$a" == *" False ["* ]] && [ "${a%% *}" != "${b%% *}" ] && [ "${a#* False }" != "${b#* False }" ]; then
	_report ok "each evaluation draws its own secret and seeds ($a / $b)"
else _report fail "each evaluation draws its own secret and seeds" "$a / $b"; fi
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${QUICK[@]}" --seeds "$TMP/first.json"
c=$(field 'v["seeds"]["secret"], v["seeds"]["replayed"], [t["seed"] for t in v["trials"]]')
if [ "${c%% *}" = "${a%% *}" ] && [[ "$c" == *" True "* ]] && [ "${c#* True }" = "${a#* False }" ]; then
	_report ok "--seeds VERDICT replays its seeds exactly, marked replayed"
else _report fail "--seeds VERDICT replays its seeds exactly, marked replayed" "first $a; replay $c"; fi
secret=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seeds"]["secret"])' "$TMP/first.json")
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${QUICK[@]}" --seeds "$secret"
d=$(field '[t["seed"] for t in v["trials"]]')
if [ "$d" = "${a#* False }" ]; then _report ok "--seeds SECRET replays the same"; else _report fail "--seeds SECRET replays the same" "$d vs $a"; fi
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 "${QUICK[@]}" --seeds 1234
check_rc "a malformed secret is a usage error" 2
check_err "it says what a secret is" "32 hex digits"

# the parent's clock: a candidate whose worker reports a quarter of each timed call's time. At the real
# size (960x960, about 0.4 s a call here) what it leaves out is hundreds of times the harness's own work
# per call, whose spread between two processes on a loaded machine is what this clock cannot see below.
STITCHBENCH_TEST_SUITE= run_sb eval "$FIX/forge_channel.py" --problem L1/1 --device cpu --trials 1 --perf-trials 30 --json "${OFF[@]}"
got=$(field 'v["status"], [f["id"] for f in v["findings"]], round(v["timing"]["trusted_clock"]["reported"], 1) if v["timing"] else None')
if [[ "$got" == "rejected ['H08'] "* ]]; then _report ok "reported times below what the parent's clock saw are H08 ($got)"; else
	_report fail "reported times below what the parent's clock saw are H08" "$got; $(field 'v["timing"] and v["timing"]["trusted_clock"]')"; fi
# rejected by the clock alone, it was judged again in fresh processes, and lied there too
got=$(field '(lambda r: r is not None and r["first_excess_us"] > 0 and v["seconds"]["first_evaluation"] > 0)(v["timing"]["trusted_clock"]["retimed"])')
if [ "$got" = True ]; then _report ok "the clock's rejection stands after a second evaluation in fresh processes"; else
	_report fail "the clock's rejection stands after a second evaluation in fresh processes" "$got; $(field 'v["timing"]["trusted_clock"]')"; fi
run_sb eval "$FIX/relu_cpp_ok.py" --problem L1/2 --device cpu --trials 1 --perf-trials 30 --json
got=$(field 'v["status"], v["timing"]["trusted_clock"]["judged"], [f["id"] for f in v["findings"]], v["timing"]["trusted_clock"]["retimed"]')
if [ "$got" = "pass True [] None" ]; then _report ok "an honest candidate agrees with the parent's clock, judged once"; else
	_report fail "an honest candidate agrees with the parent's clock, judged once" "$got; $(field 'v["timing"]["trusted_clock"]')"; fi
# A rejection by the parent's clock alone is judged again in fresh worker processes, and the second verdict
# stands (eval/entry.c): a candidate that lies in its first evaluation only (a mark outside the worker's
# private /tmp; landlock off so that it can write it) passes on its honest second one, which times its 20 ms
# calls as they are. 20 ms, so that the lie stands many standard errors clear of a loaded CI machine's noise
# (2 ms was 1.6 of them there, with the reference's own work at 3 ms a call). The second's excess is held
# against the first's lie, not a fixed bound: on a loaded machine a worker that sleeps 20 ms a call does the
# harness's work between its calls cold, over a millisecond a call more than the reference's in one CI run.
MARK=$(mktemp -d /var/tmp/sb-mark.XXXXXX)
sed "s#@MARK@#$MARK/first#" "$FIX/forge_once.py" >"$TMP/forge_once.py"
STITCHBENCH_SANDBOX_DISABLE=landlock run_sb eval "$TMP/forge_once.py" --problem L1/2 --device cpu --trials 1 \
	--perf-trials 30 --json "${OFF[@]}"
got=$(field '(lambda t, r: (v["status"], [f["id"] for f in v["findings"]], r is not None and r["first_excess_us"] > 1000 and t["excess_us"] < r["first_excess_us"] / 4, v["speedup"]["vs_eager"] < 0.5))(v["timing"]["trusted_clock"], v["timing"]["trusted_clock"]["retimed"])')
if [ "$got" = "(pass, [], True, True)" ] || [ "$got" = "('pass', [], True, True)" ] && [ -e "$MARK/first" ]; then
	_report ok "a first evaluation that only the clock rejects is judged again; the honest second stands"
else _report fail "a first evaluation that only the clock rejects is judged again; the honest second stands" \
	"$got; $(field 'v["timing"] and v["timing"]["trusted_clock"]')"; fi
rm -rf "$MARK"

# inputs repeated unannounced: a cache by content answers those faster. At the real size (960x960): at
# the small suite's the hash costs what the product costs, and a loaded machine's noise hides the gap.
STITCHBENCH_TEST_SUITE= run_sb eval "$FIX/content_cache.py" --problem L1/1 --device cpu --trials 1 --perf-trials 30 --json "${OFF[@]}"
got=$(field 'v["status"], [f["id"] for f in v["findings"]], v["timing"] and v["timing"]["repeats"]["calls"]')
if [[ "$got" == "rejected ['H11'"* ]]; then _report ok "a cache by content is H11 from the repeated calls ($got)"; else
	_report fail "a cache by content is H11 from the repeated calls" "$got; $(field 'v["timing"] and v["timing"]["repeats"]')"; fi

# a signal handler, as the kernel shows it
run_sb eval "$FIX/signal_handler.py" --problem L1/2 "${QUICK[@]}" "${OFF[@]}"
got=$(field 'v["status"], [f["id"] for f in v["findings"]], "SIGUSR1" in v["message"]')
if [ "$got" = "rejected ['H06'] True" ]; then _report ok "a signal handler the candidate installed is H06, from /proc"; else
	_report fail "a signal handler the candidate installed is H06, from /proc" "$got"; fi

# the build cache and /dev/shm: out of reach, and its own
run_sb eval "$FIX/shm_plant.py" --problem L1/2 "${QUICK[@]}" "${OFF[@]}"
got=$(field 'v["status"], v["sandbox"]["private_tmp"] or v["sandbox"]["pid_namespace"]')
if [ "$got" = "pass True" ] && [ ! -e "$STITCHBENCH_CACHE/ext/planted" ]; then
	_report ok "a candidate can neither read nor write the build cache"
else _report fail "a candidate can neither read nor write the build cache" "$got; $(ls "$STITCHBENCH_CACHE/ext" 2>&1)"; fi
if [ ! -e /dev/shm/stitchbench-left-behind ]; then _report ok "what it left in /dev/shm went with it"; else
	_report fail "what it left in /dev/shm went with it" "/dev/shm/stitchbench-left-behind is there"; rm -f /dev/shm/stitchbench-left-behind; fi
echo "from an earlier candidate" >/dev/shm/stitchbench-left-behind
run_sb eval "$FIX/shm_find.py" --problem L1/2 "${QUICK[@]}" "${OFF[@]}"
rm -f /dev/shm/stitchbench-left-behind
got=$(field 'v["status"]')
if [ "$got" = pass ]; then _report ok "a candidate's /dev/shm is its own: nothing left there reaches it"; else
	_report fail "a candidate's /dev/shm is its own" "$got"; fi

# the memory limit
run_sb eval "$FIX/memory_hog.py" --problem L1/2 "${QUICK[@]}" "${OFF[@]}"
check_rc "a candidate past the memory limit exits 1" 1
got=$(field 'v["status"], "memory it may use" in v["message"], v["sandbox"]["memory_limit_bytes"] > 0')
if [ "$got" = "runtime_error True True" ]; then _report ok "its verdict says it ran out of the memory it may use"; else
	_report fail "its verdict says it ran out of the memory it may use" "$got; $(field 'v["message"]')"; fi

# the caches a candidate may not read, reached through symbolic links: a cache root that is a link, and
# ref/ and ext/ that are links to folders elsewhere (a cache on shared storage, the suite's shared test
# cache). Neither the links nor their targets may be listed.
lk="$TMP/links"
mkdir -p "$lk/shared/ref" "$lk/shared/ext" "$lk/cache"
ln -s "$lk/shared/ref" "$lk/cache/ref"
ln -s "$lk/shared/ext" "$lk/cache/ext"
ln -s "$lk/cache" "$lk/alias"
cat >"$TMP/peek_links.py" <<PY
# lists every way to the hidden caches it knows; each must fail inside the sandbox
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        seen = []
        for p in ("$lk/alias/ref", "$lk/alias/ext", "$lk/cache/ref", "$lk/cache/ext", "$lk/shared/ref", "$lk/shared/ext"):
            try:
                os.listdir(p)
                seen.append(p)
            except OSError:
                pass
        if seen:
            raise RuntimeError("listed " + " ".join(seen))
        return torch.relu(x)
PY
STITCHBENCH_CACHE="$lk/alias" run_sb eval "$TMP/peek_links.py" --problem L1/2 "${QUICK[@]}" "${OFF[@]}"
got=$(field 'v["status"], v["sandbox"]["landlock_abi"] > 0, (v["message"] or "")[:300]')
if [[ "$got" == "pass True "* ]]; then _report ok "a cache reached through links hides its ref/ and ext/ and their targets"
elif [[ "$got" == *" False "* ]]; then skip "a cache reached through links hides its ref/ and ext/ and their targets" "no Landlock on this kernel"
else _report fail "a cache reached through links hides its ref/ and ext/ and their targets" "$got"; fi
