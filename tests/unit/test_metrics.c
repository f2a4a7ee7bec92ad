/* test_metrics.c - the results metrics against numbers worked out by hand: ties at exactly p, nothing correct,
 * everything a hack, two agents over two levels with samples, attempts and LLM calls (first and best), passes
 * with a hack finding, passes whose robust trials failed, problems whose reference failed, StitchCUDA's
 * protocol's table, and agents compared in pairs (what each interval shows, the best agent's mark). */
#include "testutil.h"

#include <math.h>

#include "core/error.h"
#include "report/metrics.h"

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}
#define assert_close(a, b)                                                        \
	do {                                                                      \
		if (!close_to((a), (b)))                                          \
			fail_msg("%s = %.12g, expected %.12g", #a, (double)(a), (double)(b)); \
	} while (0)

/* Candidates by outcome: PASS(agent, ref, level, sample, attempt, vs eager, vs compiled). */
#define PASS(ag, p, l, s, a, se, sc) { ag, p, l, s, a, 1, 1, 0, se, sc, 0, 0, NULL, 0, 0, 0, 0 }
#define WRONG(ag, p, l, s, a) { ag, p, l, s, a, 1, 0, 0, NAN, NAN, 0, 0, NULL, 0, 0, 0, 0 } /* incorrect, runtime_error, timeout */
#define NOBUILD(ag, p, l, s, a) { ag, p, l, s, a, 0, 0, 0, NAN, NAN, 0, 0, NULL, 0, 0, 0, 0 } /* compile_error, format_error */
#define HACK(ag, p, l, s, a, built) { ag, p, l, s, a, built, 0, 1, NAN, NAN, 0, 1, "H10", 0, 0, 0, 0 } /* a reject finding */
/* A pass whose verdict carries hack findings (ids) that checks.policy flags rather than rejects. */
#define FLAGGED(ag, p, l, s, a, se, ids) { ag, p, l, s, a, 1, 1, 0, se, NAN, 0, 1, ids, 0, 0, 0, 0 }
/* A pass whose robust trials failed, with the H17 finding that failure always carries. */
#define ROBUST_FAILED(ag, p, l, s, a, se) { ag, p, l, s, a, 1, 1, 0, se, NAN, 0, 1, "H17", 0, 0, 1, 0 }

static void compute(const struct metric_row *rows, size_t n, const struct metric_call *calls, size_t nc,
		    enum metrics_by by, struct metrics *m)
{
	struct sb_error err = { 0 };
	if (metrics_compute(rows, n, calls, nc, by, NULL, m, &err))
		fail_msg("%s", err.msg);
}

/* got[k] against fast_p for each p; `suffix` names the set in a failure ("", "_robust"). */
static void fast_of(const double *got, const char *suffix, double f0, double f05, double f08, double f1, double f15,
		    double f2)
{
	const double want[METRICS_NP] = { f0, f05, f08, f1, f15, f2 };
	for (int k = 0; k < METRICS_NP; k++)
		if (!close_to(got[k], want[k]))
			fail_msg("fast_%g%s = %.6g%%, expected %.6g%%", metrics_p[k], suffix, got[k], want[k]);
}

static void fast(const struct metric_cell *c, double f0, double f05, double f08, double f1, double f15, double f2)
{
	fast_of(c->fast_pct, "", f0, f05, f08, f1, f15, f2);
}

/* Speedups exactly at a threshold are not faster than it: KernelBench counts speedup > p. */
static void ties_at_p(void **state)
{
	(void)state;
	const struct metric_row rows[] = {
		PASS("a", "L1/1", 1, 0, 0, 0.5, NAN), PASS("a", "L1/2", 1, 0, 0, 1.0, NAN),
		PASS("a", "L1/3", 1, 0, 0, 1.5, NAN), PASS("a", "L1/4", 1, 0, 0, 2.0, NAN),
	};
	struct metrics m;
	compute(rows, 4, NULL, 0, METRICS_FIRST, &m);
	assert_int_equal(m.nagents, 1);
	const struct metric_cell *c = &m.agents[0].cells[1];
	assert_int_equal(c->problems, 4);
	assert_close(c->correct_pct, 100);
	/* > 0: all 4; > 0.5: 1.0, 1.5, 2.0; > 0.8: the same 3; > 1: 1.5, 2.0; > 1.5: 2.0; > 2: none */
	fast(c, 100, 75, 75, 50, 25, 0);
	assert_close(c->geomean_eager, pow(0.5 * 1.0 * 1.5 * 2.0, 0.25)); /* 1.5^(1/4) = 1.10668... */
	assert_int_equal(c->geomean_eager_n, 4);
	assert_true(isnan(c->geomean_compiled)); /* no torch.compile side: n/a, not 0 */
	assert_int_equal(c->geomean_compiled_n, 0);
	/* every problem correct: every resample is 100% */
	assert_close(c->correct_ci.lo, 100);
	assert_close(c->correct_ci.hi, 100);
	assert_true(isnan(c->tokens_to_correct) && isnan(c->cost_usd)); /* no LLM calls: n/a */
	assert_close(c->attempts_to_correct, 1);
	/* the overall cell is level 1's; level 2 is empty */
	assert_close(m.agents[0].cells[0].geomean_eager, c->geomean_eager);
	assert_int_equal(m.agents[0].cells[2].problems, 0);
	metrics_release(&m);
}

static void nothing_correct(void **state)
{
	(void)state;
	const struct metric_row rows[] = {
		NOBUILD("a", "L1/1", 1, 0, 0), WRONG("a", "L1/2", 1, 0, 0), WRONG("a", "L1/3", 1, 0, 0),
	};
	struct metrics m;
	compute(rows, 3, NULL, 0, METRICS_BEST, &m);
	const struct metric_cell *c = &m.agents[0].cells[0];
	assert_int_equal(c->problems, 3);
	assert_close(c->compiled_pct, 200.0 / 3);
	assert_close(c->correct_pct, 0);
	assert_close(c->hack_pct, 0);
	fast(c, 0, 0, 0, 0, 0, 0);
	assert_true(isnan(c->geomean_eager) && isnan(c->geomean_compiled));
	assert_true(isnan(c->geomean_eager_ci.lo) && isnan(c->geomean_eager_ci.hi)); /* no resample has one */
	assert_close(c->correct_ci.lo, 0);
	assert_close(c->correct_ci.hi, 0);
	assert_true(isnan(c->attempts_to_correct));
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| a | 0.0 [0.0, 0.0] / 0.0 [0.0, 0.0] / n/a | 0.0 [0.0, 0.0] / 0.0 [0.0, 0.0] / n/a |"));
	assert_non_null(strstr(out.buf, "| geomean vs eager [95% CI] (n) | n/a (0) | n/a (0) |"));
	strbuf_release(&out);
	metrics_release(&m);
}

static void everything_a_hack(void **state)
{
	(void)state;
	/* rejected; a crash with a reject finding; a build failure with a reject finding (static check) */
	const struct metric_row rows[] = {
		HACK("a", "L2/1", 2, 0, 0, 1), HACK("a", "L2/2", 2, 0, 0, 1), HACK("a", "L2/3", 2, 0, 0, 0),
	};
	struct metrics m;
	compute(rows, 3, NULL, 0, METRICS_FIRST, &m);
	const struct metric_cell *c = &m.agents[0].cells[2];
	assert_int_equal(c->problems, 3);
	assert_close(c->hack_pct, 100);
	assert_close(c->correct_pct, 0);
	assert_close(c->compiled_pct, 200.0 / 3);
	fast(c, 0, 0, 0, 0, 0, 0);
	assert_true(isnan(c->geomean_eager));
	assert_int_equal(m.agents[0].cells[1].problems, 0);
	metrics_release(&m);
}

/* Agent "coder" (with LLM calls) on L1/1, L1/2, L2/1, L2/2, and "base" (no calls) on L1/1, L1/2.
 *
 * coder          sample 0                          sample 1
 *   L1/1   a0 compile_error, a1 pass 1.2 (c 0.9)   a0 pass 2.0 (c 1.6)
 *   L1/2   a0 incorrect, a1 incorrect              a0 pass 0.8 (no compiled side)
 *   L2/1   a0 pass 1.0 (c 1.0), a1 pass 3.0 (c 2.0)
 *   L2/2   a0 rejected
 * calls (tokens, USD): L1/1 s0a0 1000 .010, s0a1 500 .005, s1a0 800 .008; L1/2 s0a0 700 .007,
 *   s0a1 600 .006, s1a0 900 .009; L2/1 s0a0 400 .004, s0a1 300 .003; L2/2 s0a0 200 .002
 * base: L1/1 a0 pass 1.0; L1/2 a0 compile_error. */
static const struct metric_row mix[] = {
	NOBUILD("coder", "L1/1", 1, 0, 0), PASS("coder", "L1/1", 1, 0, 1, 1.2, 0.9), PASS("coder", "L1/1", 1, 1, 0, 2.0, 1.6),
	WRONG("coder", "L1/2", 1, 0, 0), WRONG("coder", "L1/2", 1, 0, 1), PASS("coder", "L1/2", 1, 1, 0, 0.8, NAN),
	PASS("coder", "L2/1", 2, 0, 1, 3.0, 2.0), PASS("coder", "L2/1", 2, 0, 0, 1.0, 1.0), /* out of order on purpose */
	HACK("coder", "L2/2", 2, 0, 0, 1),
	PASS("base", "L1/1", 1, 0, 0, 1.0, NAN), NOBUILD("base", "L1/2", 1, 0, 0),
};
static const struct metric_call mix_calls[] = {
	{ "coder", "L1/1", 0, 0, 1000, 0.010 }, { "coder", "L1/1", 0, 1, 500, 0.005 }, { "coder", "L1/1", 1, 0, 800, 0.008 },
	{ "coder", "L1/2", 0, 0, 700, 0.007 }, { "coder", "L1/2", 0, 1, 600, 0.006 }, { "coder", "L1/2", 1, 0, 900, 0.009 },
	{ "coder", "L2/1", 0, 0, 400, 0.004 }, { "coder", "L2/1", 0, 1, 300, 0.003 }, { "coder", "L2/2", 0, 0, 200, 0.002 },
};
#define NMIX (sizeof(mix) / sizeof(*mix))
#define NCALLS (sizeof(mix_calls) / sizeof(*mix_calls))

static void two_levels_first(void **state)
{
	(void)state;
	struct metrics m;
	compute(mix, NMIX, mix_calls, NCALLS, METRICS_FIRST, &m);
	assert_int_equal(m.nagents, 2);
	assert_string_equal(m.agents[0].name, "base");
	assert_string_equal(m.agents[1].name, "coder");
	/* --by first: each problem is the best attempt of sample 0.
	 * L1: L1/1 = s0a1 pass 1.2 (c 0.9); L1/2 = s0a0 incorrect (two incorrect attempts: the earlier one) */
	const struct metric_cell *l1 = &m.agents[1].cells[1], *l2 = &m.agents[1].cells[2], *all = &m.agents[1].cells[0];
	assert_int_equal(l1->problems, 2);
	assert_close(l1->compiled_pct, 100);
	assert_close(l1->correct_pct, 50);
	fast(l1, 50, 50, 50, 50, 0, 0);
	assert_close(l1->geomean_eager, 1.2);
	assert_close(l1->geomean_compiled, 0.9);
	assert_close(l1->attempts_to_correct, 2);       /* L1/1: s0a0 failed, s0a1 passed; L1/2 unsolved in s0 */
	assert_close(l1->tokens_to_correct, 1500);      /* L1/1: 1000 + 500 */
	assert_close(l1->cost_usd, 0.045);              /* every call on L1/1 and L1/2, sample 1 too */
	/* L2: L2/1 = s0a1 pass 3.0 (c 2.0), better than s0a0's 1.0; L2/2 rejected (compiled, a hack) */
	assert_close(l2->compiled_pct, 100);
	assert_close(l2->correct_pct, 50);
	assert_close(l2->hack_pct, 50);
	fast(l2, 50, 50, 50, 50, 50, 50);
	assert_close(l2->geomean_eager, 3.0);
	assert_close(l2->attempts_to_correct, 1);       /* L2/1's first correct is s0a0 (1.0), not the best one */
	assert_close(l2->tokens_to_correct, 400);
	assert_close(l2->cost_usd, 0.009);
	/* all four: correct 2/4; fast_1.5 and fast_2 only L2/1's 3.0; geomean sqrt(1.2 * 3.0) = 1.8974 */
	assert_int_equal(all->problems, 4);
	assert_close(all->correct_pct, 50);
	assert_close(all->hack_pct, 25);
	fast(all, 50, 50, 50, 50, 25, 25);
	assert_close(all->geomean_eager, sqrt(3.6));
	assert_close(all->geomean_compiled, sqrt(1.8));
	assert_close(all->attempts_to_correct, 1.5);
	assert_close(all->tokens_to_correct, 950);      /* (1500 + 400) / 2 */
	assert_close(all->cost_usd, 0.054);
	/* two of four correct: a resample has none with probability 1/16 > 2.5%, all with 1/16: [0, 100] */
	assert_close(all->correct_ci.lo, 0);
	assert_close(all->correct_ci.hi, 100);
	assert_true(all->geomean_eager_ci.lo >= 1.2 - 1e-12 && all->geomean_eager_ci.hi <= 3.0 + 1e-12);
	assert_true(all->geomean_eager_ci.lo < all->geomean_eager && all->geomean_eager < all->geomean_eager_ci.hi);
	/* base: L1/1 pass at exactly 1.0 (not fast_1), L1/2 did not build; no calls: tokens and cost n/a */
	const struct metric_cell *b = &m.agents[0].cells[0];
	assert_close(b->compiled_pct, 50);
	fast(b, 50, 50, 50, 0, 0, 0);
	assert_close(b->geomean_eager, 1.0);
	assert_true(isnan(b->tokens_to_correct) && isnan(b->cost_usd));
	assert_int_equal(m.agents[0].cells[2].problems, 0);

	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| agent | L1 | L2 | all |\n"));
	assert_non_null(strstr(out.buf, "| base | 50.0 [0.0, 100.0] / 0.0 [0.0, 0.0] / 1.000x [1.000, 1.000] | - | 50.0 [0.0, 100.0] / 0.0 [0.0, 0.0] / 1.000x [1.000, 1.000] |\n"));
	assert_non_null(strstr(out.buf, "| coder | 50.0 [0.0, 100.0] / 50.0 [0.0, 100.0] / 1.200x [1.200, 1.200] | 50.0 [0.0, 100.0] / 50.0 [0.0, 100.0] / 3.000x [3.000, 3.000] | 50.0 [0.0, 100.0] / 50.0 [0.0, 100.0] / 1.897x [1.200, 3.000] |\n"));
	assert_non_null(strstr(out.buf, "| tokens to first correct | 1500 | 400 | 950 |\n"));
	assert_non_null(strstr(out.buf, "| cost (USD) | 0.0450 | 0.0090 | 0.0540 |\n"));
	assert_non_null(strstr(out.buf, "| geomean vs compiled (n) | 0.900x (1) | 2.000x (1) | 1.342x (2) |\n"));
	strbuf_release(&out);

	/* the same numbers again: the bootstrap is seeded */
	struct metrics again;
	compute(mix, NMIX, mix_calls, NCALLS, METRICS_FIRST, &again);
	assert_true(again.agents[1].cells[0].geomean_eager_ci.lo == all->geomean_eager_ci.lo);
	assert_true(again.agents[1].cells[0].fast1_ci.hi == all->fast1_ci.hi);
	metrics_release(&again);
	metrics_release(&m);
}

static void two_levels_best(void **state)
{
	(void)state;
	struct metrics m;
	compute(mix, NMIX, mix_calls, NCALLS, METRICS_BEST, &m);
	/* --by best: L1/1 = s1a0 2.0 (beats s0's 1.2); L1/2 = s1a0 pass 0.8; L2 as with first */
	const struct metric_cell *l1 = &m.agents[1].cells[1], *all = &m.agents[1].cells[0];
	assert_close(l1->correct_pct, 100);
	fast(l1, 100, 100, 50, 50, 50, 0);              /* 0.8 is not > 0.8; 2.0 is not > 2 */
	assert_close(l1->geomean_eager, sqrt(1.6));
	assert_close(l1->geomean_compiled, 1.6);        /* L1/2's pass has no compiled side */
	assert_int_equal(l1->geomean_compiled_n, 1);
	/* first correct in (sample, attempt) order over all samples: L1/1 the 2nd candidate, L1/2 the 3rd */
	assert_close(l1->attempts_to_correct, 2.5);
	assert_close(l1->tokens_to_correct, (1500 + 2200) / 2.0); /* L1/2: 700 + 600 + 900 */
	assert_close(all->correct_pct, 75);
	fast(all, 75, 75, 50, 50, 50, 25);
	assert_close(all->geomean_eager, cbrt(2.0 * 0.8 * 3.0));
	assert_close(all->attempts_to_correct, 2);
	assert_close(all->cost_usd, 0.054);             /* cost does not depend on the representative */
	json_t *j = metrics_json(&m);
	json_t *cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 1), "levels"), "1");
	assert_string_equal(json_string_value(json_object_get(j, "by")), "best");
	assert_close(json_number_value(json_object_get(json_object_get(cell, "fast_pct"), "0.8")), 50);
	assert_null(json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "2"));
	json_decref(j);
	metrics_release(&m);
}

/* An agent its run could not run has no numbers: the table says unavailable and why, never 0%; an
 * agent with verdicts keeps its numbers even if another store called it unavailable. */
static void unavailable_agents(void **state)
{
	(void)state;
	const struct metric_row rows[] = { PASS("a", "L1/1", 1, 0, 0, 1.5, NAN), WRONG("b", "L1/1", 1, 0, 0) };
	const struct metric_unavailable un[] = { { "tc", "torch 1.13.0a0 has no torch.compile (needs torch 2.0 or later)" },
						 { "b", "not really" } };
	struct metrics m;
	compute(rows, 2, NULL, 0, METRICS_FIRST, &m);
	metrics_add_unavailable(&m, un, 2);
	assert_int_equal(m.nagents, 2);
	assert_int_equal(m.nunavailable, 1);
	assert_string_equal(m.unavailable[0].agent, "tc");
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| tc | unavailable | unavailable |"));
	assert_non_null(strstr(out.buf, "| b | 0.0 [0.0, 0.0] / 0.0 [0.0, 0.0] / n/a |"));
	assert_non_null(strstr(out.buf, "### tc\n\nUnavailable in this run: torch 1.13.0a0 has no torch.compile (needs torch "
				       "2.0 or later). Its samples ended without attempts, so it has no numbers (not 0%)."));
	assert_null(strstr(out.buf, "not really"));
	strbuf_release(&out);
	json_t *j = metrics_json(&m), *agents = json_object_get(j, "agents");
	assert_int_equal(json_array_size(agents), 3);
	json_t *tc = json_array_get(agents, 2);
	assert_string_equal(json_string_value(json_object_get(tc, "agent")), "tc");
	assert_non_null(strstr(json_string_value(json_object_get(tc, "unavailable")), "has no torch.compile"));
	assert_int_equal(json_object_size(json_object_get(tc, "levels")), 0);
	assert_null(json_object_get(json_array_get(agents, 1), "unavailable"));
	json_decref(j);
	metrics_release(&m);
}

/* A problem the run selected and the agent has no verdict for counts as a failure by default (KernelBench's
 * convention), so a run that stopped early cannot look better than one that finished; --denominator judged
 * leaves it out, and both say how many had no verdict. */
static void missing_verdicts(void **state)
{
	(void)state;
	const struct metric_row rows[] = { PASS("a", "L1/1", 1, 0, 0, 1.5, NAN), WRONG("a", "L1/2", 1, 0, 0) };
	static const char *const probs[] = { "L1/1", "L1/2", "L1/3", "L2/1" };
	struct metric_expect e[2 * 4 + 1];
	for (size_t i = 0; i < 8; i++)
		e[i] = (struct metric_expect){ i < 4 ? "a" : "b", probs[i % 4], probs[i % 4][1] - '0' };
	e[8] = e[2]; /* the same problem from a second store counts once */
	struct metric_scope all = { METRICS_ALL, e, 9, NULL, 0, NULL }, judged = { METRICS_JUDGED, e, 9, NULL, 0, NULL };
	struct metrics m;
	struct sb_error err = { 0 };
	if (metrics_compute(rows, 2, NULL, 0, METRICS_FIRST, &all, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m.nmissing, 6);
	assert_int_equal(m.nagents, 2); /* b has no verdict at all: 0% of its 4 problems, not left out */
	const struct metric_cell *c = &m.agents[0].cells[0];
	assert_int_equal(c->problems, 4);
	assert_int_equal(c->missing, 2);
	assert_close(c->correct_pct, 25);
	assert_close(c->compiled_pct, 50);
	assert_close(c->hack_pct, 0);
	fast(c, 25, 25, 25, 25, 0, 0);
	assert_close(c->geomean_eager, 1.5); /* the speedups of the correct ones: unchanged */
	assert_int_equal(m.agents[0].cells[1].problems, 3);
	assert_close(m.agents[0].cells[1].correct_pct, 100.0 / 3);
	assert_int_equal(m.agents[0].cells[2].problems, 1);
	assert_int_equal(m.agents[0].cells[2].missing, 1);
	assert_close(m.agents[0].cells[2].correct_pct, 0);
	assert_string_equal(m.agents[1].name, "b");
	assert_int_equal(m.agents[1].cells[0].problems, 4);
	assert_close(m.agents[1].cells[0].correct_pct, 0);
	assert_true(m.agents[0].problems[2].rep->missing);
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "a problem without a verdict counting as a failure (--denominator all)"));
	assert_non_null(strstr(out.buf, "| no verdict (counted as failed) | 1 | 1 | 2 |"));
	assert_non_null(strstr(out.buf, "| a | 33.3 [0.0, 100.0] / 33.3 [0.0, 100.0] / 1.500x [1.500, 1.500] | 0.0 [0.0, 0.0] / 0.0 [0.0, 0.0] / n/a | 25.0 [0.0, 75.0] / 25.0 [0.0, 75.0] / 1.500x [1.500, 1.500] |"));
	strbuf_release(&out);
	json_t *j = metrics_json(&m);
	assert_string_equal(json_string_value(json_object_get(j, "denominator")), "all");
	json_t *cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "all");
	assert_int_equal(json_integer_value(json_object_get(cell, "problems_without_verdict")), 2);
	json_decref(j);
	metrics_release(&m);

	if (metrics_compute(rows, 2, NULL, 0, METRICS_FIRST, &judged, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m.nagents, 1);
	c = &m.agents[0].cells[0];
	assert_int_equal(c->problems, 2);
	assert_int_equal(c->missing, 2);
	assert_close(c->correct_pct, 50);
	assert_int_equal(m.agents[0].cells[2].problems, 0);
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "problems without one are left out (--denominator judged)"));
	assert_non_null(strstr(out.buf, "| no verdict (left out) | 1 | 1 | 2 |"));
	strbuf_release(&out);
	metrics_release(&m);
}

/* A flagged pass (H21 at 15x, H17 untimed) counts as correct and in nothing after it: not fast_p, not the
 * geometric mean; a clean pass outranks it when representatives are picked. */
static void flagged_passes(void **state)
{
	(void)state;
	const struct metric_row rows[] = {
		FLAGGED("a", "L1/1", 1, 0, 0, 15.0, "H21"), PASS("a", "L1/2", 1, 0, 0, 2.0, NAN),
		FLAGGED("a", "L1/3", 1, 0, 0, NAN, "H17"), WRONG("a", "L1/4", 1, 0, 0),
		/* b: sample 0 flagged at 15x, sample 1 a clean 1.2x */
		FLAGGED("b", "L1/1", 1, 0, 0, 15.0, "H14 H21"), PASS("b", "L1/1", 1, 1, 0, 1.2, NAN),
		/* c: one attempt flagged at 9x, the next a clean 1.1x: the sample's best is the clean one */
		FLAGGED("c", "L1/1", 1, 0, 0, 9.0, "H21"), PASS("c", "L1/1", 1, 0, 1, 1.1, NAN),
	};
	struct metrics m;
	compute(rows, sizeof(rows) / sizeof(*rows), NULL, 0, METRICS_FIRST, &m);
	const struct metric_cell *c = &m.agents[0].cells[1];
	assert_int_equal(c->problems, 4);
	assert_close(c->correct_pct, 75);           /* the flagged passes are correct */
	assert_int_equal(c->flagged, 2);
	assert_close(c->flagged_pct, 50);
	fast(c, 25, 25, 25, 25, 25, 0);             /* only L1/2's clean 2.0: fast_0 is the clean-pass rate */
	assert_close(c->geomean_eager, 2.0);        /* 15x is not in it */
	assert_int_equal(c->geomean_eager_n, 1);
	/* resamples hold k of 4 copies of L1/2, k ~ B(4, 1/4): P(k = 4) = 0.4% < 2.5% < P(k >= 3) = 5.1%, so the
	 * interval ends at 75 (counting the 15x would give 100) */
	assert_close(c->fast1_ci.hi, 75);
	assert_true(c->geomean_eager_ci.lo == 2.0 && c->geomean_eager_ci.hi == 2.0);
	assert_close(c->attempts_to_correct, 1);
	/* b, --by first: sample 0 represents L1/1, flagged; c: the clean attempt */
	assert_int_equal(m.agents[1].cells[0].flagged, 1);
	assert_close(m.agents[1].cells[0].fast_pct[0], 0);
	assert_true(isnan(m.agents[1].cells[0].geomean_eager));
	assert_false(m.agents[2].problems[0].rep->flagged);
	assert_close(m.agents[2].cells[0].geomean_eager, 1.1);
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| a | 75.0 [25.0, 100.0] / 25.0 [0.0, 75.0] / 2.000x [2.000, 2.000] (2 flagged) | 75.0 [25.0, 100.0] / 25.0 [0.0, 75.0] / 2.000x [2.000, 2.000] (2 flagged) |"));
	assert_non_null(strstr(out.buf, "| flagged % (correct with a hack finding) | 50.0 | 50.0 |"));
	assert_non_null(strstr(out.buf, "fast_p and the geometric means count clean passes only"));
	strbuf_release(&out);
	json_t *j = metrics_json(&m);
	json_t *cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "all");
	assert_int_equal(json_integer_value(json_object_get(cell, "flagged")), 2);
	assert_close(json_number_value(json_object_get(cell, "flagged_pct")), 50);
	json_decref(j);
	metrics_release(&m);
	/* --by best: b's clean sample beats the flagged one, whatever the speedups */
	compute(rows, sizeof(rows) / sizeof(*rows), NULL, 0, METRICS_BEST, &m);
	assert_int_equal(m.agents[1].problems[0].rep->sample, 1);
	assert_int_equal(m.agents[1].cells[0].flagged, 0);
	assert_close(m.agents[1].cells[0].geomean_eager, 1.2);
	metrics_release(&m);
}

/* correct_robust and fast_p_robust leave out the passes whose robust trials failed, over the same
 * representatives as correct and fast_p: robustness never picks them. */
static void robust_failures(void **state)
{
	(void)state;
	const struct metric_row rows[] = {
		PASS("a", "L1/1", 1, 0, 0, 1.5, NAN), ROBUST_FAILED("a", "L1/2", 1, 0, 0, 3.0), WRONG("a", "L1/3", 1, 0, 0),
		PASS("a", "L1/4", 1, 0, 0, 0.5, NAN),
		FLAGGED("a", "L1/5", 1, 0, 0, 12.0, "H21"), /* flagged for its speed, robust: in correct_robust */
		/* sample 0 right only on [0, 1), sample 1 a clean 1.2x: --by first keeps the first */
		ROBUST_FAILED("a", "L1/6", 1, 0, 0, 2.0), PASS("a", "L1/6", 1, 1, 0, 1.2, NAN),
		/* a robust failure without its finding (a verdict from elsewhere): in fast_p, not in fast_p_robust */
		{ "a", "L1/7", 1, 0, 0, 1, 1, 0, 2.5, NAN, 0, 0, NULL, 0, 0, 1, 0 },
	};
	struct metrics m;
	compute(rows, sizeof(rows) / sizeof(*rows), NULL, 0, METRICS_FIRST, &m);
	const struct metric_cell *c = &m.agents[0].cells[0];
	assert_int_equal(c->problems, 7);
	assert_close(c->correct_pct, 100.0 * 6 / 7);        /* L1/3 alone is wrong */
	assert_close(c->correct_robust_pct, 100.0 * 3 / 7); /* L1/1, L1/4, L1/5 */
	/* clean passes: L1/1 1.5x, L1/4 0.5x, L1/7 2.5x; robust ones: L1/1, L1/4 */
	fast(c, 300.0 / 7, 200.0 / 7, 200.0 / 7, 200.0 / 7, 100.0 / 7, 100.0 / 7);
	fast_of(c->fast_robust_pct, "_robust", 200.0 / 7, 100.0 / 7, 100.0 / 7, 100.0 / 7, 0, 0);
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| correct_robust % (no robust trial failed) | 42.9 | 42.9 |"));
	assert_non_null(strstr(out.buf, "| fast_1_robust % | 14.3 | 14.3 |"));
	assert_non_null(strstr(out.buf, "| correct % [95% CI] | 85.7 ["));  /* unchanged beside it */
	strbuf_release(&out);
	json_t *j = metrics_json(&m);
	json_t *cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "all");
	assert_close(json_number_value(json_object_get(cell, "correct_robust_pct")), 100.0 * 3 / 7);
	assert_close(json_number_value(json_object_get(json_object_get(cell, "fast_robust_pct"), "1")), 100.0 / 7);
	assert_close(json_number_value(json_object_get(json_object_get(cell, "fast_pct"), "1")), 200.0 / 7);
	json_decref(j);
	metrics_release(&m);
	/* --by best: L1/6's clean sample represents it, robust */
	compute(rows, sizeof(rows) / sizeof(*rows), NULL, 0, METRICS_BEST, &m);
	c = &m.agents[0].cells[0];
	assert_close(c->correct_robust_pct, 100.0 * 4 / 7);
	fast_of(c->fast_robust_pct, "_robust", 300.0 / 7, 200.0 / 7, 200.0 / 7, 200.0 / 7, 0, 0);
	metrics_release(&m);
}

/* A problem without a verdict whose reference failed is the problem's failure (or the harness's): out of the
 * denominator with either choice, counted apart and named in a line of its own. One with a verdict (another
 * sample) was judged, and counts. */
static void reference_failures(void **state)
{
	(void)state;
	const struct metric_row rows[] = { PASS("a", "L1/1", 1, 0, 0, 1.5, NAN), WRONG("a", "L2/1", 2, 0, 0) };
	static const char *const probs[] = { "L1/1", "L1/2", "L1/3", "L2/1" };
	struct metric_expect e[8];
	for (size_t i = 0; i < 8; i++)
		e[i] = (struct metric_expect){ i < 4 ? "a" : "b", probs[i % 4], probs[i % 4][1] - '0' };
	const struct metric_reffail f[] = {
		{ "a", "L1/2", 1, 0, "the reference raised RuntimeError: boom\nTraceback (most recent call last)" },
		{ "a", "L1/2", 1, 1, "the reference raised RuntimeError: boom" }, /* the same problem: once */
		{ "a", "L1/1", 1, 1, "the reference cannot repeat its outputs" }, /* L1/1 has a verdict: judged */
		{ "b", "L1/2", 1, 0, "the reference raised RuntimeError: boom" },
	};
	struct metric_scope all = { METRICS_ALL, e, 8, f, 4, NULL }, judged = { METRICS_JUDGED, e, 8, f, 4, NULL };
	struct metrics m;
	struct sb_error err = { 0 };
	if (metrics_compute(rows, 2, NULL, 0, METRICS_FIRST, &all, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m.nunjudged, 2);
	assert_int_equal(m.nmissing, 4);             /* a: L1/3; b: L1/1, L1/3, L2/1 */
	const struct metric_cell *a = &m.agents[0].cells[0], *b = &m.agents[1].cells[0];
	assert_int_equal(a->problems, 3);            /* L1/1, L1/3 (no verdict: failed), L2/1; not L1/2 */
	assert_int_equal(a->unjudged, 1);
	assert_int_equal(a->missing, 1);
	assert_close(a->correct_pct, 100.0 / 3);
	assert_int_equal(m.agents[0].cells[1].problems, 2);
	assert_int_equal(m.agents[0].cells[1].unjudged, 1);
	assert_int_equal(b->problems, 3);
	assert_int_equal(b->unjudged, 1);
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "\n1 problem could not be judged: its reference failed, or the machine could not "
				       "run the candidate; the harness's, the problem's or the machine's failure, not the "
				       "agent's, so it is left out of the rates of the agents without a verdict for it: L1/2 "
				       "(a, b: the reference raised RuntimeError: boom...).\n"));
	assert_non_null(strstr(out.buf, "| not judged (left out) | 1 | 0 | 1 |"));
	strbuf_release(&out);
	json_t *j = metrics_json(&m), *rf = json_object_get(j, "reference_failures");
	assert_int_equal(json_array_size(rf), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rf, 1), "agent")), "b");
	json_t *cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "all");
	assert_int_equal(json_integer_value(json_object_get(cell, "problems_reference_failed")), 1);
	json_decref(j);
	metrics_release(&m);

	if (metrics_compute(rows, 2, NULL, 0, METRICS_FIRST, &judged, &m, &err))
		fail_msg("%s", err.msg);
	/* b has no verdict, yet its run reached it: listed without problems, its L1/2 not judged */
	assert_int_equal(m.nagents, 2);
	assert_int_equal(m.agents[1].cells[0].problems, 0);
	assert_int_equal(m.agents[1].cells[0].unjudged, 1);
	assert_int_equal(m.agents[0].cells[0].problems, 2);
	assert_int_equal(m.agents[0].cells[0].unjudged, 1);
	assert_int_equal(m.agents[0].cells[0].missing, 1); /* L1/3, counted apart from L1/2 */
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "1 problem could not be judged"));
	assert_non_null(strstr(out.buf, "\n- a vs b: no problem in common, nothing to compare.\n"));
	strbuf_release(&out);
	metrics_release(&m);
}

/* A verdict with a reward (docs/verdict.md): pass, fail and flagged pass. */
#define PASS_R(ag, p, l, s, a, se, rw) { ag, p, l, s, a, 1, 1, 0, se, NAN, 0, 0, NULL, 1, rw, 0, 0 }
#define WRONG_R(ag, p, l, s, a) { ag, p, l, s, a, 1, 0, 0, NAN, NAN, 0, 0, NULL, 1, 0, 0, 0 }
#define FLAGGED_R(ag, p, l, s, a, se, ids, rw) { ag, p, l, s, a, 1, 1, 0, se, NAN, 0, 1, ids, 1, rw, 0, 0 }

/* Agent "sc" on six level-3 problems, the run expecting all six:
 *   L3/1 pass 2.0 (reward 2.5)          L3/2 s0 pass 0.5 (reward 0.8), s1 pass 3.0 (reward 3.0)
 *   L3/3 pass 12.0 flagged H21 (reward 0: the judge saw the hack)
 *   L3/4 incorrect (reward 0)           L3/5 no verdict         L3/6 pass, not timed (no reward)
 * StitchCUDA's protocol, --by first: success 4/6; average speedup (2 + 0.5 + 12) / 6 = 2.41667, over the
 * 3 timed passes 4.8333; Fast1 2/6 (2.0 and 12.0); partial hacks 1/6; mean reward (2.5 + 0.8 + 0 + 0) / 4.
 * --by best: L3/2 is sample 1's 3.0, so (2 + 3 + 12) / 6 and Fast1 3/6, mean reward (2.5 + 3 + 0 + 0) / 4.
 * stitchbench's own fast_1 counts the clean 2.0 alone (1/6 by first). */
static void stitchcuda_protocol(void **state)
{
	(void)state;
	const struct metric_row rows[] = {
		PASS_R("sc", "L3/1", 3, 0, 0, 2.0, 2.5), PASS_R("sc", "L3/2", 3, 0, 0, 0.5, 0.8),
		PASS_R("sc", "L3/2", 3, 1, 0, 3.0, 3.0), FLAGGED_R("sc", "L3/3", 3, 0, 0, 12.0, "H21", 0),
		WRONG_R("sc", "L3/4", 3, 0, 0), PASS("sc", "L3/6", 3, 0, 0, NAN, NAN),
	};
	static const char *const probs[] = { "L3/1", "L3/2", "L3/3", "L3/4", "L3/5", "L3/6" };
	struct metric_expect e[6];
	for (size_t i = 0; i < 6; i++)
		e[i] = (struct metric_expect){ "sc", probs[i], 3 };
	struct metric_scope all = { METRICS_ALL, e, 6, NULL, 0, NULL };
	struct metrics m;
	struct sb_error err = { 0 };
	if (metrics_compute(rows, 6, NULL, 0, METRICS_FIRST, &all, &m, &err))
		fail_msg("%s", err.msg);
	const struct metric_cell *c = &m.agents[0].cells[3];
	const struct metric_stitchcuda *sc = &c->stitchcuda;
	assert_int_equal(c->problems, 6);
	assert_int_equal(c->correct, 4);
	assert_close(c->correct_pct, 400.0 / 6);
	assert_close(sc->mean_speedup, 14.5 / 6);
	assert_close(sc->mean_speedup_passes, 14.5 / 3);
	assert_int_equal(sc->timed_passes, 3);
	assert_int_equal(sc->fast1, 2);
	assert_close(sc->fast1_pct, 200.0 / 6);
	assert_close(c->fast_pct[3], 100.0 / 6); /* stitchbench's fast_1: the clean 2.0 alone */
	assert_int_equal(c->flagged, 1);
	assert_close(sc->mean_reward, 3.3 / 4);
	assert_int_equal(sc->rewarded, 4);
	assert_close(m.agents[0].cells[0].stitchcuda.mean_speedup, sc->mean_speedup); /* one level: all = L3 */

	/* the table is shown when asked, with the counts and the reward column */
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_null(strstr(out.buf, "StitchCUDA"));
	m.protocol = METRICS_PROTOCOL_STITCHCUDA;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| sc | L3 | 66.7% (4/6) | 2.417x | 4.833x (3) | 33.3% (2/6) | 16.7% (1/6) | 0.825 (4) |"));
	assert_non_null(strstr(out.buf, "a pass with a hack finding counts as correct and for speed"));
	strbuf_release(&out);
	json_t *j = metrics_json(&m);
	json_t *cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "3");
	json_t *jsc = json_object_get(cell, "stitchcuda");
	assert_string_equal(json_string_value(json_object_get(j, "protocol")), "stitchcuda");
	assert_close(json_number_value(json_object_get(jsc, "mean_speedup_eager")), 14.5 / 6);
	assert_int_equal(json_integer_value(json_object_get(jsc, "partial_hacks")), 1);
	assert_int_equal(json_integer_value(json_object_get(jsc, "fast_1")), 2);
	assert_int_equal(json_integer_value(json_object_get(jsc, "rewarded")), 4);
	json_decref(j);
	metrics_release(&m);

	/* the same representatives as the rest of the metrics: --by best takes L3/2's faster sample */
	if (metrics_compute(rows, 6, NULL, 0, METRICS_BEST, &all, &m, &err))
		fail_msg("%s", err.msg);
	sc = &m.agents[0].cells[3].stitchcuda;
	assert_close(sc->mean_speedup, 17.0 / 6);
	assert_int_equal(sc->fast1, 3);
	assert_close(sc->mean_reward, 5.5 / 4);
	j = metrics_json(&m); /* not asked: no StitchCUDA numbers */
	cell = json_object_get(json_object_get(json_array_get(json_object_get(j, "agents"), 0), "levels"), "3");
	assert_null(json_object_get(cell, "stitchcuda"));
	assert_string_equal(json_string_value(json_object_get(j, "protocol")), "stitchbench");
	json_decref(j);
	metrics_release(&m);

	/* without any reward, the table has no reward column; nothing correct averages 0 */
	const struct metric_row none[] = { WRONG("sc", "L3/1", 3, 0, 0), NOBUILD("sc", "L3/2", 3, 0, 0) };
	compute(none, 2, NULL, 0, METRICS_FIRST, &m);
	m.protocol = METRICS_PROTOCOL_STITCHCUDA;
	sc = &m.agents[0].cells[3].stitchcuda;
	assert_close(sc->mean_speedup, 0);
	assert_true(isnan(sc->mean_speedup_passes) && isnan(sc->mean_reward));
	strbuf_init(&out, 0);
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| sc | L3 | 0.0% (0/2) | 0.000x | n/a (0) | 0.0% (0/2) | 0.0% (0/2) |\n"));
	assert_null(strstr(out.buf, "mean reward"));
	strbuf_release(&out);
	metrics_release(&m);
}

/* ---------- agents compared in pairs ---------- */

static const char *const pair_probs[] = { "L1/1", "L1/2", "L1/3", "L1/4", "L1/5", "L1/6", "L1/7", "L1/8", "L1/9" };

/* Agent ag's clean pass at speedup s on pair_probs[i] (level 1), or a wrong answer when s is NAN. */
static struct metric_row pair_row(const char *ag, size_t i, double s)
{
	struct metric_row r = PASS(ag, pair_probs[i], 1, 0, 0, s, NAN);
	if (isnan(s))
		r = (struct metric_row)WRONG(ag, pair_probs[i], 1, 0, 0);
	return r;
}

/* b's speedups on the eight problems, spread over 0.8..1.6 */
static double pair_base(size_t i)
{
	return 0.8 + 0.8 * (double)i / 7;
}

static void pair_text(const struct metrics *m, size_t i, struct strbuf *out)
{
	strbuf_reset(out);
	metrics_pair_sentence(m, i, out, NULL);
}

/* The same speedups on the same problems: a ratio of exactly 1 and nothing to state, no agent marked best. */
static void pairs_identical(void **state)
{
	(void)state;
	struct metric_row rows[16];
	for (size_t i = 0; i < 8; i++) {
		rows[i] = pair_row("a", i, pair_base(i));
		rows[8 + i] = pair_row("b", i, pair_base(i));
	}
	struct metrics m;
	compute(rows, 16, NULL, 0, METRICS_FIRST, &m);
	assert_int_equal(m.npairs, 1);
	const struct metric_pair *p = &m.pairs[0];
	assert_int_equal(p->a, 0);
	assert_int_equal(p->b, 1);
	assert_int_equal(p->problems, 8);
	assert_int_equal(p->timed, 8);
	assert_true(p->speed_ratio == 1.0); /* ln(s / s) is exactly 0 */
	assert_true(p->speed_ci.lo <= 1 && p->speed_ci.hi >= 1);
	assert_int_equal(metrics_decide(&p->speed_ci, 1), METRICS_NO_DIFFERENCE);
	assert_close(p->correct_diff, 0);
	assert_close(p->fast1_diff, 0);
	struct strbuf out = STRBUF_INIT;
	pair_text(&m, 0, &out);
	assert_string_equal(out.buf, "a vs b (8 problems in common, 8 of them clean timed passes of both): no speed "
				     "difference this data can show between a and b (8 problems: 1.000x [1.000, 1.000]); no "
				     "correct % difference this data can show (+0.0 points [+0.0, +0.0]); no fast_1 % "
				     "difference this data can show (+0.0 points [+0.0, +0.0]).");
	assert_int_equal(metrics_best_agent(&m), -1); /* a tie */
	strbuf_reset(&out);
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "\n## Agents compared in pairs\n\nEach pair of agents over the problems both have"));
	assert_non_null(strstr(out.buf, "\n- a vs b (8 problems in common, 8 of them clean timed passes of both): no speed "
				       "difference this data can show between a and b (8 problems: 1.000x [1.000, 1.000]);"));
	assert_null(strstr(out.buf, "x (best)"));
	strbuf_release(&out);
	metrics_release(&m);
}

/* a about 1.5 times as fast as b on each of eight problems (3% either way): faster, the interval above 1,
 * and a marked best in the headline table. */
static void pairs_faster(void **state)
{
	(void)state;
	static const double wobble[3] = { 0.97, 1.0, 1.03 };
	struct metric_row rows[16];
	double logsum = 0;
	for (size_t i = 0; i < 8; i++) {
		rows[i] = pair_row("a", i, 1.5 * pair_base(i) * wobble[i % 3]);
		rows[8 + i] = pair_row("b", i, pair_base(i));
		logsum += log(1.5 * wobble[i % 3]);
	}
	struct metrics m;
	compute(rows, 16, NULL, 0, METRICS_FIRST, &m);
	const struct metric_pair *p = &m.pairs[0];
	assert_close(p->speed_ratio, exp(logsum / 8));
	assert_true(p->speed_ci.lo > 1 && p->speed_ci.lo <= p->speed_ratio && p->speed_ratio <= p->speed_ci.hi);
	assert_true(p->speed_ci.lo >= 1.5 * 0.97 - 1e-12 && p->speed_ci.hi <= 1.5 * 1.03 + 1e-12);
	assert_int_equal(metrics_decide(&p->speed_ci, 1), METRICS_HIGHER);
	assert_close(p->fast1_diff, 25); /* a's 8 against b's 6: b's 0.8 and 0.914.. are not faster than eager */
	struct strbuf out = STRBUF_INIT;
	pair_text(&m, 0, &out);
	assert_non_null(strstr(out.buf, "): a is faster than b on these 8 problems: 1.494x [1.4"));
	assert_non_null(strstr(out.buf, "; no correct % difference this data can show (+0.0 points [+0.0, +0.0]); "));
	assert_int_equal(metrics_best_agent(&m), 0);
	strbuf_reset(&out);
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "| a | 100.0 [100.0, 100.0] / 100.0 [100.0, 100.0] / "));
	assert_non_null(strstr(out.buf, "] (best) |\n| b | 100.0 [100.0, 100.0] / "));
	strbuf_release(&out);
	json_t *j = metrics_json(&m), *jp = json_array_get(json_object_get(j, "pairs"), 0);
	assert_string_equal(json_string_value(json_object_get(j, "best")), "a");
	assert_string_equal(json_string_value(json_object_get(jp, "a")), "a");
	assert_string_equal(json_string_value(json_object_get(jp, "speed")), "faster");
	assert_string_equal(json_string_value(json_object_get(jp, "correct")), "no difference");
	assert_int_equal(json_integer_value(json_object_get(jp, "timed")), 8);
	assert_close(json_number_value(json_object_get(jp, "speed_ratio")), p->speed_ratio);
	assert_close(json_number_value(json_array_get(json_object_get(jp, "speed_ratio_ci95"), 0)), p->speed_ci.lo);
	assert_non_null(strstr(json_string_value(json_object_get(jp, "sentence")), "a is faster than b"));
	json_decref(j);
	metrics_release(&m);

	/* the other way round (b's name first): slower, the interval below 1 */
	for (size_t i = 0; i < 8; i++)
		rows[i].agent = "c";
	compute(rows, 16, NULL, 0, METRICS_FIRST, &m);
	assert_string_equal(m.agents[m.pairs[0].a].name, "b");
	assert_int_equal(metrics_decide(&m.pairs[0].speed_ci, 1), METRICS_LOWER);
	assert_true(m.pairs[0].speed_ci.hi < 1);
	strbuf_init(&out, 0);
	pair_text(&m, 0, &out);
	assert_non_null(strstr(out.buf, "): b is slower than c on these 8 problems: 0.6"));
	assert_int_equal(metrics_best_agent(&m), 1);
	strbuf_release(&out);
	metrics_release(&m);
}

/* a higher geometric mean whose interval holds 1 is no lead: nothing is marked best. */
static void pairs_no_clear_lead(void **state)
{
	(void)state;
	static const double f[8] = { 1.6, 0.7, 1.5, 0.8, 1.4, 0.75, 1.3, 0.9 };
	struct metric_row rows[16];
	for (size_t i = 0; i < 8; i++) {
		rows[i] = pair_row("a", i, pair_base(i) * f[i]);
		rows[8 + i] = pair_row("b", i, pair_base(i));
	}
	struct metrics m;
	compute(rows, 16, NULL, 0, METRICS_FIRST, &m);
	assert_true(m.agents[0].cells[0].geomean_eager > m.agents[1].cells[0].geomean_eager);
	assert_true(m.pairs[0].speed_ratio > 1 && m.pairs[0].speed_ci.lo < 1);
	assert_int_equal(metrics_best_agent(&m), -1);
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_null(strstr(out.buf, "x (best)"));
	assert_non_null(strstr(out.buf, "- a vs b (8 problems in common, 8 of them clean timed passes of both): no speed "
				       "difference this data can show between a and b (8 problems: 1."));
	strbuf_release(&out);
	metrics_release(&m);
}

/* Correct on 8 of 8 against 4 of 8: +50 points, the interval above 0. The four problems b does not solve
 * count there and not in the speed ratio, which has the other four. */
static void pairs_correct(void **state)
{
	(void)state;
	struct metric_row rows[16];
	for (size_t i = 0; i < 8; i++) {
		rows[i] = pair_row("a", i, pair_base(i));
		rows[8 + i] = pair_row("b", i, i % 2 ? NAN : pair_base(i));
	}
	struct metrics m;
	compute(rows, 16, NULL, 0, METRICS_FIRST, &m);
	const struct metric_pair *p = &m.pairs[0];
	assert_int_equal(p->problems, 8);
	assert_int_equal(p->timed, 4);
	assert_close(p->correct_diff, 50);
	assert_true(p->correct_ci.lo > 0 && p->correct_ci.hi <= 100);
	assert_int_equal(metrics_decide(&p->correct_ci, 0), METRICS_HIGHER);
	assert_true(p->speed_ratio == 1.0);
	/* fast_1: a's problems 2..7 (1.0285.. up) less b's 2, 4, 6 */
	assert_close(p->fast1_diff, 100.0 * 3 / 8);
	struct strbuf out = STRBUF_INIT;
	pair_text(&m, 0, &out);
	assert_non_null(strstr(out.buf, "a vs b (8 problems in common, 4 of them clean timed passes of both): no speed "
					"difference this data can show between a and b (4 problems: 1.000x [1.000, 1.000]); a "
					"solves more problems than b: +50.0 points [+"));
	strbuf_release(&out);
	metrics_release(&m);
}

/* Only the problems both have count: a's L1/9 (a 100x pass) and b's L2/1 are left out of the pair. Too
 * few timed problems in common say so. */
static void pairs_shared_only(void **state)
{
	(void)state;
	struct metric_row rows[18];
	for (size_t i = 0; i < 8; i++) {
		rows[i] = pair_row("a", i, 1.2 * pair_base(i));
		rows[8 + i] = pair_row("b", i, pair_base(i));
	}
	rows[16] = pair_row("a", 8, 100.0);
	rows[17] = (struct metric_row)PASS("b", "L2/1", 2, 0, 0, 0.01, NAN);
	struct metrics m;
	compute(rows, 18, NULL, 0, METRICS_FIRST, &m);
	const struct metric_pair *p = &m.pairs[0];
	assert_int_equal(m.agents[0].nproblems, 9);
	assert_int_equal(m.agents[1].nproblems, 9);
	assert_int_equal(p->problems, 8);
	assert_int_equal(p->timed, 8);
	assert_close(p->speed_ratio, 1.2);
	assert_close(p->correct_diff, 0);
	assert_true(p->speed_ci.hi < 1.2 + 1e-9); /* the 100x never drawn */
	metrics_release(&m);

	/* one problem in common: too little data, for speed and for the rates */
	const struct metric_row one[] = { pair_row("a", 0, 2.0), pair_row("b", 0, 1.0), pair_row("b", 1, 1.0) };
	compute(one, 3, NULL, 0, METRICS_FIRST, &m);
	p = &m.pairs[0];
	assert_int_equal(p->problems, 1);
	assert_close(p->speed_ratio, 2.0);
	assert_true(isnan(p->speed_ci.lo) && isnan(p->correct_ci.lo) && isnan(p->fast1_ci.hi));
	assert_int_equal(metrics_best_agent(&m), -1);
	struct strbuf out = STRBUF_INIT;
	pair_text(&m, 0, &out);
	assert_string_equal(out.buf, "a vs b (1 problem in common, 1 of them clean timed passes of both): too little data "
				     "to compare the speed of a and b (1 problem both pass cleanly with a speedup; 2 are "
				     "needed); too little data to compare correct % (1 problem in common; 2 are needed); too "
				     "little data to compare fast_1 % (1 problem in common; 2 are needed).");
	json_t *j = metrics_json(&m), *jp = json_array_get(json_object_get(j, "pairs"), 0);
	assert_true(json_is_null(json_object_get(jp, "speed_ratio_ci95")));
	assert_string_equal(json_string_value(json_object_get(jp, "speed")), "too little data");
	assert_true(json_is_null(json_object_get(j, "best")));
	json_decref(j);
	metrics_release(&m);

	/* one agent: no pairs, no section */
	compute(one, 1, NULL, 0, METRICS_FIRST, &m);
	assert_int_equal(m.npairs, 0);
	strbuf_reset(&out);
	metrics_table(&m, &out);
	assert_null(strstr(out.buf, "Agents compared in pairs"));
	j = metrics_json(&m);
	assert_int_equal(json_array_size(json_object_get(j, "pairs")), 0);
	json_decref(j);
	strbuf_release(&out);
	metrics_release(&m);
}

/* The same input gives the same intervals: the bootstrap is seeded. */
/* Passes timed on a busy machine (timing.noise.noisy) are counted per cell and named in a warning; a noisy
 * verdict that is not a clean timed pass is not (its speedup counts nowhere). */
static void noisy_timings_are_counted_and_said(void **state)
{
	(void)state;
	struct metric_row rows[] = {
		PASS("a", "L1/1", 1, 0, 0, 1.5, NAN), PASS("a", "L1/2", 1, 0, 0, 2.0, NAN), PASS("a", "L1/3", 1, 0, 0, 0.9, NAN),
		WRONG("a", "L1/4", 1, 0, 0), PASS("b", "L1/1", 1, 0, 0, 1.4, NAN),
	};
	rows[0].noisy = rows[2].noisy = rows[3].noisy = 1;
	struct metrics m;
	struct sb_error err;
	assert_int_equal(metrics_compute(rows, 5, NULL, 0, METRICS_BEST, NULL, &m, &err), 0);
	assert_int_equal(m.agents[0].cells[0].timed, 3);
	assert_int_equal(m.agents[0].cells[0].noisy, 2);
	assert_int_equal(m.agents[1].cells[0].noisy, 0);
	struct strbuf out = STRBUF_INIT;
	metrics_table(&m, &out);
	assert_non_null(strstr(out.buf, "Warning: 2 of the 3 timed problems of a were timed on a busy machine"));
	assert_null(strstr(out.buf, "problems of b were timed"));
	strbuf_release(&out);
	metrics_release(&m);
	rows[0].noisy = rows[2].noisy = 0;
	assert_int_equal(metrics_compute(rows, 5, NULL, 0, METRICS_BEST, NULL, &m, &err), 0);
	metrics_table(&m, &out);
	assert_null(strstr(out.buf, "busy machine"));
	strbuf_release(&out);
	metrics_release(&m);
}

static void pairs_deterministic(void **state)
{
	(void)state;
	struct metric_row rows[16];
	for (size_t i = 0; i < 8; i++) {
		rows[i] = pair_row("a", i, i % 3 ? 1.3 * pair_base(i) : NAN);
		rows[8 + i] = pair_row("b", i, pair_base(i) * (i % 2 ? 1.1 : 0.8));
	}
	struct metrics m, again;
	compute(rows, 16, NULL, 0, METRICS_FIRST, &m);
	compute(rows, 16, NULL, 0, METRICS_FIRST, &again);
	const struct metric_pair *p = &m.pairs[0], *q = &again.pairs[0];
	assert_false(isnan(p->speed_ci.lo));
	assert_true(p->speed_ci.lo < p->speed_ci.hi && p->correct_ci.lo < p->correct_ci.hi);
	assert_true(p->speed_ci.lo == q->speed_ci.lo && p->speed_ci.hi == q->speed_ci.hi);
	assert_true(p->correct_ci.lo == q->correct_ci.lo && p->correct_ci.hi == q->correct_ci.hi);
	assert_true(p->fast1_ci.lo == q->fast1_ci.lo && p->fast1_ci.hi == q->fast1_ci.hi);
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	metrics_table(&m, &x);
	metrics_table(&again, &y);
	assert_string_equal(x.buf, y.buf);
	strbuf_release(&x);
	strbuf_release(&y);
	metrics_release(&again);
	metrics_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ties_at_p),
		cmocka_unit_test(unavailable_agents),
		cmocka_unit_test(nothing_correct),
		cmocka_unit_test(everything_a_hack),
		cmocka_unit_test(two_levels_first),
		cmocka_unit_test(two_levels_best),
		cmocka_unit_test(missing_verdicts),
		cmocka_unit_test(flagged_passes),
		cmocka_unit_test(robust_failures),
		cmocka_unit_test(reference_failures),
		cmocka_unit_test(stitchcuda_protocol),
		cmocka_unit_test(pairs_identical),
		cmocka_unit_test(pairs_faster),
		cmocka_unit_test(pairs_no_clear_lead),
		cmocka_unit_test(pairs_correct),
		cmocka_unit_test(pairs_shared_only),
		cmocka_unit_test(pairs_deterministic),
		cmocka_unit_test(noisy_timings_are_counted_and_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
