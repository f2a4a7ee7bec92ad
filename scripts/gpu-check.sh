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
echo "gpu-check on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F)"

# --- doctor sees the GPU through nvidia-smi and libcuda, and torch sees it too -------------
out=$($SB doctor 2>&1); rc=$?
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
py=$(grep -oE '^ok +python +[^ ]+' <<<"$out" | awk '{print $3}')
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

if [ "$skip" -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ "$fail" -eq 0 ]
