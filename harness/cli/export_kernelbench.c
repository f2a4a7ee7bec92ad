/* export_kernelbench.c - `export --format kernelbench`: one agent's verdicts on one level in the layout of
 * KernelBench's eval_results.json, which its analysis script reads with a baseline timing file
 * ({"PROBLEM_ID": [{"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"}]},
 * times in milliseconds). Each sample is its best attempt, ranked as the metrics rank them. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/metrics.h"
#include "../store/store.h"
#include "export.h"

/* What KernelBench reads of a verdict that the metric row does not carry. */
struct kb_extra {
	char *status, *stage, *hardware, *device, *message;
	double mean_ms, std_ms, min_ms, max_ms;
	long trials;
};

struct kb_ctx {
	struct kb_extra *x;
	size_t n;
};

static double ms(json_t *stats, const char *key)
{
	json_t *v = json_object_get(stats, key);
	return json_is_number(v) ? json_number_value(v) / 1000.0 : NAN;
}

static int keep_extra(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err)
{
	struct kb_ctx *c = arg;
	(void)err;
	if (index >= c->n) {
		c->x = xrealloc(c->x, (index + 1) * sizeof(*c->x));
		memset(c->x + c->n, 0, (index + 1 - c->n) * sizeof(*c->x));
		c->n = index + 1;
	}
	struct kb_extra *x = &c->x[index];
	json_t *j = json_loads(v->json, 0, NULL), *env = json_object_get(j, "env");
	json_t *cand = json_object_get(json_object_get(j, "timing"), "candidate");
	const char *gpu = json_string_value(json_object_get(env, "gpu"));
	x->status = xstrdup(v->status);
	x->stage = v->stage ? xstrdup(v->stage) : NULL;
	x->hardware = xstrdup(gpu && *gpu ? gpu : "cpu");
	x->device = xstrdup(json_string_value(json_object_get(env, "device")) ?: "?");
	x->message = xstrdup(json_string_value(json_object_get(j, "message")) ?: "");
	x->mean_ms = ms(cand, "mean_us");
	x->min_ms = ms(cand, "min_us");
	x->max_ms = ms(cand, "max_us");
	json_t *cv = json_object_get(cand, "cv");
	x->std_ms = json_is_number(cv) ? json_number_value(cv) * x->mean_ms : NAN;
	x->trials = json_integer_value(json_object_get(cand, "n"));
	json_decref(j);
	return 0;
}

static json_t *real_or(double x, double otherwise)
{
	return json_real(isfinite(x) ? x : otherwise);
}

/* One sample's entry. KernelBench has no hack verdict: a candidate with a hack finding, a reject or a
 * flag, is exported as not correct (metadata says why), so that its time never counts in fast_p or a
 * geometric mean there, as it does not here. */
static json_t *kb_entry(const struct metric_row *r, const struct kb_extra *x)
{
	int correct = metrics_clean(r), timed = correct && isfinite(x->mean_ms);
	json_t *meta = json_pack("{s:s, s:s, s:s, s:i, s:s?}", "hardware", x->hardware, "device", x->device,
				 "stitchbench_status", x->status, "stitchbench_attempt", r->attempt, "stitchbench_stage",
				 x->stage);
	if (r->hack_ids)
		json_object_set_new(meta, "stitchbench_findings", json_string(r->hack_ids));
	if (r->correct && !correct)
		json_object_set_new(meta, "stitchbench_note", json_string("correct, but a hack finding (flagged): "
									 "not counted as correct here"));
	else if (!r->correct && *x->message)
		json_object_set_new(meta, "stitchbench_message", json_string(x->message));
	json_t *stats = json_object();
	if (timed)
		stats = json_pack("{s:o, s:o, s:o, s:o, s:I}", "mean", json_real(x->mean_ms), "std",
				  real_or(x->std_ms, 0), "min", real_or(x->min_ms, x->mean_ms), "max",
				  real_or(x->max_ms, x->mean_ms), "num_trials", (json_int_t)x->trials);
	return json_pack("{s:i, s:b, s:b, s:o, s:o, s:o}", "sample_id", r->sample, "compiled", r->compiled, "correctness",
			 correct, "metadata", meta, "runtime", json_real(timed ? x->mean_ms : -1.0), "runtime_stats",
			 stats);
}

int export_kernelbench(struct store *s, const char *agent, int level, FILE *f, struct sb_error *err)
{
	struct metric_input in = { 0 };
	struct kb_ctx c = { 0 };
	in.on_row = keep_extra;
	in.on_row_arg = &c;
	int rc = metrics_load(s, NULL, &in, err);
	/* the agents and levels there are, to choose from or to name in an error */
	struct strvec agents = STRVEC_INIT;
	int levels[8] = { 0 };
	for (size_t i = 0; !rc && i < in.nrows; i++) {
		const struct metric_row *r = &in.rows[i];
		if (!agents.nr || strcmp(agents.v[agents.nr - 1], r->agent))
			strvec_push(&agents, r->agent);
		if ((!agent || !strcmp(agent, r->agent)) && r->level >= 1 && r->level < 8)
			levels[r->level] = 1;
	}
	struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < agents.nr; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", agents.v[i]);
	int nlevels = 0, only = 0;
	for (int l = 1; l < 8; l++)
		if (levels[l])
			nlevels++, only = l;
	if (rc)
		;
	else if (!in.nrows)
		rc = sb_error_set(err, SB_EINPUT, "export: the run has no verdicts");
	else if (!agent && agents.nr > 1)
		rc = sb_error_set(err, SB_EINPUT, "export --format kernelbench: one agent at a time: add --agent (one of %s)",
				  names.buf);
	else if (agent && !nlevels)
		rc = sb_error_set(err, SB_EINPUT, "export: no verdicts of agent '%s' (the run has %s)", agent, names.buf);
	else if (!level && nlevels > 1)
		rc = sb_error_set(err, SB_EINPUT, "export --format kernelbench: one level at a time (KernelBench's "
				  "eval_results.json holds one): add --level 1, 2 or 3");
	else if (level && (level < 1 || level >= 8 || !levels[level]))
		rc = sb_error_set(err, SB_EINPUT, "export: no verdicts of level %d for agent '%s'", level,
				  agent ? agent : agents.v[0]);
	if (!rc) {
		const char *who = agent ? agent : agents.v[0];
		int lv = level ? level : only;
		json_t *out = json_object();
		/* rows are in (agent, level, problem, sample, attempt) order: each sample's best attempt is found
		 * in one pass */
		for (size_t i = 0; i < in.nrows;) {
			const struct metric_row *r = &in.rows[i];
			size_t best = i, j = i + 1;
			while (j < in.nrows && !strcmp(in.rows[j].agent, r->agent) && !strcmp(in.rows[j].problem, r->problem) &&
			       in.rows[j].sample == r->sample) {
				if (metrics_better(&in.rows[j], &in.rows[best]))
					best = j;
				j++;
			}
			if (!strcmp(r->agent, who) && r->level == lv && best < c.n) {
				const char *id = strchr(r->problem, '/');
				id = id ? id + 1 : r->problem;
				json_t *list = json_object_get(out, id);
				if (!list)
					json_object_set_new(out, id, list = json_array());
				json_array_append_new(list, kb_entry(&in.rows[best], &c.x[best]));
			}
			i = j;
		}
		if (json_dumpf(out, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) || fputc('\n', f) == EOF)
			rc = sb_error_set(err, SB_EIO, "writing the export");
		json_decref(out);
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.x[i].status);
		free(c.x[i].stage);
		free(c.x[i].hardware);
		free(c.x[i].device);
		free(c.x[i].message);
	}
	free(c.x);
	strbuf_release(&names);
	strvec_clear(&agents);
	metric_input_release(&in);
	return rc;
}
