#!/usr/bin/env bash
# gpu-check.sh - `make test-gpu`: the checks that need a real NVIDIA GPU. On a machine without
# one it says so and skips (it never passes vacuously). Ends with "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/.."
SB=bin/stitchbench
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -20 | sed 's/^/     /'; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "gpu-check: skipped: no NVIDIA GPU here (nvidia-smi missing or failing); run it on a GPU node"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
# Sections to run (all by default): basic (doctor, suite on the GPU), eval (CUDA candidates), fidelity,
# prof (libstitchprof, stitchbench profile, profiling overhead; scripts/gpu/prof-check.sh).
# agents (the demo run with the CUDA cassettes). gpus (run --gpus all: one evaluation slot per GPU; on
# one GPU only the single-slot checks run, the rest are skipped: use a node with two or more).
# hacks (the adversarial corpus with the runtime checks on, the floor's bandwidth, the audit on the GPU).
# SB_FIDELITY_SET="key=value ..." adds --set options to the fidelity batch (to compare timing settings);
# SB_FIDELITY_PROBLEMS=L1/2,L3/4 runs it on those bundled problems only.
sections=",${SB_GPU_CHECK_SECTIONS:-basic,eval,fidelity,prof,agents,gpus,hacks},"
want() { [[ "$sections" == *",$1,"* ]]; }
echo "gpu-check on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F)"
export STITCHBENCH_CACHE="${STITCHBENCH_CACHE:-$(mktemp -d)/cache}"
FIX=tests/fixtures/candidates/cuda

# The candidates that eval and prof evaluate one at a time are built first, side by side on the node's
# cores (a cold CUDA build is the bulk of a section's time), while basic runs. They are built the way every
# evaluation builds: `eval --samples` hands a folder's files to the trusted builder in parallel, which
# publishes each build under the key of its bytes and settings, so the sections' evaluations find them
# built. Correctness and timing are cut to the least: only the builds are wanted.
pre=()
want eval && pre+=("$FIX/relu_cuda_ok.py" "$FIX/relu_cuda_wrong.py" "$FIX/illegal_access.py")
want prof && pre+=("$FIX/prof_check.py" "$FIX/relu_cuda_ok.py" "$FIX/relu_spin.py" tests/adversarial/hacks/h05_side_stream.py)
prebuild_log=$(mktemp)
if [ ${#pre[@]} -gt 0 ]; then
	prebuild_dir=$(mktemp -d)
	k=0
	for f in $(printf '%s\n' "${pre[@]}" | sort -u); do
		cp "$f" "$prebuild_dir/level_1_problem_2_sample_${k}_kernel.py"
		echo "sample $k: $f" >>"$prebuild_log"
		k=$((k + 1))
	done
	$SB eval --samples "$prebuild_dir" -o "$prebuild_dir/verdicts.jsonl" --trials 1 --perf-trials 0 --no-compile \
		--set eval.robust_trials=0 --set checks.static=false --set checks.runtime=false --set eval.profile=false \
		>>"$prebuild_log" 2>&1 &
	prebuild_pid=$!
fi
prebuild_wait() {
	[ -n "${prebuild_pid:-}" ] || return 0
	wait "$prebuild_pid"; prebuild_pid=
	sed 's/^/     | /' "$prebuild_log"
}

# --- doctor sees the GPU through nvidia-smi and libcuda, and torch sees it too -------------
out=$($SB doctor 2>&1); rc=$?
py=$(grep -oE '^ok +python +[^ ]+' <<<"$out" | awk '{print $3}')
if want basic; then
echo "$out" | sed 's/^/     | /'
[ $rc -eq 0 ] && ok "doctor exits 0 on the GPU node" || bad "doctor exits 0 on the GPU node (exit $rc)"
smi_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
smi_cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
grep -qE "^ok +gpu +0: $smi_name, sm_$smi_cc, " <<<"$out" && ok "doctor names GPU 0 as nvidia-smi does ($smi_name, sm_$smi_cc)" \
	|| bad "doctor names GPU 0 as nvidia-smi does" "$out"
grep -qE "^ok +gpu +0: .*L2 [0-9]+ MiB" <<<"$out" && ok "doctor reports the L2 size from libcuda" || bad "doctor reports the L2 size" "$out"
grep -qE "^ok +gpu +0: .*[0-9]+ SMs" <<<"$out" && ok "doctor reports the SM count" || bad "doctor reports the SM count" "$out"
grep -qE "^ok +torch +.*CUDA [0-9.]+, [1-9][0-9]* devices? visible" <<<"$out" && ok "doctor finds a CUDA torch" \
	|| bad "doctor finds a CUDA torch" "$out"

# The L2 size doctor prints must equal what torch reports for device 0.
torch_l2=$("$py" -c 'import torch; print(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) // 1048576)' 2>/dev/null)
if [ -n "$torch_l2" ] && [ "$torch_l2" != 0 ]; then
	grep -qE "^ok +gpu +0: .*L2 $torch_l2 MiB" <<<"$out" && ok "doctor's L2 equals torch's ($torch_l2 MiB)" \
		|| bad "doctor's L2 equals torch's ($torch_l2 MiB)" "$out"
else
	skip=$((skip + 1)); echo "skip L2 comparison: this torch does not report L2_cache_size"
fi

# --- the bundled suite runs on the GPU: every problem's forward on CUDA, timed once ---------
res=$("$py" - <<'PY' 2>&1
import glob, importlib.util, os, sys, torch
ok = bad = 0
for path in sorted(glob.glob("kernelbench/suite/level*/[0-9]*_*.py")):
    spec = importlib.util.spec_from_file_location("p", path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    torch.manual_seed(42)
    with torch.device("cuda"):
        model = m.Model(*m.get_init_inputs())
        inputs = [x.cuda() for x in m.get_inputs()]
    model = model.cuda()
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record(); model(*inputs); b.record(); torch.cuda.synchronize()
            times.append(a.elapsed_time(b) * 1000)
    times.sort(); med = times[len(times) // 2]
    status = "ok" if med >= 20 else "SHORT"
    ok += status == "ok"; bad += status != "ok"
    print("%-5s %-48s %9.1f us" % (status, os.path.relpath(path, "kernelbench/suite"), med))
print("SUITE %d %d" % (ok, bad))
PY
)
echo "$res" | sed 's/^/     | /'
read -r _ sok sbad <<<"$(grep '^SUITE' <<<"$res")"
if [ -n "${sok:-}" ] && [ "${sbad:-1}" = 0 ]; then ok "every bundled problem runs on the GPU and takes >= 20 us ($sok problems)"
else bad "every bundled problem runs on the GPU and takes >= 20 us" "$res"; fi
fi

# --- the evaluator on the GPU ------------------------------------------------------------
prebuild_wait
jq_py() { "$py" -c "import json,sys; v=json.load(sys.stdin); $1"; }
if want eval; then
echo "     | [$(date -u +%T)] section eval"

vj=$($SB eval $FIX/relu_cuda_ok.py --problem L1/2 --json 2>/tmp/sb-eval-err); rc=$?
summary=$(jq_py 'print(v["status"], v["timing"]["clock"], "%.3f" % v["speedup"]["vs_eager"], "%.1f" % v["timing"]["eager"]["median_us"], "%.1f" % v["timing"]["candidate"]["median_us"], v["speedup"]["vs_compiled"] is not None, "build %.1f s" % v["seconds"]["build"], "total %.1f s" % v["seconds"]["total"])' <<<"$vj" 2>&1)
echo "     | relu_cuda_ok: $summary"
read -r st clock sp eag cand hascomp _ <<<"$summary"
if [ "$rc" = 0 ] && [ "$st" = pass ] && [ "$clock" = cuda_event ] && [ "$hascomp" = True ] &&
   "$py" -c "import sys; s=float('$sp'); e=float('$eag'); c=float('$cand'); sys.exit(0 if 0.3 < s < 5 and 10 < e < 5000 and 10 < c < 5000 else 1)"; then
	ok "a correct CUDA candidate passes with plausible timings (speedup $sp, eager $eag us, candidate $cand us)"
else bad "a correct CUDA candidate passes with plausible timings" "$summary $(cat /tmp/sb-eval-err)"; fi

# eval.fork_server (default): the worker was forked from the server, and its CUDA context made after the fork
forked=$(jq_py 'print(v["candidate_worker_forked"], v["status"], "build %.2f s" % v["seconds"]["build"])' <<<"$vj" 2>&1)
[[ "$forked" == "True pass "* ]] && ok "the candidate's worker was forked from the fork server and ran CUDA ($forked)" \
	|| bad "the candidate's worker was forked from the fork server" "$forked $(grep -i fork /tmp/sb-eval-err)"

clk=$(jq_py 'c = v["timing"]["gpu_clock"] or {}; print(c.get("available"), c.get("sm_mhz_min"), c.get("sm_mhz_median"), c.get("sm_mhz_max"), c.get("sm_mhz_limit"), ",".join(c.get("reasons") or []) or "-", c.get("note", ""))' <<<"$vj" 2>&1)
echo "     | GPU clock during timing (available min median max limit reasons): $clk"
read -r cav _ cmed _ climit _ <<<"$clk"
[ "$cav" = True ] && [ "${cmed:-0}" -gt 0 ] 2>/dev/null && [ "${climit:-0}" -ge "${cmed:-0}" ] \
	&& ok "the verdict says at which SM clock it was timed (NVML: median $cmed MHz of $climit)" \
	|| bad "the verdict says at which SM clock it was timed" "$clk"

# the prebuild above built it the evaluator's way (device arch, lean headers), so this load was a cache hit
bl=$(jq_py 'b = (v.get("builds") or [{}])[0]; print(b.get("cached"), b.get("lean_headers"), "%.2f" % (b.get("seconds") or 0), b.get("key"))' <<<"$vj" 2>&1)
echo "     | relu_cuda_ok build (cached lean seconds key): $bl"
read -r bcached blean _ <<<"$bl"
[ "$bcached" = True ] && [ "$blean" = True ] && ok "the prebuilt extension is a cache hit in the evaluator, built with lean headers" \
	|| bad "the prebuilt extension is a cache hit in the evaluator, built with lean headers" \
		"$bl, evaluator's python $(jq_py 'print(v["env"]["python"], v["env"]["torch"])' <<<"$vj"); cache: $(ls "$STITCHBENCH_CACHE/ext")"

vj=$($SB eval $FIX/relu_cuda_wrong.py --problem L1/2 --json --no-compile 2>/tmp/sb-eval-err); rc=$?
got=$(jq_py 'o=v["trials"][0]["outputs"][0]; print(v["status"], o["worst_index"], round(o["max_abs_error"], 3))' <<<"$vj" 2>&1)
[ "$rc" = 1 ] && [ "$got" = "incorrect 16777212 1.0" ] && ok "a wrong kernel is caught at the right element ($got)" \
	|| bad "a wrong kernel is caught at the right element" "$got $(cat /tmp/sb-eval-err)"
# eval.exchange: auto shares outputs on a GPU (device memory to the reference worker); the file exchange
# must give the same verdict, statistics and runtime checks
# (the second replays the first's seeds: each evaluation draws inputs from a secret of its own)
for cand in relu_cuda_wrong relu_cuda_ok; do
	seeds=$(mktemp)
	same=$(for mode in auto files; do
		replay=(); [ -s "$seeds" ] && replay=(--seeds "$seeds")
		$SB eval $FIX/$cand.py --problem L1/2 --json --no-compile --set eval.exchange=$mode "${replay[@]}" 2>>/tmp/sb-eval-err |
			tee -a "$seeds" |
			jq_py 'rt = v.get("runtime") or {}; t = [{k: x for k, x in d.items() if k != "run_s"} for d in v["trials"]]; print(v["settings"]["exchange"], json.dumps([v["status"], v["message"], t, rt.get("determinism"), rt.get("rotation"), [f["id"] for f in v["findings"]]], sort_keys=True))'
	done 2>&1)
	modes=$(cut -d' ' -f1 <<<"$same" | tr '\n' ' ')
	if [ "$modes" = "shared files " ] && [ "$(sed -n 1p <<<"$same" | cut -d' ' -f2-)" = "$(sed -n 2p <<<"$same" | cut -d' ' -f2-)" ]; then
		ok "$cand: outputs shared on the GPU give the file exchange's verdict and statistics"
	else bad "$cand: outputs shared on the GPU give the file exchange's verdict and statistics" "${same:0:1500} $(tail -3 /tmp/sb-eval-err)"; fi
done

batch=$(mktemp -d)
cp $FIX/illegal_access.py "$batch/level_1_problem_2_sample_0_kernel.py"
cp $FIX/relu_cuda_ok.py "$batch/level_1_problem_2_sample_1_kernel.py"
# one build at a time, in file order: the batch evaluates each file once built, and the illegal access must come first
out=$($SB eval --samples "$batch" -o "$batch/v.jsonl" --no-compile --set eval.build_jobs=1 2>&1); rc=$?
got=$("$py" -c 'import json,sys; print(" ".join(json.loads(l)["status"] for l in open(sys.argv[1])))' "$batch/v.jsonl" 2>&1)
msg=$("$py" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["message"][:160])' "$batch/v.jsonl" 2>&1)
echo "     | illegal access: $msg"
[ "$got" = "runtime_error pass" ] && ok "an illegal memory access is runtime_error and the next evaluation passes" \
	|| bad "an illegal memory access is runtime_error and the next evaluation passes" "$got; $out"
fi

if want fidelity; then
echo "     | [$(date -u +%T)] section fidelity"
prebuild_wait
# Timing fidelity: every bundled problem's reference, renamed to ModelNew, three times in fresh processes.
fid=$(mktemp -d); nprob=0
for f in kernelbench/suite/level*/[0-9]*_*.py; do
	l=$(basename "$(dirname "$f")" | tr -dc 0-9); id=$(basename "$f" | cut -d_ -f1)
	if [ -n "${SB_FIDELITY_PROBLEMS:-}" ] && [[ ",$SB_FIDELITY_PROBLEMS," != *",L$l/$id,"* ]]; then continue; fi
	nprob=$((nprob + 1))
	for s in 0 1 2; do sed -E 's/\bModel\b/ModelNew/g' "$f" >"$fid/level_${l}_problem_${id}_sample_${s}_kernel.py"; done
done
t0=$(date +%s)
# GPU utilization every 200 ms during the batch: the share of samples at 0% is the GPU's idle time
nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 200 >"$fid/util.log" 2>/dev/null &
util_pid=$!
# the reference as a candidate is H01/H04 by design: static checks off, only timing is under test
# and so is PyTorch doing the work (H01 from the profile): the profile is off too
# SB_FIDELITY_SET="eval.timing_cpu=15 eval.timing_lead_us=0": settings to compare, each as --set
fset=(); for s in ${SB_FIDELITY_SET:-}; do fset+=(--set "$s"); done
[ ${#fset[@]} -gt 0 ] && echo "     | fidelity settings: ${SB_FIDELITY_SET}"
$SB eval --samples "$fid" -o "$fid/v.jsonl" --no-compile --trials 2 --set checks.static=false --set eval.profile=false "${fset[@]}" >"$fid/log" 2>&1
kill "$util_pid" 2>/dev/null
nf=$(ls "$fid"/*.py | wc -l); secs=$(( $(date +%s) - t0 ))
idle=$(awk '$1 ~ /^[0-9]+$/ { n++; z += ($1 == 0) } END { if (n) printf "%.0f%% of %d samples", 100 * z / n, n; else print "unknown" }' "$fid/util.log")
echo "     | fidelity batch: $secs s for $nf evaluations ($(( nf * 3600 / (secs > 0 ? secs : 1) )) per hour); GPU idle (utilization 0): $idle"
table=$("$py" - "$fid/v.jsonl" <<'PY'
import json, sys, collections
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v = json.loads(line)
    sp = v["speedup"]["vs_eager"] if v["speedup"] else None
    clk = (v["timing"] or {}).get("gpu_clock") or {}
    t = v["timing"] or {}
    exposed = sum((t.get(s) or {}).get("exposed_calls", 0) for s in ("eager", "candidate"))
    by[v["problem"]["ref"]].append((v["status"], sp, t["eager"]["median_us"] if t else None, t.get("pairs", 0),
                                    "%s-%s" % (clk.get("sm_mhz_min", "?"), clk.get("sm_mhz_max", "?")),
                                    ((t.get("eager") or {}).get("host") or {}).get("median_us") or 0, exposed,
                                    bool(t.get("launch_bound")),
                                    (t.get("process_factor") or {}).get("value"),
                                    (v["speedup"] or {}).get("vs_eager_uncorrected"),
                                    (v["speedup"] or {}).get("vs_eager_ci95"),
                                    bool((t.get("process_factor") or {}).get("launch_heavy")) or bool(t.get("launch_bound")),
                                    ((t.get("gpu_only") or {}).get("eager") or {}).get("median_us")))
# The targets: the reported 95% interval holds 1.0 in at least 95% of the evaluations, and the point is
# within 2% of 1.0 in every evaluation of a problem of 50 us or more that is not launch-heavy. A problem
# is launch-heavy when the reference's host time per call is at least half its GPU time (the GPU-only
# calls' median; where those were not run, the process factor's own launch-heavy mark): its point moves
# with the two processes' hosts, so only its interval is judged.
def launch_heavy(r):
    host, gpu = r[5], r[12]
    return host >= 0.5 * gpu if host and gpu else r[11]
bad, n, held = 0, 0, 0
for ref in sorted(by, key=lambda r: (int(r[1]), int(r.split("/")[1]))):
    rows = by[ref]
    sps = [r[1] for r in rows if r[1] is not None]
    cis = [r[10] for r in rows if r[10]]
    heavy = any(launch_heavy(r) for r in rows)
    worst = max(abs(s - 1) for s in sps) if len(sps) == 3 else float("inf")
    contains = [lo <= 1.0 <= hi for lo, hi in cis]
    n += len(rows)
    held += sum(contains)
    point_judged = not heavy and (rows[0][2] or 0) >= 50
    okrow = all(r[0] == "pass" for r in rows) and len(cis) == len(rows) and (not point_judged or worst <= 0.02)
    bad += not okrow
    f4 = lambda x: "%.4f" % x if x is not None else "-"
    print("%-6s %-4s eager %9.1f us (host %7.1f, GPU only %s)%s  speedups %s  ci95 %s  holds 1.0 %d/%d  worst |s-1| %.4f%s"
          "  SM MHz %s  factors %s  uncorrected %s" % (
        ref, "ok" if okrow else "FAIL", rows[0][2] or 0, rows[0][5], f4(rows[0][12]),
        " launch-heavy" if heavy else "", " ".join("%.4f" % s for s in sps),
        " ".join("[%.3f,%.3f]" % (lo, hi) for lo, hi in cis), sum(contains), len(rows), worst,
        "" if point_judged else " (point not judged)", " ".join(r[4] for r in rows), " ".join(f4(r[8]) for r in rows),
        " ".join(f4(r[9]) for r in rows)))
allsp = [r[1] for rows in by.values() for r in rows if r[1] is not None]
n1, n2 = sum(abs(s - 1) <= 0.01 for s in allsp), sum(abs(s - 1) <= 0.02 for s in allsp)
print("evaluations whose 95%% interval holds 1.0: %d of %d (%.0f%%; target 95%%)" % (held, n, 100.0 * held / max(n, 1)))
print("points within [0.99, 1.01]: %d of %d; within [0.98, 1.02]: %d" % (n1, len(allsp), n2))
bad += held < 0.95 * n
print("FIDELITY_BAD %d" % bad)
PY
)
echo "$table" | sed 's/^/     | /'
# the spread between the two processes this batch shows (eval.process_spread_pct's estimate)
"$py" scripts/bench/fidelity_spread.py "$fid/v.jsonl" 2>&1 | head -1 | sed 's/^/     | /'
[ "$(grep -c '^L' <<<"$table")" -eq "$nprob" ] && [ "$nprob" -gt 0 ] && grep -q '^FIDELITY_BAD 0$' <<<"$table" \
	&& ok "the reference as a candidate: its interval holds 1.0 in 95% of evaluations, its point within 2% where judged" \
	|| bad "the reference as a candidate: its interval holds 1.0 in 95% of evaluations, its point within 2% where judged" "$(tail -5 "$fid/log")"
if [ -n "${OUT:-}" ]; then cp "$fid/v.jsonl" "$OUT/fidelity.jsonl"; cp "$fid/log" "$OUT/fidelity-batch.log"; fi
fi

if want prof; then
echo "     | [$(date -u +%T)] section prof"
prebuild_wait
	source scripts/gpu/prof-check.sh
fi

# --- agents: `make demo`'s run with the CUDA cassettes, and the story each answer tells ---------
if want agents; then
echo "     | [$(date -u +%T)] section agents"
prebuild_wait
id=gpucheck-demo-$(date +%Y%m%d-%H%M%S)
demo_log=$(mktemp)
SB_DEMO_DEVICE=cuda SB_DEMO_RUN_ID=$id bash scripts/demo.sh >"$demo_log" 2>&1 || true
sed 's/^/     | /' "$demo_log" | tail -60
story=$(python3 - "results/$id/results.db" <<'PY' 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT agent, problem, attempt, a.stage, status, speedup_eager FROM verdicts v"
                  " JOIN attempts a USING (agent, problem, sample, attempt) ORDER BY agent, problem, attempt").fetchall()
for r in rows:
    print("ROW %-13s %s %d %-20s %-13s %s" % (r[0], r[1], r[2], r[3], r[4], "%.3fx" % r[5] if r[5] else "-"))
got = {(r[0], r[1]): [x[4] for x in rows if (x[0], x[1]) == (r[0], r[1])] for r in rows}
sp = {(r[0], r[1], r[2]): r[5] for r in rows}
checks = [
    ("stitchcuda L1/2: compile_error, then pass, then pass", got.get(("stitchcuda", "L1/2"), [])[:3] == ["compile_error", "pass", "pass"]),
    ("stitchcuda L1/2: optimize_performance made it faster", (sp.get(("stitchcuda", "L1/2", 2)) or 0) > (sp.get(("stitchcuda", "L1/2", 1)) or 1e9)),
    ("stitchcuda L1/3: the torch.sum hack rejected, then pass", got.get(("stitchcuda", "L1/3"), [])[:2] == ["rejected", "pass"]),
    ("oneshot: L1/2 pass, L1/3 incorrect (no keepdim)", got.get(("oneshot", "L1/2")) == ["pass"] and got.get(("oneshot", "L1/3")) == ["incorrect"]),
    ("torch-compile passes both", got.get(("torch-compile", "L1/2")) == ["pass"] and got.get(("torch-compile", "L1/3")) == ["pass"]),
]
for name, okv in checks:
    print("%s %s" % ("CHECK_OK" if okv else "CHECK_FAIL", name))
PY
)
grep '^ROW' <<<"$story" | sed 's/^ROW/     |/'
while IFS= read -r line; do
	case $line in
	CHECK_OK*) ok "demo (CUDA cassettes): ${line#CHECK_OK }" ;;
	CHECK_FAIL*) bad "demo (CUDA cassettes): ${line#CHECK_FAIL }" "$(grep '^ROW' <<<"$story")" ;;
	esac
done <<<"$(grep '^CHECK' <<<"$story")"
grep -q '^CHECK' <<<"$story" || bad "demo (CUDA cassettes): results/$id/results.db readable" "$story"
if [ -n "${OUT:-}" ]; then cp -r "results/$id" "$OUT/demo-run" 2>/dev/null; cp "$demo_log" "$OUT/demo.log"; fi
fi

# --- gpus: `run --gpus all` spreads evaluations over every GPU, one at a time per GPU ------------
if want gpus; then
echo "     | [$(date -u +%T)] section gpus"
prebuild_wait
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
gdir=$(mktemp -d)
gexp="$gdir/exp.yaml"
sed "s|GENERATIONS|$PWD/tests/fixtures/generations|" tests/fixtures/slurm/exp.yaml >"$gexp"
gstat="SELECT agent, problem, sample, attempt, status FROM verdicts ORDER BY agent, problem, sample, attempt"
gsql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$@"; }
t0=$(date +%s)
$SB run -c "$gexp" --set output.dir="$gdir" --run-id one --device cuda:0 >"$gdir/one.out" 2>&1; rc1=$?
t1=$(date +%s)
$SB run -c "$gexp" --set output.dir="$gdir" --run-id all --gpus all --jobs 8 >"$gdir/all.out" 2>&1; rc2=$?
t2=$(date +%s)
echo "     | --device cuda:0: $((t1 - t0)) s; --gpus all ($ngpu GPUs): $((t2 - t1)) s"
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && ok "run --device cuda:0 and run --gpus all both end (exit 0)" \
	|| bad "run --device cuda:0 and run --gpus all both end" "$(tail -5 "$gdir/one.out" "$gdir/all.out")"
grep -qE "$ngpu GPU slots?: cuda:0" "$gdir/all.out" && ok "--gpus all opens one slot per GPU ($ngpu)" \
	|| bad "--gpus all opens one slot per GPU ($ngpu)" "$(head -3 "$gdir/all.out")"
[ "$(gsql "$gdir/all/results.db" "$gstat" 2>&1)" = "$(gsql "$gdir/one/results.db" "$gstat" 2>&1)" ] \
	&& ok "--gpus all gives every item the status one GPU gives it" \
	|| bad "--gpus all gives every item the status one GPU gives it" "$(diff <(gsql "$gdir/one/results.db" "$gstat") <(gsql "$gdir/all/results.db" "$gstat"))"
used=$(gsql "$gdir/all/results.db" "SELECT count(DISTINCT json_extract(json, '$.env.device')) FROM verdicts WHERE json_extract(json, '$.env.device') != ''" 2>&1)
if [ "$ngpu" -ge 2 ]; then
	[ "$used" -ge 2 ] && ok "the verdicts were judged on $used different GPUs" \
		|| bad "the verdicts were judged on more than one GPU" "$(gsql "$gdir/all/results.db" "SELECT json_extract(json, '$.env.device'), count(*) FROM verdicts GROUP BY 1")"
else
	skip=$((skip + 1)); echo "skip the verdicts spread over several GPUs: this node has one GPU (use a node with two or more)"
fi
$SB run -c "$gexp" --set output.dir="$gdir" --run-id bad --gpus "0,$ngpu" >"$gdir/bad.out" 2>&1; rc=$?
[ $rc -eq 3 ] && grep -q "GPU $ngpu does not exist" "$gdir/bad.out" && ok "--gpus with a GPU torch does not see is refused (exit 3)" \
	|| bad "--gpus with a missing GPU is refused (exit 3)" "exit $rc: $(cat "$gdir/bad.out")"
if [ -n "${OUT:-}" ]; then cp "$gdir"/*.out "$OUT/" 2>/dev/null; fi
rm -rf "$gdir"
fi

if want hacks; then
echo "     | [$(date -u +%T)] section hacks"
prebuild_wait
	source scripts/gpu/hacks-check.sh
fi

if [ "$skip" -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ "$fail" -eq 0 ]
