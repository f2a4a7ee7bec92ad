/* metrics_format.c - metrics in and out: rows read from a results store, and the computed numbers as
 * a Markdown table laid out like published results (agents as rows, levels as columns) or as JSON. */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "hacks.h"

static const char *keep(struct metric_input *in, const char *s, const char *suffix)
{
	if (suffix)
		strvec_pushf(&in->strings, "%s%s", s, suffix);
	else
		strvec_push(&in->strings, s);
	return in->strings.v[in->strings.nr - 1];
}

struct load_ctx {
	struct metric_input *in;
	const char *suffix;
};

/* The hack ids among a verdict's finding ids ("H14 H21"), kept in in->strings; NULL when there are none.
 * An id outside the taxonomy (another tool's) is no hack finding. */
static const char *hack_ids_of(struct metric_input *in, const char *ids)
{
	struct strbuf b = STRBUF_INIT;
	for (const char *p = ids ? ids : ""; *p;) {
		size_t len = strcspn(p, " ");
		char id[8];
		if (len && len < sizeof(id)) {
			memcpy(id, p, len);
			id[len] = '\0';
			if (hack_title(id) && !strstr(b.buf, id))
				strbuf_addf(&b, "%s%s", b.len ? " " : "", id);
		}
		p += len + (p[len] == ' ');
	}
	const char *kept = b.len ? keep(in, b.buf, NULL) : NULL;
	strbuf_release(&b);
	return kept;
}

static int load_row(void *arg, const struct store_verdict_row *v, struct sb_error *err)
{
	struct load_ctx *c = arg;
	struct metric_input *in = c->in;
	in->rows = xrealloc(in->rows, (in->nrows + 1) * sizeof(*in->rows));
	in->speed = xrealloc(in->speed, (in->nrows + 1) * sizeof(*in->speed));
	in->speed[in->nrows] = (struct metric_speed){ v->speedup_lo, v->speedup_hi, 0, 0, NAN };
	struct metric_row *r = &in->rows[in->nrows++];
	memset(r, 0, sizeof(*r));
	r->agent = keep(in, v->agent, c->suffix);
	r->problem = keep(in, v->problem, NULL);
	r->level = v->level;
	r->sample = v->sample;
	r->attempt = v->attempt;
	r->compiled = strcmp(v->status, "compile_error") && strcmp(v->status, "format_error");
	r->correct = !strcmp(v->status, "pass");
	r->hack = v->hack;
	r->hack_ids = hack_ids_of(in, v->finding_ids);
	r->flagged = r->hack_ids != NULL;
	r->speedup_eager = v->speedup_eager;
	r->speedup_compiled = v->speedup_compiled;
	r->rewarded = isfinite(v->reward);
	r->reward = r->rewarded ? v->reward : 0;
	r->robust_failed = v->robust_failed;
	r->noisy = v->noisy;
	return in->on_row ? in->on_row(in->on_row_arg, in->nrows - 1, v, err) : 0;
}

static int load_call(void *arg, const struct store_llm_call *call, struct sb_error *err)
{
	struct load_ctx *c = arg;
	struct metric_input *in = c->in;
	(void)err;
	in->calls = xrealloc(in->calls, (in->ncalls + 1) * sizeof(*in->calls));
	struct metric_call *m = &in->calls[in->ncalls++];
	m->agent = keep(in, call->agent, c->suffix);
	m->problem = keep(in, call->problem, NULL);
	m->sample = call->sample;
	m->attempt = call->attempt;
	m->tokens = call->prompt_tokens + call->completion_tokens;
	m->cost_usd = call->cost_usd;
	return 0;
}

static int load_unavailable(void *arg, const char *agent, const char *reason, struct sb_error *err)
{
	struct load_ctx *c = arg;
	struct metric_input *in = c->in;
	(void)err;
	in->unavailable = xrealloc(in->unavailable, (in->nunavailable + 1) * sizeof(*in->unavailable));
	in->unavailable[in->nunavailable].agent = keep(in, agent, c->suffix);
	in->unavailable[in->nunavailable++].reason = keep(in, reason, NULL);
	return 0;
}

static int load_reffail(void *arg, const struct store_reference_failure *f, struct sb_error *err)
{
	struct load_ctx *c = arg;
	struct metric_input *in = c->in;
	int level = 0, id = 0;
	(void)err;
	if (sscanf(f->problem, "L%d/%d", &level, &id) != 2)
		level = 0; /* metrics_compute refuses it, naming the problem */
	in->reffail = xrealloc(in->reffail, (in->nreffail + 1) * sizeof(*in->reffail));
	in->reffail[in->nreffail++] = (struct metric_reffail){ keep(in, f->agent, c->suffix), keep(in, f->problem, NULL),
							       level, f->sample, keep(in, f->message, NULL) };
	return 0;
}

void metric_input_expect(struct metric_input *in, const char *agent, const char *suffix, const char *problem)
{
	int level = 0, id = 0;
	if (sscanf(problem, "L%d/%d", &level, &id) != 2)
		level = 0; /* metrics_compute refuses it, naming the problem */
	in->expect = xrealloc(in->expect, (in->nexpect + 1) * sizeof(*in->expect));
	in->expect[in->nexpect++] = (struct metric_expect){ keep(in, agent, suffix), keep(in, problem, NULL), level };
}

/* The repeats of one store, attached to its rows (in->rows[first..]) as they are read: the repeats of a
 * key come together, collected in `speedups` until the key changes. */
struct repeat_ctx {
	struct metric_input *in;
	const char *suffix;
	const struct metric_row **sorted; /* the store's rows in metrics_row_cmp order */
	size_t n;
	struct metric_row key;            /* the key being collected; agent NULL before the first */
	char *agent;                      /* key.agent, suffixed */
	double *speedups;                 /* [0] the verdict's own, then the key's timed passing repeats */
	size_t nspeedups, cap;
	int failed;
};

/* Sets the collected key's speed: how many repeats passed with a speedup, how many did not, and the spread
 * of ln speedup over the verdict and those repeats. A key without a loaded row is ignored. */
static void repeat_flush(struct repeat_ctx *c)
{
	const struct metric_row *k = &c->key, **hit;
	if (!c->agent || !c->n || !(hit = bsearch(&k, c->sorted, c->n, sizeof(*c->sorted), metrics_row_cmp)))
		return;
	struct metric_speed *sp = &c->in->speed[*hit - c->in->rows];
	sp->repeats = (int)c->nspeedups - 1;
	sp->repeats_failed = c->failed;
	sp->repeat_sd = sp->repeats > 0 && isfinite(c->speedups[0]) && c->speedups[0] > 0
				? metrics_log_sd(c->speedups, c->nspeedups) : NAN;
}

static int load_repeat(void *arg, const struct store_repeat_row *v, struct sb_error *err)
{
	struct repeat_ctx *c = arg;
	(void)err;
	int level = 0, id = 0;
	if (sscanf(v->problem, "L%d/%d", &level, &id) != 2)
		return 0;
	char *agent = c->suffix ? xstrfmt("%s%s", v->agent, c->suffix) : xstrdup(v->agent);
	int same = c->agent && !strcmp(agent, c->agent) && !strcmp(v->problem, c->key.problem) &&
		   v->sample == c->key.sample && v->attempt == c->key.attempt;
	if (!same) {
		repeat_flush(c);
		free(c->agent);
		free((char *)c->key.problem);
		c->agent = agent;
		c->key = (struct metric_row){ .agent = agent, .problem = xstrdup(v->problem), .level = level,
					      .sample = v->sample, .attempt = v->attempt };
		c->nspeedups = 1;
		c->failed = 0;
		c->speedups[0] = NAN;
		const struct metric_row *k = &c->key, **hit;
		if (c->n && (hit = bsearch(&k, c->sorted, c->n, sizeof(*c->sorted), metrics_row_cmp)))
			c->speedups[0] = (*hit)->speedup_eager;
	} else {
		free(agent);
	}
	if (!strcmp(v->status, "pass") && isfinite(v->speedup_eager) && v->speedup_eager > 0) {
		if (c->nspeedups == c->cap) {
			c->cap *= 2;
			c->speedups = xrealloc(c->speedups, c->cap * sizeof(*c->speedups));
		}
		c->speedups[c->nspeedups++] = v->speedup_eager;
	} else {
		c->failed++;
	}
	return 0;
}

static int load_repeats(struct store *s, const char *suffix, struct metric_input *in, size_t first,
			struct sb_error *err)
{
	struct repeat_ctx c = { .in = in, .suffix = suffix, .n = in->nrows - first, .cap = 8 };
	c.sorted = xcalloc(c.n ? c.n : 1, sizeof(*c.sorted));
	c.speedups = xcalloc(c.cap, sizeof(*c.speedups));
	for (size_t i = 0; i < c.n; i++)
		c.sorted[i] = &in->rows[first + i];
	qsort(c.sorted, c.n, sizeof(*c.sorted), metrics_row_cmp);
	int rc = store_each_repeat(s, load_repeat, &c, err);
	if (!rc)
		repeat_flush(&c);
	free(c.agent);
	free((char *)c.key.problem);
	free(c.speedups);
	free(c.sorted);
	return rc;
}

int metrics_load(struct store *s, const char *suffix, struct metric_input *in, struct sb_error *err)
{
	struct load_ctx c = { in, suffix };
	size_t first = in->nrows;
	int rc = store_each_verdict(s, load_row, &c, err);
	if (!rc)
		rc = load_repeats(s, suffix, in, first, err);
	if (!rc)
		rc = store_each_llm_call(s, load_call, &c, err);
	if (!rc)
		rc = store_each_reference_failure(s, load_reffail, &c, err);
	return rc ? rc : store_each_unavailable(s, load_unavailable, &c, err);
}

struct metric_scope metric_input_scope(const struct metric_input *in, enum metrics_denominator d)
{
	return (struct metric_scope){ d, in->expect, in->nexpect, in->reffail, in->nreffail, in->speed };
}

void metric_input_release(struct metric_input *in)
{
	free(in->rows);
	free(in->speed);
	free(in->calls);
	free(in->unavailable);
	free(in->expect);
	free(in->reffail);
	strvec_clear(&in->strings);
	memset(in, 0, sizeof(*in));
}

/* ---------- Markdown ---------- */

static void num(struct strbuf *out, double x, const char *fmt, const char *unit)
{
	if (isnan(x)) {
		strbuf_addstr(out, "n/a");
		return;
	}
	strbuf_addf(out, fmt, x);
	strbuf_addstr(out, unit);
}

static void with_ci(struct strbuf *out, double x, const struct metric_ci *ci, const char *fmt, const char *unit)
{
	num(out, x, fmt, unit);
	if (isnan(x) || isnan(ci->lo))
		return;
	strbuf_addstr(out, " [");
	num(out, ci->lo, fmt, "");
	strbuf_addstr(out, ", ");
	num(out, ci->hi, fmt, "");
	strbuf_addch(out, ']');
}

/* Levels that any agent has problems in (or problems left out: without a verdict with --denominator judged,
 * or whose reference failed); column 0 ("all") always. */
static void columns(const struct metrics *m, int cols[METRICS_LEVELS + 1], int *ncols)
{
	*ncols = 0;
	for (int l = 1; l <= METRICS_LEVELS; l++)
		for (size_t a = 0; a < m->nagents; a++)
			if (m->agents[a].cells[l].problems || m->agents[a].cells[l].missing || m->agents[a].cells[l].unjudged) {
				cols[(*ncols)++] = l;
				break;
			}
	cols[(*ncols)++] = 0;
}

static void header(struct table *t, const char *first, const int *cols, int ncols)
{
	table_init(t, (size_t)ncols + 1);
	table_cell(t, first);
	for (int i = 0; i < ncols; i++) {
		if (cols[i])
			table_cellf(t, "L%d", cols[i]);
		else
			table_cell(t, "all");
	}
}

enum detail_row { D_PROBLEMS, D_MISSING, D_UNJUDGED, D_COMPILED, D_CORRECT, D_CORRECT_ROBUST, D_FLAGGED, D_HACK,
		  D_FAST, D_FAST_ROBUST = D_FAST + METRICS_NP, D_GEO_E, D_GEO_C, D_ATTEMPTS, D_TOKENS, D_COST, D_ROWS };

static void detail_label(const struct metrics *m, struct strbuf *out, int row)
{
	static const char *const labels[] = { "problems", "", "not judged (left out)", "compiled %",
					      "correct % [95% CI]", "correct_robust % (no robust trial failed)",
					      "flagged % (correct with a hack finding)", "hack %" };
	if (row == D_MISSING)
		strbuf_addstr(out, m->denominator == METRICS_ALL ? "no verdict (counted as failed)" : "no verdict (left out)");
	else if (row < D_FAST)
		strbuf_addstr(out, labels[row]);
	else if (row < D_FAST_ROBUST)
		strbuf_addf(out, "fast_%g %%%s", metrics_p[row - D_FAST], metrics_p[row - D_FAST] == 1 ? " [95% CI]" : "");
	else if (row == D_FAST_ROBUST)
		strbuf_addstr(out, "fast_1_robust %");
	else
		strbuf_addstr(out, row == D_GEO_E ? "geomean vs eager [95% CI] (n)" : row == D_GEO_C ? "geomean vs compiled (n)"
				   : row == D_ATTEMPTS ? "attempts to first correct" : row == D_TOKENS ? "tokens to first correct"
				   : "cost (USD)");
}

static void detail_cell(struct strbuf *out, const struct metric_cell *c, int row)
{
	if (row == D_PROBLEMS)
		strbuf_addf(out, "%zu", c->problems);
	else if (row == D_MISSING)
		strbuf_addf(out, "%zu", c->missing);
	else if (row == D_UNJUDGED)
		strbuf_addf(out, "%zu", c->unjudged);
	else if (row == D_FLAGGED)
		num(out, c->flagged_pct, "%.1f", "");
	else if (row == D_COMPILED)
		num(out, c->compiled_pct, "%.1f", "");
	else if (row == D_CORRECT)
		with_ci(out, c->correct_pct, &c->correct_ci, "%.1f", "");
	else if (row == D_CORRECT_ROBUST)
		num(out, c->correct_robust_pct, "%.1f", "");
	else if (row == D_HACK)
		num(out, c->hack_pct, "%.1f", "");
	else if (row < D_FAST_ROBUST && metrics_p[row - D_FAST] == 1)
		with_ci(out, c->fast_pct[row - D_FAST], &c->fast1_ci, "%.1f", "");
	else if (row < D_FAST_ROBUST)
		num(out, c->fast_pct[row - D_FAST], "%.1f", "");
	else if (row == D_FAST_ROBUST)
		num(out, c->fast_robust_pct[3], "%.1f", "");
	else if (row == D_GEO_E || row == D_GEO_C) {
		if (row == D_GEO_E)
			with_ci(out, c->geomean_eager, &c->geomean_eager_ci, "%.3f", "x");
		else
			num(out, c->geomean_compiled, "%.3f", "x");
		strbuf_addf(out, " (%zu)", row == D_GEO_E ? c->geomean_eager_n : c->geomean_compiled_n);
	} else if (row == D_ATTEMPTS)
		num(out, c->attempts_to_correct, "%.2f", "");
	else if (row == D_TOKENS)
		num(out, c->tokens_to_correct, "%.0f", "");
	else
		num(out, c->cost_usd, "%.4f", "");
}

void metrics_summary_table(const struct metrics *m, struct table *t)
{
	int cols[METRICS_LEVELS + 1], ncols, best = metrics_best_agent(m);
	columns(m, cols, &ncols);
	header(t, "agent", cols, ncols);
	for (size_t a = 0; a < m->nagents; a++) {
		table_text(t, m->agents[a].name);
		for (int i = 0; i < ncols; i++) {
			const struct metric_cell *c = &m->agents[a].cells[cols[i]];
			struct strbuf cell = STRBUF_INIT;
			if (c->problems) {
				/* each number with its interval: a point alone invites ranking agents by noise */
				with_ci(&cell, c->correct_pct, &c->correct_ci, "%.1f", "");
				strbuf_addstr(&cell, " / ");
				with_ci(&cell, c->fast_pct[3], &c->fast1_ci, "%.1f", "");
				strbuf_addstr(&cell, " / ");
				with_ci(&cell, c->geomean_eager, &c->geomean_eager_ci, "%.3f", "x");
				if (!cols[i] && (int)a == best) /* faster than every other agent by its pair's interval */
					strbuf_addstr(&cell, " (best)");
				if (c->flagged) /* in correct %, in nothing after it */
					strbuf_addf(&cell, " (%zu flagged)", c->flagged);
			} else {
				strbuf_addch(&cell, '-');
			}
			table_cell(t, cell.buf);
			strbuf_release(&cell);
		}
	}
	for (size_t u = 0; u < m->nunavailable; u++) {
		table_text(t, m->unavailable[u].agent);
		for (int i = 0; i < ncols; i++)
			table_cell(t, "unavailable");
	}
}

void metrics_unavailable_note(const struct metrics *m, size_t u, struct strbuf *out)
{
	strbuf_addf(out, "Unavailable in this run: %s. Its samples ended without attempts, so it has no numbers "
		    "(not 0%%).", m->unavailable[u].reason);
}

void metrics_detail_table(const struct metrics *m, size_t a, struct table *t)
{
	int cols[METRICS_LEVELS + 1], ncols;
	columns(m, cols, &ncols);
	header(t, "metric", cols, ncols);
	for (int row = 0; row < D_ROWS; row++) {
		struct strbuf cell = STRBUF_INIT;
		detail_label(m, &cell, row);
		table_cell(t, cell.buf);
		for (int i = 0; i < ncols; i++) {
			const struct metric_cell *c = &m->agents[a].cells[cols[i]];
			strbuf_reset(&cell);
			if (c->problems || (row == D_MISSING && c->missing) || (row == D_UNJUDGED && c->unjudged))
				detail_cell(&cell, c, row);
			else
				strbuf_addch(&cell, '-');
			table_cell(t, cell.buf);
		}
		strbuf_release(&cell);
	}
}

void metrics_intervals_note(struct strbuf *out)
{
	strbuf_addf(out, "Intervals: percentile bootstrap over problems, %d resamples, seed %u; fast_1 and the "
		    "geometric means also draw each problem's speedup from its speed interval. n/a: no data "
		    "(docs/metrics.md).", METRICS_RESAMPLES, METRICS_SEED);
}

typedef void (*name_fn)(struct strbuf *out, const char *s);
static void repeats_note(const struct metrics *m, struct strbuf *out, name_fn name);

/* The scope note; agent names in it written by name (NULL: as they are). */
static void scope_note(const struct metrics *m, struct strbuf *out, name_fn name)
{
	strbuf_addf(out, "Each problem is represented by %s (--by %s); ",
		    m->by == METRICS_BEST ? "the best candidate of any sample" : "the best attempt of its first sample",
		    metrics_by_name(m->by));
	if (m->denominator == METRICS_ALL)
		strbuf_addstr(out, "rates are over every problem of each agent's run, a problem without a verdict counting "
				   "as a failure (--denominator all).");
	else
		strbuf_addstr(out, "rates are over the problems each agent has verdicts for; problems without one are left "
				   "out (--denominator judged).");
	strbuf_addstr(out, " fast_p and the geometric means count clean passes only: a pass with a hack finding "
			   "(flagged) counts as correct and nothing more. ");
	repeats_note(m, out, name);
}

void metrics_scope_note(const struct metrics *m, struct strbuf *out)
{
	scope_note(m, out, NULL);
}

void metrics_repeats_note(const struct metrics *m, struct strbuf *out)
{
	repeats_note(m, out, NULL);
}

static void repeats_note(const struct metrics *m, struct strbuf *out, name_fn name)
{
	size_t repeated = 0;
	for (size_t a = 0; a < m->nagents; a++)
		repeated += m->agents[a].cells[0].repeated;
	strbuf_addstr(out, "Speed intervals (fast_1, the geometric means and the pairs' ratios) cover each verdict's own "
			   "timing interval");
	if (!repeated) {
		strbuf_addstr(out, " over one evaluation only: no repeated evaluation is stored (--repeats K judges each "
				   "problem's candidate K more times and widens them by the spread between evaluations).");
		return;
	}
	strbuf_addstr(out, " and the spread between repeated evaluations of the same candidate:");
	for (size_t a = 0, shown = 0; a < m->nagents; a++) {
		const struct metric_cell *c = &m->agents[a].cells[0];
		if (!c->timed)
			continue;
		strbuf_addstr(out, shown++ ? "; " : " ");
		if (name)
			name(out, m->agents[a].name);
		else
			strbuf_addstr(out, m->agents[a].name);
		strbuf_addstr(out, ": ");
		if (c->repeated)
			strbuf_addf(out, "%zu repeats over %zu of its %zu timed problems", c->repeats, c->repeated, c->timed);
		else
			strbuf_addf(out, "none of its %zu timed problems repeated", c->timed);
		if (c->repeated && c->repeated < c->timed)
			strbuf_addf(out, " (the other %zu over one evaluation only)", c->timed - c->repeated);
		if (c->repeats_failed)
			strbuf_addf(out, ", and %zu repeat%s of its passes did not pass", c->repeats_failed,
				    c->repeats_failed == 1 ? "" : "s");
	}
	strbuf_addstr(out, " (docs/metrics.md, \"Repeated evaluations\").");
}

/* ---------- agents compared in pairs ---------- */

static void put_name(struct strbuf *out, const char *s, name_fn name)
{
	if (name)
		name(out, s);
	else
		strbuf_addstr(out, s);
}

/* "A<mid>B" with both names written by name. */
static void two_names(struct strbuf *out, const char *a, const char *mid, const char *b, name_fn name)
{
	put_name(out, a, name);
	strbuf_addstr(out, mid);
	put_name(out, b, name);
}

static void speed_clause(struct strbuf *out, const struct metric_pair *p, const char *a, const char *b, name_fn name)
{
	const struct metric_ci *ci = &p->speed_ci;
	enum metrics_outcome o = metrics_decide(ci, 1);
	if (o == METRICS_HIGHER || o == METRICS_LOWER) {
		two_names(out, a, o == METRICS_HIGHER ? " is faster than " : " is slower than ", b, name);
		strbuf_addf(out, " on these %zu problems: %.3fx [%.3f, %.3f]", p->timed, p->speed_ratio, ci->lo, ci->hi);
	} else if (o == METRICS_NO_DIFFERENCE) {
		strbuf_addstr(out, "no speed difference this data can show between ");
		two_names(out, a, " and ", b, name);
		strbuf_addf(out, " (%zu problems: %.3fx [%.3f, %.3f])", p->timed, p->speed_ratio, ci->lo, ci->hi);
	} else if (o == METRICS_TOO_LITTLE) {
		strbuf_addstr(out, "too little data to compare the speed of ");
		two_names(out, a, " and ", b, name);
		strbuf_addf(out, " (%zu problem%s both pass cleanly with a speedup; %d are needed)", p->timed,
			    p->timed == 1 ? "" : "s", METRICS_PAIR_MIN);
	}
}

/* The words of a rate's clause: its name, and what a higher or lower rate of the first agent means. */
struct rate_words {
	const char *rate, *more, *fewer;
};

static void rate_clause(struct strbuf *out, const struct metric_pair *p, double diff, const struct metric_ci *ci,
			const struct rate_words *w, const char *a, const char *b, name_fn name)
{
	enum metrics_outcome o = metrics_decide(ci, 0);
	if (o == METRICS_HIGHER || o == METRICS_LOWER) {
		two_names(out, a, o == METRICS_HIGHER ? w->more : w->fewer, b, name);
		strbuf_addf(out, ": %+.1f points [%+.1f, %+.1f]", diff, ci->lo, ci->hi);
	} else if (o == METRICS_NO_DIFFERENCE) {
		strbuf_addf(out, "no %s difference this data can show (%+.1f points [%+.1f, %+.1f])", w->rate, diff, ci->lo,
			    ci->hi);
	} else {
		strbuf_addf(out, "too little data to compare %s (%zu problem%s in common; %d are needed)", w->rate,
			    p->problems, p->problems == 1 ? "" : "s", METRICS_PAIR_MIN);
	}
}

void metrics_pair_sentence(const struct metrics *m, size_t i, struct strbuf *out, name_fn name)
{
	static const struct rate_words correct = { "correct %", " solves more problems than ", " solves fewer problems than " };
	static const struct rate_words fast = { "fast_1 %", " is faster than eager on more problems than ",
						" is faster than eager on fewer problems than " };
	const struct metric_pair *p = &m->pairs[i];
	const char *a = m->agents[p->a].name, *b = m->agents[p->b].name;
	two_names(out, a, " vs ", b, name);
	if (!p->problems) {
		strbuf_addstr(out, ": no problem in common, nothing to compare.");
		return;
	}
	strbuf_addf(out, " (%zu problem%s in common, %zu of them clean timed passes of both): ", p->problems,
		    p->problems == 1 ? "" : "s", p->timed);
	speed_clause(out, p, a, b, name);
	strbuf_addstr(out, "; ");
	rate_clause(out, p, p->correct_diff, &p->correct_ci, &correct, a, b, name);
	strbuf_addstr(out, "; ");
	rate_clause(out, p, p->fast1_diff, &p->fast1_ci, &fast, a, b, name);
	strbuf_addch(out, '.');
}

void metrics_pairs_note(struct strbuf *out)
{
	strbuf_addf(out, "Each pair of agents over the problems both have, by their representatives: the speed ratio is "
		    "the geometric mean of the first agent's speedup vs eager over the second's, on the problems both pass "
		    "cleanly with a speedup; the correct %% and fast_1 %% differences are the first agent's rate less the "
		    "second's over every problem in common, in points (a problem only one of them solves counts there, "
		    "not in the ratio). [lo, hi]: 95%% percentile bootstrap interval over those problems, paired (%d "
		    "resamples, seed %u), each speedup in the ratio and fast_1 %% drawn from its speed interval (its verdict's "
		    "own and the spread between repeated evaluations, where stored). A difference is stated only when its interval leaves out none (1x, 0 points); "
		    "an interval needs %d problems. \"(best)\" in the results table marks the agent with the highest overall "
		    "geometric mean only when it is faster than every other agent by this rule; otherwise no agent is "
		    "marked.", METRICS_RESAMPLES, METRICS_SEED, METRICS_PAIR_MIN);
}

/* ---------- StitchCUDA's protocol ---------- */

static int any_reward(const struct metrics *m)
{
	for (size_t a = 0; a < m->nagents; a++)
		if (m->agents[a].cells[0].stitchcuda.rewarded)
			return 1;
	return 0;
}

/* "60.0% (3/5)": the paper's counts beside the rate. */
static void rate(struct strbuf *out, size_t k, size_t n)
{
	strbuf_addf(out, "%.1f%% (%zu/%zu)", n ? 100.0 * (double)k / (double)n : 0.0, k, n);
}

static void stitchcuda_row(struct table *t, const char *agent, int level, const struct metric_cell *c, int reward)
{
	const struct metric_stitchcuda *sc = &c->stitchcuda;
	struct strbuf cell = STRBUF_INIT;
	table_text(t, agent);
	if (level)
		table_cellf(t, "L%d", level);
	else
		table_cell(t, "all");
	rate(&cell, c->correct, c->problems);
	table_cell(t, cell.buf);
	strbuf_reset(&cell);
	num(&cell, sc->mean_speedup, "%.3f", "x");
	table_cell(t, cell.buf);
	strbuf_reset(&cell);
	num(&cell, sc->mean_speedup_passes, "%.3f", "x");
	strbuf_addf(&cell, " (%zu)", sc->timed_passes);
	table_cell(t, cell.buf);
	strbuf_reset(&cell);
	rate(&cell, sc->fast1, c->problems);
	table_cell(t, cell.buf);
	strbuf_reset(&cell);
	rate(&cell, c->flagged, c->problems);
	table_cell(t, cell.buf);
	if (reward) {
		strbuf_reset(&cell);
		num(&cell, sc->mean_reward, "%.3f", "");
		strbuf_addf(&cell, " (%zu)", sc->rewarded);
		table_cell(t, cell.buf);
	}
	strbuf_release(&cell);
}

void metrics_stitchcuda_table(const struct metrics *m, struct table *t)
{
	static const char *const head[] = { "agent", "level", "success", "average speedup vs eager",
					    "average over timed passes (n)", "Fast1", "partial hacks", "mean reward (n)" };
	int cols[METRICS_LEVELS + 1], ncols, reward = any_reward(m);
	size_t width = TABLE_COLS(head) - !reward; /* the reward column only where a verdict has one */
	columns(m, cols, &ncols);
	table_init(t, width);
	table_head(t, head, width);
	for (size_t a = 0; a < m->nagents; a++)
		for (int i = 0; i < ncols; i++)
			if (m->agents[a].cells[cols[i]].problems)
				stitchcuda_row(t, m->agents[a].name, cols[i], &m->agents[a].cells[cols[i]], reward);
	for (size_t u = 0; u < m->nunavailable; u++) {
		table_text(t, m->unavailable[u].agent);
		table_cell(t, "all");
		for (size_t k = 2; k < width; k++)
			table_cell(t, "unavailable");
	}
}

void metrics_stitchcuda_note(const struct metrics *m, struct strbuf *out)
{
	strbuf_addstr(out, "StitchCUDA's protocol, over the same problems and representatives: success = passes / "
			   "problems; average speedup = the mean over every problem of its representative's speedup vs "
			   "eager (stitchbench's paired median), a problem without a timed pass counting 0, and beside it "
			   "the mean over the timed passes alone (n); Fast1 = passes faster than eager / problems; partial "
			   "hacks = passes with a hack finding / problems. Here a pass with a hack finding counts as correct "
			   "and for speed, as StitchCUDA counts partially hacked solutions and reports them apart; "
			   "stitchbench's own fast_p and geometric means count clean passes only.");
	if (any_reward(m))
		strbuf_addstr(out, " mean reward: the verdicts' StitchCUDA reward (docs/verdict.md) over the "
				   "representatives that have one (n): a candidate the rubric judge did not score has none.");
}

void metrics_noise_note(const struct metrics *m, struct strbuf *out)
{
	for (size_t a = 0; a < m->nagents; a++) {
		const struct metric_cell *c = &m->agents[a].cells[0];
		if (!c->noisy)
			continue;
		strbuf_addf(out, "%sWarning: %zu of the %zu timed problems of %s were timed on a busy machine (other "
			    "processes, steal, or a reference spreading by more than 10%%: timing.noise); their speedups "
			    "and intervals may be off by more than the intervals say.", out->len ? " " : "", c->noisy, c->timed,
			    m->agents[a].name);
	}
}

#define REFFAIL_MESSAGE_MAX 120 /* characters of a reference's error shown in the line */

void metrics_unjudged_note(const struct metrics *m, struct strbuf *out)
{
	size_t nprob = 0;
	for (size_t i = 0; i < m->nunjudged; i++) {
		size_t j = 0;
		while (j < i && strcmp(m->unjudged[j].problem, m->unjudged[i].problem))
			j++;
		nprob += j == i;
	}
	if (!nprob)
		return;
	strbuf_addf(out, "%zu problem%s could not be judged: %s reference failed, or the machine could not run the "
		    "candidate; the harness's, the problem's or the machine's failure, not the agent's, "
		    "so %s left out of the rates of the agents without a verdict for %s:", nprob,
		    nprob == 1 ? "" : "s", nprob == 1 ? "its" : "their", nprob == 1 ? "it is" : "they are",
		    nprob == 1 ? "it" : "them");
	for (size_t i = 0, shown = 0; i < m->nunjudged; i++) {
		size_t j = 0;
		while (j < i && strcmp(m->unjudged[j].problem, m->unjudged[i].problem))
			j++;
		if (j < i)
			continue;
		strbuf_addf(out, "%s %s (", shown++ ? ";" : "", m->unjudged[i].problem);
		for (size_t k = i, first = 1; k < m->nunjudged; k++)
			if (!strcmp(m->unjudged[k].problem, m->unjudged[i].problem)) {
				strbuf_addf(out, "%s%s", first ? "" : ", ", m->unjudged[k].agent);
				first = 0;
			}
		const char *msg = m->unjudged[i].message ? m->unjudged[i].message : "";
		size_t len = strcspn(msg, "\n");
		if (len)
			strbuf_addf(out, ": %.*s%s", (int)(len > REFFAIL_MESSAGE_MAX ? REFFAIL_MESSAGE_MAX : len), msg,
				    len > REFFAIL_MESSAGE_MAX || msg[len] ? "..." : "");
		strbuf_addch(out, ')');
	}
	strbuf_addch(out, '.');
}

/* "## Agents compared in pairs": the note, then one line per pair; nothing with fewer than two agents. */
static void pairs_markdown(const struct metrics *m, struct strbuf *out)
{
	if (!m->npairs)
		return;
	strbuf_addstr(out, "\n## Agents compared in pairs\n\n");
	metrics_pairs_note(out);
	strbuf_addstr(out, "\n\n");
	for (size_t i = 0; i < m->npairs; i++) {
		strbuf_addstr(out, "- ");
		metrics_pair_sentence(m, i, out, md_escape);
		strbuf_addch(out, '\n');
	}
}

void metrics_table(const struct metrics *m, struct strbuf *out)
{
	struct table t;
	strbuf_addstr(out, "## correct % / fast_1 % / geometric-mean speedup vs eager, each [95% interval]\n\n");
	scope_note(m, out, md_escape);
	strbuf_addstr(out, "\n\n");
	struct strbuf unjudged = STRBUF_INIT;
	metrics_unjudged_note(m, &unjudged);
	if (unjudged.len) {
		md_escape(out, unjudged.buf);
		strbuf_addstr(out, "\n\n");
	}
	strbuf_release(&unjudged);
	struct strbuf noise = STRBUF_INIT;
	metrics_noise_note(m, &noise);
	if (noise.len) {
		md_escape(out, noise.buf);
		strbuf_addstr(out, "\n\n");
	}
	strbuf_release(&noise);
	metrics_summary_table(m, &t);
	table_markdown(&t, out);
	table_release(&t);
	pairs_markdown(m, out);
	if (m->protocol == METRICS_PROTOCOL_STITCHCUDA && (m->nagents || m->nunavailable)) {
		strbuf_addstr(out, "\n## StitchCUDA's protocol: success, average speedup, Fast1, partial hacks\n\n");
		metrics_stitchcuda_note(m, out);
		strbuf_addstr(out, "\n\n");
		metrics_stitchcuda_table(m, &t);
		table_markdown(&t, out);
		table_release(&t);
	}
	for (size_t a = 0; a < m->nagents; a++) {
		strbuf_addstr(out, "\n### ");
		md_escape(out, m->agents[a].name);
		strbuf_addstr(out, "\n\n");
		metrics_detail_table(m, a, &t);
		table_markdown(&t, out);
		table_release(&t);
	}
	for (size_t u = 0; u < m->nunavailable; u++) {
		strbuf_addstr(out, "\n### ");
		md_escape(out, m->unavailable[u].agent);
		strbuf_addstr(out, "\n\n");
		struct strbuf note = STRBUF_INIT;
		metrics_unavailable_note(m, u, &note);
		md_escape(out, note.buf);
		strbuf_addch(out, '\n');
		strbuf_release(&note);
	}
	strbuf_addch(out, '\n');
	metrics_intervals_note(out);
	strbuf_addch(out, '\n');
}

/* ---------- JSON ---------- */

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *jci(const struct metric_ci *ci)
{
	return isnan(ci->lo) ? json_null() : json_pack("[o, o]", jnum(ci->lo), jnum(ci->hi));
}

static json_t *stitchcuda_json(const struct metric_cell *c)
{
	const struct metric_stitchcuda *sc = &c->stitchcuda;
	json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:I, s:I, s:o, s:I, s:o}", "correct", (json_int_t)c->correct,
			      "success_pct", jnum(c->correct_pct), "mean_speedup_eager", jnum(sc->mean_speedup),
			      "mean_speedup_eager_timed_passes", jnum(sc->mean_speedup_passes), "timed_passes",
			      (json_int_t)sc->timed_passes, "fast_1", (json_int_t)sc->fast1, "fast_1_pct", jnum(sc->fast1_pct),
			      "partial_hacks", (json_int_t)c->flagged, "partial_hack_pct", jnum(c->flagged_pct));
	json_object_set_new(o, "mean_reward", jnum(sc->mean_reward));
	json_object_set_new(o, "rewarded", json_integer((json_int_t)sc->rewarded));
	return o;
}

static json_t *cell_json(const struct metric_cell *c, enum metrics_protocol protocol)
{
	json_t *fast = json_object(), *fast_robust = json_object();
	for (int k = 0; k < METRICS_NP; k++) {
		char key[16];
		snprintf(key, sizeof(key), "%g", metrics_p[k]);
		json_object_set_new(fast, key, jnum(c->fast_pct[k]));
		json_object_set_new(fast_robust, key, jnum(c->fast_robust_pct[k]));
	}
	json_t *o = json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o}", "problems",
			      (json_int_t)c->problems, "problems_without_verdict", (json_int_t)c->missing,
			      "problems_reference_failed", (json_int_t)c->unjudged, "compiled_pct", jnum(c->compiled_pct),
			      "correct_pct", jnum(c->correct_pct), "correct_pct_ci95", jci(&c->correct_ci), "flagged",
			      (json_int_t)c->flagged, "flagged_pct", jnum(c->flagged_pct), "hack_pct", jnum(c->hack_pct),
			      "fast_pct", fast, "fast_1_pct_ci95", jci(&c->fast1_ci));
	json_object_set_new(o, "timed", json_integer((json_int_t)c->timed));
	json_object_set_new(o, "timed_noisy", json_integer((json_int_t)c->noisy));
	json_object_set_new(o, "timed_repeated", json_integer((json_int_t)c->repeated));
	json_object_set_new(o, "repeats", json_integer((json_int_t)c->repeats));
	json_object_set_new(o, "repeats_failed", json_integer((json_int_t)c->repeats_failed));
	json_object_set_new(o, "correct_robust_pct", jnum(c->correct_robust_pct));
	json_object_set_new(o, "fast_robust_pct", fast_robust);
	json_object_set_new(o, "geomean_speedup_eager", jnum(c->geomean_eager));
	json_object_set_new(o, "geomean_speedup_eager_n", json_integer((json_int_t)c->geomean_eager_n));
	json_object_set_new(o, "geomean_speedup_eager_ci95", jci(&c->geomean_eager_ci));
	json_object_set_new(o, "geomean_speedup_compiled", jnum(c->geomean_compiled));
	json_object_set_new(o, "geomean_speedup_compiled_n", json_integer((json_int_t)c->geomean_compiled_n));
	json_object_set_new(o, "attempts_to_first_correct", jnum(c->attempts_to_correct));
	json_object_set_new(o, "tokens_to_first_correct", jnum(c->tokens_to_correct));
	json_object_set_new(o, "cost_usd", jnum(c->cost_usd));
	if (protocol == METRICS_PROTOCOL_STITCHCUDA)
		json_object_set_new(o, "stitchcuda", stitchcuda_json(c));
	return o;
}

/* An outcome as a word: `higher` and `lower` are the first agent's ("faster", "more", ...). */
static const char *outcome_word(enum metrics_outcome o, const char *higher, const char *lower)
{
	return o == METRICS_HIGHER ? higher : o == METRICS_LOWER ? lower
		: o == METRICS_NO_DIFFERENCE ? "no difference" : "too little data";
}

static json_t *pair_json(const struct metrics *m, size_t i)
{
	const struct metric_pair *p = &m->pairs[i];
	struct strbuf sentence = STRBUF_INIT;
	metrics_pair_sentence(m, i, &sentence, NULL);
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:o, s:s}", "a", m->agents[p->a].name, "b",
			      m->agents[p->b].name, "problems", (json_int_t)p->problems, "timed", (json_int_t)p->timed,
			      "speed_ratio", jnum(p->speed_ratio), "speed_ratio_ci95", jci(&p->speed_ci), "speed",
			      outcome_word(metrics_decide(&p->speed_ci, 1), "faster", "slower"));
	json_object_set_new(o, "correct_pct_diff", jnum(p->correct_diff));
	json_object_set_new(o, "correct_pct_diff_ci95", jci(&p->correct_ci));
	json_object_set_new(o, "correct", json_string(outcome_word(metrics_decide(&p->correct_ci, 0), "more", "fewer")));
	json_object_set_new(o, "fast_1_pct_diff", jnum(p->fast1_diff));
	json_object_set_new(o, "fast_1_pct_diff_ci95", jci(&p->fast1_ci));
	json_object_set_new(o, "fast_1", json_string(outcome_word(metrics_decide(&p->fast1_ci, 0), "more", "fewer")));
	json_object_set_new(o, "repeats", json_integer((json_int_t)p->repeats));
	json_object_set_new(o, "sentence", json_string(sentence.buf));
	strbuf_release(&sentence);
	return o;
}

json_t *metrics_json(const struct metrics *m)
{
	json_t *agents = json_array(), *p = json_array();
	for (int k = 0; k < METRICS_NP; k++)
		json_array_append_new(p, json_real(metrics_p[k]));
	for (size_t a = 0; a < m->nagents; a++) {
		json_t *levels = json_object();
		for (int l = 1; l <= METRICS_LEVELS + 1; l++) {
			int level = l % (METRICS_LEVELS + 1); /* 1..4, then 0 = all */
			char key[8] = "all";
			if (level)
				snprintf(key, sizeof(key), "%d", level);
			if (m->agents[a].cells[level].problems)
				json_object_set_new(levels, key, cell_json(&m->agents[a].cells[level], m->protocol));
		}
		json_array_append_new(agents, json_pack("{s:s, s:o}", "agent", m->agents[a].name, "levels", levels));
	}
	for (size_t u = 0; u < m->nunavailable; u++) /* no levels: no numbers, which is not 0% */
		json_array_append_new(agents, json_pack("{s:s, s:s, s:{}}", "agent", m->unavailable[u].agent, "unavailable",
							m->unavailable[u].reason, "levels"));
	json_t *unjudged = json_array();
	for (size_t i = 0; i < m->nunjudged; i++)
		json_array_append_new(unjudged, json_pack("{s:s, s:s, s:i, s:s}", "agent", m->unjudged[i].agent, "problem",
							  m->unjudged[i].problem, "sample", m->unjudged[i].sample,
							  "message", m->unjudged[i].message ? m->unjudged[i].message : ""));
	json_t *pairs = json_array();
	for (size_t i = 0; i < m->npairs; i++)
		json_array_append_new(pairs, pair_json(m, i));
	int best = metrics_best_agent(m);
	json_t *o = json_pack("{s:s, s:s, s:s, s:{s:i, s:I, s:f}, s:o, s:o, s:o}", "by", metrics_by_name(m->by),
			      "denominator", metrics_denominator_name(m->denominator), "protocol",
			      metrics_protocol_name(m->protocol), "bootstrap", "resamples", METRICS_RESAMPLES, "seed",
			      (json_int_t)METRICS_SEED, "level", 0.95, "p", p, "agents", agents, "reference_failures", unjudged);
	json_object_set_new(o, "pairs", pairs);
	size_t timed = 0, repeated = 0, repeats = 0, failed = 0;
	for (size_t a = 0; a < m->nagents; a++) {
		timed += m->agents[a].cells[0].timed;
		repeated += m->agents[a].cells[0].repeated;
		repeats += m->agents[a].cells[0].repeats;
		failed += m->agents[a].cells[0].repeats_failed;
	}
	json_object_set_new(o, "repeats", json_pack("{s:s, s:I, s:I, s:I, s:I}", "speed_intervals",
						     repeated ? "own interval and repeats" : "one evaluation",
						     "timed", (json_int_t)timed, "timed_repeated", (json_int_t)repeated,
						     "repeats", (json_int_t)repeats, "repeats_failed", (json_int_t)failed));
	json_object_set_new(o, "best", best >= 0 ? json_string(m->agents[best].name) : json_null());
	return o;
}
