/* inputs.c - opening the RUN arguments that metrics, report and compare read, which problems each agent's
 * run selected, and the warnings they share: runs made with settings that change the numbers, agents with
 * verdicts for only some problems. */
#include "inputs.h"

#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../run/run.h"
#include "../run/shard.h"

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

/* 1 when the input's store marks the agent unavailable (from index `from` of in's list on) and holds no
 * verdict of it (rows from `rows_from` on): its run could not run it, which is no failure. */
static int never_ran(const struct metric_input *in, const char *agent, size_t from, size_t rows_from)
{
	int unavailable = 0;
	for (size_t i = from; i < in->nunavailable && !unavailable; i++)
		unavailable = !strcmp(in->unavailable[i].agent, agent);
	for (size_t i = rows_from; unavailable && i < in->nrows; i++)
		if (!strcmp(in->rows[i].agent, agent))
			return 0;
	return unavailable;
}

static int suffixed_never_ran(const struct run_input *v, const struct metric_input *in, const char *agent,
			      size_t from, size_t rows_from)
{
	char *name = xstrfmt("%s%s", agent, v->suffix ? v->suffix : "");
	int r = never_ran(in, name, from, rows_from);
	free(name);
	return r;
}

/* run.json's selection: every agent times every problem, or, in a shard, the (agent, problem) pairs of
 * which the shard holds a sample: the run's item order is problem by problem, then agent, then sample
 * (docs/scaleout.md). */
static int expect_from_run_json(const struct run_input *v, json_t *j, const char *path, struct metric_input *in,
				size_t from, size_t rows_from, struct sb_error *err)
{
	json_t *agents = json_object_get(j, "agents"), *probs = json_object_get(j, "problems");
	json_t *samples = json_object_get(j, "samples"), *shard_text = json_object_get(j, "shard");
	struct shard shard = { 0, 0 };
	if (!json_is_array(agents) || !json_is_array(probs) || !json_is_object(samples))
		return sb_error_set(err, SB_EINPUT, "%s: no agents, problems and samples; is it a run's run.json?", path);
	if (shard_text && (!json_is_string(shard_text) || shard_parse(json_string_value(shard_text), &shard, err))) {
		sb_error_prefix(err, "%s", path);
		return SB_EINPUT;
	}
	size_t item = 0, p, a;
	json_t *pv, *av;
	json_array_foreach(probs, p, pv) {
		json_array_foreach(agents, a, av) {
			const char *agent = json_string_value(av), *ref = json_string_value(pv);
			json_int_t k = json_integer_value(json_object_get(samples, agent ? agent : ""));
			int held = 0;
			for (json_int_t s = 0; s < k; s++)
				held |= shard_holds(&shard, item++);
			if (agent && ref && held && !suffixed_never_ran(v, in, agent, from, rows_from))
				metric_input_expect(in, agent, v->suffix, ref);
		}
	}
	return 0;
}

/* Without run.json (a merged store, eval --samples, import): the problems any of its agents has a verdict
 * for, each for every agent of the store. A problem only the audit added is not among them. */
static void expect_from_verdicts(const struct run_input *v, struct metric_input *in, size_t from, size_t rows_from)
{
	for (size_t p = 0; p < v->nproblems; p++) {
		int judged = 0;
		for (size_t r = rows_from; r < in->nrows && !judged; r++)
			judged = !strcmp(in->rows[r].problem, v->problems[p].ref);
		for (size_t a = 0; judged && a < v->nagents; a++)
			if (!suffixed_never_ran(v, in, v->agents[a].name, from, rows_from))
				metric_input_expect(in, v->agents[a].name, v->suffix, v->problems[p].ref);
	}
}

/* The problems the input's run selected for each of its agents (docs/metrics.md, "Which problems count"). */
static int load_expected(const struct run_input *v, struct metric_input *in, size_t from, size_t rows_from,
			 struct sb_error *err)
{
	char *db = store_path_for(v->arg), *dir = xstrdup(db);
	char *path = xstrfmt("%s/%s", dirname(dir), RUN_FILE);
	json_error_t je;
	json_t *j = access(path, F_OK) == 0 ? json_load_file(path, 0, &je) : NULL;
	int rc = 0;
	if (j)
		rc = expect_from_run_json(v, j, path, in, from, rows_from, err);
	else if (access(path, F_OK) == 0)
		rc = sb_error_set(err, SB_EINPUT, "%s:%d: %s; the run's selection is read from it (fix or remove it)", path,
				  je.line, je.text);
	else
		expect_from_verdicts(v, in, from, rows_from);
	json_decref(j);
	free(path);
	free(dir);
	free(db);
	return rc;
}

int run_inputs_load(struct run_input *v, size_t n, struct metric_input *in, struct sb_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		size_t rows_from = in->nrows, from = in->nunavailable;
		rc = metrics_load(v[i].s, v[i].suffix, in, err);
		if (!rc)
			rc = load_expected(&v[i], in, from, rows_from, err);
	}
	return rc;
}

void run_preset(const struct store_run *r, char out[24])
{
	snprintf(out, 24, "%s", *r->preset ? r->preset : "stitchbench");
}

enum metrics_protocol run_inputs_protocol(const struct run_input *v, size_t n, enum metrics_protocol asked)
{
	if (asked != METRICS_PROTOCOL_AUTO)
		return asked;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i].nruns; j++) {
			char preset[24];
			run_preset(&v[i].runs[j], preset);
			if (!strcmp(preset, "stitchcuda"))
				return METRICS_PROTOCOL_STITCHCUDA;
		}
	return METRICS_PROTOCOL_STITCHBENCH;
}

void run_inputs_settings_diff(const struct run_input *v, size_t n, int mask, struct strbuf *out)
{
	struct store_runs_of *runs = xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++)
		runs[i] = (struct store_runs_of){ v[i].arg, v[i].runs, v[i].nruns };
	store_compare_runs(runs, n, mask, out);
	free(runs);
}

void run_inputs_coverage(const struct metrics *m, const struct run_input *v, size_t n, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i].nagents; j++) {
			char *name = xstrfmt("%s%s", v[i].agents[j].name, v[i].suffix ? v[i].suffix : "");
			size_t missing = 0, have = 0, unjudged = 0;
			for (size_t k = 0; k < m->nmissing; k++)
				missing += !strcmp(m->missing[k].agent, name);
			for (size_t k = 0; k < m->nunjudged; k++)
				unjudged += !strcmp(m->unjudged[k].agent, name);
			for (size_t a = 0; a < m->nagents; a++)
				if (!strcmp(m->agents[a].name, name))
					have = m->agents[a].cells[0].problems -
					       (m->denominator == METRICS_ALL ? m->agents[a].cells[0].missing : 0);
			if (!missing) {
				free(name);
				continue;
			}
			struct strbuf besides = STRBUF_INIT;
			if (unjudged)
				strbuf_addf(&besides, "; the %zu not judged (reference failed, cannot_judge) %s left out", unjudged,
					    unjudged == 1 ? "is" : "are");
			if (m->denominator == METRICS_ALL)
				strbuf_addf(out, "agent %s has verdicts for %zu of the %zu problems in %s; the %zu without one "
					    "count as failures (--denominator judged leaves them out)%s\n", name, have,
					    have + missing + unjudged, v[i].arg, missing, besides.buf);
			else
				strbuf_addf(out, "agent %s has verdicts for %zu of the %zu problems in %s; its rates are over "
					    "those %zu (--denominator judged)%s\n", name, have, have + missing + unjudged,
					    v[i].arg, have, besides.buf);
			strbuf_release(&besides);
			free(name);
		}
}
