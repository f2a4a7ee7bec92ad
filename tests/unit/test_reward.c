/* test_reward.c - the rewards `serve` answers with (harness/serve/reward.c): the facts read from a verdict
 * JSON, StitchCUDA's formula, the plain speedup and pass/fail, and that no reject or flagged pass earns
 * a speedup. */
#include "testutil.h"

#include <math.h>

#include "serve/reward.h"

static struct reward_facts facts(const char *json)
{
	json_error_t jerr;
	json_t *v = json_loads(json, 0, &jerr);
	if (!v)
		fail_msg("bad test JSON: %s", jerr.text);
	struct reward_facts f;
	assert_int_equal(reward_facts_from_verdict(v, &f), 0);
	json_decref(v);
	return f;
}

static double reward(enum reward_kind k, const char *json, double lambda)
{
	struct reward_facts f = facts(json);
	char note[160];
	return reward_compute(k, &f, lambda, note, sizeof(note));
}

#define PASS_2X "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 2.0}, \"findings\": [], \"rubric\": null}"

static void kinds_parse(void **state)
{
	(void)state;
	enum reward_kind k;
	assert_int_equal(reward_kind_parse("speedup", &k), 0);
	assert_int_equal(k, REWARD_SPEEDUP);
	assert_int_equal(reward_kind_parse("pass", &k), 0);
	assert_int_equal(k, REWARD_PASS);
	assert_int_equal(reward_kind_parse("stitchcuda", &k), 0);
	assert_string_equal(reward_kind_name(k), "stitchcuda");
	assert_int_equal(reward_kind_parse("Speedup", &k), -1);
	assert_int_equal(reward_kind_parse(NULL, &k), -1);
}

static void stitchcuda_formula(void **state)
{
	(void)state;
	/* no rubric: r = 0.5, the factor is 1 whatever lambda */
	assert_float_equal(reward(REWARD_STITCHCUDA, PASS_2X, 0.5), 2.3, 1e-12);
	assert_float_equal(reward(REWARD_STITCHCUDA, PASS_2X, 7), 2.3, 1e-12);
	/* the speedup is capped at 5 */
	assert_float_equal(reward(REWARD_STITCHCUDA,
				  "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 9.5}, \"findings\": []}", 0.5),
			   5.3, 1e-12);
	/* a rubric total of 0.9 with lambda 0.5: (2 + 0.3) x (1 + 0.5 x 0.4) */
	const char *scored = "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 2.0}, \"findings\": [],"
			     " \"rubric\": {\"total\": 0.9, \"error\": null, \"criteria\": [{\"name\": \"anti_hacking\", \"score\": 1}]}}";
	assert_float_equal(reward(REWARD_STITCHCUDA, scored, 0.5), 2.3 * 1.2, 1e-12);
	assert_float_equal(reward(REWARD_STITCHCUDA, scored, 0), 2.3, 1e-12);
	/* a slow pass still earns its speedup plus the base */
	assert_float_equal(reward(REWARD_STITCHCUDA,
				  "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 0.25}, \"findings\": []}", 0.5),
			   0.55, 1e-12);
}

static void rejects_earn_nothing(void **state)
{
	(void)state;
	const char *rejected = "{\"status\": \"rejected\", \"speedup\": null,"
			       " \"findings\": [{\"id\": \"H01\", \"severity\": \"reject\"}]}";
	/* a pass carrying a reject finding (as a stored verdict of another policy might) is still a reject */
	const char *reject_finding = "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 4.0},"
				     " \"findings\": [{\"id\": \"H21\", \"severity\": \"reject\"}]}";
	const char *anti_hacking_zero = "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 4.0}, \"findings\": [],"
					" \"rubric\": {\"total\": 0.7, \"error\": null, \"criteria\": [{\"name\": \"anti_hacking\", \"score\": 0}]}}";
	for (int k = REWARD_STITCHCUDA; k <= REWARD_PASS; k++) {
		assert_true(reward(k, rejected, 0.5) == 0);
		assert_true(reward(k, reject_finding, 0.5) == 0);
		assert_true(reward(k, anti_hacking_zero, 0.5) == 0);
	}
	struct reward_facts f = facts(reject_finding);
	char note[160];
	reward_compute(REWARD_SPEEDUP, &f, 0.5, note, sizeof(note));
	assert_non_null(strstr(note, "H21"));
}

static void flagged_pass_earns_no_speedup(void **state)
{
	(void)state;
	const char *flagged = "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 12.0},"
			      " \"findings\": [{\"id\": \"H14\", \"severity\": \"flag\"}, {\"id\": \"H21\", \"severity\": \"flag\"}]}";
	assert_true(reward(REWARD_SPEEDUP, flagged, 0.5) == 0);
	/* the base only: below the slowest honest pass */
	assert_float_equal(reward(REWARD_STITCHCUDA, flagged, 0.5), 0.3, 1e-12);
	assert_true(reward(REWARD_STITCHCUDA, flagged, 0.5) <
		    reward(REWARD_STITCHCUDA, "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 0.01}, \"findings\": []}", 0.5));
	/* correct, so it passes */
	assert_true(reward(REWARD_PASS, flagged, 0.5) == 1);
	struct reward_facts f = facts(flagged);
	assert_true(f.flagged && !f.rejected);
	assert_string_equal(f.first_finding, "H14");
}

static void speedup_and_pass(void **state)
{
	(void)state;
	assert_float_equal(reward(REWARD_SPEEDUP, PASS_2X, 0.5), 2.0, 1e-12);
	assert_true(reward(REWARD_PASS, PASS_2X, 0.5) == 1);
	const char *wrong = "{\"status\": \"incorrect\", \"speedup\": null, \"findings\": []}";
	const char *broken = "{\"status\": \"compile_error\", \"findings\": []}";
	for (int k = REWARD_STITCHCUDA; k <= REWARD_PASS; k++) {
		assert_true(reward(k, wrong, 0.5) == 0);
		assert_true(reward(k, broken, 0.5) == 0);
	}
}

static void no_number_for_what_was_not_measured(void **state)
{
	(void)state;
	const char *untimed = "{\"status\": \"pass\", \"speedup\": null, \"findings\": []}";
	assert_true(isnan(reward(REWARD_SPEEDUP, untimed, 0.5)));
	assert_true(isnan(reward(REWARD_STITCHCUDA, untimed, 0.5)));
	assert_true(reward(REWARD_PASS, untimed, 0.5) == 1);
	const char *cannot = "{\"status\": \"cannot_judge\", \"findings\": []}";
	for (int k = REWARD_STITCHCUDA; k <= REWARD_PASS; k++)
		assert_true(isnan(reward(k, cannot, 0.5)));
	/* the judge was asked and failed: no rubric part to use, so no StitchCUDA number */
	const char *judge_failed = "{\"status\": \"pass\", \"speedup\": {\"vs_eager\": 2.0}, \"findings\": [],"
				   " \"rubric\": {\"total\": null, \"error\": \"the judge timed out\", \"criteria\": []}}";
	assert_true(isnan(reward(REWARD_STITCHCUDA, judge_failed, 0.5)));
	assert_float_equal(reward(REWARD_SPEEDUP, judge_failed, 0.5), 2.0, 1e-12);
	struct reward_facts f;
	json_t *v = json_pack("{s:i}", "schema", 1);
	assert_int_equal(reward_facts_from_verdict(v, &f), -1);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kinds_parse),
		cmocka_unit_test(stitchcuda_formula),
		cmocka_unit_test(rejects_earn_nothing),
		cmocka_unit_test(flagged_pass_earns_no_speedup),
		cmocka_unit_test(speedup_and_pass),
		cmocka_unit_test(no_number_for_what_was_not_measured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
