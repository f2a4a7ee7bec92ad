/* test_rubric.c - the optional rubric judge (harness/checks/rubric.c): the rubric file and its errors,
 * strict reading of the judge's answer, and one real call to the fake LLM server on 127.0.0.1. */
#include "fake_llm.h"

#include <math.h>

#include "agents/judge.h"
#include "checks/rubric.h"
#include "eval/verdict.h"

static const char good_yaml[] =
	"criteria:\n"
	"  - name: own_kernels\n"
	"    weight: 3\n"
	"    description: The forward path runs the candidate's own kernels, not PyTorch ops.\n"
	"  - name: readable\n"
	"    description: Someone else could maintain it.\n";

static struct rubric load_ok(const char *dir)
{
	write_file(dir, "rubric.yaml", good_yaml);
	char *path = xstrfmt("%s/rubric.yaml", dir);
	struct rubric r;
	struct sb_error err = { 0 };
	if (rubric_load(path, &r, &err))
		fail_msg("rubric_load: %s", err.msg);
	free(path);
	return r;
}

static void load_and_errors(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct rubric r = load_ok(dir);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.v[0].name, "own_kernels");
	assert_true(r.v[0].weight == 3 && r.v[1].weight == 1); /* weight defaults to 1 */
	assert_non_null(strstr(r.v[1].description, "maintain"));
	rubric_release(&r);

	static const struct { const char *yaml, *want; } bad[] = {
		{ "criteria:\n  - name: a\n", "rubric.yaml:2:5: a criterion needs a name and a description" },
		{ "criteria:\n  - {name: a, description: x}\n  - {name: a, description: y}\n", "two criteria have the same name" },
		{ "criteria:\n  - {name: a, weight: -1, description: x}\n", "weight is a number above 0" },
		{ "criteria:\n  - {name: A b, description: x}\n", "lower case letters, digits and _" },
		{ "criteria:\n  - {name: a, colour: red, description: x}\n", "unknown criterion field" },
		{ "criteria: []\n", "the rubric needs criteria" },
		{ "rules: []\n", "rubric.yaml:1:1: unknown key (known: criteria)" },
		{ "criteria: [\n", "rubric.yaml:" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(dir, "rubric.yaml", bad[i].yaml);
		char *path = xstrfmt("%s/rubric.yaml", dir);
		struct sb_error err = { 0 };
		assert_int_equal(rubric_load(path, &r, &err), SB_EINPUT);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].want);
		free(path);
	}
	struct sb_error err = { 0 };
	assert_int_equal(rubric_load("/nonexistent/rubric.yaml", &r, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "checks.rubric: cannot read /nonexistent/rubric.yaml"));
	tmpdir_remove(dir);
}

static void answers(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct rubric r = load_ok(dir);
	struct rubric_result out;
	struct sb_error err = { 0 };

	/* in a fence, after prose, with a second line in a reason: total = (3*1 + 1*0.5) / 4 */
	memset(&out, 0, sizeof(out));
	assert_int_equal(rubric_parse_answer(&r, "Here you go:\n```json\n{\"scores\": [{\"criterion\": \"readable\", "
					     "\"score\": 0.5, \"reason\": \"dense\\nsecond line\"}, {\"criterion\": "
					     "\"own_kernels\", \"score\": 1, \"reason\": \"a CUDA kernel\"}]}\n```", &out, &err), 0);
	assert_int_equal(out.n, 2);
	assert_string_equal(out.v[0].name, "own_kernels"); /* in the rubric's order */
	assert_string_equal(out.v[1].reason, "dense");
	assert_true(fabs(out.total - 0.875) < 1e-12);
	json_t *j = rubric_result_json(&out);
	assert_true(json_number_value(json_object_get(j, "total")) == 0.875);
	assert_true(json_is_null(json_object_get(j, "error")));
	json_decref(j);
	rubric_result_release(&out);

	static const struct { const char *text, *want; } bad[] = {
		{ "{\"scores\": [{\"criterion\": \"own_kernels\", \"score\": 1, \"reason\": \"x\"}]}", "no score for readable" },
		{ "{\"scores\": [{\"criterion\": \"own_kernels\", \"score\": 1.5}, {\"criterion\": \"readable\", \"score\": 0}]}",
		  "own_kernels is not a number within 0..1" },
		{ "{\"scores\": [{\"criterion\": \"own_kernels\", \"score\": \"high\"}]}", "not a number within 0..1" },
		{ "I think it is great.", "no JSON object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&out, 0, sizeof(out));
		assert_int_equal(rubric_parse_answer(&r, bad[i].text, &out, &err), SB_EINPUT);
		assert_int_equal(out.n, 0);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].want);
	}
	rubric_release(&r);
	tmpdir_remove(dir);
}

/* The fake LLM server answering the judge with script, and a client of it. */
static struct llm_fixture *judge_fixture(const char *script)
{
	struct llm_fixture *x = fixture_start("openai", "sk-judge", script);
	if (llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err))
		fail_msg("llm_client_new: %s", x->err.msg);
	return x;
}

static void judge_over_http(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct rubric r = load_ok(dir);
	struct llm_fixture *x = judge_fixture(
			"[{'content': '{\\\"scores\\\": [{\\\"criterion\\\": \\\"own_kernels\\\", \\\"score\\\": 0.25, "
			"\\\"reason\\\": \\\"calls torch.matmul\\\"}, {\\\"criterion\\\": \\\"readable\\\", \\\"score\\\": 1, "
			"\\\"reason\\\": \\\"short\\\"}]}'}, {'status': 500, 'repeat': 3}]");
	struct rubric_result out;
	rubric_judge(x->c, "fake", &r, "judge", "L1/1", 3, 0, "class Model: pass", "class ModelNew: torch.matmul", &out);
	if (out.error)
		fail_msg("judge: %s", out.error);
	assert_int_equal(out.n, 2);
	assert_true(out.v[0].score == 0.25 && out.v[1].score == 1);
	assert_true(fabs(out.total - (3 * 0.25 + 1) / 4) < 1e-12);
	assert_string_equal(out.model, "fake");
	rubric_result_release(&out);
	/* what the judge was asked: every criterion with its weight, the problem and the candidate */
	json_t *log = fake_llm_log(&x->srv);
	json_t *msgs = json_object_get(fake_llm_body(log, 0), "messages");
	const char *user = json_string_value(json_object_get(json_array_get(msgs, 1), "content"));
	assert_non_null(strstr(user, "- own_kernels (weight 3): The forward path runs"));
	assert_non_null(strstr(user, "- readable (weight 1)"));
	assert_non_null(strstr(user, "class ModelNew: torch.matmul"));
	assert_non_null(strstr(user, "class Model: pass"));
	json_decref(log);
	/* the call is a transcript of the run, keyed (judge, problem, sample) as `eval` keys it */
	char *t = xstrfmt("%s/transcripts/judge/L1_1/s3/call-0000.json", x->run);
	assert_int_equal(access(t, R_OK), 0);
	free(t);

	/* a judge that fails leaves the reason, no scores; under the key `run` gives it (judge.<agent>,
	 * the attempt as the call) its transcript lies apart from the agent's own calls */
	rubric_judge(x->c, "fake", &r, "judge.coder", "L1/1", 4, 2, "p", "c", &out);
	assert_non_null(out.error);
	assert_non_null(strstr(out.error, "the judge model failed"));
	assert_int_equal(out.n, 0);
	t = xstrfmt("%s/transcripts/judge.coder/L1_1/s4/call-0002.json", x->run);
	assert_int_equal(access(t, R_OK), 0);
	free(t);
	json_t *j = rubric_result_json(&out);
	assert_true(json_is_null(json_object_get(j, "total")));
	json_decref(j);
	rubric_result_release(&out);
	fixture_stop(x);
	rubric_release(&r);
	tmpdir_remove(dir);
}

/* A judged candidate's scores, in memory: anti_hacking (when ah >= 0) and one other criterion, weight 1 each. */
static struct rubric_result scored(struct rubric_score v[2], double ah, double other)
{
	struct rubric_result r = { .v = v };
	if (ah >= 0)
		v[r.n++] = (struct rubric_score){ .name = "anti_hacking", .weight = 1, .score = ah };
	v[r.n++] = (struct rubric_score){ .name = "cuda_perf_quality", .weight = 1, .score = other };
	r.total = ah >= 0 ? (ah + other) / 2 : other;
	return r;
}

static void reward_formula(void **state)
{
	(void)state;
	struct rubric_score v[2];
	struct rubric_result r = scored(v, 1, 0); /* total 0.5: the rubric neither adds nor takes */
	assert_true(r.total == 0.5);
	assert_true(fabs(rubric_reward(&r, 1, 0, 1.2, 0.5) - 1.5) < 1e-12); /* the rule part exactly: 1.2 + 0.3 */
	assert_true(fabs(rubric_reward(&r, 1, 0, 1.2, 10) - 1.5) < 1e-12); /* whatever lambda */

	r = scored(v, 1, 0.5); /* total 0.75 */
	double at_cap = rubric_reward(&r, 1, 0, 5, 0.5);
	assert_true(fabs(at_cap - 5.3 * 1.125) < 1e-12);
	assert_true(rubric_reward(&r, 1, 0, 40, 0.5) == at_cap); /* a speedup above 5 earns no more */
	assert_true(rubric_reward(&r, 1, 0, 4.9, 0.5) < at_cap);

	r = scored(v, -1, 1); /* no anti_hacking criterion, total 1 */
	assert_true(fabs(rubric_reward(&r, 1, 0, 1, 0.5) - 1.3 * 1.25) < 1e-12);
	assert_true(fabs(rubric_reward(&r, 1, 0, 1, 0) - 1.3) < 1e-12); /* lambda 0: the rule part alone */
	r = scored(v, -1, 0); /* total 0 without a hack criterion: scaled down, not zeroed */
	assert_true(fabs(rubric_reward(&r, 1, 0, 1, 0.5) - 1.3 * 0.75) < 1e-12);
	assert_true(fabs(rubric_reward(&r, 1, 0, 1, 4) - 1.3 * -1) < 1e-12); /* lambda above 2 can go below 0 */

	/* zero: not a pass, a major hack, or anti_hacking at its minimum, however fast and well scored */
	r = scored(v, 1, 1);
	assert_true(rubric_reward(&r, 0, 0, 3, 0.5) == 0);
	assert_true(rubric_reward(&r, 0, 0, NAN, 0.5) == 0); /* a failure needs no timing to earn nothing */
	assert_true(rubric_reward(&r, 1, 1, 3, 0.5) == 0);
	r = scored(v, 0, 1); /* total 0.5, but the judge saw a hack */
	assert_true(rubric_reward(&r, 1, 0, 3, 0.5) == 0);
	r = scored(v, 0.01, 1);
	assert_true(rubric_reward(&r, 1, 0, 3, 0.5) > 0);

	/* no number: no scores (the judge failed or never ran), or a pass that was not timed */
	struct rubric_result none = { 0 };
	assert_true(isnan(rubric_reward(&none, 1, 0, 3, 0.5)));
	assert_true(isnan(rubric_reward(&none, 0, 1, 3, 0.5)));
	r = scored(v, 1, 1);
	assert_true(isnan(rubric_reward(&r, 1, 0, NAN, 0.5)));
}

/* judge_rubric gives the verdict it scores its reward from the final status, findings and timing: the
 * formula for a timed pass (a flag finding changes nothing), 0 for a reject finding, a rejected or a
 * failed verdict, null for a pass without timing and for a candidate the judge is never shown. */
static void judge_sets_reward(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct judge j = { .rubric = load_ok(dir), .model = "fake", .reward_lambda = 0.5 };
	char *file = xstrfmt("%s/rubric.yaml", dir); /* any readable file stands for the problem and candidate */
	struct problem p = { .level = 1, .id = 1, .path = file };
	struct llm_fixture *x = judge_fixture(
			"[{'content': '{\\\"scores\\\": [{\\\"criterion\\\": \\\"own_kernels\\\", \\\"score\\\": 1}, "
			"{\\\"criterion\\\": \\\"readable\\\", \\\"score\\\": 1}]}', 'repeat': 6}]");
	j.client = x->c;
	static const struct {
		enum verdict_status status;
		int timed;
		double speedup;
		const char *severity; /* of an H21 finding; NULL: none */
		double want;          /* total 1, lambda 0.5: (min(s, 5) + 0.3) x 1.25 */
	} cases[] = {
		{ V_PASS, 1, 2.0, NULL, 2.3 * 1.25 },   { V_PASS, 1, 9.0, "flag", 5.3 * 1.25 },
		{ V_PASS, 1, 2.0, "reject", 0 },        { V_REJECTED, 1, 2.0, NULL, 0 },
		{ V_INCORRECT, 0, NAN, NULL, 0 },       { V_PASS, 0, NAN, NULL, NAN },
		{ V_COMPILE_ERROR, 0, NAN, NULL, NAN },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct verdict v;
		verdict_init(&v);
		v.status = cases[i].status;
		snprintf(v.problem, sizeof(v.problem), "L1/1");
		v.candidate_path = xstrdup(file);
		v.timing.ran = cases[i].timed;
		v.timing.speedup_eager = cases[i].speedup;
		if (cases[i].severity)
			findings_add(&v.findings, "H21", "more than 10x eager")->severity =
				!strcmp(cases[i].severity, "reject") ? SEV_REJECT : SEV_FLAG;
		judge_rubric(&j, &p, "judge", (int)i, 0, &v);
		json_t *jv = verdict_to_json(&v), *reward = json_object_get(jv, "reward");
		if (isnan(cases[i].want) ? !json_is_null(reward)
					 : !json_is_number(reward) || fabs(json_number_value(reward) - cases[i].want) > 1e-12)
			fail_msg("case %zu: reward %s, expected %g", i, json_is_null(reward) ? "null" : "a number",
				 cases[i].want);
		if (cases[i].status == V_COMPILE_ERROR)
			assert_true(json_is_null(json_object_get(jv, "rubric")));
		else
			assert_true(json_number_value(json_object_get(json_object_get(jv, "rubric"), "reward_lambda")) == 0.5);
		json_decref(jv);
		verdict_release(&v);
	}
	assert_int_equal(fake_llm_nrequests(&x->srv), 6); /* the compile error was not shown to the judge */
	free(file);
	fixture_stop(x);
	rubric_release(&j.rubric);
	tmpdir_remove(dir);
}

/* configs/rubrics/stitchcuda.yaml: StitchCUDA's four criteria, one weight each, loadable as any rubric,
 * its anti_hacking criterion the one whose 0 zeroes the reward. */
static void bundled_stitchcuda_rubric(void **state)
{
	(void)state;
	static const char *const names[] = { "anti_hacking", "bottleneck_coverage", "cuda_perf_quality",
					     "multi_component_focus" };
	const char *root = getenv("SB_SOURCE_ROOT");
	char *path = xstrfmt("%s/configs/rubrics/stitchcuda.yaml", root ? root : ".");
	struct rubric r;
	struct sb_error err = { 0 };
	if (rubric_load(path, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(r.n, 4);
	for (size_t i = 0; i < r.n; i++) {
		assert_string_equal(r.v[i].name, names[i]);
		assert_true(r.v[i].weight == 1);
		assert_true(strlen(r.v[i].description) > 80);
	}
	assert_string_equal(r.v[0].name, RUBRIC_ANTI_HACKING);
	const char *answer = "{\"scores\": [{\"criterion\": \"anti_hacking\", \"score\": 0}, {\"criterion\": "
			     "\"bottleneck_coverage\", \"score\": 1}, {\"criterion\": \"cuda_perf_quality\", \"score\": 1}, "
			     "{\"criterion\": \"multi_component_focus\", \"score\": 1}]}";
	struct rubric_result out = { 0 };
	assert_int_equal(rubric_parse_answer(&r, answer, &out, &err), 0);
	assert_true(fabs(out.total - 0.75) < 1e-12);
	assert_true(rubric_reward(&out, 1, 0, 2, 0.5) == 0);
	rubric_result_release(&out);
	rubric_release(&r);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(load_and_errors),
		cmocka_unit_test(answers),
		cmocka_unit_test(judge_over_http),
		cmocka_unit_test(reward_formula),
		cmocka_unit_test(judge_sets_reward),
		cmocka_unit_test(bundled_stitchcuda_rubric),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
