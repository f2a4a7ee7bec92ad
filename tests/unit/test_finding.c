/* test_finding.c - the one finding type (harness/checks/finding.c): the list, and policy_apply, the
 * only place a finding's id and checks.policy decide reject against flag. */
#include "testutil.h"

#include "checks/finding.h"
#include "eval/verdict.h"

static void every(enum policy_action *policy, enum policy_action a)
{
	for (int i = 0; i < SB_HACK_IDS; i++)
		policy[i] = a;
}

/* The same finding is a reject under one policy and a flag under another. */
static void the_policy_decides_the_severity(void **state)
{
	(void)state;
	enum policy_action policy[SB_HACK_IDS];
	struct findings l = { 0 };
	findings_add(&l, "H01", "forward calls torch.matmul");
	findings_add(&l, "H05", "a side stream");
	every(policy, POLICY_FLAG);
	policy[0] = POLICY_REJECT;
	policy_apply(policy, l.v, l.n);
	assert_int_equal(l.v[0].severity, SEV_REJECT);
	assert_int_equal(l.v[1].severity, SEV_FLAG);
	assert_string_equal(severity_name(l.v[0].severity), "reject");
	assert_string_equal(severity_name(l.v[1].severity), "flag");

	/* applied again under another policy, it says what that one says */
	policy[0] = POLICY_FLAG;
	policy[4] = POLICY_REJECT;
	policy_apply(policy, l.v, l.n);
	assert_int_equal(l.v[0].severity, SEV_FLAG);
	assert_int_equal(l.v[1].severity, SEV_REJECT);

	/* the last hack id is in range: the index is off by one nowhere */
	findings_add(&l, "H22", "reads a file");
	every(policy, POLICY_FLAG);
	policy[SB_HACK_IDS - 1] = POLICY_REJECT;
	policy_apply(policy, l.v, l.n);
	assert_int_equal(l.v[2].severity, SEV_REJECT);
	assert_int_equal(l.v[0].severity, SEV_FLAG);
	findings_release(&l);
	assert_int_equal(l.n, 0);
	assert_null(l.v);
}

/* flag_only and ids that are no hack id stay flags even where every id rejects. */
static void signs_and_unknown_ids_only_flag(void **state)
{
	(void)state;
	static const char *const unknown[] = { "nondeterministic", "integer_inputs", "H00", "H23", "H99", "X01", "", NULL };
	enum policy_action policy[SB_HACK_IDS];
	struct findings l = { 0 };
	every(policy, POLICY_REJECT);
	findings_add(&l, "H21", "more than 10x eager")->flag_only = 1;
	for (const char *const *u = unknown; *u; u++)
		findings_add(&l, *u, "a property of the problem");
	findings_add(&l, "H10", "the inputs changed");
	policy_apply(policy, l.v, l.n);
	for (size_t i = 0; i + 1 < l.n; i++)
		if (l.v[i].severity != SEV_FLAG)
			fail_msg("\"%s\" is a %s", l.v[i].id, severity_name(l.v[i].severity));
	assert_int_equal(l.v[l.n - 1].severity, SEV_REJECT);
	findings_release(&l);
}

static void the_list_counts_and_moves(void **state)
{
	(void)state;
	struct findings a = { 0 }, b = { 0 };
	struct finding *f = findings_add(&a, "H07", "out%d is a subclass", 0);
	f->line = 3;
	assert_string_equal(f->message, "out0 is a subclass");
	findings_add(&a, "H07", "out1 is a subclass");
	findings_add(&b, "H06", "a thread");
	assert_int_equal(findings_count(&a, "H07"), 2);
	assert_false(findings_has(&a, "H06"));
	findings_take(&a, &b);
	assert_int_equal(a.n, 3);
	assert_int_equal(b.n, 0);
	assert_true(findings_has(&a, "H06"));
	struct finding *copy = findings_append(&b, &a.v[0]);
	assert_int_equal(copy->line, 3);
	assert_ptr_not_equal(copy->message, a.v[0].message);
	findings_release(&a);
	assert_string_equal(b.v[0].message, "out0 is a subclass");
	findings_release(&b);
}

/* What a verdict's findings become: a reject rejects a passing verdict and is written as "reject". */
static void a_verdict_takes_findings_under_its_policy(void **state)
{
	(void)state;
	enum policy_action policy[SB_HACK_IDS];
	struct findings l = { 0 };
	struct verdict v;
	every(policy, POLICY_FLAG);
	policy[10] = POLICY_REJECT; /* H11 */
	findings_add(&l, "H06", "a thread");
	findings_add(&l, "H11", "stale outputs");
	verdict_init(&v);
	assert_int_equal(verdict_add_findings(&v, policy, l.v, l.n), 1);
	assert_int_equal(v.status, V_REJECTED);
	assert_string_equal(v.message, "H11: stale outputs");
	json_t *j = verdict_to_json(&v), *fs = json_object_get(j, "findings");
	assert_int_equal(json_array_size(fs), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 0), "severity")), "flag");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 1), "severity")), "reject");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fs, 1), "id")), "H11");
	json_decref(j);
	verdict_release(&v);

	/* under a policy that flags H11 the same findings leave the verdict passing */
	policy[10] = POLICY_FLAG;
	verdict_init(&v);
	assert_int_equal(verdict_add_findings(&v, policy, l.v, l.n), 0);
	assert_int_equal(v.status, V_PASS);
	assert_null(v.message);
	verdict_release(&v);
	findings_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_policy_decides_the_severity),
		cmocka_unit_test(signs_and_unknown_ids_only_flag),
		cmocka_unit_test(the_list_counts_and_moves),
		cmocka_unit_test(a_verdict_takes_findings_under_its_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
