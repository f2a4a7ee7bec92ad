/* test_regress.c - `compare`'s rule on hand-computed cases: the noise of a verdict from its interval or its
 * quartiles, the threshold, flips both ways, a slowdown beyond and within the noise, best attempts, keys
 * in one run only, and passes with a hack finding on either side. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "report/regress.h"

static void noise_from_verdicts(void **state)
{
	(void)state;
	const char *from;
	/* the interval [1.47, 1.53]: half-width (ln 1.53 - ln 1.47) / 2 */
	json_t *v = json_pack("{s:{s:f, s:[f, f]}}", "speedup", "vs_eager", 1.5, "vs_eager_ci95", 1.47, 1.53);
	assert_true(fabs(regress_noise_of(v, &from) - (log(1.53) - log(1.47)) / 2) < 1e-12);
	assert_string_equal(from, "ci95");
	json_decref(v);
	/* no interval: the per-round ratios' quartiles, IQR/1.349 in ln units, 1.96 x 1.2533 sigma / sqrt(n) */
	v = json_pack("{s:{s:f, s:n}, s:{s:{s:i, s:f, s:f}}}", "speedup", "vs_eager", 1.5, "vs_eager_ci95", "timing",
		      "ratio_eager", "n", 25, "p25", 1.4, "p75", 1.6);
	double want = 1.96 * 1.2533 * ((log(1.6) - log(1.4)) / 1.349) / 5;
	assert_true(fabs(regress_noise_of(v, &from) - want) < 1e-12);
	assert_string_equal(from, "iqr");
	json_decref(v);
	/* neither: unknown, and the threshold falls back to the floor */
	v = json_pack("{s:n, s:n}", "speedup", "timing");
	assert_true(isnan(regress_noise_of(v, &from)));
	assert_null(from);
	json_decref(v);
	assert_true(fabs(regress_threshold(0.05, NAN, NAN, NAN) - 0.05) < 1e-12);
	/* two sides of 0.06 and 0.08: sqrt(0.0036 + 0.0064) = 0.1 -> e^0.1 - 1 = 10.5% > 5% */
	assert_true(fabs(regress_threshold(0.05, 0.06, 0.08, NAN) - expm1(0.1)) < 1e-12);
	assert_true(fabs(regress_threshold(0.05, 0.01, 0.01, NAN) - 0.05) < 1e-12);
	/* a spread between evaluations wider than both: it sets t (it holds their noise already: no sum) */
	assert_true(fabs(regress_threshold(0.05, 0.06, 0.08, 0.3) - expm1(0.3)) < 1e-12);
	assert_true(fabs(regress_threshold(0.05, 0.06, 0.08, 0.02) - expm1(0.1)) < 1e-12);
}

/* Appends a candidate to a run built by hand: its row, and the status, noise and candidate sha256 its verdict
 * would give. */
static void add_sha(struct regress_run *r, const char *agent, const char *problem, int sample, int attempt,
		    const char *status, double speedup, double noise, const char *sha)
{
	size_t i = r->mi.nrows++;
	r->mi.rows = xrealloc(r->mi.rows, r->mi.nrows * sizeof(*r->mi.rows));
	r->noise = xrealloc(r->noise, r->mi.nrows * sizeof(*r->noise));
	r->nnoise = r->mi.nrows;
	int correct = !strcmp(status, "pass");
	int compiled = strcmp(status, "compile_error") != 0;
	int level = problem[1] - '0';
	r->mi.rows[i] = (struct metric_row){ agent, problem, level, sample, attempt, compiled, correct,
					     !strcmp(status, "rejected"), speedup, NAN, 0, 0, NULL, 0, 0, 0, 0 };
	r->noise[i] = (struct regress_noise){ status, noise, isnan(noise) ? NULL : "ci95", sha };
}

/* A pass of its own whose verdict carries hack findings (ids) that the policy flags. */
static void add_flagged(struct regress_run *r, const char *agent, const char *problem, int sample, double speedup,
			const char *ids)
{
	add_sha(r, agent, problem, sample, 0, "pass", speedup, 0.01, NULL);
	r->mi.rows[r->mi.nrows - 1].flagged = 1;
	r->mi.rows[r->mi.nrows - 1].hack_ids = ids;
}

/* A candidate of its own: no other verdict has its sha256. */
static void add(struct regress_run *r, const char *agent, const char *problem, int sample, int attempt,
		const char *status, double speedup, double noise)
{
	add_sha(r, agent, problem, sample, attempt, status, speedup, noise, NULL);
}

static const struct regress_item *find(const struct regress *g, const char *agent, const char *problem, int sample)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->items[i].agent, agent) && !strcmp(g->items[i].problem, problem) &&
		    g->items[i].sample == sample)
			return &g->items[i];
	fail_msg("no item %s %s %d", agent, problem, sample);
	return NULL;
}

static void free_run(struct regress_run *r)
{
	free(r->mi.rows);
	free(r->noise);
}

static void outcomes(void **state)
{
	(void)state;
	struct regress_run base = { .name = "base" }, new = { .name = "new" };
	const double tight = 0.01, wide = log(1.3); /* 95% half-widths in ln units */
	/* L1/1: correct -> incorrect (lost) */
	add(&base, "a", "L1/1", 0, 0, "pass", 1.5, tight);
	add(&new, "a", "L1/1", 0, 0, "incorrect", NAN, NAN);
	/* L1/2: incorrect -> correct (fixed) */
	add(&base, "a", "L1/2", 0, 0, "incorrect", NAN, NAN);
	add(&new, "a", "L1/2", 0, 0, "pass", 1.1, tight);
	/* L1/3: 2.0 -> 1.8 with tight intervals: -10% is beyond max(5%, 1.4%) */
	add(&base, "a", "L1/3", 0, 0, "pass", 2.0, tight);
	add(&new, "a", "L1/3", 0, 0, "pass", 1.8, tight);
	/* L1/4: the same -10%, but NEW's interval is +-30%: within noise */
	add(&base, "a", "L1/4", 0, 0, "pass", 2.0, tight);
	add(&new, "a", "L1/4", 0, 0, "pass", 1.8, wide);
	/* L1/5: +3%, within the 5% floor; L1/6: +20% faster */
	add(&base, "a", "L1/5", 0, 0, "pass", 1.0, tight);
	add(&new, "a", "L1/5", 0, 0, "pass", 1.03, tight);
	add(&base, "a", "L1/6", 0, 0, "pass", 1.0, tight);
	add(&new, "a", "L1/6", 0, 0, "pass", 1.2, tight);
	/* L2/1: NEW's sample 0 has a failed first attempt and a faster second: the best attempt counts */
	add(&base, "a", "L2/1", 0, 0, "pass", 1.0, tight);
	add(&new, "a", "L2/1", 0, 0, "compile_error", NAN, NAN);
	add(&new, "a", "L2/1", 0, 1, "pass", 1.0, tight);
	/* L2/2 only in BASE, L2/3 only in NEW, L2/4 fails on both sides, L2/5 correct but not timed */
	add(&base, "a", "L2/2", 0, 0, "pass", 1.0, tight);
	add(&new, "a", "L2/3", 0, 0, "pass", 1.0, tight);
	add(&base, "a", "L2/4", 0, 0, "runtime_error", NAN, NAN);
	add(&new, "a", "L2/4", 0, 0, "rejected", NAN, NAN);
	add(&base, "a", "L2/5", 0, 0, "pass", NAN, NAN);
	add(&new, "a", "L2/5", 0, 0, "pass", 1.4, tight);

	struct regress g;
	regress_compute(&base, &new, 0.05, &g);
	assert_int_equal(find(&g, "a", "L1/1", 0)->outcome, RG_LOST);
	assert_int_equal(find(&g, "a", "L1/2", 0)->outcome, RG_FIXED);
	const struct regress_item *slow = find(&g, "a", "L1/3", 0);
	assert_int_equal(slow->outcome, RG_SLOWER);
	assert_true(fabs(slow->ratio - 0.9) < 1e-12);
	assert_true(fabs(slow->threshold - 0.05) < 1e-12);
	const struct regress_item *noisy = find(&g, "a", "L1/4", 0);
	assert_int_equal(noisy->outcome, RG_NOISE);
	assert_true(fabs(noisy->threshold - expm1(sqrt(tight * tight + wide * wide))) < 1e-12);
	assert_int_equal(find(&g, "a", "L1/5", 0)->outcome, RG_NOISE);
	assert_int_equal(find(&g, "a", "L1/6", 0)->outcome, RG_FASTER);
	const struct regress_item *best = find(&g, "a", "L2/1", 0);
	assert_int_equal(best->outcome, RG_NOISE);
	assert_int_equal(best->new->attempt, 1);
	assert_int_equal(find(&g, "a", "L2/2", 0)->outcome, RG_ONLY_BASE);
	assert_int_equal(find(&g, "a", "L2/3", 0)->outcome, RG_ONLY_NEW);
	assert_int_equal(find(&g, "a", "L2/4", 0)->outcome, RG_BOTH_FAIL);
	assert_int_equal(find(&g, "a", "L2/5", 0)->outcome, RG_NOT_TIMED);
	assert_int_equal(regress_regressions(&g), 2);
	assert_int_equal(g.n, 11);
	/* the geometric mean of the ratios over the speed-compared: 0.9, 0.9, 1.03, 1.2, 1.0 */
	assert_int_equal(g.geomean_n, 5);
	assert_true(fabs(g.geomean_ratio - pow(0.9 * 0.9 * 1.03 * 1.2 * 1.0, 0.2)) < 1e-12);

	struct strbuf md = STRBUF_INIT;
	regress_markdown(&g, &base, &new, "eval.trials: 5 in base vs 3 in new\n", &md);
	assert_non_null(strstr(md.buf, "**2 regressions** (1 correct → not correct, 1 slower beyond the threshold)"));
	assert_non_null(strstr(md.buf, "| a | L1/3 | 0 | pass 2.000x ±1.0% (attempt 0) | pass 1.800x ±1.0% (attempt 0) | "
				       "0.900x (-10.0%) | ±5.0% | slower beyond the threshold |"));
	assert_non_null(strstr(md.buf, "- eval.trials: 5 in base vs 3 in new"));
	strbuf_release(&md);
	regress_release(&g);

	/* the same run on both sides: nothing changes */
	regress_compute(&base, &base, 0.05, &g);
	assert_int_equal(regress_regressions(&g), 0);
	assert_int_equal(g.count[RG_FIXED] + g.count[RG_FASTER] + g.count[RG_ONLY_BASE] + g.count[RG_ONLY_NEW], 0);
	regress_markdown(&g, &base, &base, "", &md);
	assert_non_null(strstr(md.buf, "**No regressions**"));
	strbuf_release(&md);
	regress_release(&g);
	free_run(&base);
	free_run(&new);
}

/* Agent names come from configs: a hostile one stays text in the Markdown a CI job posts. */
static void escaped_names(void **state)
{
	(void)state;
	struct regress_run base = { .name = "b" }, new = { .name = "n" };
	add(&base, "<img src=x>|[a](b)", "L1/1", 0, 0, "pass", 1.0, 0.01);
	add(&new, "<img src=x>|[a](b)", "L1/1", 0, 0, "incorrect", NAN, NAN);
	struct regress g;
	struct strbuf md = STRBUF_INIT;
	regress_compute(&base, &new, 0.05, &g);
	regress_markdown(&g, &base, &new, NULL, &md);
	assert_null(strstr(md.buf, "<img"));
	assert_non_null(strstr(md.buf, "| &lt;img src=x&gt;\\|\\[a\\](b) | L1/1 |"));
	strbuf_release(&md);
	regress_release(&g);
	free_run(&base);
	free_run(&new);
}

/* The same file on both sides is measured again, never a regression, whatever its ratio; and the spread its
 * two evaluations show widens the threshold of the candidates that did change. */
static void same_candidate_is_a_remeasurement(void **state)
{
	(void)state;
	const double tight = 0.01;
	struct regress_run base = { .name = "base" }, new = { .name = "new" };
	/* L1/1: one file, 2.7x then 2.0x on a loaded machine; L1/2: a changed file, 1.5x -> 1.2x (-20%) */
	add_sha(&base, "a", "L1/1", 0, 0, "pass", 2.7, tight, "same");
	add_sha(&new, "a", "L1/1", 0, 0, "pass", 2.0, tight, "same");
	add_sha(&base, "a", "L1/2", 0, 0, "pass", 1.5, tight, "old");
	add_sha(&new, "a", "L1/2", 0, 0, "pass", 1.2, tight, "new");
	/* L1/3: the same file correct in BASE only (a flaky check): still not a regression of the agent */
	add_sha(&base, "a", "L1/3", 0, 0, "pass", 1.0, tight, "flaky");
	add_sha(&new, "a", "L1/3", 0, 0, "incorrect", NAN, NAN, "flaky");
	struct regress g;
	regress_compute(&base, &new, 0.05, &g);
	const struct regress_item *re = find(&g, "a", "L1/1", 0);
	assert_int_equal(re->outcome, RG_REMEASURED);
	assert_true(fabs(re->ratio - 2.0 / 2.7) < 1e-12);
	assert_int_equal(find(&g, "a", "L1/3", 0)->outcome, RG_REMEASURED);
	/* one candidate evaluated twice: s^2 = (ln 2.7 - ln 2.0)^2 / 2, h_eval = 1.96 sqrt(2) s = 1.96 |ln 1.35| */
	double h = 1.96 * log(2.7 / 2.0);
	assert_int_equal(g.spread_groups, 1);
	assert_int_equal(g.spread_evals, 2);
	assert_true(fabs(g.spread - h) < 1e-12);
	const struct regress_item *changed = find(&g, "a", "L1/2", 0);
	assert_true(fabs(changed->threshold - expm1(h)) < 1e-12); /* 80%: -20% is within it */
	assert_int_equal(changed->outcome, RG_NOISE);
	assert_int_equal(regress_regressions(&g), 0);
	assert_int_equal(g.remeasured_n, 1);
	assert_int_equal(g.geomean_n, 1); /* re-measurements are not in the geomean of changes */
	struct strbuf md = STRBUF_INIT;
	regress_markdown(&g, &base, &new, "", &md);
	assert_non_null(strstr(md.buf, "| a | L1/1 | 0 | pass 2.700x ±1.0% (attempt 0) | pass 2.000x ±1.0% (attempt 0) | "
				       "0.741x (-25.9%) | ±80.1% | same candidate: re-measured |"));
	assert_non_null(strstr(md.buf, "same candidate, re-measured: correct on one side only"));
	assert_non_null(strstr(md.buf, "from the 1 candidates evaluated more than once (2 verdicts"));
	strbuf_release(&md);
	regress_release(&g);
	free_run(&base);
	free_run(&new);

	/* without a candidate evaluated twice the spread is unknown: the same -20% is a regression at 5% */
	struct regress_run b2 = { .name = "base" }, n2 = { .name = "new" };
	add_sha(&b2, "a", "L1/2", 0, 0, "pass", 1.5, tight, "old");
	add_sha(&n2, "a", "L1/2", 0, 0, "pass", 1.2, tight, "new");
	regress_compute(&b2, &n2, 0.05, &g);
	assert_true(isnan(g.spread));
	assert_int_equal(find(&g, "a", "L1/2", 0)->outcome, RG_SLOWER);
	regress_markdown(&g, &b2, &n2, "", &md);
	assert_non_null(strstr(md.buf, "No candidate was evaluated more than once"));
	strbuf_release(&md);
	regress_release(&g);
	free_run(&b2);
	free_run(&n2);
}

/* A flagged pass is no clean one: a speedup it shows is never an improvement, and a clean pass that became
 * one is lost. */
static void flagged_passes(void **state)
{
	(void)state;
	struct regress_run base = { .name = "base" }, new = { .name = "new" };
	/* L1/1: a clean 1.5x -> a flagged 15x (H21); L1/2: incorrect -> flagged 12x; L1/3: flagged 20x -> clean
	 * 1.1x; L1/4: flagged on both sides, 10x -> 30x; L1/5: flagged -> incorrect */
	add(&base, "a", "L1/1", 0, 0, "pass", 1.5, 0.01);
	add_flagged(&new, "a", "L1/1", 0, 15.0, "H21");
	add(&base, "a", "L1/2", 0, 0, "incorrect", NAN, NAN);
	add_flagged(&new, "a", "L1/2", 0, 12.0, "H17");
	add_flagged(&base, "a", "L1/3", 0, 20.0, "H21");
	add(&new, "a", "L1/3", 0, 0, "pass", 1.1, 0.01);
	add_flagged(&base, "a", "L1/4", 0, 10.0, "H14");
	add_flagged(&new, "a", "L1/4", 0, 30.0, "H14 H21");
	add_flagged(&base, "a", "L1/5", 0, 10.0, "H21");
	add(&new, "a", "L1/5", 0, 0, "incorrect", NAN, NAN);
	struct regress g;
	regress_compute(&base, &new, 0.05, &g);
	assert_int_equal(find(&g, "a", "L1/1", 0)->outcome, RG_LOST);
	assert_int_equal(find(&g, "a", "L1/2", 0)->outcome, RG_FLAGGED);
	assert_int_equal(find(&g, "a", "L1/3", 0)->outcome, RG_FIXED);
	assert_int_equal(find(&g, "a", "L1/4", 0)->outcome, RG_FLAGGED);
	assert_true(isnan(find(&g, "a", "L1/4", 0)->ratio)); /* not compared for speed */
	assert_int_equal(find(&g, "a", "L1/5", 0)->outcome, RG_BOTH_FAIL);
	assert_int_equal(regress_regressions(&g), 1);
	assert_int_equal(g.count[RG_FIXED] + g.count[RG_FASTER], 1);
	assert_int_equal(g.geomean_n, 0);
	struct strbuf md = STRBUF_INIT;
	regress_markdown(&g, &base, &new, "", &md);
	assert_non_null(strstr(md.buf, "**1 regression** (0 correct → not correct, 1 correct → flagged, 0 slower beyond "
				       "the threshold); 1 improvement. 3 candidates of NEW pass with a hack finding (flagged): "
				       "never counted as an improvement or compared for speed."));
	assert_non_null(strstr(md.buf, "| a | L1/1 | 0 | pass 1.500x ±1.0% (attempt 0) | pass 15.000x ±1.0% flagged H21 "
				       "(attempt 0) | - | - | correct → flagged: no longer a clean pass |"));
	assert_non_null(strstr(md.buf, "| flagged → correct: a clean pass now |"));
	assert_non_null(strstr(md.buf, "### Flagged in NEW (not improvements)"));
	assert_non_null(strstr(md.buf, "flagged H14 H21 (attempt 0) | - | - | passes with a hack finding in NEW: not an "
				       "improvement, speed not compared |"));
	assert_non_null(strstr(md.buf, "| flagged in BASE, not correct in NEW |"));
	strbuf_release(&md);
	regress_release(&g);
	free_run(&base);
	free_run(&new);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(noise_from_verdicts),
		cmocka_unit_test(outcomes),
		cmocka_unit_test(escaped_names),
		cmocka_unit_test(same_candidate_is_a_remeasurement),
		cmocka_unit_test(flagged_passes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
