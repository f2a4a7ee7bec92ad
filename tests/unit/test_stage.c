/* test_stage.c - every transition of the stage machine (harness/agents/stage.c): each stage from each
 * kind of last attempt, each replan trigger at and below its threshold, each stop rule and their order. */
#include "testutil.h"

#include <math.h>

#include "agents/stage.h"

#define C(s) { CLASS_CORRECT, (s), NAN }
#define CI(s, lo) { CLASS_CORRECT, (s), (lo) }
#define COMPILE { CLASS_COMPILE, NAN, NAN }
#define WRONG { CLASS_WRONG, NAN, NAN }

static struct stage_policy policy(void)
{
	struct stage_policy p = { .max_attempts = 10, .target_speedup = 2.0, .replan = 1, .max_replans = 2,
				  .replan_compile_failures = 2, .replan_wrong_results = 2, .replan_stagnant = 2,
				  .stagnation_pct = 5.0 };
	return p;
}

static struct stage_decision decide(const struct stage_policy *p, const struct attempt_summary *h, size_t n,
				    size_t since, int replans)
{
	struct stage_input in = { h, n, since, replans, 0, 0 };
	return stage_decide(p, &in);
}

static void assert_attempt(struct stage_decision d, enum agent_stage want)
{
	if (d.action != ACT_ATTEMPT || d.stage != want)
		fail_msg("expected an attempt in stage %s, got action %d stage %s stop %s replan %s", stage_name(want),
			 d.action, stage_name(d.stage), stop_reason_name(d.stop), replan_reason_name(d.replan));
}

static void assert_replan(struct stage_decision d, enum replan_reason want)
{
	if (d.action != ACT_REPLAN || d.replan != want)
		fail_msg("expected a replan for %s, got action %d stage %s replan %s", replan_reason_name(want), d.action,
			 stage_name(d.stage), replan_reason_name(d.replan));
}

static void assert_stop(struct stage_decision d, enum stop_reason want)
{
	if (d.action != ACT_STOP || d.stop != want)
		fail_msg("expected a stop for %s, got action %d stage %s stop %s", stop_reason_name(want), d.action,
			 stage_name(d.stage), stop_reason_name(d.stop));
}

static void first_attempt_is_a_draft(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	assert_attempt(decide(&p, NULL, 0, 0, 0), STAGE_DRAFT);
}

static void each_last_attempt_picks_its_stage(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary compile[] = { COMPILE }, wrong[] = { WRONG }, slow[] = { C(0.4) },
				     fast[] = { C(1.3) }, even[] = { C(1.0) }, untimed[] = { C(NAN) };
	assert_attempt(decide(&p, compile, 1, 0, 0), STAGE_REPAIR_COMPILE);
	assert_attempt(decide(&p, wrong, 1, 0, 0), STAGE_REPAIR_CORRECTNESS);
	assert_attempt(decide(&p, slow, 1, 0, 0), STAGE_OPTIMIZE_PERFORMANCE);
	assert_attempt(decide(&p, fast, 1, 0, 0), STAGE_OPTIMIZE);
	assert_attempt(decide(&p, even, 1, 0, 0), STAGE_OPTIMIZE); /* as fast as eager: push further */
	assert_attempt(decide(&p, untimed, 1, 0, 0), STAGE_OPTIMIZE_PERFORMANCE);
}

static void the_last_attempt_decides_not_the_best(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	/* a correct attempt, then an optimisation that broke correctness: repair it */
	const struct attempt_summary h[] = { C(1.2), WRONG };
	assert_attempt(decide(&p, h, 2, 0, 0), STAGE_REPAIR_CORRECTNESS);
	const struct attempt_summary h2[] = { WRONG, COMPILE };
	assert_attempt(decide(&p, h2, 2, 0, 0), STAGE_REPAIR_COMPILE);
}

static void compile_failures_trigger_a_replan_at_the_threshold(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary h[] = { COMPILE, COMPILE, COMPILE };
	assert_attempt(decide(&p, h, 1, 0, 0), STAGE_REPAIR_COMPILE); /* one is below the threshold */
	assert_replan(decide(&p, h, 2, 0, 0), REPLAN_COMPILE);
	p.replan_compile_failures = 3;
	assert_attempt(decide(&p, h, 2, 0, 0), STAGE_REPAIR_COMPILE);
	assert_replan(decide(&p, h, 3, 0, 0), REPLAN_COMPILE);
	/* not consecutive: a wrong result in between resets the count */
	p = policy();
	const struct attempt_summary mixed[] = { COMPILE, WRONG, COMPILE };
	assert_attempt(decide(&p, mixed, 3, 0, 0), STAGE_REPAIR_COMPILE);
}

static void wrong_results_trigger_a_replan_at_the_threshold(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary h[] = { WRONG, WRONG, WRONG };
	assert_attempt(decide(&p, h, 1, 0, 0), STAGE_REPAIR_CORRECTNESS);
	assert_replan(decide(&p, h, 2, 0, 0), REPLAN_WRONG);
	p.replan_wrong_results = 3;
	assert_attempt(decide(&p, h, 2, 0, 0), STAGE_REPAIR_CORRECTNESS);
	assert_replan(decide(&p, h, 3, 0, 0), REPLAN_WRONG);
	/* a compile failure is not a wrong result */
	p = policy();
	const struct attempt_summary mixed[] = { WRONG, COMPILE };
	assert_attempt(decide(&p, mixed, 2, 0, 0), STAGE_REPAIR_COMPILE);
}

static void stagnation_triggers_a_replan_within_the_percentage(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary close[] = { C(1.50), C(1.54) };   /* 0.04 <= 5% of 1.54 */
	const struct attempt_summary apart[] = { C(1.40), C(1.54) };   /* 0.14 > 5% of 1.54 */
	const struct attempt_summary slow[] = { C(0.50), C(0.54) };    /* 0.04 <= 5% of max(1, 0.54) */
	const struct attempt_summary slow_apart[] = { C(0.50), C(0.56) };
	assert_replan(decide(&p, close, 2, 0, 0), REPLAN_STAGNANT);
	assert_attempt(decide(&p, apart, 2, 0, 0), STAGE_OPTIMIZE);
	assert_replan(decide(&p, slow, 2, 0, 0), REPLAN_STAGNANT);
	assert_attempt(decide(&p, slow_apart, 2, 0, 0), STAGE_OPTIMIZE_PERFORMANCE);
	p.stagnation_pct = 10;
	assert_replan(decide(&p, apart, 2, 0, 0), REPLAN_STAGNANT);
	/* one correct attempt is not stagnation; the threshold is a count */
	p = policy();
	assert_attempt(decide(&p, close, 1, 0, 0), STAGE_OPTIMIZE);
	p.replan_stagnant = 3;
	assert_attempt(decide(&p, close, 2, 0, 0), STAGE_OPTIMIZE);
	/* an untimed correct attempt gives no evidence of stagnation */
	p = policy();
	const struct attempt_summary untimed[] = { C(NAN), C(NAN) };
	assert_attempt(decide(&p, untimed, 2, 0, 0), STAGE_OPTIMIZE_PERFORMANCE);
	/* a wrong attempt between two close correct ones breaks the run */
	const struct attempt_summary broken[] = { C(1.50), WRONG, C(1.52) };
	assert_attempt(decide(&p, broken, 3, 0, 0), STAGE_OPTIMIZE);
}

static void only_attempts_since_the_plan_count(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary h[] = { COMPILE, COMPILE, COMPILE, COMPILE };
	/* replanned after attempt 2: the next attempt is a fresh draft, then one failure is not enough */
	assert_attempt(decide(&p, h, 2, 2, 1), STAGE_DRAFT);
	assert_attempt(decide(&p, h, 3, 2, 1), STAGE_REPAIR_COMPILE);
	assert_replan(decide(&p, h, 4, 2, 1), REPLAN_COMPILE);
	const struct attempt_summary s[] = { C(1.5), C(1.51), C(1.52) };
	assert_attempt(decide(&p, s, 3, 2, 1), STAGE_OPTIMIZE);
}

static void replans_stop_at_the_maximum(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary h[] = { WRONG, WRONG };
	assert_replan(decide(&p, h, 2, 0, 1), REPLAN_WRONG);
	assert_attempt(decide(&p, h, 2, 0, 2), STAGE_REPAIR_CORRECTNESS);
	p.max_replans = 0;
	assert_attempt(decide(&p, h, 2, 0, 0), STAGE_REPAIR_CORRECTNESS);
	p = policy();
	p.replan = 0; /* an agent without a planner never replans */
	assert_attempt(decide(&p, h, 2, 0, 0), STAGE_REPAIR_CORRECTNESS);
}

static void target_speedup_stops(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary reached[] = { C(1.1), C(2.0) };
	const struct attempt_summary earlier[] = { C(2.5), WRONG };     /* the best counts, not the last */
	const struct attempt_summary below[] = { C(1.1), C(1.99) };
	assert_stop(decide(&p, reached, 2, 0, 0), STOP_TARGET);
	assert_stop(decide(&p, earlier, 2, 0, 0), STOP_TARGET);
	assert_attempt(decide(&p, below, 2, 0, 0), STAGE_OPTIMIZE);
	/* a target of 0 stops at the first correct attempt, timed or not */
	p.target_speedup = 0;
	const struct attempt_summary untimed[] = { WRONG, C(NAN) };
	assert_stop(decide(&p, untimed, 2, 0, 0), STOP_TARGET);
	assert_attempt(decide(&p, untimed, 1, 0, 0), STAGE_REPAIR_CORRECTNESS);
	/* a high speedup on a wrong attempt is no speedup */
	p = policy();
	const struct attempt_summary wrong_fast[] = { { CLASS_WRONG, 9.0, 8.0 } };
	assert_attempt(decide(&p, wrong_fast, 1, 0, 0), STAGE_REPAIR_CORRECTNESS);
}

/* With an interval, its low end decides: a point above the target whose interval reaches below it is a
 * gain the measurement cannot show, so the sample goes on; one attempt whose whole interval clears it
 * stops it, whichever attempt that is. */
static void the_target_needs_the_whole_interval(void **state)
{
	(void)state;
	struct stage_policy p = policy(); /* target 2.0 */
	const struct attempt_summary noisy[] = { CI(2.4, 1.7) };
	const struct attempt_summary sure[] = { CI(2.4, 1.7), CI(2.1, 2.05) };
	const struct attempt_summary edge[] = { CI(2.3, 2.0) };
	assert_attempt(decide(&p, noisy, 1, 0, 0), STAGE_OPTIMIZE);
	assert_stop(decide(&p, sure, 2, 0, 0), STOP_TARGET);
	assert_stop(decide(&p, edge, 1, 0, 0), STOP_TARGET);
	/* nor does a noisy attempt above the target count as stagnating below it */
	p.replan_stagnant = 2;
	const struct attempt_summary two_noisy[] = { CI(2.40, 1.7), CI(2.41, 1.7) };
	struct stage_decision d = decide(&p, two_noisy, 2, 0, 0);
	assert_int_equal(d.stop, STOP_NONE);
	assert_int_equal(d.replan, REPLAN_STAGNANT);
}

static void budgets_stop(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary h[] = { WRONG, COMPILE, WRONG };
	p.max_attempts = 3;
	assert_stop(decide(&p, h, 3, 0, 0), STOP_ATTEMPTS);
	assert_attempt(decide(&p, h, 2, 0, 0), STAGE_REPAIR_COMPILE);
	p = policy();
	p.max_tokens = 1000;
	struct stage_input in = { h, 1, 0, 0, 999, 0 };
	assert_attempt(stage_decide(&p, &in), STAGE_REPAIR_CORRECTNESS);
	in.tokens = 1000;
	assert_stop(stage_decide(&p, &in), STOP_TOKENS);
	p = policy();
	p.max_wall_s = 60;
	in.tokens = 1u << 30; /* no token limit now */
	in.seconds = 59.9;
	assert_attempt(stage_decide(&p, &in), STAGE_REPAIR_CORRECTNESS);
	in.seconds = 60;
	assert_stop(stage_decide(&p, &in), STOP_WALL);
}

static void stop_rules_come_before_replans(void **state)
{
	(void)state;
	struct stage_policy p = policy();
	const struct attempt_summary h[] = { COMPILE, COMPILE };
	p.max_attempts = 2; /* a replan would be due, but the budget is spent */
	assert_stop(decide(&p, h, 2, 0, 0), STOP_ATTEMPTS);
	/* the target beats the budget: reaching it on the last attempt is a success */
	const struct attempt_summary win[] = { WRONG, C(3.0) };
	assert_stop(decide(&p, win, 2, 0, 0), STOP_TARGET);
	assert_int_equal(stage_should_stop(&p, &(struct stage_input){ win, 2, 0, 0, 0, 0 }), STOP_TARGET);
}

static void names_round_trip(void **state)
{
	(void)state;
	for (int s = 0; s < STAGE_COUNT; s++)
		assert_int_equal(stage_parse(stage_name((enum agent_stage)s)), s);
	assert_int_equal(stage_parse("polish"), -1);
	assert_int_equal(attempt_class_of("pass"), CLASS_CORRECT);
	assert_int_equal(attempt_class_of("format_error"), CLASS_COMPILE);
	assert_int_equal(attempt_class_of("compile_error"), CLASS_COMPILE);
	assert_int_equal(attempt_class_of("rejected"), CLASS_WRONG);
	assert_int_equal(attempt_class_of("timeout"), CLASS_WRONG);
	int idx;
	const struct attempt_summary h[] = { C(NAN), WRONG, C(1.5), C(1.2) };
	assert_true(stage_best(h, 4, &idx) == 1.5);
	assert_int_equal(idx, 2);
	assert_true(isnan(stage_best(h, 1, &idx)));
	assert_int_equal(idx, 0); /* correct but untimed still stands for the sample */
	assert_true(isnan(stage_best(h + 1, 1, &idx)));
	assert_int_equal(idx, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_attempt_is_a_draft),
		cmocka_unit_test(each_last_attempt_picks_its_stage),
		cmocka_unit_test(the_last_attempt_decides_not_the_best),
		cmocka_unit_test(compile_failures_trigger_a_replan_at_the_threshold),
		cmocka_unit_test(wrong_results_trigger_a_replan_at_the_threshold),
		cmocka_unit_test(stagnation_triggers_a_replan_within_the_percentage),
		cmocka_unit_test(only_attempts_since_the_plan_count),
		cmocka_unit_test(replans_stop_at_the_maximum),
		cmocka_unit_test(target_speedup_stops),
		cmocka_unit_test(the_target_needs_the_whole_interval),
		cmocka_unit_test(budgets_stop),
		cmocka_unit_test(stop_rules_come_before_replans),
		cmocka_unit_test(names_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
