/* metrics.c - `stitchbench metrics`: the results table of one or more runs (agents as rows, levels as
 * columns) with the details and bootstrap intervals of every agent; definitions in docs/metrics.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../report/inputs.h"
#include "../report/metrics.h"
#include "../report/published.h"
#include "../run/repeats.h"
#include "../store/store.h"
#include "cli.h"

const char cmd_metrics_help[] =
	"usage: stitchbench metrics RUN... [--by first|best] [--denominator all|judged]\n"
	"                           [--protocol stitchbench|stitchcuda] [--baseline FILE] [--repeats K]\n"
	"                           [--json]\n\n"
	"Computes, per agent and level and over all levels: problems, compiled %, correct %, flagged %,\n"
	"hack %, fast_p % for p = 0, 0.5, 0.8, 1, 1.5, 2 (a clean pass with speedup vs eager > p, over all\n"
	"problems of --denominator), the geometric-mean speedup over clean passes vs eager and vs\n"
	"torch.compile, attempts and LLM tokens to the first correct candidate, and LLM cost. A clean pass\n"
	"is a pass with no hack finding; a pass whose verdict has one (a finding with id H01..H22 that\n"
	"checks.policy flags, e.g. H21 more than 10x eager, H17 on a flawed problem) is flagged: it counts\n"
	"in correct % and flagged %, never in fast_p or a geometric mean. correct_robust % and fast_1_robust %\n"
	"leave out the passes whose robust trials (signed, scaled inputs) failed.\n"
	"correct %, fast_1 and the eager geomean carry percentile-bootstrap 95% intervals (problems resampled\n"
	"with replacement, 2000 times, fixed seed). Speed intervals (fast_1, the geomean, the pairs' ratio)\n"
	"also cover each verdict's own timing interval and, where the store holds repeated evaluations of a\n"
	"problem's candidate (--repeats, run.repeats), the spread between them; the output says how many\n"
	"repeats there are. docs/metrics.md defines every number.\n\n"
	"RUN is a run directory or a results.db file. With several RUNs, their verdicts are pooled; an agent\n"
	"name found in two RUNs becomes NAME@RUN_ID, and runs made with settings that change the numbers are\n"
	"named in a warning (merge them with 'stitchbench merge' to have that checked strictly).\n\n"
	"Options:\n"
	"   --by first   a problem is represented by the best attempt of its first (lowest) sample:\n"
	"                KernelBench's pass@1 with one sample (the default)\n"
	"   --by best    by the best candidate of any sample (best-of-n)\n"
	"   --denominator all     rates are over every problem each agent's run selected; a problem\n"
	"                         without a verdict counts as a failure (KernelBench's convention; the\n"
	"                         default)\n"
	"   --denominator judged  rates are over the problems each agent has a verdict for\n"
	"                With either, a problem without a verdict whose reference failed (the store's\n"
	"                reference_failures) is left out and named in a line of its own.\n"
	"   --protocol stitchcuda   also StitchCUDA's table, per agent and level: success (passes / problems),\n"
	"                the average speedup vs eager over all problems (one without a timed pass counting\n"
	"                0) and over the timed passes, Fast1 (passes faster than eager / problems), partial\n"
	"                hacks (passes with a hack finding / problems, 'k/N') and, where verdicts have one,\n"
	"                the mean reward. There a flagged pass counts as correct and for speed. The default\n"
	"                when a run was made with the stitchcuda preset (eval.preset)\n"
	"   --protocol stitchbench  stitchbench's tables only (the default otherwise)\n"
	"   --baseline FILE  also fast_p and the geometric mean against a published baseline timing file,\n"
	"                KernelBench's baseline_time_torch*.json ({\"level1\": {\"19_ReLU.py\": {\"mean\": ms}}};\n"
	"                'stitchbench baseline' writes one) as KernelBench's analysis computes them: the\n"
	"                baseline's mean over the candidate's mean per call, for each problem's clean pass; the\n"
	"                file's hardware is named, and a warning says when the candidates ran elsewhere\n"
	"   --repeats K  first judge each problem's representative clean pass (by --by) of every agent\n"
	"                again until the store holds K repeats of it, with the run's config.yaml on this\n"
	"                machine (its device, GPU and torch must be the run's), stored beside the verdicts\n"
	"                (the verdicts and the representatives stay as they were); repeats already stored\n"
	"                are reused, so a second --repeats K judges nothing. Progress goes to stderr\n"
	"   --json       the numbers as JSON (percentages in percent, n/a as null) instead of Markdown; with\n"
	"                StitchCUDA's protocol each cell has a key \"stitchcuda\"\n\n"
	"Output: a Markdown table 'correct % / fast_1 % / geomean', each with its 95% interval, agents as rows and levels as\n"
	"columns ('(N flagged)' after a cell with flagged passes, '(best)' after the overall geomean of an\n"
	"agent faster than every other by the pairs' intervals), saying which denominator it used; with two\n"
	"agents or more, the agents compared in pairs (over the problems both have: the geometric mean of\n"
	"one's speedup over the other's, the correct % and fast_1 % differences, with paired bootstrap 95%\n"
	"intervals and a sentence saying what they show); then StitchCUDA's table (with its protocol), then\n"
	"one table of every metric per agent ('no verdict' and 'reference failed' count the problems\n"
	"without one). A warning names agents that lack verdicts for some problems of their run.\n"
	"Exit codes: 0 printed, 2 usage error or a RUN that is not a results store (or, with --repeats, one\n"
	"without its config.yaml, or in use by a run), 3 a read failed or this machine cannot judge.\n";

static void say_repeat(void *arg, int warn, const char *line)
{
	struct sb_ctx *ctx = arg;
	if (warn)
		sb_warn(ctx, "%s", line);
	else
		sb_info(ctx, "%s", line);
}

int cli_repeats(struct sb_ctx *ctx, char *const *runs, size_t n, int k, int by_first, int by_best,
		const atomic_int *stop, struct sb_error *err)
{
	struct repeats_opts o = { .k = k, .by_first = by_first, .by_best = by_best,
				  .home = ctx->home, .say = say_repeat, .say_arg = ctx, .stop = stop };
	for (size_t i = 0; i < n; i++) {
		struct repeats_result res;
		int rc = repeats_fill(runs[i], &o, &res, err);
		if (rc)
			return rc;
		sb_info(ctx, "repeats of %s: %zu candidates, %zu repeats judged now, %zu stored before%s", runs[i],
			res.candidates, res.judged, res.stored, res.skipped ? " (some not repeated: see above)" : "");
	}
	return 0;
}

int cli_repeats_arg(const char *cmd, const char *v, int *k, struct sb_error *err)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (!*v || *end || x < 0 || x > CLI_REPEATS_MAX)
		return sb_error_set(err, SB_EINPUT, "%s: --repeats %s: give a count from 0 to %d", cmd, v, CLI_REPEATS_MAX);
	*k = (int)x;
	return 0;
}

/* Each line of lines as one warning (the first one may be introduced by intro). */
static void warn_lines(struct sb_ctx *ctx, const char *intro, const struct strbuf *lines)
{
	if (!lines->len)
		return;
	if (intro) {
		sb_warn(ctx, "%s\n%s", intro, lines->buf);
		return;
	}
	for (const char *p = lines->buf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		sb_warn(ctx, "%.*s", (int)len, p);
		p += len + (nl != NULL);
	}
}

int cmd_metrics(int argc, char **argv, struct sb_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' }, { "json", no_argument, NULL, 'j' },
		{ "denominator", required_argument, NULL, 'd' }, { "protocol", required_argument, NULL, 'p' },
		{ "baseline", required_argument, NULL, 'B' }, { "repeats", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *baseline = NULL;
	struct published pub = { 0 };
	struct sb_error err = { 0 };
	enum metrics_by by = METRICS_FIRST;
	enum metrics_denominator den = METRICS_ALL;
	enum metrics_protocol protocol = METRICS_PROTOCOL_AUTO;
	int c, json = 0, rc = 0, repeats = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cmd_metrics_help, stdout);
			return 0;
		} else if (c == 'j') {
			json = 1;
		} else if (c == 'B') {
			baseline = optarg;
		} else if (c == 'r') {
			if (cli_repeats_arg("metrics", optarg, &repeats, &err))
				return cli_fail(ctx, &err);
		} else if (c == 'b' && (!strcmp(optarg, "first") || !strcmp(optarg, "best"))) {
			by = !strcmp(optarg, "best") ? METRICS_BEST : METRICS_FIRST;
		} else if (c == 'b') {
			sb_error_set(&err, SB_EINPUT, "metrics: --by %s: use first or best", optarg);
			return cli_fail(ctx, &err);
		} else if (c == 'd') {
			if (metrics_denominator_parse(optarg, &den) == 0)
				continue;
			sb_error_set(&err, SB_EINPUT, "metrics: --denominator %s: use all or judged", optarg);
			return cli_fail(ctx, &err);
		} else if (c == 'p') {
			if (metrics_protocol_parse(optarg, &protocol) == 0)
				continue;
			sb_error_set(&err, SB_EINPUT, "metrics: --protocol %s: use stitchbench or stitchcuda", optarg);
			return cli_fail(ctx, &err);
		} else {
			sb_error_set(&err, SB_EINPUT, "metrics: option '%s' %s; see 'stitchbench help metrics'",
				     argv[optind - 1], c == ':' ? "needs a value" : "is not known");
			return cli_fail(ctx, &err);
		}
	}
	if (optind >= argc) {
		sb_error_set(&err, SB_EINPUT, "metrics: which runs? give run directories or results.db files");
		return cli_fail(ctx, &err);
	}
	size_t n = (size_t)(argc - optind);
	struct run_input *v = NULL;
	struct metric_input in = { 0 };
	struct metrics m = { 0 };
	if (baseline && published_load(&pub, baseline, &err))
		return cli_fail(ctx, &err);
	if (repeats && cli_repeats(ctx, argv + optind, n, repeats, by == METRICS_FIRST, by == METRICS_BEST, NULL, &err)) {
		published_release(&pub);
		return cli_fail(ctx, &err);
	}
	if (baseline) { /* the candidate's mean and the GPU of each verdict, read as the rows are */
		in.on_row = published_keep;
		in.on_row_arg = &pub;
	}
	rc = run_inputs_open(&v, argv + optind, n, &err);
	if (!rc)
		rc = run_inputs_load(v, n, &in, &err);
	if (!rc) {
		struct metric_scope scope = metric_input_scope(&in, den);
		rc = metrics_compute(in.rows, in.nrows, in.calls, in.ncalls, by, &scope, &m, &err);
	}
	if (!rc) {
		metrics_add_unavailable(&m, in.unavailable, in.nunavailable);
		m.protocol = run_inputs_protocol(v, n, protocol);
		struct strbuf diff = STRBUF_INIT, coverage = STRBUF_INIT;
		run_inputs_settings_diff(v, n, STORE_DIFF_ALL, &diff);
		run_inputs_coverage(&m, v, n, &coverage);
		warn_lines(ctx, "these runs were made with settings that change the numbers:", &diff);
		warn_lines(ctx, NULL, &coverage);
		strbuf_release(&diff);
		strbuf_release(&coverage);
		if (json) {
			json_t *j = metrics_json(&m), *inputs = json_array();
			for (size_t i = 0; i < n; i++)
				json_array_append_new(inputs, json_string(v[i].arg));
			json_object_set_new(j, "inputs", inputs);
			if (baseline)
				json_object_set_new(j, "vs_baseline", published_json(&pub, &m, in.rows));
			char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			puts(text);
			free(text);
			json_decref(j);
		} else if (!m.nagents && !m.nunavailable) {
			printf("no verdicts yet in %s\n", n == 1 ? v[0].arg : "these runs");
		} else {
			struct strbuf out = STRBUF_INIT;
			metrics_table(&m, &out);
			if (baseline)
				published_markdown(&pub, &m, in.rows, &out);
			fputs(out.buf, stdout);
			strbuf_release(&out);
		}
	}
	run_inputs_close(v, n);
	published_release(&pub);
	metric_input_release(&in);
	metrics_release(&m);
	return rc ? cli_fail(ctx, &err) : 0;
}
