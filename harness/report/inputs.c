/* inputs.c - opening the RUN arguments that metrics, report and compare read, and the warnings they share:
 * runs made with settings that change the numbers, agents with verdicts for only some problems. */
#include "inputs.h"

#include <stdlib.h>
#include <string.h>

static int open_one(struct run_input *in, const char *arg, struct sb_error *err)
{
	char *path = store_path_for(arg);
	in->arg = arg;
	int rc = store_open(&in->s, path, STORE_READ, err);
	free(path);
	if (!rc && !(rc = store_load_runs(in->s, &in->runs, &in->nruns, err)) &&
	    !(rc = store_load_agents(in->s, &in->agents, &in->nagents, err)))
		rc = store_load_problems(in->s, &in->problems, &in->nproblems, err);
	return rc;
}

static int agent_elsewhere(const struct run_input *v, size_t n, size_t self, const char *name)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; i != self && j < v[i].nagents; j++)
			if (!strcmp(v[i].agents[j].name, name))
				return 1;
	return 0;
}

int run_inputs_open(struct run_input **out, char *const *args, size_t n, struct sb_error *err)
{
	struct run_input *v = xcalloc(n, sizeof(*v));
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = open_one(&v[i], args[i], err);
	for (size_t i = 0; i < n && !rc; i++)
		for (size_t j = 0; j < v[i].nagents && !v[i].suffix; j++)
			if (agent_elsewhere(v, n, i, v[i].agents[j].name))
				v[i].suffix = xstrfmt("@%s", v[i].nruns ? v[i].runs[0].run_id : v[i].arg);
	if (rc) {
		run_inputs_close(v, n);
		v = NULL;
	}
	*out = v;
	return rc;
}

void run_inputs_close(struct run_input *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		store_close(v[i].s);
		store_runs_free(v[i].runs, v[i].nruns);
		free(v[i].agents);
		free(v[i].problems);
		free(v[i].suffix);
	}
	free(v);
}

int run_inputs_load(struct run_input *v, size_t n, struct metric_input *in, struct sb_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = metrics_load(v[i].s, v[i].suffix, in, err);
	return rc;
}

void run_inputs_settings_diff(const struct run_input *v, size_t n, struct strbuf *out)
{
	struct store_runs_of *runs = xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++)
		runs[i] = (struct store_runs_of){ v[i].arg, v[i].runs, v[i].nruns };
	store_compare_runs(runs, n, out);
	free(runs);
}

void run_inputs_coverage(const struct metrics *m, const struct run_input *v, size_t n, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i].nagents; j++) {
			char *name = xstrfmt("%s%s", v[i].agents[j].name, v[i].suffix ? v[i].suffix : "");
			size_t missing = 0;
			for (size_t k = 0; k < m->nmissing; k++)
				missing += !strcmp(m->missing[k].agent, name);
			if (!missing) {
				free(name);
				continue;
			}
			size_t have = v[i].nproblems - missing;
			if (m->denominator == METRICS_ALL)
				strbuf_addf(out, "agent %s has verdicts for %zu of the %zu problems in %s; the %zu without one count "
					    "as failures (--denominator judged leaves them out)\n", name, have, v[i].nproblems,
					    v[i].arg, missing);
			else
				strbuf_addf(out, "agent %s has verdicts for %zu of the %zu problems in %s; its rates are over those "
					    "%zu (--denominator judged)\n", name, have, v[i].nproblems, v[i].arg, have);
			free(name);
		}
}
