/* report.c - `stitchbench report`: one or more runs as reports/NAME/report.md and one self-contained
 * report.html with gnuplot plots (docs/report.md). */
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../report/report.h"
#include "cli.h"

const char cmd_report_help[] =
	"usage: stitchbench report RUN... [-o DIR] [--by first|best] [--denominator all|judged]\n"
	"                          [--protocol stitchbench|stitchcuda] [--repeats K] [--no-plots]\n\n"
	"Writes DIR/report.md (Markdown) and DIR/report.html: one self-contained page (styles and plots inline,\n"
	"nothing fetched from anywhere) with the runs and their settings; the results table (agents as rows,\n"
	"levels as columns: correct % / fast_1 % / geomean speedup, each with its 95% interval), StitchCUDA's table with its protocol,\n"
	"and every metric per agent with bootstrap intervals (docs/metrics.md); and plots drawn by gnuplot:\n"
	"fast_p curves per agent, speedup distributions (log scale), speedup per problem, the best speedup\n"
	"by attempt for iterative agents (with attempts by stage), LLM tokens and cost against speedup, hack\n"
	"findings by id, and the problems the audit flagged. Passes with a hack finding (flagged) are marked\n"
	"in the outcome per problem and listed in a section of their own; like stitchbench's own metrics, no\n"
	"speedup plot counts them (StitchCUDA's table does, as its protocol counts them). Problems whose\n"
	"reference failed are left out of the rates and named under the results table. A plot without data\n"
	"(no iterative agent, no LLM calls, no findings) is left out with a line saying so. Each plot's data\n"
	"(.dat), gnuplot script (.gp), SVG and PNG are kept in DIR/plots/; `gnuplot NAME.gp` there redraws\n"
	"one. docs/report.md describes every plot.\n\n"
	"RUN is a run directory or a results.db file. With several RUNs, their verdicts are pooled as in\n"
	"'stitchbench metrics': an agent name found in two RUNs becomes NAME@RUN_ID, and runs made with\n"
	"settings that change the numbers are named in a warning and in the report.\n\n"
	"Options:\n"
	"   -o, --output DIR   where to write (default reports/NAME, NAME from the RUN folder names joined\n"
	"                      by '+'); created when missing, an earlier report there is replaced\n"
	"   --by first|best    which candidate represents a problem: the best attempt of the first sample\n"
	"                      (default), or the best of any sample (docs/metrics.md)\n"
	"   --denominator all|judged  rates over every problem of each agent's run, a problem without a\n"
	"                      verdict counting as a failure (default), or over the problems with a verdict\n"
	"   --protocol stitchcuda|stitchbench  with stitchcuda, StitchCUDA's table after the results table\n"
	"                      (success, average speedups, Fast1, partial hacks, mean reward; a flagged\n"
	"                      pass counts there as correct and for speed; 'stitchbench help metrics'); the\n"
	"                      default when a run was made with the stitchcuda preset, stitchbench otherwise\n"
	"   --repeats K        first judge each problem's representative clean pass of every agent again\n"
	"                      until the store holds K repeats of it, as 'stitchbench metrics --repeats K'\n"
	"                      does; every speed interval then covers the spread between evaluations, and the\n"
	"                      report says how many repeats it used (stored ones are reused)\n"
	"   --no-plots         tables only: no gnuplot needed\n\n"
	"gnuplot (Debian package gnuplot-nox, installed by scripts/setup.sh) draws the plots, as SVG (inlined\n"
	"into the HTML) and PNG (pngcairo terminal; the libgd png terminal where gnuplot lacks cairo).\n"
	"Exit codes: 0 written, 2 usage error or a RUN that is not a results store, 3 gnuplot missing\n"
	"(use --no-plots), gnuplot failing, or a read or write failure.\n";

/* reports/A+B from the RUN arguments' folder names, kept to characters safe in a folder name. */
static char *default_dir(char **runs, int n)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "reports/");
	for (int i = 0; i < n; i++) {
		char *copy = xstrdup(runs[i]);
		size_t len = strlen(copy);
		while (len > 1 && copy[len - 1] == '/')
			copy[--len] = '\0';
		if (ends_with(copy, "/results.db"))
			copy[len - strlen("/results.db")] = '\0';
		char *base = basename(copy);
		if (i)
			strbuf_addch(&sb, '+');
		for (const char *p = base; *p; p++)
			strbuf_addch(&sb, strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p) ? *p : '_');
		free(copy);
	}
	return strbuf_detach(&sb, NULL);
}

static void progress(void *arg, const char *what, size_t i, size_t n)
{
	struct sb_ctx *ctx = arg;
	if (i < n)
		sb_info(ctx, "report: drawing plot %zu of %zu (%s)", i + 1, n, what);
}

int cmd_report(int argc, char **argv, struct sb_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "by", required_argument, NULL, 'b' },
		{ "no-plots", no_argument, NULL, 'n' }, { "denominator", required_argument, NULL, 'd' },
		{ "protocol", required_argument, NULL, 'p' }, { "repeats", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct sb_error err = { 0 };
	struct report_opts o = { .by = METRICS_FIRST, .progress = progress, .progress_arg = ctx };
	const char *out = NULL;
	int c, repeats = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cmd_report_help, stdout);
			return 0;
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 'n') {
			o.no_plots = 1;
		} else if (c == 'r') {
			if (cli_repeats_arg("report", optarg, &repeats, &err))
				return cli_fail(ctx, &err);
		} else if (c == 'b' && (!strcmp(optarg, "first") || !strcmp(optarg, "best"))) {
			o.by = !strcmp(optarg, "best") ? METRICS_BEST : METRICS_FIRST;
		} else if (c == 'b') {
			sb_error_set(&err, SB_EINPUT, "report: --by %s: use first or best", optarg);
			return cli_fail(ctx, &err);
		} else if (c == 'd') {
			if (metrics_denominator_parse(optarg, &o.denominator) == 0)
				continue;
			sb_error_set(&err, SB_EINPUT, "report: --denominator %s: use all or judged", optarg);
			return cli_fail(ctx, &err);
		} else if (c == 'p') {
			if (metrics_protocol_parse(optarg, &o.protocol) == 0)
				continue;
			sb_error_set(&err, SB_EINPUT, "report: --protocol %s: use stitchbench or stitchcuda", optarg);
			return cli_fail(ctx, &err);
		} else {
			sb_error_set(&err, SB_EINPUT, "report: option '%s' %s; see 'stitchbench help report'",
				     argv[optind - 1], c == ':' ? "needs a value" : "is not known");
			return cli_fail(ctx, &err);
		}
	}
	if (optind >= argc) {
		sb_error_set(&err, SB_EINPUT, "report: which runs? give run directories or results.db files");
		return cli_fail(ctx, &err);
	}
	if (out && !*out) {
		sb_error_set(&err, SB_EINPUT, "report: -o needs a folder name");
		return cli_fail(ctx, &err);
	}
	if (repeats && cli_repeats(ctx, argv + optind, (size_t)(argc - optind), repeats, o.by == METRICS_FIRST,
				   o.by == METRICS_BEST, NULL, &err))
		return cli_fail(ctx, &err);
	char *dir = out ? xstrdup(out) : default_dir(argv + optind, argc - optind);
	struct report_result res;
	o.runs = argv + optind;
	o.nruns = (size_t)(argc - optind);
	o.out_dir = dir;
	int rc = report_write(&o, &res, &err);
	if (!rc) {
		for (const char *p = res.warnings.buf; *p;) {
			size_t len = strcspn(p, "\n");
			sb_warn(ctx, "%.*s", (int)len, p);
			p += len + (p[len] == '\n');
		}
		if (o.no_plots)
			printf("wrote %s and %s (tables only: --no-plots)\n", res.md_path, res.html_path);
		else
			printf("wrote %s and %s: %zu plots drawn (svg and %s png), %zu without data left out\n", res.md_path,
			       res.html_path, res.plots_drawn, res.png_terminal, res.plots_omitted);
	}
	report_result_release(&res);
	free(dir);
	return rc ? cli_fail(ctx, &err) : 0;
}
