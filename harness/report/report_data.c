/* report_data.c - the runs of a report read once: verdict rows with their status and stage, metrics,
 * trajectories (an agent's attempts at one sample) with their LLM tokens and cost, findings and audit flags;
 * and the series the plots draw, computed here so that tests can check them without gnuplot. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *keep(struct report_data *d, const char *s, const char *suffix)
{
	if (suffix)
		strvec_pushf(&d->strings, "%s%s", s, suffix);
	else
		strvec_push(&d->strings, s ? s : "");
	return d->strings.v[d->strings.nr - 1];
}

static int on_row(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err)
{
	struct report_data *d = arg;
	(void)err;
	if (index >= d->nextra) {
		size_t n = index + 1 > 2 * d->nextra ? index + 1 : 2 * d->nextra;
		d->extra = xrealloc(d->extra, n * sizeof(*d->extra));
		memset(d->extra + d->nextra, 0, (n - d->nextra) * sizeof(*d->extra));
		d->nextra = n;
	}
	d->extra[index].status = keep(d, v->status, NULL);
	d->extra[index].stage = v->stage ? keep(d, v->stage, NULL) : NULL;
	return 0;
}

struct input_ctx {
	struct report_data *d;
	const struct run_input *in;
};

static int on_finding(void *arg, const struct store_finding_row *f, struct sb_error *err)
{
	struct input_ctx *c = arg;
	struct report_data *d = c->d;
	(void)err;
	d->findings = xrealloc(d->findings, (d->nfindings + 1) * sizeof(*d->findings));
	d->findings[d->nfindings++] = (struct report_finding){
		keep(d, f->agent, c->in->suffix), keep(d, f->problem, NULL), f->sample, f->attempt,
		keep(d, f->id, NULL), keep(d, f->severity, NULL), keep(d, f->message, NULL),
	};
	return 0;
}

static int on_audit(void *arg, const struct store_audit_row *a, struct sb_error *err)
{
	struct input_ctx *c = arg;
	struct report_data *d = c->d;
	(void)err;
	d->audit = xrealloc(d->audit, (d->naudit + 1) * sizeof(*d->audit));
	d->audit[d->naudit++] = (struct report_audit){ c->in->arg, keep(d, a->problem, NULL), keep(d, a->id, NULL),
						       keep(d, a->message, NULL) };
	return 0;
}

static void ref_parts(const char *ref, int *level, int *id)
{
	*level = *id = 0;
	if (sscanf(ref, "L%d/%d", level, id) != 2)
		*level = *id = 0;
}

/* The order of metrics_row_cmp, for a (agent, problem, sample) key. */
static int traj_key_cmp(const char *agent, const char *problem, int sample, const struct report_traj *t)
{
	const struct metric_row *r = t->attempts[0];
	int la, ia, lb, ib, c = strcmp(agent, r->agent);
	if (c)
		return c;
	ref_parts(problem, &la, &ia);
	ref_parts(r->problem, &lb, &ib);
	if (la != lb)
		return la - lb;
	if (ia != ib)
		return ia - ib;
	if ((c = strcmp(problem, r->problem)))
		return c;
	return sample - r->sample;
}

static struct report_traj *find_traj(struct report_data *d, const char *agent, const char *problem, int sample)
{
	size_t lo = 0, hi = d->ntraj;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = traj_key_cmp(agent, problem, sample, &d->traj[mid]);
		if (!c)
			return &d->traj[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void build_trajectories(struct report_data *d)
{
	size_t n = d->mi.nrows;
	d->sorted = xcalloc(n ? n : 1, sizeof(*d->sorted));
	for (size_t i = 0; i < n; i++)
		d->sorted[i] = &d->mi.rows[i];
	qsort(d->sorted, n, sizeof(*d->sorted), metrics_row_cmp);
	d->traj = xcalloc(n ? n : 1, sizeof(*d->traj));
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !strcmp(d->sorted[j]->agent, d->sorted[i]->agent) &&
		       !strcmp(d->sorted[j]->problem, d->sorted[i]->problem) && d->sorted[j]->sample == d->sorted[i]->sample)
			j++;
		d->traj[d->ntraj++] = (struct report_traj){ d->sorted + i, j - i, 0, 0, NAN };
		i = j;
	}
	for (size_t i = 0; i < d->mi.ncalls; i++) {
		const struct metric_call *c = &d->mi.calls[i];
		struct report_traj *t = find_traj(d, c->agent, c->problem, c->sample);
		if (!t)
			continue; /* calls of a sample that has no verdict yet (a run still going) */
		t->calls++;
		t->tokens += (double)c->tokens;
		if (isfinite(c->cost_usd))
			t->cost_usd = isnan(t->cost_usd) ? c->cost_usd : t->cost_usd + c->cost_usd;
	}
}

int report_data_load(struct report_data *d, char *const *runs, size_t n, enum metrics_by by,
		     enum metrics_denominator denominator, struct sb_error *err)
{
	memset(d, 0, sizeof(*d));
	strbuf_init(&d->settings_diff, 0);
	strbuf_init(&d->coverage, 0);
	d->nin = n;
	d->mi.on_row = on_row;
	d->mi.on_row_arg = d;
	int rc = run_inputs_open(&d->in, runs, n, err);
	if (!rc)
		rc = run_inputs_load(d->in, n, &d->mi, err);
	for (size_t i = 0; i < n && !rc; i++) {
		struct input_ctx c = { d, &d->in[i] };
		int present = 0;
		rc = store_each_finding(d->in[i].s, on_finding, &c, err);
		if (!rc)
			rc = store_each_audit(d->in[i].s, on_audit, &c, &present, err);
		d->audit_inputs += (size_t)present;
	}
	if (!rc) {
		struct metric_scope scope = metric_input_scope(&d->mi, denominator);
		rc = metrics_compute(d->mi.rows, d->mi.nrows, d->mi.calls, d->mi.ncalls, by, &scope, &d->m, err);
	}
	if (rc)
		return rc;
	metrics_add_unavailable(&d->m, d->mi.unavailable, d->mi.nunavailable);
	build_trajectories(d);
	run_inputs_settings_diff(d->in, n, STORE_DIFF_ALL, &d->settings_diff);
	run_inputs_coverage(&d->m, d->in, n, &d->coverage);
	return 0;
}

void report_data_release(struct report_data *d)
{
	run_inputs_close(d->in, d->nin);
	metric_input_release(&d->mi);
	metrics_release(&d->m);
	free(d->extra);
	free(d->sorted);
	free(d->traj);
	free(d->findings);
	free(d->audit);
	strvec_clear(&d->strings);
	strbuf_release(&d->settings_diff);
	strbuf_release(&d->coverage);
	memset(d, 0, sizeof(*d));
}

static int cmp_refs(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	int la, ia, lb, ib;
	ref_parts(a, &la, &ia);
	ref_parts(b, &lb, &ib);
	return la != lb ? la - lb : ia != ib ? ia - ib : strcmp(a, b);
}

size_t report_problems(const struct report_data *d, const char ***out)
{
	size_t n = d->m.nunjudged;
	for (size_t a = 0; a < d->m.nagents; a++)
		n += d->m.agents[a].nproblems;
	const char **v = xcalloc(n ? n : 1, sizeof(*v));
	n = 0;
	for (size_t a = 0; a < d->m.nagents; a++)
		for (size_t i = 0; i < d->m.agents[a].nproblems; i++)
			v[n++] = d->m.agents[a].problems[i].rep->problem;
	for (size_t i = 0; i < d->m.nunjudged; i++)
		v[n++] = d->m.unjudged[i].problem;
	qsort(v, n, sizeof(*v), cmp_refs);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || strcmp(v[k - 1], v[i]))
			v[k++] = v[i];
	*out = v;
	return k;
}

const struct report_extra *report_extra_of(const struct report_data *d, const struct metric_row *r)
{
	static const struct report_extra none = { "", NULL }, missing = { "no verdict", NULL };
	if (r->missing) /* not one of d->mi.rows: the metrics made it for a problem without a verdict */
		return &missing;
	size_t i = (size_t)(r - d->mi.rows);
	return i < d->nextra && d->extra[i].status ? &d->extra[i] : &none;
}

int report_agent_index(const struct report_data *d, const char *agent)
{
	for (size_t a = 0; a < d->m.nagents; a++)
		if (!strcmp(d->m.agents[a].name, agent))
			return (int)a;
	return -1;
}

const char *report_problem_name(const struct report_data *d, const char *ref)
{
	for (size_t i = 0; i < d->nin; i++)
		for (size_t j = 0; j < d->in[i].nproblems; j++)
			if (!strcmp(d->in[i].problems[j].ref, ref))
				return d->in[i].problems[j].name;
	return "";
}

int report_agent_iterative(const struct report_data *d, size_t agent)
{
	for (size_t i = 0; i < d->ntraj; i++)
		if (d->traj[i].n > 1 && !strcmp(d->traj[i].attempts[0]->agent, d->m.agents[agent].name))
			return 1;
	return 0;
}

/* ---------- series ---------- */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static int timed(double s)
{
	return isfinite(s) && s > 0;
}

size_t report_fastp_steps(const struct metric_agent *a, double xmax, double *xs, double *ys)
{
	size_t np = a->nproblems, k = 0, correct = 0, ns = 0;
	double *s = xcalloc(np ? np : 1, sizeof(double));
	for (size_t i = 0; i < np; i++) {
		const struct metric_row *r = a->problems[i].rep;
		correct += (size_t)metrics_clean(r);
		if (metrics_clean(r) && timed(r->speedup_eager))
			s[ns++] = r->speedup_eager;
	}
	qsort(s, ns, sizeof(double), cmp_double);
	double n = np ? (double)np : 1;
	/* p = 0 is the rate of clean passes, timed or not (fast_0); just above 0, only timed ones count */
	xs[k] = 0;
	ys[k++] = 100.0 * (double)correct / n;
	xs[k] = 0;
	ys[k++] = 100.0 * (double)ns / n;
	for (size_t i = 0; i < ns && s[i] < xmax; i++) {
		size_t above = ns - i - 1;
		while (i + 1 < ns && s[i + 1] == s[i]) /* ties drop together */
			i++, above--;
		xs[k] = s[i];
		ys[k++] = 100.0 * (double)above / n;
	}
	size_t above_max = 0;
	for (size_t i = 0; i < ns; i++)
		above_max += s[i] > xmax;
	xs[k] = xmax;
	ys[k++] = 100.0 * (double)above_max / n;
	free(s);
	return k;
}

double report_traj_best(const struct report_traj *t)
{
	double best = NAN;
	for (size_t i = 0; i < t->n; i++) {
		const struct metric_row *r = t->attempts[i];
		if (metrics_clean(r) && timed(r->speedup_eager) && !(r->speedup_eager <= best))
			best = r->speedup_eager;
	}
	return best;
}

void report_attempt_curve(const struct report_data *d, size_t agent, int kmax, double *correct_pct,
			  double *fast1_pct, double *geomean, size_t *n_geo)
{
	size_t ntraj = 0;
	double *logsum = xcalloc((size_t)kmax, sizeof(double));
	size_t *ncorr = xcalloc((size_t)kmax, sizeof(size_t)), *nfast = xcalloc((size_t)kmax, sizeof(size_t));
	size_t *ngeo = xcalloc((size_t)kmax, sizeof(size_t));
	for (size_t t = 0; t < d->ntraj; t++) {
		const struct report_traj *tr = &d->traj[t];
		if (strcmp(tr->attempts[0]->agent, d->m.agents[agent].name))
			continue;
		ntraj++;
		int correct = 0;
		double best = NAN;
		for (int k = 0; k < kmax; k++) {
			if ((size_t)k < tr->n) {
				const struct metric_row *r = tr->attempts[k];
				correct |= r->correct;
				if (metrics_clean(r) && timed(r->speedup_eager) && !(r->speedup_eager <= best))
					best = r->speedup_eager;
			}
			ncorr[k] += (size_t)correct;
			nfast[k] += best > 1;
			if (!isnan(best)) {
				logsum[k] += log(best);
				ngeo[k]++;
			}
		}
	}
	for (int k = 0; k < kmax; k++) {
		correct_pct[k] = ntraj ? 100.0 * (double)ncorr[k] / (double)ntraj : NAN;
		fast1_pct[k] = ntraj ? 100.0 * (double)nfast[k] / (double)ntraj : NAN;
		geomean[k] = ngeo[k] ? exp(logsum[k] / (double)ngeo[k]) : NAN;
		n_geo[k] = ngeo[k];
	}
	free(logsum);
	free(ncorr);
	free(nfast);
	free(ngeo);
}
