/* accounting.c - per-(agent, problem) sums of LLM usage behind one mutex.
 * A run has at most a few thousand (agent, problem) pairs, so a linear scan is cheap enough. */
#include "accounting.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

struct entry {
	char *agent, *problem;
	struct llm_totals t;
};

struct llm_accounts {
	pthread_mutex_t mu;
	struct entry *v;
	size_t n, alloc;
};

double llm_cost_usd(long prompt_tokens, long completion_tokens, double prompt_per_mtok,
		    double completion_per_mtok)
{
	return ((double)prompt_tokens * prompt_per_mtok + (double)completion_tokens * completion_per_mtok) / 1e6;
}

struct llm_accounts *llm_accounts_new(void)
{
	struct llm_accounts *a = xcalloc(1, sizeof(*a));
	pthread_mutex_init(&a->mu, NULL);
	return a;
}

void llm_accounts_free(struct llm_accounts *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].agent);
		free(a->v[i].problem);
	}
	free(a->v);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static void totals_add(struct llm_totals *t, const struct llm_totals *x)
{
	t->calls += x->calls;
	t->failed += x->failed;
	t->prompt_tokens += x->prompt_tokens;
	t->completion_tokens += x->completion_tokens;
	t->latency_s += x->latency_s;
	t->wall_s += x->wall_s;
	t->cost_usd += x->cost_usd;
}

void llm_accounts_add(struct llm_accounts *a, const char *agent, const char *problem,
		      const struct llm_response *r)
{
	struct llm_totals x = { 1, r->kind != LLM_OK, r->prompt_tokens, r->completion_tokens, r->latency_s,
				r->wall_s, r->cost_usd };
	agent = agent ? agent : "";
	problem = problem ? problem : "";
	pthread_mutex_lock(&a->mu);
	size_t i = 0;
	while (i < a->n && (strcmp(a->v[i].agent, agent) || strcmp(a->v[i].problem, problem)))
		i++;
	if (i == a->n) {
		if (a->n == a->alloc) {
			a->alloc = a->alloc ? 2 * a->alloc : 16;
			a->v = xrealloc(a->v, a->alloc * sizeof(*a->v));
		}
		a->v[a->n++] = (struct entry){ xstrdup(agent), xstrdup(problem), { 0 } };
	}
	totals_add(&a->v[i].t, &x);
	pthread_mutex_unlock(&a->mu);
}

struct llm_totals llm_accounts_total(struct llm_accounts *a, const char *agent, const char *problem)
{
	struct llm_totals t = { 0 };
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->n; i++)
		if ((!agent || !strcmp(agent, a->v[i].agent)) && (!problem || !strcmp(problem, a->v[i].problem)))
			totals_add(&t, &a->v[i].t);
	pthread_mutex_unlock(&a->mu);
	return t;
}

static int by_key(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = strcmp(a->agent, b->agent);
	return c ? c : strcmp(a->problem, b->problem);
}

/* A sorted copy, so output is stable whatever order the threads finished in. */
static struct entry *snapshot(struct llm_accounts *a, size_t *n)
{
	pthread_mutex_lock(&a->mu);
	struct entry *v = xmalloc((a->n ? a->n : 1) * sizeof(*v));
	for (size_t i = 0; i < a->n; i++)
		v[i] = (struct entry){ xstrdup(a->v[i].agent), xstrdup(a->v[i].problem), a->v[i].t };
	*n = a->n;
	pthread_mutex_unlock(&a->mu);
	qsort(v, *n, sizeof(*v), by_key);
	return v;
}

static void free_snapshot(struct entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].agent);
		free(v[i].problem);
	}
	free(v);
}

static void row(struct strbuf *out, const char *agent, const char *problem, const struct llm_totals *t)
{
	strbuf_addf(out, "%-16s %-12s %6ld %6ld %10ld %10ld %9.1f %10.4f\n", agent, problem, t->calls, t->failed,
		    t->prompt_tokens, t->completion_tokens, t->latency_s, t->cost_usd);
}

void llm_accounts_format(struct llm_accounts *a, struct strbuf *out)
{
	size_t n;
	struct entry *v = snapshot(a, &n);
	struct llm_totals agent_t = { 0 }, run_t = { 0 };
	strbuf_addf(out, "%-16s %-12s %6s %6s %10s %10s %9s %10s\n", "agent", "problem", "calls", "failed",
		    "prompt", "completion", "latency_s", "cost_usd");
	for (size_t i = 0; i < n; i++) {
		row(out, v[i].agent, v[i].problem, &v[i].t);
		totals_add(&agent_t, &v[i].t);
		totals_add(&run_t, &v[i].t);
		if (i + 1 == n || strcmp(v[i + 1].agent, v[i].agent)) {
			row(out, v[i].agent, "(all)", &agent_t);
			agent_t = (struct llm_totals){ 0 };
		}
	}
	row(out, "(all)", "(all)", &run_t);
	free_snapshot(v, n);
}

static json_t *totals_json(const struct llm_totals *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "calls", (json_int_t)t->calls, "failed",
			 (json_int_t)t->failed, "prompt_tokens", (json_int_t)t->prompt_tokens, "completion_tokens",
			 (json_int_t)t->completion_tokens, "latency_s", t->latency_s, "wall_s", t->wall_s, "cost_usd",
			 t->cost_usd);
}

void llm_accounts_json(struct llm_accounts *a, struct strbuf *out)
{
	size_t n;
	struct entry *v = snapshot(a, &n);
	struct llm_totals run_t = { 0 };
	json_t *entries = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *e = totals_json(&v[i].t);
		json_object_set_new(e, "agent", json_string(v[i].agent));
		json_object_set_new(e, "problem", json_string(v[i].problem));
		json_array_append_new(entries, e);
		totals_add(&run_t, &v[i].t);
	}
	json_t *root = json_pack("{s:o, s:o}", "entries", entries, "total", totals_json(&run_t));
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	json_decref(root);
	free_snapshot(v, n);
}
