/* metrics.c - from verdict rows to per agent x level numbers: picks the candidate that represents each
 * problem, then rates over problems with percentile-bootstrap intervals (definitions: docs/metrics.md). */
#include "metrics.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/timing/timing.h"

const double metrics_p[METRICS_NP] = { 0, 0.5, 0.8, 1, 1.5, 2 };

const char *metrics_by_name(enum metrics_by by)
{
	return by == METRICS_BEST ? "best" : "first";
}

const char *metrics_denominator_name(enum metrics_denominator d)
{
	return d == METRICS_JUDGED ? "judged" : "all";
}

/* Which of an option's two values name is: 0 or 1, -1 for neither. */
static int which_of(const char *name, const char *first, const char *second)
{
	return !strcmp(name, first) ? 0 : !strcmp(name, second) ? 1 : -1;
}

int metrics_denominator_parse(const char *name, enum metrics_denominator *out)
{
	int k = which_of(name, "all", "judged");
	if (k >= 0)
		*out = k ? METRICS_JUDGED : METRICS_ALL;
	return k < 0 ? -1 : 0;
}

const char *metrics_protocol_name(enum metrics_protocol p)
{
	return p == METRICS_PROTOCOL_STITCHCUDA ? "stitchcuda" : "stitchbench";
}

int metrics_protocol_parse(const char *name, enum metrics_protocol *out)
{
	int k = which_of(name, "stitchbench", "stitchcuda");
	if (k >= 0)
		*out = k ? METRICS_PROTOCOL_STITCHCUDA : METRICS_PROTOCOL_STITCHBENCH;
	return k < 0 ? -1 : 0;
}

static int problem_number(const char *ref)
{
	const char *slash = strchr(ref, '/');
	return slash ? atoi(slash + 1) : 0;
}

static int cmp_key(const char *agent_a, int level_a, const char *prob_a, int sample_a, int attempt_a,
		   const char *agent_b, int level_b, const char *prob_b, int sample_b, int attempt_b)
{
	int c = strcmp(agent_a, agent_b);
	if (c)
		return c;
	if (level_a != level_b)
		return level_a - level_b;
	if ((c = problem_number(prob_a) - problem_number(prob_b)) || (c = strcmp(prob_a, prob_b)))
		return c;
	return sample_a != sample_b ? sample_a - sample_b : attempt_a - attempt_b;
}

int metrics_row_cmp(const void *x, const void *y)
{
	const struct metric_row *a = *(const struct metric_row *const *)x, *b = *(const struct metric_row *const *)y;
	return cmp_key(a->agent, a->level, a->problem, a->sample, a->attempt, b->agent, b->level, b->problem, b->sample,
		       b->attempt);
}

static int cmp_calls(const void *x, const void *y)
{
	const struct metric_call *a = *(const struct metric_call *const *)x, *b = *(const struct metric_call *const *)y;
	return cmp_key(a->agent, 0, a->problem, a->sample, a->attempt, b->agent, 0, b->problem, b->sample, b->attempt);
}

int metrics_clean(const struct metric_row *r)
{
	return r->correct && !r->flagged;
}

int metrics_robust(const struct metric_row *r)
{
	return r->correct && !r->robust_failed;
}

static int rank(const struct metric_row *r)
{
	return metrics_clean(r) ? 4 : r->correct ? 3 : r->compiled && !r->hack ? 2 : r->hack ? 1 : 0;
}

/* Strictly better, so that ties keep the earlier candidate. */
int metrics_better(const struct metric_row *a, const struct metric_row *b)
{
	if (rank(a) != rank(b))
		return rank(a) > rank(b);
	if (!a->correct)
		return 0;
	double sa = isnan(a->speedup_eager) ? -INFINITY : a->speedup_eager;
	double sb = isnan(b->speedup_eager) ? -INFINITY : b->speedup_eager;
	return sa > sb;
}

/* The calls of one agent on one problem: a run of the sorted call array. */
struct call_span {
	const struct metric_call *const *v;
	size_t n;
	int any;                      /* the agent has LLM calls at all */
};

static double tokens_until(const struct call_span *cs, int by_first, int first_sample, int sample, int attempt)
{
	double t = 0;
	if (!cs->any)
		return NAN;
	for (size_t i = 0; i < cs->n; i++) {
		const struct metric_call *c = cs->v[i];
		int before = c->sample < sample || (c->sample == sample && c->attempt <= attempt);
		if (before && (!by_first || c->sample == first_sample))
			t += (double)c->tokens;
	}
	return t;
}

/* rows: one problem's candidates, sorted by sample then attempt. */
static void reduce_problem(const struct metric_row *const *rows, size_t n, enum metrics_by by,
			   const struct call_span *cs, struct metric_problem *p)
{
	const struct metric_row *rep = NULL, *sample_best = NULL, *first_correct = NULL;
	int first_sample = rows[0]->sample, counted = 0;
	for (size_t i = 0; i < n; i++) {
		const struct metric_row *r = rows[i];
		if (!sample_best || r->sample != sample_best->sample)
			sample_best = r;
		else if (metrics_better(r, sample_best))
			sample_best = r;
		int last_of_sample = i + 1 == n || rows[i + 1]->sample != r->sample;
		if (last_of_sample && (!rep || (by == METRICS_BEST && metrics_better(sample_best, rep))))
			rep = sample_best;
		if ((by == METRICS_BEST || r->sample == first_sample) && !first_correct) {
			counted++;
			if (r->correct)
				first_correct = r;
		}
	}
	memset(p, 0, sizeof(*p));
	p->rep = rep;
	p->attempts_to_correct = first_correct ? counted : 0;
	p->tokens_to_correct = first_correct ? tokens_until(cs, by == METRICS_FIRST, first_sample, first_correct->sample,
							    first_correct->attempt)
				       : NAN;
	p->cost_usd = cs->any ? 0 : NAN;
	for (size_t i = 0; cs->any && i < cs->n; i++)
		if (isfinite(cs->v[i]->cost_usd))
			p->cost_usd += cs->v[i]->cost_usd;
}

static int usable(double s)
{
	return isfinite(s) && s > 0;
}

static double pct(size_t k, size_t n)
{
	return n ? 100.0 * (double)k / (double)n : NAN;
}

static double mean_or_nan(double sum, size_t n)
{
	return n ? sum / (double)n : NAN;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* ---------- one candidate's speed interval ---------- */

double metrics_log_sd(const double *x, size_t n)
{
	double sum = 0, ss = 0;
	if (n < 2)
		return NAN;
	for (size_t i = 0; i < n; i++)
		sum += log(x[i]);
	double mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (log(x[i]) - mean) * (log(x[i]) - mean);
	return sqrt(ss / (double)(n - 1));
}

void metrics_speed_halfwidths(const struct metric_row *r, const struct metric_speed *sp, double *below, double *above)
{
	double s = r->speedup_eager, own_below = 0, own_above = 0, between = 0;
	*below = *above = 0;
	if (!sp || !metrics_clean(r) || !usable(s))
		return;
	/* an interval that does not hold its own point is no interval of it: it counts as none */
	if (usable(sp->lo) && isfinite(sp->hi) && sp->lo <= s && s <= sp->hi) {
		own_below = log(s / sp->lo);
		own_above = log(sp->hi / s);
	}
	if (sp->repeats > 0 && isfinite(sp->repeat_sd))
		between = 1.96 * sp->repeat_sd;
	*below = hypot(own_below, between);
	*above = hypot(own_above, between);
}

struct metric_ci metrics_speed_interval(const struct metric_row *r, const struct metric_speed *sp)
{
	double below, above;
	if (!metrics_clean(r) || !usable(r->speedup_eager))
		return (struct metric_ci){ NAN, NAN };
	metrics_speed_halfwidths(r, sp, &below, &above);
	return (struct metric_ci){ r->speedup_eager * exp(-below), r->speedup_eager * exp(above) };
}

/* ln speedup of a clean timed pass as one resample draws it: the point moved by a split normal whose 2.5th
 * and 97.5th percentiles are the ends of its speed interval (z a standard normal draw). So a drawn problem
 * brings its measurement's uncertainty along with it, and an interval over problems covers both. */
static double drawn_log_speedup(const struct metric_row *r, const struct metric_speed *sp, double z)
{
	double below, above;
	metrics_speed_halfwidths(r, sp, &below, &above);
	return log(r->speedup_eager) + z * (z < 0 ? below : above) / 1.96;
}

/* A clean pass faster than eager whose speedup is no number to draw from (infinite): fast in every resample. */
static int fast_untimed(const struct metric_row *r)
{
	return metrics_clean(r) && !usable(r->speedup_eager) && r->speedup_eager > 1;
}

/* 1 when some row's speed interval has a width: the bootstrap then draws the measurement noise too. */
static int any_width(const struct metric_row *r, const struct metric_speed *sp)
{
	double below, above;
	metrics_speed_halfwidths(r, sp, &below, &above);
	return below > 0 || above > 0;
}

#define BOOT_STATS 3 /* statistics one bootstrap computes at most */
#define BOOT_DRAWS 2 /* normal draws per drawn item (a pair's two candidates) */

/* The statistics of one resample: idx[0..n) are the drawn items (indices into arg's), z[BOOT_DRAWS * i + j]
 * standard normal draws for drawn item i (all 0 when no item's speed has an interval); out[k] gets
 * statistic k, NAN where this resample has none (it is then left out of that interval). */
typedef void (*resample_fn)(const void *arg, const size_t *idx, const double *z, size_t n, double *out);

/* A standard normal draw (Box-Muller). */
static double normal(struct sb_rng *rng)
{
	double u = 1.0 - sb_rng_uniform(rng), v = sb_rng_uniform(rng);
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Percentile bootstrap over n items (problems): METRICS_RESAMPLES resamples of n items drawn with
 * replacement from METRICS_SEED, the same resamples for all nstat statistics of f; ci[k] is the 2.5th and
 * 97.5th percentile of statistic k over the resamples that have it, NAN when none does. With noise, each
 * drawn item also gets BOOT_DRAWS normal draws from a stream of their own, so that the problems drawn are
 * the same with or without it. */
static void bootstrap(const void *arg, size_t n, resample_fn f, int noise, size_t nstat, struct metric_ci *ci)
{
	size_t *idx = xcalloc(n ? n : 1, sizeof(*idx)), nx[BOOT_STATS] = { 0 };
	double *x[BOOT_STATS], v[BOOT_STATS], *z = xcalloc(BOOT_DRAWS * (n ? n : 1), sizeof(double));
	struct sb_rng rng, zrng;
	for (size_t s = 0; s < nstat; s++)
		x[s] = xcalloc(METRICS_RESAMPLES, sizeof(double));
	sb_rng_seed(&rng, METRICS_SEED);
	sb_rng_seed(&zrng, METRICS_SEED + 1);
	for (int b = 0; b < METRICS_RESAMPLES; b++) {
		for (size_t i = 0; i < n; i++)
			idx[i] = (size_t)(sb_rng_uniform(&rng) * (double)n);
		for (size_t i = 0; noise && i < BOOT_DRAWS * n; i++)
			z[i] = normal(&zrng);
		f(arg, idx, z, n, v);
		for (size_t s = 0; s < nstat; s++)
			if (!isnan(v[s]))
				x[s][nx[s]++] = v[s];
	}
	for (size_t s = 0; s < nstat; s++) {
		qsort(x[s], nx[s], sizeof(double), cmp_double);
		ci[s].lo = nx[s] ? stats_percentile(x[s], nx[s], 2.5) : NAN;
		ci[s].hi = nx[s] ? stats_percentile(x[s], nx[s], 97.5) : NAN;
		free(x[s]);
	}
	free(idx);
	free(z);
}

/* The problems of a cell, and where their speeds are known. */
struct cell_items {
	const struct metric_problem *const *v;
	const struct metrics *m;
};

/* A cell's resampled statistics: correct %, fast_1 % and the geometric mean of the clean passes' speedups
 * (none in a resample without a clean timed pass), each drawn problem's speedup drawn from its speed
 * interval. arg: the cell's items. */
static void cell_resample(const void *arg, const size_t *idx, const double *z, size_t n, double *out)
{
	const struct cell_items *c = arg;
	size_t k_corr = 0, k_fast = 0, k_geo = 0;
	double logsum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct metric_row *p = c->v[idx[i]]->rep;
		k_corr += (size_t)p->correct;
		if (metrics_clean(p) && usable(p->speedup_eager)) {
			double ls = drawn_log_speedup(p, metrics_row_speed(c->m, p), z[BOOT_DRAWS * i]);
			k_fast += ls > 0;
			logsum += ls;
			k_geo++;
		} else {
			k_fast += fast_untimed(p);
		}
	}
	out[0] = pct(k_corr, n);
	out[1] = pct(k_fast, n);
	out[2] = k_geo ? exp(logsum / (double)k_geo) : NAN;
}

static void cell_bootstrap(const struct metrics *m, const struct metric_problem *const *v, size_t n,
			   struct metric_cell *c)
{
	struct metric_ci ci[3];
	struct cell_items items = { v, m };
	int noise = 0;
	for (size_t i = 0; i < n && !noise; i++)
		noise = any_width(v[i]->rep, metrics_row_speed(m, v[i]->rep));
	bootstrap(&items, n, cell_resample, noise, 3, ci);
	c->correct_ci = ci[0];
	c->fast1_ci = ci[1];
	c->geomean_eager_ci = ci[2];
}

/* StitchCUDA's numbers of a cell whose counts fill_cell has made. */
static void fill_stitchcuda(const struct metric_problem *const *v, size_t n, struct metric_cell *c)
{
	struct metric_stitchcuda *sc = &c->stitchcuda;
	double speedups = 0, rewards = 0;
	for (size_t i = 0; i < n; i++) {
		const struct metric_row *p = v[i]->rep;
		if (p->correct && usable(p->speedup_eager)) {
			speedups += p->speedup_eager;
			sc->timed_passes++;
			sc->fast1 += p->speedup_eager > 1;
		}
		if (p->rewarded) {
			rewards += p->reward;
			sc->rewarded++;
		}
	}
	sc->fast1_pct = pct(sc->fast1, n);
	sc->mean_speedup = mean_or_nan(speedups, n); /* the problems without a timed pass add 0 */
	sc->mean_speedup_passes = mean_or_nan(speedups, sc->timed_passes);
	sc->mean_reward = mean_or_nan(rewards, sc->rewarded);
}

static void fill_cell(const struct metrics *m, const struct metric_problem *const *v, size_t n,
		      struct metric_cell *c)
{
	size_t compiled = 0, hack = 0, fast[METRICS_NP] = { 0 }, solved = 0, tok_n = 0, robust = 0;
	size_t fast_robust[METRICS_NP] = { 0 };
	double tokens = 0, attempts = 0, cost = 0, log_e = 0, log_c = 0;
	int cost_known = 0;
	memset(c, 0, sizeof(*c));
	c->problems = n;
	for (size_t i = 0; i < n; i++) {
		const struct metric_problem *mp = v[i];
		const struct metric_row *p = mp->rep;
		c->missing += (size_t)p->missing;
		compiled += (size_t)p->compiled;
		c->correct += (size_t)p->correct;
		hack += (size_t)p->hack;
		c->flagged += p->correct && p->flagged;
		c->timed += metrics_clean(p) && isfinite(p->speedup_eager);
		c->noisy += metrics_clean(p) && isfinite(p->speedup_eager) && p->noisy;
		const struct metric_speed *sp = metrics_row_speed(m, p);
		if (sp && metrics_clean(p) && isfinite(p->speedup_eager)) {
			c->repeated += sp->repeats > 0;
			c->repeats += (size_t)(sp->repeats > 0 ? sp->repeats : 0);
			c->repeats_failed += (size_t)(sp->repeats_failed > 0 ? sp->repeats_failed : 0);
		}
		/* fast_0 is the rate of clean passes, timed or not (KernelBench's correct rate, less flagged passes) */
		robust += (size_t)metrics_robust(p);
		for (int k = 0; k < METRICS_NP; k++) {
			int f = metrics_clean(p) && (metrics_p[k] == 0 || p->speedup_eager > metrics_p[k]);
			fast[k] += f;
			fast_robust[k] += f && metrics_robust(p);
		}
		if (metrics_clean(p) && usable(p->speedup_eager)) {
			log_e += log(p->speedup_eager);
			c->geomean_eager_n++;
		}
		if (metrics_clean(p) && usable(p->speedup_compiled)) {
			log_c += log(p->speedup_compiled);
			c->geomean_compiled_n++;
		}
		if (mp->attempts_to_correct) {
			solved++;
			attempts += mp->attempts_to_correct;
			if (!isnan(mp->tokens_to_correct)) {
				tokens += mp->tokens_to_correct;
				tok_n++;
			}
		}
		if (!isnan(mp->cost_usd)) {
			cost += mp->cost_usd;
			cost_known = 1;
		}
	}
	c->compiled_pct = pct(compiled, n);
	c->correct_pct = pct(c->correct, n);
	c->hack_pct = pct(hack, n);
	c->flagged_pct = pct(c->flagged, n);
	c->correct_robust_pct = pct(robust, n);
	for (int k = 0; k < METRICS_NP; k++) {
		c->fast_pct[k] = pct(fast[k], n);
		c->fast_robust_pct[k] = pct(fast_robust[k], n);
	}
	c->geomean_eager = c->geomean_eager_n ? exp(log_e / (double)c->geomean_eager_n) : NAN;
	c->geomean_compiled = c->geomean_compiled_n ? exp(log_c / (double)c->geomean_compiled_n) : NAN;
	c->attempts_to_correct = mean_or_nan(attempts, solved);
	c->tokens_to_correct = mean_or_nan(tokens, tok_n);
	c->cost_usd = cost_known ? cost : NAN;
	fill_stitchcuda(v, n, c);
	cell_bootstrap(m, v, n, c);
}

/* Reduces one agent's rows (a run of the sorted array) to problems, then fills its cells. */
static void compute_agent(const struct metrics *m, const struct metric_row *const *rows, size_t n,
			  const struct metric_call *const *calls, size_t ncalls, enum metrics_by by, struct metric_agent *a)
{
	struct metric_problem *probs = xcalloc(n, sizeof(*probs));
	const struct metric_problem **sel = xcalloc(n, sizeof(*sel));
	size_t np = 0, c0 = 0;
	while (c0 < ncalls && strcmp(calls[c0]->agent, rows[0]->agent) < 0)
		c0++;
	size_t c_end = c0;
	while (c_end < ncalls && !strcmp(calls[c_end]->agent, rows[0]->agent))
		c_end++;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(rows[j]->problem, rows[i]->problem))
			j++;
		/* a problem's calls are contiguous in the sorted array */
		struct call_span cs = { calls + c0, 0, c_end > c0 };
		while (cs.v < calls + c_end && strcmp((*cs.v)->problem, rows[i]->problem))
			cs.v++;
		while (cs.v + cs.n < calls + c_end && !strcmp(cs.v[cs.n]->problem, rows[i]->problem))
			cs.n++;
		reduce_problem(rows + i, j - i, by, &cs, &probs[np++]);
		i = j;
	}
	for (int level = 0; level <= METRICS_LEVELS; level++) {
		size_t k = 0;
		for (size_t i = 0; i < np; i++)
			if (level == 0 || probs[i].rep->level == level)
				sel[k++] = &probs[i];
		fill_cell(m, sel, k, &a->cells[level]);
	}
	free(sel);
	a->problems = probs;
	a->nproblems = np;
}

/* The order of metrics_row_cmp for an (agent, level, problem) key, whatever the sample and attempt. */
static int cmp_problem_key(const char *agent, int level, const char *problem, const struct metric_row *r)
{
	return cmp_key(agent, level, problem, 0, 0, r->agent, r->level, r->problem, 0, 0);
}

/* bsearch comparators of an (agent, level, problem) key with a sorted row or reference failure. */
static int key_vs_row(const void *key, const void *x)
{
	const struct metric_expect *e = key;
	return cmp_problem_key(e->agent, e->level, e->problem, *(const struct metric_row *const *)x);
}

static int key_vs_reffail(const void *key, const void *x)
{
	const struct metric_expect *e = key;
	const struct metric_reffail *f = *(const struct metric_reffail *const *)x;
	return cmp_key(e->agent, e->level, e->problem, 0, 0, f->agent, f->level, f->problem, 0, 0);
}

/* 1 when the sorted rows hold a verdict of the agent on the problem. */
static int has_verdict(const struct metric_row *const *r, size_t n, const struct metric_expect *e)
{
	return n && bsearch(e, r, n, sizeof(*r), key_vs_row);
}

static int cmp_expect(const void *x, const void *y)
{
	const struct metric_expect *a = *(const struct metric_expect *const *)x, *b = *(const struct metric_expect *const *)y;
	return cmp_key(a->agent, a->level, a->problem, 0, 0, b->agent, b->level, b->problem, 0, 0);
}

static int cmp_reffail(const void *x, const void *y)
{
	const struct metric_reffail *a = *(const struct metric_reffail *const *)x;
	const struct metric_reffail *b = *(const struct metric_reffail *const *)y;
	return cmp_key(a->agent, a->level, a->problem, a->sample, 0, b->agent, b->level, b->problem, b->sample, 0);
}

/* 1 when the sorted reference failures hold one of the agent's samples of the problem. */
static int reference_failed(const struct metric_reffail *const *f, size_t n, const struct metric_expect *e)
{
	return n && bsearch(e, f, n, sizeof(*f), key_vs_reffail);
}

/* One `unjudged` entry per (agent, problem) whose reference failed and that the rows lack, in key order;
 * f is sorted. A problem with a verdict was judged after all (another sample, an earlier attempt). */
static void find_unjudged(const struct metric_row *const *r, size_t nrows, const struct metric_reffail *const *f,
			  size_t n, struct metrics *out)
{
	out->unjudged = xcalloc(n ? n : 1, sizeof(*out->unjudged));
	for (size_t i = 0; i < n; i++) {
		const struct metric_expect e = { f[i]->agent, f[i]->problem, f[i]->level };
		int dup = i && !cmp_key(f[i - 1]->agent, f[i - 1]->level, f[i - 1]->problem, 0, 0, f[i]->agent,
					f[i]->level, f[i]->problem, 0, 0);
		if (!dup && !has_verdict(r, nrows, &e))
			out->unjudged[out->nunjudged++] = *f[i];
	}
}

/* One `missing` row per expected (agent, problem) that the rows lack and whose reference did not fail
 * (f, sorted), in key order, duplicates once. */
static void find_missing(const struct metric_row *const *r, size_t nrows, const struct metric_scope *scope,
			 const struct metric_reffail *const *f, size_t nf, struct metrics *out)
{
	if (!scope || !scope->nexpect)
		return;
	const struct metric_expect **e = xcalloc(scope->nexpect, sizeof(*e));
	for (size_t i = 0; i < scope->nexpect; i++)
		e[i] = &scope->expect[i];
	qsort(e, scope->nexpect, sizeof(*e), cmp_expect);
	out->missing = xcalloc(scope->nexpect, sizeof(*out->missing));
	for (size_t i = 0; i < scope->nexpect; i++) {
		if ((i && !cmp_expect(&e[i - 1], &e[i])) || has_verdict(r, nrows, e[i]) || reference_failed(f, nf, e[i]))
			continue;
		out->missing[out->nmissing++] = (struct metric_row){ .agent = e[i]->agent, .problem = e[i]->problem,
								     .level = e[i]->level, .speedup_eager = NAN,
								     .speedup_compiled = NAN, .missing = 1 };
	}
	free(e);
}

static struct metric_agent *agent_named(struct metrics *m, const char *name)
{
	for (size_t a = 0; a < m->nagents; a++)
		if (!strcmp(m->agents[a].name, name))
			return &m->agents[a];
	return NULL;
}

static int cmp_agent_name(const void *x, const void *y)
{
	return strcmp(((const struct metric_agent *)x)->name, ((const struct metric_agent *)y)->name);
}

/* An agent none of whose problems could be judged (every one's reference failed, or was cannot_judge) has
 * no row, yet it ran: it gets empty cells, so that the table shows it and what was left out. */
static void add_unjudged_agents(struct metrics *m)
{
	size_t before = m->nagents;
	for (size_t i = 0; i < m->nunjudged; i++) {
		if (agent_named(m, m->unjudged[i].agent))
			continue;
		m->agents = xrealloc(m->agents, (m->nagents + 1) * sizeof(*m->agents));
		struct metric_agent *a = &m->agents[m->nagents++];
		memset(a, 0, sizeof(*a));
		a->name = xstrdup(m->unjudged[i].agent);
		for (int level = 0; level <= METRICS_LEVELS; level++)
			fill_cell(m, NULL, 0, &a->cells[level]);
	}
	if (m->nagents != before)
		qsort(m->agents, m->nagents, sizeof(*m->agents), cmp_agent_name);
}

/* ---------- agents compared in pairs ----------
 *
 * Two agents' tables differ partly by which problems each has (a shard, a stopped run, another selection)
 * and partly by chance, through which problems the suite happened to hold. Comparing them problem by
 * problem removes the first; a bootstrap over those problems measures the second:
 *   - the problems are those both agents have a representative for (each agent's overall cell);
 *   - speed: exp(mean of ln(a's speedup vs eager / b's)) over the problems both pass cleanly with a
 *     speedup, the geometric mean of a's speedup over b's (1 is no difference);
 *   - correct % and fast_1 %: a's rate less b's over all the shared problems, in points (0 is none);
 *   - 95% intervals: METRICS_RESAMPLES (2000) resamples of the shared problems drawn with replacement from
 *     METRICS_SEED, paired (a drawn problem brings both agents' representatives), each side's speedup drawn
 *     from its speed interval, the 2.5th and 97.5th percentiles of each statistic, as the cells' intervals.
 * A difference is stated only when its interval leaves out "no difference". */

/* One problem both agents of a pair have: their representatives, and ln(a's speedup / b's) when both are
 * clean passes with a speedup (NAN otherwise: no speed to compare). A resample draws each side's speedup
 * from its own speed interval, independently. */
struct pair_item {
	const struct metric_row *a, *b;
	const struct metric_speed *sa, *sb; /* what is known of their speeds (NULL: the points alone) */
	double log_ratio;
};

static int clean_timed(const struct metric_row *r)
{
	return metrics_clean(r) && usable(r->speedup_eager);
}

/* A pair's statistics over the drawn problems (paired: each problem brings both agents' representatives):
 * out[0] the speed ratio, exp of the mean of ln(a's speedup / b's) over the problems both pass cleanly with a
 * speedup (none without such a problem); out[1] and out[2] a's correct % and fast_1 % less b's, in points.
 * A problem that only one agent solves moves the differences and not the ratio, which has no speed to
 * compare there. */
static void pair_resample(const void *arg, const size_t *idx, const double *z, size_t n, double *out)
{
	const struct pair_item *v = arg;
	long d_corr = 0, d_fast = 0;
	size_t timed = 0;
	double logsum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pair_item *p = &v[idx[i]];
		double la = clean_timed(p->a) ? drawn_log_speedup(p->a, p->sa, z[BOOT_DRAWS * i]) : NAN;
		double lb = clean_timed(p->b) ? drawn_log_speedup(p->b, p->sb, z[BOOT_DRAWS * i + 1]) : NAN;
		d_corr += (long)p->a->correct - (long)p->b->correct;
		d_fast += (long)(la > 0 || fast_untimed(p->a)) - (long)(lb > 0 || fast_untimed(p->b));
		if (!isnan(p->log_ratio)) {
			logsum += la - lb;
			timed++;
		}
	}
	out[0] = timed ? exp(logsum / (double)timed) : NAN;
	out[1] = n ? 100.0 * (double)d_corr / (double)n : NAN;
	out[2] = n ? 100.0 * (double)d_fast / (double)n : NAN;
}

static int cmp_problem_of(const struct metric_row *x, const struct metric_row *y)
{
	return cmp_key("", x->level, x->problem, 0, 0, "", y->level, y->problem, 0, 0);
}

/* The problems both agents have, in their (shared) level and problem order; returns how many. */
static size_t shared_problems(const struct metrics *m, const struct metric_agent *a, const struct metric_agent *b,
			      struct pair_item *out)
{
	size_t i = 0, j = 0, n = 0;
	while (i < a->nproblems && j < b->nproblems) {
		int c = cmp_problem_of(a->problems[i].rep, b->problems[j].rep);
		if (!c) {
			const struct metric_row *x = a->problems[i].rep, *y = b->problems[j].rep;
			double lr = clean_timed(x) && clean_timed(y) ? log(x->speedup_eager / y->speedup_eager) : NAN;
			out[n++] = (struct pair_item){ x, y, metrics_row_speed(m, x), metrics_row_speed(m, y), lr };
		}
		i += c <= 0;
		j += c >= 0;
	}
	return n;
}

/* The differences between agents a and b: the point estimates are the statistics of the problems as they
 * are (every one drawn once), the intervals those of the cells' bootstrap (same resamples, same seed)
 * applied to the shared problems. Too few problems give no interval: every resample of one problem is that
 * problem, a single point that says nothing about the spread. */
static void compare_pair(const struct metrics *m, size_t a, size_t b, struct metric_pair *p)
{
	const struct metric_agent *x = &m->agents[a], *y = &m->agents[b];
	size_t cap = x->nproblems < y->nproblems ? x->nproblems : y->nproblems;
	struct pair_item *v = xcalloc(cap ? cap : 1, sizeof(*v));
	size_t n = shared_problems(m, x, y, v), *all = xcalloc(n ? n : 1, sizeof(*all));
	double point[3];
	struct metric_ci ci[3];
	memset(p, 0, sizeof(*p));
	p->a = a;
	p->b = b;
	p->problems = n;
	int noise = 0;
	double *zero = xcalloc(BOOT_DRAWS * (n ? n : 1), sizeof(double));
	for (size_t i = 0; i < n; i++) {
		all[i] = i;
		p->timed += !isnan(v[i].log_ratio);
		noise |= any_width(v[i].a, v[i].sa) || any_width(v[i].b, v[i].sb);
		if (!isnan(v[i].log_ratio))
			p->repeats += (size_t)(v[i].sa && v[i].sa->repeats > 0 ? v[i].sa->repeats : 0) +
				      (size_t)(v[i].sb && v[i].sb->repeats > 0 ? v[i].sb->repeats : 0);
	}
	pair_resample(v, all, zero, n, point); /* the points: every problem once, every speedup as measured */
	free(zero);
	bootstrap(v, n, pair_resample, noise, 3, ci);
	p->speed_ratio = point[0];
	p->correct_diff = point[1];
	p->fast1_diff = point[2];
	p->speed_ci = p->timed >= METRICS_PAIR_MIN ? ci[0] : (struct metric_ci){ NAN, NAN };
	p->correct_ci = p->fast1_ci = (struct metric_ci){ NAN, NAN };
	if (n >= METRICS_PAIR_MIN) {
		p->correct_ci = ci[1];
		p->fast1_ci = ci[2];
	}
	free(all);
	free(v);
}

static void compare_pairs(struct metrics *m)
{
	size_t n = m->nagents;
	m->npairs = n > 1 ? n * (n - 1) / 2 : 0;
	m->pairs = xcalloc(m->npairs ? m->npairs : 1, sizeof(*m->pairs));
	for (size_t a = 0, k = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			compare_pair(m, a, b, &m->pairs[k++]);
}

const struct metric_speed *metrics_row_speed(const struct metrics *m, const struct metric_row *r)
{
	uintptr_t at = (uintptr_t)r, base = m ? (uintptr_t)m->rows : 0;
	if (!m || !m->speed || at < base || at >= base + m->nrows * sizeof(*r))
		return NULL;
	return &m->speed[r - m->rows];
}

enum metrics_outcome metrics_decide(const struct metric_ci *ci, double none)
{
	if (isnan(ci->lo) || isnan(ci->hi))
		return METRICS_TOO_LITTLE;
	return ci->lo > none ? METRICS_HIGHER : ci->hi < none ? METRICS_LOWER : METRICS_NO_DIFFERENCE;
}

/* 1 when agent a is faster than every other agent by the intervals of their pairs. */
static int faster_than_all(const struct metrics *m, size_t a)
{
	for (size_t k = 0; k < m->npairs; k++) {
		const struct metric_pair *p = &m->pairs[k];
		enum metrics_outcome o = metrics_decide(&p->speed_ci, 1);
		if ((p->a == a && o != METRICS_HIGHER) || (p->b == a && o != METRICS_LOWER))
			return 0;
	}
	return 1;
}

int metrics_best_agent(const struct metrics *m)
{
	int best = -1, tie = 0;
	for (size_t a = 0; a < m->nagents; a++) {
		double g = m->agents[a].cells[0].geomean_eager;
		if (isnan(g))
			continue;
		if (best >= 0 && g == m->agents[best].cells[0].geomean_eager)
			tie = 1;
		else if (best < 0 || g > m->agents[best].cells[0].geomean_eager) {
			best = (int)a;
			tie = 0;
		}
	}
	return m->nagents < 2 || best < 0 || tie || !faster_than_all(m, (size_t)best) ? -1 : best;
}

/* Problems left out of the cells are still counted there: those without a verdict with --denominator
 * judged, and those whose reference failed with either. */
static void count_left_out(struct metrics *m)
{
	struct metric_agent *a;
	for (size_t i = 0; m->denominator == METRICS_JUDGED && i < m->nmissing; i++)
		if ((a = agent_named(m, m->missing[i].agent))) {
			a->cells[0].missing++;
			a->cells[m->missing[i].level].missing++;
		}
	for (size_t i = 0; i < m->nunjudged; i++)
		if ((a = agent_named(m, m->unjudged[i].agent))) {
			a->cells[0].unjudged++;
			a->cells[m->unjudged[i].level].unjudged++;
		}
}

int metrics_compute(const struct metric_row *rows, size_t nrows, const struct metric_call *calls, size_t ncalls,
		    enum metrics_by by, const struct metric_scope *scope, struct metrics *out, struct sb_error *err)
{
	const struct metric_row **r = xcalloc(nrows ? nrows : 1, sizeof(*r));
	const struct metric_call **c = xcalloc(ncalls ? ncalls : 1, sizeof(*c));
	memset(out, 0, sizeof(*out));
	out->by = by;
	out->denominator = scope ? scope->denominator : METRICS_JUDGED;
	out->rows = rows;
	out->nrows = nrows;
	out->speed = scope ? scope->speed : NULL;
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].level < 1 || rows[i].level > METRICS_LEVELS) {
			free(r);
			free(c);
			return sb_error_set(err, SB_EINPUT, "%s %s: level %d is not 1 to %d", rows[i].agent, rows[i].problem,
					    rows[i].level, METRICS_LEVELS);
		}
		r[i] = &rows[i];
	}
	for (size_t i = 0; scope && i < scope->nexpect + scope->nreffail; i++) {
		int level = i < scope->nexpect ? scope->expect[i].level : scope->reffail[i - scope->nexpect].level;
		if (level < 1 || level > METRICS_LEVELS) {
			free(r);
			free(c);
			return sb_error_set(err, SB_EINPUT, "problem %s: level %d is not 1 to %d",
					    i < scope->nexpect ? scope->expect[i].problem
							       : scope->reffail[i - scope->nexpect].problem,
					    level, METRICS_LEVELS);
		}
	}
	size_t nf = scope ? scope->nreffail : 0;
	const struct metric_reffail **f = xcalloc(nf ? nf : 1, sizeof(*f));
	for (size_t i = 0; i < nf; i++)
		f[i] = &scope->reffail[i];
	for (size_t i = 0; i < ncalls; i++)
		c[i] = &calls[i];
	qsort(r, nrows, sizeof(*r), metrics_row_cmp);
	qsort(c, ncalls, sizeof(*c), cmp_calls);
	qsort(f, nf, sizeof(*f), cmp_reffail);
	find_unjudged(r, nrows, f, nf, out);
	find_missing(r, nrows, scope, f, nf, out);
	free(f);
	size_t n = nrows;
	if (out->denominator == METRICS_ALL && out->nmissing) {
		r = xrealloc(r, (nrows + out->nmissing) * sizeof(*r));
		for (size_t i = 0; i < out->nmissing; i++)
			r[n++] = &out->missing[i];
		qsort(r, n, sizeof(*r), metrics_row_cmp);
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(r[j]->agent, r[i]->agent))
			j++;
		out->agents = xrealloc(out->agents, (out->nagents + 1) * sizeof(*out->agents));
		struct metric_agent *a = &out->agents[out->nagents++];
		memset(a, 0, sizeof(*a));
		a->name = xstrdup(r[i]->agent);
		compute_agent(out, r + i, j - i, c, ncalls, by, a);
		i = j;
	}
	add_unjudged_agents(out);
	count_left_out(out);
	compare_pairs(out);
	free(r);
	free(c);
	return 0;
}

void metrics_add_unavailable(struct metrics *m, const struct metric_unavailable *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t a = 0;
		while (a < m->nagents && strcmp(m->agents[a].name, v[i].agent))
			a++;
		if (a < m->nagents)
			continue;
		m->unavailable = xrealloc(m->unavailable, (m->nunavailable + 1) * sizeof(*m->unavailable));
		m->unavailable[m->nunavailable++] = v[i];
	}
}

void metrics_release(struct metrics *m)
{
	free(m->unavailable);
	free(m->missing);
	free(m->unjudged);
	free(m->pairs);
	for (size_t i = 0; i < m->nagents; i++) {
		free(m->agents[i].name);
		free(m->agents[i].problems);
	}
	free(m->agents);
	memset(m, 0, sizeof(*m));
}
