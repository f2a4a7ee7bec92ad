/* compare.c - `stitchbench compare BASE NEW`: per-problem regressions between two runs with a noise-aware
 * threshold, as Markdown a CI job can post; exit 1 when something regressed (docs/report.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fs.h"
#include "../core/log.h"
#include "../report/inputs.h"
#include "../report/regress.h"
#include "cli.h"

const char cmd_compare_help[] =
	"usage: stitchbench compare BASE NEW [--threshold X] [--mixed-settings] [-o FILE.md]\n\n"
	"Compares two runs candidate by candidate: each (agent, problem, sample) of either run is reduced to\n"
	"its best attempt (the ranking of docs/metrics.md) and matched by agent name, problem and sample.\n"
	"A regression is a candidate correct in BASE and not in NEW (wrong, crashed, did not build, or a\n"
	"hack), or correct in both but slower: its speedup vs eager in NEW divided by BASE's below 1/(1+t).\n"
	"The threshold t is per candidate: the largest of X, the timing noise the two verdicts recorded,\n"
	"exp(sqrt(h_base^2 + h_new^2)) - 1, where h is the half-width of a verdict's 95% speedup interval\n"
	"in ln units (from speedup.vs_eager_ci95, else estimated from the per-round ratios' p25, p75 and n),\n"
	"and the spread between evaluations, exp(h_eval) - 1: the 95% half-width of the ratio of two\n"
	"evaluations of one candidate, from every candidate (problem and sha256) evaluated more than once in\n"
	"either run or across them. Speedups above 1+t are improvements; within it, noise. A candidate that\n"
	"is the same file on both sides (same sha256) is a re-measurement, never a regression or an\n"
	"improvement; its ratio is shown. A pass with a hack finding (flagged, docs/metrics.md) is not a\n"
	"clean pass: a clean pass in BASE that is flagged in NEW is a regression, and a flagged pass in NEW\n"
	"is never an improvement nor compared for speed. docs/report.md explains the rule.\n\n"
	"BASE and NEW are run directories or results.db files. Keys found in one run only are listed and\n"
	"not compared. Runs whose configurations differ in a key that changes what is measured or decided\n"
	"(the run's identity: eval.preset, eval.trials, eval.tf32, checks.policy, ...; docs/config.md) are\n"
	"refused, naming each key, unless --mixed-settings is given. A different GPU, torch or device is\n"
	"allowed (comparing across them may be the point): it is listed in the output and warned about.\n\n"
	"Options:\n"
	"   --threshold X    the smallest speedup change that counts, as a fraction (0.05) or a percentage\n"
	"                    (5%); default 5%\n"
	"   --mixed-settings compare runs whose configurations differ in identity keys anyway (the\n"
	"                    differences are listed in the output)\n"
	"   -o, --output FILE  write the Markdown to FILE instead of stdout\n\n"
	"Output: Markdown with the verdict line, counts per outcome, the rule and the spread between\n"
	"evaluations, then tables of regressions, improvements, unchanged candidates (re-measurements\n"
	"among them) and keys in one run only.\n"
	"Exit codes: 0 no regression, 1 at least one regression, 2 usage error or a RUN that is not a results\n"
	"store, 3 a read or write failure.\n";

/* "0.05" or "5%"; a fraction in [0, 10). */
static int parse_threshold(const char *s, double *out, struct sb_error *err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	int pct = *end == '%';
	if (pct)
		end++;
	if (end == s || *end || errno || !isfinite(v))
		return sb_error_set(err, SB_EINPUT, "compare: --threshold %s: give a fraction (0.05) or a percentage (5%%)", s);
	if (pct)
		v /= 100;
	if (v < 0 || v >= 10)
		return sb_error_set(err, SB_EINPUT, "compare: --threshold %s: must be at least 0 and below 10 (1000%%)", s);
	*out = v;
	return 0;
}

int cmd_compare(int argc, char **argv, struct sb_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "threshold", required_argument, NULL, 't' }, { "output", required_argument, NULL, 'o' },
		{ "mixed-settings", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct sb_error err = { 0 };
	double floor = REGRESS_DEFAULT_FLOOR;
	const char *out_path = NULL;
	int c, mixed = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cmd_compare_help, stdout);
			return 0;
		} else if (c == 'o') {
			out_path = optarg;
		} else if (c == 'm') {
			mixed = 1;
		} else if (c == 't') {
			if (parse_threshold(optarg, &floor, &err))
				return cli_fail(ctx, &err);
		} else {
			sb_error_set(&err, SB_EINPUT, "compare: option '%s' %s; see 'stitchbench help compare'",
				     argv[optind - 1], c == ':' ? "needs a value" : "is not known");
			return cli_fail(ctx, &err);
		}
	}
	if (argc - optind != 2) {
		sb_error_set(&err, SB_EINPUT, "compare: give exactly two runs, BASE then NEW (got %d)", argc - optind);
		return cli_fail(ctx, &err);
	}
	struct run_input *v = NULL;
	struct regress_run base = { 0 }, new = { 0 };
	struct regress r = { 0 };
	struct strbuf diff = STRBUF_INIT, md = STRBUF_INIT;
	int rc = run_inputs_open(&v, argv + optind, 2, &err);
	if (!rc && !mixed) {
		run_inputs_settings_diff(v, 2, STORE_DIFF_CONFIG, &diff);
		if (diff.len)
			rc = sb_error_set(&err, SB_EINPUT, "compare: BASE and NEW were made with configurations that change "
					  "what is measured or decided:\n%s  compare runs of one configuration, or give "
					  "--mixed-settings to compare them anyway", diff.buf);
		strbuf_reset(&diff);
	}
	if (!rc)
		rc = regress_run_load(&base, v[0].arg, v[0].s, &err);
	if (!rc)
		rc = regress_run_load(&new, v[1].arg, v[1].s, &err);
	if (!rc) {
		regress_compute(&base, &new, floor, &r);
		run_inputs_settings_diff(v, 2, STORE_DIFF_ALL, &diff);
		if (diff.len)
			sb_warn(ctx, "BASE and NEW were made with settings that change the numbers:\n%s", diff.buf);
		if (r.count[RG_ONLY_BASE] || r.count[RG_ONLY_NEW])
			sb_warn(ctx, "%zu candidates are only in BASE and %zu only in NEW; they are listed, not compared",
				r.count[RG_ONLY_BASE], r.count[RG_ONLY_NEW]);
		regress_markdown(&r, &base, &new, diff.buf, &md);
		if (out_path) {
			int e = fs_write_atomic(out_path, md.buf, md.len);
			if (e)
				rc = sb_error_set(&err, SB_EIO, "compare: cannot write %s: %s", out_path, strerror(-e));
			else
				printf("%zu regressions, %zu improvements; wrote %s\n", regress_regressions(&r),
				       r.count[RG_FIXED] + r.count[RG_FASTER], out_path);
		} else {
			fputs(md.buf, stdout);
		}
	}
	int regressed = !rc && regress_regressions(&r) > 0;
	regress_release(&r);
	regress_run_release(&base);
	regress_run_release(&new);
	run_inputs_close(v, 2);
	strbuf_release(&diff);
	strbuf_release(&md);
	if (rc)
		return cli_fail(ctx, &err);
	return regressed ? SB_EXIT_FAILED : SB_EXIT_OK;
}
