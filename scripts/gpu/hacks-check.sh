# hacks-check.sh - section `hacks` of scripts/gpu-check.sh (sourced by it: uses its ok/bad, $SB, $py and
# $STITCHBENCH_CACHE): the adversarial corpus on the GPU with the runtime checks on (every honest CUDA
# candidate passes with no finding; the GPU runtime hacks are caught), the bandwidth behind H21's floor,
# NaN poisoning, and the audit of the bundled suite on the GPU. Keeps verdicts under $OUT/hacks if set.
# To split a long run: SB_HACKS_PARTS=corpus or =audit (default both); SB_HACKS_ONLY=honest/ (or runtime/,
# or file names, comma-separated) runs part of the corpus.

HK_OUT="${OUT:-$(mktemp -d)}/hacks"
mkdir -p "$HK_OUT"
hk_parts=",${SB_HACKS_PARTS:-corpus,audit},"
if [[ "$hk_parts" == *",corpus,"* ]]; then
t0=$(date +%s)
"$py" tests/adversarial/run_corpus.py run --device cuda --work "$HK_OUT/corpus" --only "${SB_HACKS_ONLY:-}" -- \
	--trials 3 --perf-trials 30 \
	--no-compile >"$HK_OUT/corpus.out" 2>&1
rc=$?
sed 's/^/     | /' "$HK_OUT/corpus.out"
echo "     | corpus: $(( $(date +%s) - t0 )) s"
[ $rc = 0 ] && ok "the GPU corpus: every runtime hack caught, every honest CUDA candidate passes with no finding" \
	|| bad "the GPU corpus: every runtime hack caught, every honest CUDA candidate passes with no finding" \
		"$(grep -E '^FAIL' "$HK_OUT/corpus.out"; tail -5 "$HK_OUT"/corpus/*/eval.log)"

# every honest verdict judged the floor against a measured bandwidth and poisoned memory before its second run
got=$("$py" - "$HK_OUT/corpus" <<'PY'
import glob, json, sys
n = bad = 0
for path in glob.glob(sys.argv[1] + "/*/verdicts.jsonl"):
    for line in open(path):
        v = json.loads(line)
        rt = v.get("runtime") or {}
        if v["status"] != "pass" or not rt:
            continue
        n += 1
        fl = rt.get("floor") or {}
        ok = fl.get("judged") and (fl.get("peak_bytes_per_s") or 0) > 1e11 and (rt.get("poison_bytes") or 0) > 0 \
            and rt.get("determinism") in ("bitwise", "within_tolerance") and rt.get("rotation") == "changed"
        if not ok:
            bad += 1
            print("NOT JUDGED", v["candidate"]["path"], json.dumps(rt)[:400])
        else:
            print("%-6s floor %8.2f us, candidate %8.2f us, second run %s" % (
                v["problem"]["ref"], fl["floor_us"], v["timing"]["candidate"]["median_us"], rt["determinism"]))
print("HONEST_JUDGED %d %d" % (n, bad))
PY
)
echo "$got" | sed 's/^/     | /'
read -r _ hn hbad <<<"$(grep '^HONEST_JUDGED' <<<"$got")"
if [ -n "${SB_HACKS_ONLY:-}" ] && [ "${hn:-0}" = 0 ]; then
	echo "     | no passing verdict in this part of the corpus ($SB_HACKS_ONLY): the floor and poison check needs honest/"
elif [ "${hn:-0}" -ge $([ -n "${SB_HACKS_ONLY:-}" ] && echo 1 || echo 10) ] && [ "${hbad:-1}" = 0 ]; then
	ok "passing GPU verdicts judged the floor, poisoned freed memory and ran the rotation ($hn)"
else bad "passing GPU verdicts judged the floor, poisoned freed memory and ran the rotation" "$got"; fi

bw=$("$py" -c 'import glob, json, sys
for path in sorted(glob.glob(sys.argv[1] + "/bandwidth/*.json"))[:1]:
    d = json.load(open(path)); print("%.0f" % (d["bytes_per_s"] / 1e9), d["gpu"])' "$STITCHBENCH_CACHE" 2>&1)
echo "     | measured copy bandwidth: $bw GB/s"
gbs=${bw%% *}
if [[ "$gbs" =~ ^[0-9]+$ ]] && [ "$gbs" -ge 500 ] && [ "$gbs" -le 20000 ]; then
	ok "the bandwidth behind H21's floor is measured once and cached ($gbs GB/s)"
else bad "the bandwidth behind H21's floor is measured once and cached" "$bw; $(ls "$STITCHBENCH_CACHE"/bandwidth 2>&1)"; fi

fi

if [[ "$hk_parts" == *",audit,"* ]]; then
# the audit on the GPU finds at least the bundled suite's traps (extra findings are printed, not failures:
# cuDNN or atomics may make a reference nondeterministic on a GPU)
aj=$($SB -q audit --device cuda:0 --json --rerun 2>"$HK_OUT/audit.err"); rc=$?
echo "$aj" >"$HK_OUT/audit.json"
got=$("$py" -c 'import json,sys
for p in json.load(sys.stdin)["problems"]:
    print(p["problem"], " ".join(sorted(f["id"] for f in p["findings"])) or "-")' <<<"$aj" 2>&1)
echo "$got" | sed 's/^/     | /'
missing=""
for want_line in "L1/2 H17" "L1/7 integer_inputs" "L2/3 nondeterministic" "L2/4 H15"; do
	grep -qx "$want_line" <<<"$got" || missing="$missing; $want_line"
done
[ $rc = 0 ] && [ -z "$missing" ] && ok "the audit on the GPU finds the bundled suite's traps" \
	|| bad "the audit on the GPU finds the bundled suite's traps" "exit $rc, missing${missing:- nothing}; $(tail -3 "$HK_OUT/audit.err")"
fi
