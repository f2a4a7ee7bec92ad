/* regress.c - comparing two runs for CI: each (agent, problem, sample) reduced to its best attempt, then
 * clean-pass flips and speedup ratios judged against a threshold that grows with the timing noise both
 * verdicts recorded and with the spread between evaluations of one candidate, so that noise is not called
 * a regression and a real slowdown is; the same candidate on both sides is a re-measurement (docs/report.md). */
#include "regress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "table.h"

/* ---------- reading ---------- */

static double num_at(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

double regress_noise_of(json_t *verdict, const char **from)
{
	json_t *speedup = json_object_get(verdict, "speedup"), *ci = json_object_get(speedup, "vs_eager_ci95");
	*from = NULL;
	if (json_is_array(ci) && json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
	    json_is_number(json_array_get(ci, 1))) {
		double lo = json_number_value(json_array_get(ci, 0)), hi = json_number_value(json_array_get(ci, 1));
		if (lo > 0 && hi >= lo && isfinite(hi)) {
			*from = "ci95";
			return (log(hi) - log(lo)) / 2;
		}
	}
	json_t *ratio = json_object_get(json_object_get(verdict, "timing"), "ratio_eager");
	double p25 = num_at(ratio, "p25"), p75 = num_at(ratio, "p75"), n = num_at(ratio, "n");
	if (p25 > 0 && p75 >= p25 && isfinite(p75) && n >= 2) {
		*from = "iqr";
		double sigma = (log(p75) - log(p25)) / 1.349;     /* IQR of a normal = 1.349 sigma */
		return 1.96 * 1.2533 * sigma / sqrt(n);             /* 95% half-width of a median */
	}
	return NAN;
}

double regress_threshold(double floor, double noise_base, double noise_new, double spread)
{
	double nb = isfinite(noise_base) ? noise_base : 0, nn = isfinite(noise_new) ? noise_new : 0;
	double t = sqrt(nb * nb + nn * nn);
	/* the spread is measured on pairs of whole evaluations, so it already holds their own interval's noise:
	 * the larger of the two is taken, not their sum */
	return fmax(floor, fmax(expm1(t), isfinite(spread) ? expm1(spread) : 0));
}

/* One correct timed evaluation: which candidate, and its ln speedup. */
struct evaluation {
	const char *problem, *sha256;
	double ln_speedup;
};

static int cmp_evaluation(const void *x, const void *y)
{
	const struct evaluation *a = x, *b = y;
	int c = strcmp(a->problem, b->problem);
	return c ? c : strcmp(a->sha256, b->sha256);
}

double regress_spread(const struct regress_run *const *runs, size_t n, size_t *groups, size_t *evals)
{
	size_t total = 0, k = 0, df = 0;
	for (size_t i = 0; i < n; i++)
		total += runs[i]->mi.nrows;
	struct evaluation *v = xcalloc(total ? total : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < runs[i]->mi.nrows; j++) {
			const struct metric_row *r = &runs[i]->mi.rows[j];
			const char *sha = runs[i]->noise[j].sha256;
			if (r->correct && isfinite(r->speedup_eager) && r->speedup_eager > 0 && sha && *sha)
				v[k++] = (struct evaluation){ r->problem, sha, log(r->speedup_eager) };
		}
	qsort(v, k, sizeof(*v), cmp_evaluation);
	double ss = 0;
	*groups = *evals = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		double sum = 0;
		while (j < k && !cmp_evaluation(&v[i], &v[j]))
			sum += v[j++].ln_speedup;
		if (j - i >= 2) {
			double mean = sum / (double)(j - i);
			for (size_t m = i; m < j; m++)
				ss += (v[m].ln_speedup - mean) * (v[m].ln_speedup - mean);
			df += j - i - 1;
			(*groups)++;
			*evals += j - i;
		}
		i = j;
	}
	free(v);
	/* the ratio of two evaluations has variance 2 s^2 */
	return df ? 1.96 * sqrt(2 * ss / (double)df) : NAN;
}

static int on_row(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err)
{
	struct regress_run *r = arg;
	json_error_t je;
	json_t *j = json_loads(v->json, 0, &je);
	if (!j)
		return sb_error_set(err, SB_EINPUT, "%s: the verdict of %s %s sample %d attempt %d is not JSON (%s); the "
				    "store is damaged", r->name, v->agent, v->problem, v->sample, v->attempt, je.text);
	if (index >= r->nnoise) {
		size_t n = index + 1 > 2 * r->nnoise ? index + 1 : 2 * r->nnoise;
		r->noise = xrealloc(r->noise, n * sizeof(*r->noise));
		r->nnoise = n;
	}
	strvec_push(&r->strings, v->status);
	r->noise[index].status = r->strings.v[r->strings.nr - 1];
	r->noise[index].sha256 = NULL;
	if (v->candidate_sha256 && *v->candidate_sha256) {
		strvec_push(&r->strings, v->candidate_sha256);
		r->noise[index].sha256 = r->strings.v[r->strings.nr - 1];
	}
	r->noise[index].noise = regress_noise_of(j, &r->noise[index].from);
	json_decref(j);
	return 0;
}

int regress_run_load(struct regress_run *r, const char *name, struct store *s, struct sb_error *err)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->mi.on_row = on_row;
	r->mi.on_row_arg = r;
	return metrics_load(s, NULL, &r->mi, err);
}

void regress_run_release(struct regress_run *r)
{
	metric_input_release(&r->mi);
	free(r->noise);
	strvec_clear(&r->strings);
	memset(r, 0, sizeof(*r));
}

/* ---------- comparing ---------- */

/* Each sample's best attempt, in metrics_row_cmp order. */
static size_t best_of_samples(const struct regress_run *r, const struct metric_row ***out)
{
	size_t n = r->mi.nrows, k = 0;
	const struct metric_row **v = xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &r->mi.rows[i];
	qsort(v, n, sizeof(*v), metrics_row_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1]->agent, v[i]->agent) && !strcmp(v[k - 1]->problem, v[i]->problem) &&
		    v[k - 1]->sample == v[i]->sample) {
			if (metrics_better(v[i], v[k - 1]))
				v[k - 1] = v[i];
		} else {
			v[k++] = v[i];
		}
	}
	*out = v;
	return k;
}

static int key_cmp(const struct metric_row *a, const struct metric_row *b)
{
	struct metric_row x = *a, y = *b;
	x.attempt = y.attempt = 0;
	const struct metric_row *px = &x, *py = &y;
	return metrics_row_cmp(&px, &py);
}

static int timed(double s)
{
	return isfinite(s) && s > 0;
}

static int same_candidate(const struct regress_item *it)
{
	const char *a = it->base_n->sha256, *b = it->new_n->sha256;
	return a && b && !strcmp(a, b);
}

static void judge(struct regress_item *it, double floor, double spread)
{
	const struct metric_row *b = it->base, *n = it->new;
	it->ratio = it->threshold = NAN;
	if (!n)
		it->outcome = RG_ONLY_BASE;
	else if (!b)
		it->outcome = RG_ONLY_NEW;
	else if (same_candidate(it)) {
		/* the code did not change, so neither did the agent: what differs is the measurement */
		it->outcome = RG_REMEASURED;
		if (b->correct && n->correct && timed(b->speedup_eager) && timed(n->speedup_eager)) {
			it->ratio = n->speedup_eager / b->speedup_eager;
			it->threshold = regress_threshold(floor, it->base_n->noise, it->new_n->noise, spread);
		}
	} else if (metrics_clean(b) && !metrics_clean(n))
		it->outcome = RG_LOST;
	else if (!metrics_clean(b) && metrics_clean(n))
		it->outcome = RG_FIXED;
	else if (!metrics_clean(b)) /* a flagged speedup is no evidence of speed: not compared */
		it->outcome = n->correct ? RG_FLAGGED : RG_BOTH_FAIL;
	else if (!timed(b->speedup_eager) || !timed(n->speedup_eager))
		it->outcome = RG_NOT_TIMED;
	else {
		it->ratio = n->speedup_eager / b->speedup_eager;
		it->threshold = regress_threshold(floor, it->base_n->noise, it->new_n->noise, spread);
		double t = log1p(it->threshold), lr = log(it->ratio);
		it->outcome = lr < -t ? RG_SLOWER : lr > t ? RG_FASTER : RG_NOISE;
	}
}

int regress_compute(const struct regress_run *base, const struct regress_run *new, double floor, struct regress *out)
{
	const struct metric_row **bv, **nv;
	size_t nb = best_of_samples(base, &bv), nn = best_of_samples(new, &nv), i = 0, j = 0;
	double logsum = 0, re_logsum = 0;
	const struct regress_run *both[] = { base, new };
	memset(out, 0, sizeof(*out));
	out->floor = floor;
	out->spread = regress_spread(both, 2, &out->spread_groups, &out->spread_evals);
	out->items = xcalloc(nb + nn + 1, sizeof(*out->items));
	while (i < nb || j < nn) {
		int c = i == nb ? 1 : j == nn ? -1 : key_cmp(bv[i], nv[j]);
		struct regress_item *it = &out->items[out->n++];
		it->base = c <= 0 ? bv[i] : NULL;
		it->new = c >= 0 ? nv[j] : NULL;
		const struct metric_row *any = it->base ? it->base : it->new;
		it->agent = any->agent;
		it->problem = any->problem;
		it->sample = any->sample;
		it->base_n = it->base ? &base->noise[it->base - base->mi.rows] : NULL;
		it->new_n = it->new ? &new->noise[it->new - new->mi.rows] : NULL;
		judge(it, floor, out->spread);
		out->count[it->outcome]++;
		if (isfinite(it->ratio) && it->outcome == RG_REMEASURED) {
			re_logsum += log(it->ratio);
			out->remeasured_n++;
		} else if (isfinite(it->ratio)) {
			logsum += log(it->ratio);
			out->geomean_n++;
		}
		i += c <= 0;
		j += c >= 0;
	}
	out->geomean_ratio = out->geomean_n ? exp(logsum / (double)out->geomean_n) : NAN;
	out->remeasured_ratio = out->remeasured_n ? exp(re_logsum / (double)out->remeasured_n) : NAN;
	free(bv);
	free(nv);
	return 0;
}

void regress_release(struct regress *r)
{
	free(r->items);
	memset(r, 0, sizeof(*r));
}

/* ---------- Markdown ---------- */

static void side(struct strbuf *out, const struct metric_row *r, const struct regress_noise *n)
{
	if (!r) {
		strbuf_addch(out, '-');
		return;
	}
	strbuf_addstr(out, n->status);
	if (r->correct && timed(r->speedup_eager)) {
		strbuf_addf(out, " %.3fx", r->speedup_eager);
		if (isfinite(n->noise))
			strbuf_addf(out, " ±%.1f%%", 100 * (exp(n->noise) - 1));
	}
	if (r->correct && r->flagged)
		strbuf_addf(out, " flagged %s", r->hack_ids);
	strbuf_addf(out, " (attempt %d)", r->attempt);
}

static int flagged_pass(const struct metric_row *r)
{
	return r && r->correct && r->flagged;
}

/* An outcome in words, for the table of counts. */
static const char *outcome_name(enum regress_outcome o)
{
	switch (o) {
	case RG_LOST: return "correct → not correct or flagged";
	case RG_SLOWER: return "slower beyond the threshold";
	case RG_FIXED: return "not correct or flagged → correct";
	case RG_FASTER: return "faster beyond the threshold";
	case RG_FLAGGED: return "passes with a hack finding in NEW: not an improvement, speed not compared";
	case RG_REMEASURED: return "same candidate: re-measured";
	case RG_NOISE: return "within noise";
	case RG_NOT_TIMED: return "correct in both; not timed on one side";
	case RG_BOTH_FAIL: return "not correct in either";
	case RG_ONLY_BASE: return "only in BASE";
	case RG_ONLY_NEW: return "only in NEW";
	default: return "";
	}
}

/* One compared key's outcome in words, saying which side had a flagged pass where that decided it. */
static const char *why(const struct regress_item *it)
{
	int fb = flagged_pass(it->base), fn = flagged_pass(it->new);
	switch (it->outcome) {
	case RG_LOST: return fn ? "correct → flagged: no longer a clean pass" : "correct → not correct";
	case RG_FIXED: return fb ? "flagged → correct: a clean pass now" : "not correct → correct";
	case RG_REMEASURED:
		return it->base->correct != it->new->correct ? "same candidate, re-measured: correct on one side only"
		       : fb != fn			      ? "same candidate, re-measured: flagged on one side only"
							      : outcome_name(it->outcome);
	case RG_BOTH_FAIL: return fb ? "flagged in BASE, not correct in NEW" : outcome_name(it->outcome);
	default: return outcome_name(it->outcome);
	}
}

/* The rows whose outcome is one of want (terminated by RG_OUTCOMES). */
static void item_table(struct strbuf *out, const struct regress *r, const enum regress_outcome *want)
{
	struct table t;
	static const char *const head[] = { "agent", "problem", "sample", "BASE", "NEW", "NEW / BASE", "threshold",
					    "outcome" };
	table_init(&t, TABLE_COLS(head));
	table_head(&t, head, TABLE_COLS(head));
	for (size_t i = 0; i < r->n; i++) {
		const struct regress_item *it = &r->items[i];
		int keep = 0;
		for (const enum regress_outcome *w = want; *w != RG_OUTCOMES; w++)
			keep |= it->outcome == *w;
		if (!keep)
			continue;
		struct strbuf b = STRBUF_INIT, n = STRBUF_INIT;
		side(&b, it->base, it->base_n);
		side(&n, it->new, it->new_n);
		table_text(&t, it->agent);
		table_text(&t, it->problem);
		table_cellf(&t, "%d", it->sample);
		table_text(&t, b.buf);
		table_text(&t, n.buf);
		if (isfinite(it->ratio)) {
			table_cellf(&t, "%.3fx (%+.1f%%)", it->ratio, 100 * (it->ratio - 1));
			table_cellf(&t, "±%.1f%%", 100 * it->threshold);
		} else {
			table_cell(&t, "-");
			table_cell(&t, "-");
		}
		table_cell(&t, why(it));
		strbuf_release(&b);
		strbuf_release(&n);
	}
	table_markdown(&t, out);
	table_release(&t);
}

void regress_markdown(const struct regress *r, const struct regress_run *base, const struct regress_run *new,
		      const char *settings_diff, struct strbuf *out)
{
	size_t reg = regress_regressions(r);
	size_t imp = r->count[RG_FIXED] + r->count[RG_FASTER];
	size_t both = r->n - r->count[RG_ONLY_BASE] - r->count[RG_ONLY_NEW];
	strbuf_addstr(out, "## stitchbench compare\n\nBASE: ");
	md_escape(out, base->name);
	strbuf_addstr(out, "  \nNEW: ");
	md_escape(out, new->name);
	size_t flagged = 0, lost_to_flag = 0;
	for (size_t i = 0; i < r->n; i++) {
		flagged += flagged_pass(r->items[i].new);
		lost_to_flag += r->items[i].outcome == RG_LOST && flagged_pass(r->items[i].new);
	}
	if (reg) {
		strbuf_addf(out, "\n\n**%zu regression%s** (%zu correct → not correct, ", reg, reg == 1 ? "" : "s",
			    r->count[RG_LOST] - lost_to_flag);
		if (lost_to_flag)
			strbuf_addf(out, "%zu correct → flagged, ", lost_to_flag);
		strbuf_addf(out, "%zu slower beyond the threshold); %zu improvement%s.", r->count[RG_SLOWER], imp,
			    imp == 1 ? "" : "s");
	} else {
		strbuf_addf(out, "\n\n**No regressions** in %zu compared candidates; %zu improvement%s.", both, imp,
			    imp == 1 ? "" : "s");
	}
	if (flagged)
		strbuf_addf(out, " %zu candidate%s of NEW pass%s with a hack finding (flagged): never counted as an "
				 "improvement or compared for speed.", flagged, flagged == 1 ? "" : "s", flagged == 1 ? "es" : "");
	strbuf_addstr(out, "\n\n");

	struct table t;
	table_init(&t, 2);
	table_cell(&t, "outcome (agent, problem, sample: each sample's best attempt)");
	table_cell(&t, "count");
	for (int o = 0; o < RG_OUTCOMES; o++) {
		table_cell(&t, outcome_name((enum regress_outcome)o));
		table_cellf(&t, "%zu", r->count[o]);
	}
	table_markdown(&t, out);
	table_release(&t);
	if (r->geomean_n)
		strbuf_addf(out, "\nGeometric mean of NEW / BASE speedup vs eager over the %zu changed candidates correct and "
				 "timed in both: %.3fx.\n", r->geomean_n, r->geomean_ratio);
	if (r->count[RG_REMEASURED]) {
		strbuf_addf(out, "\n%zu candidate%s the same file in both runs (same sha256): measured again, never called "
				 "a change", r->count[RG_REMEASURED], r->count[RG_REMEASURED] == 1 ? " is" : "s are");
		if (r->remeasured_n)
			strbuf_addf(out, "; NEW / BASE over the %zu correct and timed in both: %.3fx on geometric mean",
				    r->remeasured_n, r->remeasured_ratio);
		strbuf_addstr(out, ".\n");
	}
	strbuf_addf(out, "\nA speedup change counts when NEW / BASE leaves [1/(1+t), 1+t], t = max(%.1f%%, the two "
			 "verdicts' 95%% speedup intervals combined: exp(sqrt(h_base² + h_new²)) - 1, h = half-width in "
			 "ln units, the spread between evaluations: exp(h_eval) - 1); docs/report.md.\n", 100 * r->floor);
	if (isfinite(r->spread))
		strbuf_addf(out, "\nThe spread between evaluations, from the %zu candidates evaluated more than once (%zu "
				 "verdicts, in either run or across them): h_eval = %.4f, ±%.1f%% for the ratio of two "
				 "evaluations.\n", r->spread_groups, r->spread_evals, r->spread, 100 * expm1(r->spread));
	else
		strbuf_addstr(out, "\nNo candidate was evaluated more than once, so the spread between evaluations is not "
				   "known and only the verdicts' own intervals count; a run that evaluates the same candidates "
				   "again (or the BASE candidates in NEW) measures it.\n");

	static const enum regress_outcome regressions[] = { RG_LOST, RG_SLOWER, RG_OUTCOMES };
	static const enum regress_outcome improvements[] = { RG_FIXED, RG_FASTER, RG_OUTCOMES };
	static const enum regress_outcome flagged_new[] = { RG_FLAGGED, RG_OUTCOMES };
	static const enum regress_outcome rest[] = { RG_NOISE, RG_REMEASURED, RG_NOT_TIMED, RG_BOTH_FAIL, RG_OUTCOMES };
	static const enum regress_outcome alone[] = { RG_ONLY_BASE, RG_ONLY_NEW, RG_OUTCOMES };
	if (reg) {
		strbuf_addstr(out, "\n### Regressions\n\n");
		item_table(out, r, regressions);
	}
	if (imp) {
		strbuf_addstr(out, "\n### Improvements\n\n");
		item_table(out, r, improvements);
	}
	if (r->count[RG_FLAGGED]) {
		strbuf_addstr(out, "\n### Flagged in NEW (not improvements)\n\n");
		item_table(out, r, flagged_new);
	}
	if (r->count[RG_NOISE] + r->count[RG_REMEASURED] + r->count[RG_NOT_TIMED] + r->count[RG_BOTH_FAIL]) {
		strbuf_addstr(out, "\n### Unchanged\n\n");
		item_table(out, r, rest);
	}
	if (r->count[RG_ONLY_BASE] + r->count[RG_ONLY_NEW]) {
		strbuf_addstr(out, "\n### Only in one run (not compared)\n\n");
		item_table(out, r, alone);
	}
	if (settings_diff && *settings_diff) {
		strbuf_addstr(out, "\n### Settings that differ\n\nThe runs were made with settings that change the numbers:\n\n");
		for (const char *p = settings_diff; *p;) {
			size_t len = strcspn(p, "\n");
			char *line = xstrndup(p, len);
			strbuf_addstr(out, "- ");
			md_escape(out, line);
			strbuf_addch(out, '\n');
			free(line);
			p += len + (p[len] == '\n');
		}
	}
}
