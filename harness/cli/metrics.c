/* metrics.c - `stitchbench metrics`: the results table of one or more runs (agents as rows, levels as
 * columns) with the details and bootstrap intervals of every agent; definitions in docs/metrics.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../report/metrics.h"
#include "../store/store.h"
#include "cli.h"

const char cmd_metrics_help[] =
	"usage: stitchbench metrics RUN... [--by first|best] [--json]\n\n"
	"Computes, per agent and level and over all levels: problems, compiled %, correct %, hack %,\n"
	"fast_p % for p = 0, 0.5, 0.8, 1, 1.5, 2 (correct and speedup vs eager > p, over all problems the\n"
	"agent has verdicts for; fast_0 = correct %), the geometric-mean speedup over correct problems vs\n"
	"eager and vs torch.compile, attempts and LLM tokens to the first correct candidate, and LLM cost.\n"
	"correct %, fast_1 and the eager geomean carry percentile-bootstrap 95% intervals (problems resampled\n"
	"with replacement, 2000 times, fixed seed). docs/metrics.md defines every number.\n\n"
	"RUN is a run directory or a results.db file. With several RUNs, their verdicts are pooled; an agent\n"
	"name found in two RUNs becomes NAME@RUN_ID, and runs made with settings that change the numbers are\n"
	"named in a warning (merge them with 'stitchbench merge' to have that checked strictly).\n\n"
	"Options:\n"
	"   --by first   a problem is represented by the best attempt of its first (lowest) sample:\n"
	"                KernelBench's pass@1 with one sample (the default)\n"
	"   --by best    by the best candidate of any sample (best-of-n)\n"
	"   --json       the numbers as JSON (percentages in percent, n/a as null) instead of Markdown\n\n"
	"Output: a Markdown table 'correct % / fast_1 % / geomean' with agents as rows and levels as\n"
	"columns, then one table of every metric per agent. A warning names agents that lack verdicts for\n"
	"some problems of their run (those problems are not in their rates).\n"
	"Exit codes: 0 printed, 2 usage error or a RUN that is not a results store, 3 a read failed.\n";

struct input {
	const char *arg;
	struct store *s;
	struct store_run *runs;
	size_t nruns;
	struct store_agent *agents;
	size_t nagents;
	size_t nproblems;
};

static int open_input(struct input *in, const char *arg, struct sb_error *err)
{
	struct store_problem *probs = NULL;
	char *path = store_path_for(arg);
	in->arg = arg;
	int rc = store_open(&in->s, path, STORE_READ, err);
	free(path);
	if (!rc && !(rc = store_load_runs(in->s, &in->runs, &in->nruns, err)) &&
	    !(rc = store_load_agents(in->s, &in->agents, &in->nagents, err)))
		rc = store_load_problems(in->s, &probs, &in->nproblems, err);
	free(probs);
	return rc;
}

static int agent_elsewhere(const struct input *v, size_t n, size_t self, const char *name)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; i != self && j < v[i].nagents; j++)
			if (!strcmp(v[i].agents[j].name, name))
				return 1;
	return 0;
}

/* Pooling runs made with different settings mixes numbers that are not comparable: say so. */
static void warn_settings(struct sb_ctx *ctx, const struct input *v, size_t n)
{
	struct strbuf diff = STRBUF_INIT;
	struct store_runs_of *runs = xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++)
		runs[i] = (struct store_runs_of){ v[i].arg, v[i].runs, v[i].nruns };
	store_compare_runs(runs, n, &diff);
	free(runs);
	if (diff.len)
		sb_warn(ctx, "these runs were made with settings that change the numbers:\n%s", diff.buf);
	strbuf_release(&diff);
}

static void warn_coverage(struct sb_ctx *ctx, const struct metrics *m, const struct input *v, size_t n,
			  char **suffix)
{
	for (size_t a = 0; a < m->nagents; a++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < v[i].nagents; j++) {
				char *name = xstrfmt("%s%s", v[i].agents[j].name, suffix[i] ? suffix[i] : "");
				size_t have = m->agents[a].cells[0].problems;
				if (!strcmp(name, m->agents[a].name) && have < v[i].nproblems)
					sb_warn(ctx, "agent %s has verdicts for %zu of the %zu problems in %s; its rates are over "
						"those %zu", name, have, v[i].nproblems, v[i].arg, have);
				free(name);
			}
}

int cmd_metrics(int argc, char **argv, struct sb_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct sb_error err = { 0 };
	enum metrics_by by = METRICS_FIRST;
	int c, json = 0, rc = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(cmd_metrics_help, stdout);
			return 0;
		} else if (c == 'j') {
			json = 1;
		} else if (c == 'b' && (!strcmp(optarg, "first") || !strcmp(optarg, "best"))) {
			by = !strcmp(optarg, "best") ? METRICS_BEST : METRICS_FIRST;
		} else if (c == 'b') {
			sb_error_set(&err, SB_EINPUT, "metrics: --by %s: use first or best", optarg);
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
	struct input *v = xcalloc(n, sizeof(*v));
	char **suffix = xcalloc(n, sizeof(*suffix));
	struct metric_input in = { 0 };
	struct metrics m = { 0 };
	for (size_t i = 0; i < n && !rc; i++)
		rc = open_input(&v[i], argv[optind + (int)i], &err);
	for (size_t i = 0; i < n && !rc; i++) {
		for (size_t j = 0; j < v[i].nagents && !suffix[i]; j++)
			if (agent_elsewhere(v, n, i, v[i].agents[j].name))
				suffix[i] = xstrfmt("@%s", v[i].nruns ? v[i].runs[0].run_id : v[i].arg);
		rc = metrics_load(v[i].s, suffix[i], &in, &err);
	}
	if (!rc)
		rc = metrics_compute(in.rows, in.nrows, in.calls, in.ncalls, by, &m, &err);
	if (!rc) {
		warn_settings(ctx, v, n);
		warn_coverage(ctx, &m, v, n, suffix);
		if (json) {
			json_t *j = metrics_json(&m), *inputs = json_array();
			for (size_t i = 0; i < n; i++)
				json_array_append_new(inputs, json_string(v[i].arg));
			json_object_set_new(j, "inputs", inputs);
			char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			puts(text);
			free(text);
			json_decref(j);
		} else if (!m.nagents) {
			printf("no verdicts yet in %s\n", n == 1 ? v[0].arg : "these runs");
		} else {
			struct strbuf out = STRBUF_INIT;
			metrics_table(&m, &out);
			fputs(out.buf, stdout);
			strbuf_release(&out);
		}
	}
	for (size_t i = 0; i < n; i++) {
		store_close(v[i].s);
		store_runs_free(v[i].runs, v[i].nruns);
		free(v[i].agents);
		free(suffix[i]);
	}
	free(v);
	free(suffix);
	metric_input_release(&in);
	metrics_release(&m);
	return rc ? cli_fail(ctx, &err) : 0;
}
