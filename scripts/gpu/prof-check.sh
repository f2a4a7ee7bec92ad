# prof-check.sh - section `prof` of scripts/gpu-check.sh (sourced by it: uses its ok/bad/skip, $SB, $py,
# $FIX and jq_py): libstitchprof and `stitchbench profile` on a real GPU. Records a trace fixture
# under $OUT/traces (or a temporary folder it names) and prints the profiling overhead for BENCHMARKS.md.

PROF_OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$PROF_OUT/traces"
TRACES="$PROF_OUT/traces"
GPU_TAG=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '_' | sed 's/^nvidia_//; s/_*$//')

# --- the library: carried prebuilt, or built here from the carried tree ------------------------
if [ ! -f lib/libstitchprof.so ]; then
	echo "     | lib/libstitchprof.so is not here: building it (make prof)"
	make prof 2>&1 | tail -3 | sed 's/^/     | /'
fi
if [ ! -f lib/libstitchprof.so ]; then
	bad "lib/libstitchprof.so exists (carry lib/ or build it here with make prof)" "$(ls -l lib 2>&1)"
elif ldd lib/libstitchprof.so | grep -q 'libcupti.* => /'; then
	ok "lib/libstitchprof.so resolves libcupti ($(ldd lib/libstitchprof.so | awk '/libcupti/ {print $3}'))"
else
	# inside a worker torch has loaded its own libcupti first; the checks below say whether that works
	echo "     | note: libcupti is not on the library's run path here: $(ldd lib/libstitchprof.so | grep cupti)"
fi

# --- the known program: cuBLAS GEMM + 2 custom kernels on the current stream + 1 on a side stream --
# Twice: calls tied to trials by external correlation (the default), then by the callback API
# (STITCHPROF_ATTRIBUTION=callback, docs/profile.md); the recorded fixture comes from the default.
for attribution in external_correlation callback; do
rec="$TRACES/recorded_${GPU_TAG}_prof_check.trace"
[ "$attribution" = callback ] && rec="$TRACES/callback_${GPU_TAG}_prof_check.trace"
pj=$(STITCHPROF_ATTRIBUTION=$attribution $SB profile "$FIX/prof_check.py" --problem L1/1 --calls 10 --json --trace-out "$rec" 2>/tmp/sb-prof-err); rc=$?
check=$(jq_py '
p = v["profile"]; rows = {k["name"]: k for k in p["kernels"]}
def row(n):
    return rows.get(n) or {}
sc, sh, si = row("sb_scale_kernel"), row("sb_shift_kernel"), row("sb_side_kernel")
gemm = [k for k in p["kernels"] if k["library"] in ("cuBLAS", "cuBLASLt")]
other = [k["name"] for k in p["kernels"] if k["kind"] == "kernel" and not k["custom"] and k["library"] not in ("cuBLAS", "cuBLASLt")]
S = sc.get("stream")
errs = []
for name, r in (("sb_scale_kernel", sc), ("sb_shift_kernel", sh), ("sb_side_kernel", si)):
    if not r: errs.append("no row " + name); continue
    if not r["custom"] or r["library"] is not None: errs.append(name + " not custom")
    if r["calls"] != 10: errs.append("%s: %s calls" % (name, r["calls"]))
if S is None or sh.get("stream") != S: errs.append("scale/shift streams %s/%s" % (S, sh.get("stream")))
# at::cuda::getStreamFromPool hands out the streams of a pool in turn: the side kernel is on a different
# stream each call (then the stream of its row is None, "many"), never on the timed one
if si and si.get("stream") == S: errs.append("side kernel on the timed stream %s" % S)
if not gemm: errs.append("no cuBLAS row")
for g in gemm:
    if g["stream"] != S: errs.append("GEMM %s on stream %s" % (g["name"][:40], g["stream"]))
if sum(g["calls"] for g in gemm) < 10: errs.append("GEMM launches %d" % sum(g["calls"] for g in gemm))
if other: errs.append("unexpected library kernels %s" % other[:3])
if v["findings"]: errs.append("findings %s" % [f["id"] for f in v["findings"]])
for t in p["trials"]:
    if (t["custom_kernels"], t["other_stream_kernels"], t["late_kernels"]) != (3, 1, 0) or not t["found"]:
        errs.append("call %d: custom %d, other stream %d, late %d" % (t["trial"], t["custom_kernels"], t["other_stream_kernels"], t["late_kernels"])); break
    if t["gpu_window_us"] is not None and abs(t["gpu_window_us"] - t["event_us"]) > 0.1 * t["event_us"] + 2:
        errs.append("call %d: events %.1f us, CUPTI window %.1f us" % (t["trial"], t["event_us"], t["gpu_window_us"])); break
if not p["trace_complete"] or p["dropped_records"]: errs.append("trace incomplete or dropped %d" % p["dropped_records"])
print("OK" if not errs else "; ".join(errs))
print("     | end_event %s, event %.1f us, kernels %.1f us (sum), span %.1f us, GEMM %s, streams main %s side %s" % (
    p["end_event"], p["event_us"], p["kernel_sum_us"], p["span_us"], ", ".join(g["name"][:48] for g in gemm), S, si.get("stream")))
' <<<"$pj" 2>&1)
echo "$check" | tail -n +2
$SB profile --trace "$rec" --rows 8 2>&1 | sed 's/^/     | /'
if [ "$rc" = 0 ] && [ "$(head -1 <<<"$check")" = OK ]; then
	ok "prof_check.py ($attribution): names, counts, streams and custom/library labels as written (GEMM + 2 custom on the timed stream, 1 on a side stream)"
else
	bad "prof_check.py ($attribution): names, counts, streams and custom/library labels as written" "exit $rc; $(head -1 <<<"$check"); $(tail -5 /tmp/sb-prof-err)"
fi
done
rec="$TRACES/recorded_${GPU_TAG}_prof_check.trace"
[ -s "$rec" ] && [ -s "$rec.calls" ] && ok "a recorded fixture was kept: $rec (copy it and its .calls to tests/fixtures/traces/)" \
	|| bad "a recorded fixture was kept" "$(ls -l "$TRACES")"

# --- H05: a kernel on a side stream that outlives the end event ---------------------------------
pj=$($SB profile tests/adversarial/hacks/h05_side_stream.py --problem L1/2 --calls 5 --json 2>/tmp/sb-prof-err); rc=$?
got=$(jq_py 'print(",".join(f["id"] for f in v["findings"]), max(t["late_kernels"] for t in v["profile"]["trials"]), "%.1f" % max(t["late_by_us"] for t in v["profile"]["trials"]))' <<<"$pj" 2>&1)
echo "     | h05_side_stream: findings/late/late_by_us: $got"
[[ "$got" == *H05* ]] && ok "a side stream outliving the timer is H05 at run time ($got)" \
	|| bad "a side stream outliving the timer is H05 at run time" "exit $rc; $got; $(tail -5 /tmp/sb-prof-err)"
# The same file on ReLU at 256x256 (a kernel of a few microseconds), judged by eval with the timing's
# default of no lead: the timed calls' end events wait for the host's launch there, and the late kernel
# still has to be seen at run time (the static H05 is off here), so the profiled calls lead whatever the
# timing did.
small=$(python3 tests/fixtures/suite_small.py)
pj=$(STITCHBENCH_TEST_SUITE="$small" $SB eval tests/adversarial/hacks/h05_side_stream.py --problem L1/2 --json \
	--set eval.timing_lead_us=0 --set checks.static=false 2>/tmp/sb-prof-err); rc=$?
got=$(jq_py 'print(",".join(f["id"] for f in v["findings"]), max(t["late_kernels"] for t in v["profile"]["trials"]))' <<<"$pj" 2>&1)
echo "     | h05_side_stream at 256x256, no timing lead: findings/late: $got"
[[ "$got" == *H05* ]] && ok "a side stream outliving the timer is H05 on a microsecond kernel with no timing lead ($got)" \
	|| bad "a side stream outliving the timer is H05 on a microsecond kernel with no timing lead" "exit $rc; $got; $(tail -5 /tmp/sb-prof-err)"

# --- H01: the reference itself as the candidate (only ATen kernels run) ---------------------------
hdir=$(mktemp -d)
sed -E 's/\bModel\b/ModelNew/g' kernelbench/suite/level1/2_ReLU.py >"$hdir/ref_as_candidate.py"
pj=$($SB profile "$hdir/ref_as_candidate.py" --problem L1/2 --calls 5 --json 2>/tmp/sb-prof-err); rc=$?
got=$(jq_py 'print(",".join(f["id"] for f in v["findings"]), v["profile"]["kernels"][0]["library"], v["profile"]["kernels"][0]["name"][:60])' <<<"$pj" 2>&1)
echo "     | reference as candidate: $got"
[[ "$got" == H01\ aten* ]] && ok "PyTorch doing the work is H01 at run time (top kernel is ATen's)" \
	|| bad "PyTorch doing the work is H01 at run time" "exit $rc; $got; $(tail -5 /tmp/sb-prof-err)"

# --- the reference profile, cached the second time -------------------------------------------------
refq='k = v["profile"]["kernels"][0]; print(v["cached"], k["library"] in ("cuBLAS", "cuBLASLt"), v["profile"]["calls"], k["name"][:60])'
a=$($SB profile --reference --problem L1/1 --json 2>&1 | jq_py "$refq" 2>&1)
b=$($SB profile --reference --problem L1/1 --json 2>&1 | jq_py "$refq" 2>&1)
echo "     | reference L1/1: first '$a', second '$b'"
[[ "$a" == "False True 10 "* && "$b" == "True True 10 "* ]] && ok "the reference profile of L1/1 is cuBLAS's GEMM and is cached" \
	|| bad "the reference profile of L1/1 is cuBLAS and is cached" "first: $a; second: $b"

# --- eval puts the profile in the verdict ---------------------------------------------------------
vj=$($SB eval "$FIX/relu_cuda_ok.py" --problem L1/2 --perf-trials 20 --no-compile --json 2>/tmp/sb-prof-err); rc=$?
got=$(jq_py 'p = v["profile"]; k = p["kernels"][0]; print(v["status"], p["available"], k["name"], k["custom"], p["calls"], len(v["findings"]), "%.1f/%.1f/%.1f" % (p["event_us"], p["kernel_sum_us"], p["span_us"]))' <<<"$vj" 2>&1)
echo "     | eval relu_cuda_ok: status available top custom calls findings event/kernel/span: $got"
[[ "$got" == "pass True relu_kernel True 10 0 "* ]] && ok "a passing verdict carries its profile (relu_kernel, custom, no finding)" \
	|| bad "a passing verdict carries its profile" "exit $rc; $got; $(tail -5 /tmp/sb-prof-err)"

# --- NVTX ranges, where Nsight Systems is installed ------------------------------------------------
if command -v nsys >/dev/null 2>&1; then
	nd=$(mktemp -d)
	cat >"$nd/drive.py" <<PY
import sys; sys.path.insert(0, "harness/worker")
from worker import Worker
w = Worker()
w.cmd_load({"problem": "kernelbench/suite/level1/2_ReLU.py", "device": "cuda:0", "seed": 42})
w.cmd_run({"seed": 1, "out": "$nd/o.safetensors"})
w.cmd_timing_setup({"seeds": [1, 2]})
w.cmd_warmup({"min_calls": 3, "min_ms": 10})
w.cmd_time({"sets": [0], "seeds": [3]})
PY
	nsys profile --trace=cuda,nvtx --force-overwrite true -o "$nd/r" "$py" "$nd/drive.py" >"$nd/log" 2>&1
	ranges=$(nsys stats --report nvtx_sum --format csv "$nd/r.nsys-rep" 2>&1 || nsys stats --report nvtxsum --format csv "$nd/r.nsys-rep" 2>&1)
	missing=""
	for r in build check warmup "trial 1"; do grep -qF -- "$r" <<<"$ranges" || missing="$missing '$r'"; done
	[ -z "$missing" ] && ok "Nsight Systems sees the NVTX ranges build, check, warmup and trial N" \
		|| bad "Nsight Systems sees the NVTX ranges" "missing$missing; $(head -20 <<<"$ranges")"
else
	skip=$((skip + 1)); echo "skip NVTX ranges: nsys is not installed here"
fi

# --- the cost of profiling a ~100 us kernel (for BENCHMARKS.md) -------------------------------------
# GPU-bound: what CUPTI adds to the kernel's time on the GPU (the host kept ahead by a device-side spin);
# host-bound: timed as the evaluator times, where CUPTI's slower launches show as well (printed, not judged:
# the verdict's timed calls never run under CUPTI, profiling happens in calls of its own after them).
ov=$("$py" scripts/bench/prof_overhead.py 2>&1 | tail -8)
gline=$(grep '^PROF_OVERHEAD_GPU ' <<<"$ov")
hline=$(grep '^PROF_OVERHEAD_HOST ' <<<"$ov")
grep '^PROF_OVERHEAD' <<<"$ov" | sed 's/^/     | /'
grep '^PROF_OVERHEAD' <<<"$ov" >>"$PROF_OUT/prof.txt"
pct=$(awk '{print $2}' <<<"$gline" | tr -d '%')
if [ -n "$pct" ] && "$py" -c "import sys; sys.exit(0 if abs(float('$pct')) < 2 else 1)"; then
	ok "profiling adds less than 2% to a ~100 us kernel on the GPU ($pct%; host-bound: $(awk '{print $2}' <<<"$hline"))"
else
	bad "profiling adds less than 2% to a ~100 us kernel on the GPU" "$ov"
fi

# --- ncu, where Nsight Compute is installed ----------------------------------------------------------
if ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null); then
	pj=$($SB profile "$FIX/prof_check.py" --problem L1/1 --calls 3 --ncu --json 2>/tmp/sb-prof-err); rc=$?
	got=$(jq_py 'n = v["ncu"] or {}; m = [n.get(k) for k in ("sm_throughput_pct", "dram_throughput_pct", "achieved_occupancy_pct")]
ok = "sb_" in str(n.get("kernel")) and all(isinstance(x, float) and 0 <= x <= 100 for x in m)
print("OK" if ok else "BAD", n.get("kernel"), m, n.get("error", ""))' <<<"$pj" 2>&1)
	echo "     | ncu ($ncu_bin): $got"
	if grep -q ERR_NVGPUCTRPERM <<<"$got $(cat /tmp/sb-prof-err)"; then
		skip=$((skip + 1)); echo "skip ncu metrics: this node restricts the GPU's performance counters (ERR_NVGPUCTRPERM)"
	elif [ "$rc" = 0 ] && [[ "$got" == OK* ]]; then
		ok "--ncu measures SM and DRAM throughput and occupancy of the top custom kernel"
	else
		bad "--ncu measures the top custom kernel" "exit $rc; $got; $(tail -5 /tmp/sb-prof-err)"
	fi
else
	skip=$((skip + 1)); echo "skip --ncu: Nsight Compute (ncu) is not installed here"
fi
echo "     | traces and numbers kept in $PROF_OUT"
