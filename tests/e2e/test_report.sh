#!/usr/bin/env bash
# test_report.sh - reports and compare end to end: stores made by `import` from the verdict fixtures and by the
# store API (an iterative agent with stages and LLM calls), reports drawn by the real gnuplot and opened in
# headless Chromium (DOM and screenshot checked), gnuplot missing, and compare's exit codes on flips, a slowdown
# beyond the noise, a change within it, identical runs and a pass with a hack finding.
source "$(dirname "$0")/lib.sh"
FIX="$SB_ROOT/tests/fixtures/verdicts"
# the fixture verdicts name the bundled suite's problems by their hashes: that suite, not its small twin
export STITCHBENCH_TEST_SUITE=
R="$TMP/results"
EVIL='<img src=x onerror=alert(1)>|x_y'

run_sb import "$R/one" "$FIX/shard_a.jsonl" "$FIX/shard_b.jsonl"
run_sb import "$R/one" "$FIX/shard_a.jsonl" --agent "$EVIL" --model m
check_rc "a store with two agents, one with a hostile name" 0

# ---------- report ----------
check_true "gnuplot is installed (scripts/setup.sh installs gnuplot-nox; reports are tested with the real one)" \
	command -v gnuplot
run_sb report "$R/one" -o "$TMP/rep1"
check_rc "report writes a report" 0
check_out "it says what it wrote" "wrote $TMP/rep1/report.md and $TMP/rep1/report.html: 4 plots drawn (svg and pngcairo png), 2 without data left out"
check_err "and warns about the agent that covers only some problems" "has verdicts for 3 of the 7 problems"
check_err "whose problems without a verdict count as failures" "the 4 without one count as failures (--denominator judged leaves them out)"
for p in fast_p speedups per_problem findings; do
	check_true "plot $p: data, gnuplot script, SVG and PNG" test -s "$TMP/rep1/plots/$p.dat" -a -s "$TMP/rep1/plots/$p.gp" \
		-a -s "$TMP/rep1/plots/$p.svg" -a -s "$TMP/rep1/plots/$p.png"
done
check_true "the PNGs are PNG files" grep -q PNG <(head -c 8 "$TMP/rep1/plots/fast_p.png")
check_true "plots without data are not drawn empty" test ! -e "$TMP/rep1/plots/attempts.svg" -a ! -e "$TMP/rep1/plots/tokens_cost.svg"
html=$(cat "$TMP/rep1/report.html")
md=$(cat "$TMP/rep1/report.md")
if grep -qF 'no iterative agent in these runs' <<<"$html" && grep -qF 'no LLM calls are stored in these runs' <<<"$md"; then
	_report ok "each plot left out says why, in both files"; else _report fail "each plot left out says why, in both files" "${md:0:400}"; fi
if [ "$(grep -o '<svg' <<<"$html" | wc -l)" = 4 ] && ! grep -q '<?xml\|<!DOCTYPE svg\|xmlns' <<<"$html"; then
	_report ok "the four SVGs are inlined without their prolog, doctype or namespace URLs"; else
	_report fail "the four SVGs are inlined without their prolog, doctype or namespace URLs" "$(grep -o '<svg\|<?xml\|xmlns[^ ]*' <<<"$html" | sort | uniq -c)"; fi
if ! grep -qF '<img src=x' <<<"$html" && grep -qF '&lt;img src=x onerror=alert(1)&gt;|x_y' <<<"$html"; then
	_report ok "the hostile agent name is text in the HTML"; else _report fail "the hostile agent name is text in the HTML" "$(grep -o '.\{20\}img src=x.\{20\}' <<<"$html" | head -3)"; fi
if ! grep -qF '<img' <<<"$md" && grep -qF '| &lt;img src=x onerror=alert(1)&gt;\|x\_y | 50.0 / 25.0 / 1.225x | 0.0 / 0.0 / n/a | 28.6 / 14.3 / 1.225x |' <(points <<<"$md"); then
	_report ok "and in the Markdown, where its '|' cannot add a column"; else _report fail "and in the Markdown, where its '|' cannot add a column" "$(grep -F 'img' <<<"$md" | head -3)"; fi
check_true "the Markdown shows the PNGs" grep -qF '](plots/per_problem.png)' "$TMP/rep1/report.md"
check_true "the Markdown has the metrics table" grep_points '| samples | 50.0 / 25.0 / 1.225x | 33.3 / 0.0 / 0.500x | 42.9 / 14.3 / 0.909x |' "$TMP/rep1/report.md"
check_true "no audit table: the report says so" grep -qF 'No audit data' "$TMP/rep1/report.md"
(cd "$TMP/rep1/plots" && gnuplot fast_p.gp) >/dev/null 2>&1
check_true "a plot's script redraws it in its folder" test -s "$TMP/rep1/plots/fast_p.svg"

run_sb report "$R/one" -o "$TMP/rep2" --by best
check_true "the report says what the rates are over" grep -qF 'a problem without a verdict counting as a failure (--denominator all)' "$TMP/rep1/report.md"
check_true "and is marked 'no verdict' there" grep -qE '^\| L[0-9]/[0-9]+ \| [^|]* \| no verdict \|' "$TMP/rep1/report.md"
run_sb report "$R/one" -o "$TMP/rep5" --no-plots --denominator judged
check_true "--denominator judged rates the agent over its own problems" \
	grep_points '| &lt;img src=x onerror=alert(1)&gt;\|x\_y | 66.7 / 33.3 / 1.225x | - | 66.7 / 33.3 / 1.225x |' "$TMP/rep5/report.md"
run_sb report "$R/one" -o "$TMP/rep5" --denominator most
check_rc "a bad --denominator is a usage error" 2
check_true "--by best changes the represented candidates" grep_points '| samples | 75.0 / 50.0 / 1.957x |' "$TMP/rep2/report.md"
(cd "$TMP" && "$SB" report "$R/one" >/dev/null 2>&1)
check_true "the default folder is reports/RUN in the current folder" test -s "$TMP/reports/one/report.html"

# several runs: pooled as metrics pools them
run_sb import "$R/a" "$FIX/shard_a.jsonl"
run_sb import "$R/b" "$FIX/shard_b.jsonl"
run_sb import "$R/c" "$FIX/other_gpu.jsonl"
run_sb report "$R/a" "$R/b" "$R/c" -o "$TMP/multi"
check_rc "a report of three runs" 0
check_true "same-named agents of two runs stay apart" grep_points '| samples@b | 50.0 / 50.0 / 3.000x | 33.3 / 0.0 / 0.500x | - | 40.0 / 20.0 / 1.225x |' "$TMP/multi/report.md"
check_true "runs with settings that change the numbers are named in the report" \
	grep -qF 'gpu: "NVIDIA H200" in '"$R/a"' vs "NVIDIA A100-SXM4-80GB" in '"$R/c" "$TMP/multi/report.md"
check_err "and warned about" "these runs were made with settings that change the numbers"

# gnuplot missing: exit 3 with what to do, unless --no-plots (a PATH with only what run_sb itself needs)
mkdir -p "$TMP/nogp" && ln -s "$(command -v cat)" "$TMP/nogp/cat"
PATH="$TMP/nogp" run_sb report "$R/one" -o "$TMP/rep3"
check_rc "without gnuplot the report is an environment error" 3
check_err "saying what to install, or --no-plots" "install the package gnuplot-nox (scripts/setup.sh does, as root), or pass --no-plots"
PATH="$TMP/nogp" run_sb report "$R/one" -o "$TMP/rep3" --no-plots
check_rc "--no-plots needs no gnuplot" 0
if [ -s "$TMP/rep3/report.html" ] && ! grep -q '<svg' "$TMP/rep3/report.html" && grep -qF 'summary-table' "$TMP/rep3/report.html" &&
	[ ! -e "$TMP/rep3/plots" ]; then _report ok "--no-plots writes the tables and no plots"; else
	_report fail "--no-plots writes the tables and no plots" "$(ls -R "$TMP/rep3")"; fi
run_sb report "$FIX/shard_a.jsonl" -o "$TMP/rep4"
check_rc "a file that is not a store is an input error" 2
run_sb report "$R/one" --by worst
check_rc "a bad --by is a usage error" 2
run_sb report
check_rc "no run is a usage error" 2

# The iterative store, written through the store API the way `run` writes it (stages, LLM calls).
mk="$SB_ROOT/build/tests/test_report"
[ -x "$mk" ] || make -s -C "$SB_ROOT" build/tests/test_report >/dev/null
"$mk" --make-store "$R/rich" >"$TMP/mk.log" 2>&1
check_true "the iterative store is made (build/tests/test_report --make-store)" test -s "$R/rich/results.db"
run_sb report "$R/rich" -o "$TMP/rich"
check_out "every plot has data there" "6 plots drawn (svg and pngcairo png), 0 without data left out"
check_true "attempts by stage are tabled" grep -qF '| stitchcuda | repair\_correctness | 3 | 100.0 | 33.3 | 0.0 | 0.900x (1) |' "$TMP/rich/report.md"
# export of the iterative run, read back by import into a new run: the same rows, stages and attempts
"$SB" export "$R/rich" >"$TMP/rich.jsonl"
run_sb import "$R/rich_back" "$TMP/rich.jsonl"
check_rc "import reads the export of an iterative run" 0
if [ -s "$TMP/rich.jsonl" ] && "$SB" export "$R/rich_back" | cmp -s - "$TMP/rich.jsonl"; then _report ok "its export gives the same rows back"; else
	_report fail "its export gives the same rows back" "$("$SB" export "$R/rich_back" | diff - "$TMP/rich.jsonl" | head -4)"; fi
run_sb report "$R/rich_back" -o "$TMP/rich_back" --no-plots
check_true "and the same attempts by stage" grep -qF '| stitchcuda | repair\_correctness | 3 | 100.0 | 33.3 | 0.0 | 0.900x (1) |' "$TMP/rich_back/report.md"

# ---------- the HTML in headless Chromium ----------
dom_check() { # name report.html expected-figure-ids expected-agents min-points...
	local name=$1 html=$2 figs=$3 agents=$4 points=$5
	python3 "$SB_ROOT/tests/e2e/report_dom.py" "$html" "$TMP/$name.png" >"$TMP/$name.json" 2>"$TMP/$name.err"
	python3 - "$TMP/$name.json" "$figs" "$agents" "$points" <<'PY' 2>&1
import json, sys
f = json.load(open(sys.argv[1]))
figs, agents = sys.argv[2].split(), sys.argv[3].split("|,|")
points = dict(kv.split("=") for kv in sys.argv[4].split())
def check(ok, name, evidence=""):
    print("%s\t%s\t%s" % ("ok" if ok else "fail", name, str(evidence)[:600].replace("\n", " ")))
check("error" not in f, "the page loaded and the probe ran", f.get("error"))
tables = {t["id"]: t for t in f.get("tables", [])}
check({"runs-table", "summary-table", "problems-table"} <= set(tables), "the runs, results and problems tables are there", list(tables))
summary = tables.get("summary-table", {})
check(summary.get("head", [])[:1] == ["agent"] and summary.get("first_col") == agents,
      "the results table has agents as rows, named literally", summary.get("first_col"))
got = [x["id"] for x in f.get("figures", [])]
check(got == ["plot-" + x for x in figs], "exactly the plots with data are there", got)
tops = [x["top"] for x in f.get("figures", [])]
long_tables = [t["top"] for t in f.get("tables", []) if t["id"] != "summary-table"]
check(tops and tops[0] < 1200 and long_tables and min(long_tables) > max(tops),
      "the first plot starts within 1200 px and every table but the results summary comes after the plots",
      {"figures": tops, "tables": {t["id"]: t["top"] for t in f.get("tables", [])}})
for x in f.get("figures", []):
    need = int(points.get(x["id"][5:], 0))
    check(x["svg"] and x["width"] > 300 and x["height"] > 200 and x["drawn"] > 20 and x["points"] >= need,
          "%s rendered as an <svg> with drawn content (%d elements, %d points >= %d)" % (x["id"], x["drawn"], x["points"], need), x)
check(all(any(a in t for t in x["texts"]) for x in f.get("figures", []) if x["id"] in ("plot-fast-p", "plot-per-problem") for a in agents),
      "the plots' keys name every agent as text", [x["texts"] for x in f.get("figures", [])][:1])
check(all(i["complete"] and i["width"] > 0 and i["src"] for i in f.get("images", [])) and f.get("svg_images") == 0,
      "no <img> or SVG <image> with a broken or missing source", f.get("images"))
check(f.get("fetched") == [], "the page fetched nothing", f.get("fetched"))
check(f.get("outside") == [], "no attribute points outside the page (no http(s), no event handlers)", f.get("outside"))
check(f.get("scripts") == 0, "the report has no script", f.get("scripts"))
check(f.get("ids_unique") == [], "every id is unique across the inlined plots", f.get("ids_unique"))
s = f.get("screenshot", {})
check(s.get("width") == 1280 and s.get("nonwhite_fraction", 0) > 0.03 and s.get("colours", 0) > 20,
      "the screenshot shows a drawn page", s)
PY
}
tap_from() { # lines "ok|fail<TAB>name<TAB>evidence" -> TAP
	while IFS=$'\t' read -r st name ev; do
		[ -n "$name" ] || { _report fail "the DOM check ran" "$st"; continue; }
		if [ "$st" = ok ]; then _report ok "$1: $name"; else _report fail "$1: $name" "$ev"; fi
	done
}
# Missing Chromium skips the browser checks, except under CI, where scripts/setup.sh has installed it
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
	if [ -n "${CI:-}" ] && [ "${CI:-}" != false ]; then
		_report fail "Chromium is installed in CI (scripts/setup.sh installs the package chromium)" "CI=$CI, no chromium on PATH"
	else
		skip "the report in headless Chromium" "chromium is not installed (Debian package chromium; scripts/setup.sh)"
	fi
else
	tap_from "samples report" < <(dom_check one "$TMP/rep1/report.html" "fast-p speedups per-problem findings" \
		"$EVIL|,|samples" "speedups=5 per-problem=7")
	tap_from "iterative report" < <(dom_check rich "$TMP/rich/report.html" \
		"fast-p speedups per-problem attempts tokens-cost findings" \
		'<img src=x onerror=alert(1)>"&'"'"'|*_[l](http://x)|,|oneshot|,|stitchcuda' \
		"speedups=5 per-problem=7 attempts=6 tokens-cost=8")
	check_true "the screenshot is kept as a PNG" grep -q PNG <(head -c 8 "$TMP/rich.png")
fi

# ---------- compare ----------
# NEW runs are the fixtures with one change each, made here so that each case says what it changed.
variant() { # out.jsonl python-expression-on-v (v: the verdict of L1/1 sample 0 in shard_a)
	python3 - "$FIX/shard_a.jsonl" "$2" >"$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    if v["problem"]["ref"] == "L1/1" and v["candidate"]["path"].endswith("sample_0_kernel.py"):
        exec(sys.argv[2])
    print(json.dumps(v))
PY
}
speed='v["speedup"]["vs_eager"] = S; v["speedup"]["vs_eager_ci95"] = [S * LO, S * HI]'
# a changed candidate: another file, so another sha256 (the same file on both sides is a re-measurement)
changed='v["candidate"]["sha256"] = "e" * 64; '
run_sb import "$R/base" "$FIX/shard_a.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/base"
check_rc "identical runs: exit 0" 0
check_out "no regressions" "**No regressions** in 9 compared candidates; 0 improvements."

variant "$TMP/flip.jsonl" "$changed"'v["status"] = "incorrect"; v["speedup"] = None'
run_sb import "$R/flip" "$TMP/flip.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/flip"
check_rc "correct -> incorrect: exit 1" 1
check_out "the flip is named" "| samples | L1/1 | 0 | pass 1.500x ±1.0% (attempt 0) | incorrect (attempt 0) | - | - | correct → not correct |"
run_sb compare "$R/flip" "$R/base"
check_rc "incorrect -> correct is an improvement: exit 0" 0
check_out "it is listed as one" "| samples | L1/1 | 0 | incorrect (attempt 0) | pass 1.500x ±1.0% (attempt 0) | - | - | not correct → correct |"

variant "$TMP/slow.jsonl" "${changed}S = 1.2; LO = 0.99; HI = 1.01; $speed"
run_sb import "$R/slow" "$TMP/slow.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/slow" -o "$TMP/slow.md"
check_rc "1.5x -> 1.2x with 1% intervals (-20%, threshold 5%): exit 1" 1
check_out "-o writes the Markdown and says so" "1 regressions, 0 improvements; wrote $TMP/slow.md"
check_true "the slowdown is in the Markdown with its ratio and threshold" grep -qF '| samples | L1/1 | 0 | pass 1.500x ±1.0% (attempt 0) | pass 1.200x ±1.0% (attempt 0) | 0.800x (-20.0%) | ±5.0% | slower beyond the threshold |' "$TMP/slow.md"

variant "$TMP/noisy.jsonl" "${changed}S = 1.35; LO = 0.75; HI = 1.3; $speed"
run_sb import "$R/noisy" "$TMP/noisy.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/noisy"
check_rc "the same -10% when NEW's timing spread is wide: within noise, exit 0" 0
check_out "it says within noise, with the threshold from the spread" "| samples | L1/1 | 0 | pass 1.500x ±1.0% (attempt 0) | pass 1.350x ±31.7% (attempt 0) | 0.900x (-10.0%) | ±31.7% | within noise |"

variant "$TMP/small.jsonl" "${changed}S = 1.46; LO = 0.99; HI = 1.01; $speed"
run_sb import "$R/small" "$TMP/small.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/small"
check_rc "-2.7% with tight intervals is within the 5% floor: exit 0" 0
run_sb compare "$R/base" "$R/small" --threshold 1%
check_rc "--threshold 1% makes the same change a regression" 1
run_sb compare "$R/base" "$R/small" --threshold 0.01
check_rc "--threshold takes a fraction too" 1

# A pass with a hack finding the policy flags (H21: more than 10x eager) is correct and nothing more: not in
# fast_p or the geometric mean, listed apart in the report, and never an improvement in compare.
variant "$TMP/flag.jsonl" "${changed}S = 15.0; LO = 0.99; HI = 1.01; $speed"'; v["findings"] = [{"id": "H21", "severity": "flag", "message": "15.0x eager: more than 10x", "line": 0, "col": 0}]'
run_sb import "$R/flag" "$TMP/flag.jsonl" "$FIX/shard_b.jsonl"
run_sb metrics "$R/flag"
check_out_points "metrics: the flagged 15x counts as correct, not in fast_1 or the geomean, and is counted apart" \
	"| samples | 50.0 / 0.0 / 1.000x (1 flagged) | 33.3 / 0.0 / 0.500x | 42.9 / 0.0 / 0.707x (1 flagged) |"
check_out "with a row of its own" "| flagged % (correct with a hack finding) | 25.0 | 0.0 | 14.3 |"
run_sb report "$R/flag" -o "$TMP/flagrep" --no-plots
check_true "the report marks it in the outcome per problem" grep -qF '| L1/1 | Square\_GEMM | pass 15.00x (flagged H21) |' "$TMP/flagrep/report.md"
check_true "and lists it with its finding under Flagged passes" \
	grep -qF '| samples | L1/1 | 0 | 0 | 15.00x | yes | H21 impossible speed (flag): 15.0x eager: more than 10x |' "$TMP/flagrep/report.md"
run_sb compare "$R/base" "$R/flag"
check_rc "compare: a clean 1.5x that became a flagged 15x is a regression, exit 1" 1
check_out "named so, not an improvement" "| samples | L1/1 | 0 | pass 1.500x ±1.0% (attempt 0) | pass 15.000x ±1.0% flagged H21 (attempt 0) | - | - | correct → flagged: no longer a clean pass |"
check_out "the verdict line says a NEW pass is flagged" "1 candidate of NEW passes with a hack finding (flagged): never counted as an improvement or compared for speed."
run_sb compare "$R/flip" "$R/flag"
check_rc "incorrect -> a flagged pass is no improvement either: exit 0" 0
check_out "it is listed apart" "passes with a hack finding in NEW: not an improvement, speed not compared |"
check_out "with no improvement counted" "**No regressions** in 9 compared candidates; 0 improvements."

# the same file measured again on a loaded machine: 1.5x -> 1.1x is a re-measurement, never a regression;
# its spread (one pair, ln(1.1/1.5), among 5 candidates evaluated twice) widens every other threshold
variant "$TMP/again.jsonl" "S = 1.1; LO = 0.99; HI = 1.01; $speed"
run_sb import "$R/again" "$TMP/again.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/again"
check_rc "the same candidate slower by 27%: a re-measurement, exit 0" 0
check_out "listed with its ratio as a re-measurement" "| samples | L1/1 | 0 | pass 1.500x ±1.0% (attempt 0) | pass 1.100x ±1.0% (attempt 0) | 0.733x (-26.7%) |"
check_out "whose outcome says so" "| same candidate: re-measured |"
check_out "the spread between evaluations is reported" "The spread between evaluations, from the "
# and L1/2 changed too, 1.0x -> 0.85x with a tight interval: -15% is beyond 5%, within that spread
python3 - "$TMP/again.jsonl" >"$TMP/again2.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)
    if v["problem"]["ref"] == "L1/2":
        v["candidate"]["sha256"] = "e" * 64
        v["speedup"]["vs_eager"], v["speedup"]["vs_eager_ci95"] = 0.85, [0.85 * 0.99, 0.85 * 1.01]
    print(json.dumps(v))
PY
run_sb import "$R/again2" "$TMP/again2.jsonl" "$FIX/shard_b.jsonl"
run_sb compare "$R/base" "$R/again2"
check_rc "a -15% change within the spread the re-measured candidate showed: exit 0" 0
# 4 candidates evaluated twice, one pair apart by d = ln(1.1/1.5): s^2 = (d^2 / 2) / 4, h = 1.96 sqrt(2) s = 0.304
check_out "its threshold is that spread, e^0.304 - 1" "| samples | L1/2 | 0 | pass 1.000x ±1.0% (attempt 0) | pass 0.850x ±1.0% (attempt 0) | 0.850x (-15.0%) | ±35.5% | within noise |"

run_sb import "$R/part" "$FIX/shard_a.jsonl"
run_sb compare "$R/base" "$R/part"
check_rc "keys missing from NEW are listed, not regressions" 0
check_err "and warned about" "5 candidates are only in BASE and 0 only in NEW"
# the same configuration on another machine (other_gpu.jsonl with base's trials): compared, and warned about
sed 's/"trials": *3,/"trials": 5,/' "$FIX/other_gpu.jsonl" >"$TMP/a100.jsonl"
run_sb import "$R/a100" "$TMP/a100.jsonl"
run_sb compare "$R/base" "$R/a100"
check_err "settings that change the numbers are warned about" 'gpu: "NVIDIA H200" in '"$R/base"' vs "NVIDIA A100-SXM4-80GB" in '"$R/a100"
check_out "and listed in the Markdown" "### Settings that differ"
# a configuration key of the run's identity is not a machine: compare refuses the mix unless told to
sed 's/"trials": *5,/"trials": 3,/' "$FIX/shard_a.jsonl" >"$TMP/t3_a.jsonl"
sed 's/"trials": *5,/"trials": 3,/' "$FIX/shard_b.jsonl" >"$TMP/t3_b.jsonl"
run_sb import "$R/trials3" "$TMP/t3_a.jsonl" "$TMP/t3_b.jsonl"
run_sb compare "$R/base" "$R/trials3"
check_rc "runs whose configurations differ in eval.trials are refused, exit 2" 2
check_err "naming the key and both values" "eval.trials: 5 in $R/base vs 3 in $R/trials3"
run_sb compare "$R/base" "$R/trials3" --mixed-settings
check_rc "--mixed-settings compares them anyway" 0
check_out "and lists the difference in the Markdown" "eval.trials: 5 in $R/base vs 3 in $R/trials3"

run_sb compare "$R/base"
check_rc "one run is a usage error" 2
run_sb compare "$R/base" "$R/base" --threshold lots
check_rc "a bad threshold is a usage error" 2
run_sb compare "$R/base" "$FIX/shard_a.jsonl"
check_rc "a file that is not a store is an input error" 2

for cmd in report compare; do
	run_sb help "$cmd"
	check_out "help $cmd explains its exit codes" "Exit codes:"
done
