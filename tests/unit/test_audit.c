/* test_audit.c - the audit's decisions (harness/audit/audit_rules.c) on tensors written out by hand:
 * a constant that passes every seed (H15), zeros that pass (H16), equal and unequal tensors (H17). */
#include "testutil.h"

#include <math.h>

#include "audit/audit.h"

static struct st_tensor f32(const float *v, int64_t n)
{
	struct st_tensor t = { .name = "out0", .dtype = ST_F32, .ndim = 1, .numel = n, .data = v,
			       .nbytes = (size_t)n * sizeof(float) };
	t.shape[0] = n;
	return t;
}

static const struct tolerance fp32 = { 1e-4, 1e-4 };

static void constant(void **state)
{
	(void)state;
	/* L2/4-like: every seed within 1.2e-4 of 0.6068; the midrange is within atol + rtol*|e| = 1.6e-4 */
	const float a[] = { 0.60680f, 0.60690f }, b[] = { 0.60692f, 0.60679f }, c[] = { 0.60688f, 0.60684f };
	struct st_tensor ta = f32(a, 2), tb = f32(b, 2), tc = f32(c, 2);
	const struct st_tensor *three[] = { &ta, &tb, &tc };
	assert_true(audit_rule_constant(three, 3, fp32));
	/* a spread of 4e-4 is too much for one constant */
	const float d[] = { 0.6072f, 0.60680f };
	struct st_tensor td = f32(d, 2);
	const struct st_tensor *spread[] = { &ta, &tb, &td };
	assert_false(audit_rule_constant(spread, 3, fp32));
	/* one seed proves nothing; NaN never passes; another shape is another output */
	assert_false(audit_rule_constant(three, 1, fp32));
	const float nan_[] = { NAN, 0.6068f };
	struct st_tensor tn = f32(nan_, 2), short_ = f32(a, 1);
	const struct st_tensor *with_nan[] = { &ta, &tn }, *shapes[] = { &ta, &short_ };
	assert_false(audit_rule_constant(with_nan, 2, fp32));
	assert_false(audit_rule_constant(shapes, 2, fp32));
}

static void zeros(void **state)
{
	(void)state;
	const float tiny[] = { 1e-6f, -9e-5f, 0 }, big[] = { 1e-6f, 2e-4f, 0 };
	struct st_tensor t1 = f32(tiny, 3), t2 = f32(big, 3);
	const struct st_tensor *ok[] = { &t1, &t1 }, *no[] = { &t1, &t2 };
	assert_true(audit_rule_zero(ok, 2, fp32));
	assert_false(audit_rule_zero(no, 2, fp32));
	const struct tolerance v0 = { 1e-2, 1e-2 }; /* kernelbench-v0: 2e-4 is below its tolerance */
	assert_true(audit_rule_zero(no, 2, v0));
}

static void same(void **state)
{
	(void)state;
	const float x[] = { 0.1f, 0.5f, 0.9f }, y[] = { 0.1f, 0.50004f, 0.9f }, z[] = { 0.1f, 0.6f, 0.9f };
	struct st_tensor tx = f32(x, 3), ty = f32(y, 3), tz = f32(z, 3);
	const struct tolerance exact = { 0, 0 };
	assert_true(audit_rule_same(&tx, &ty, fp32));
	assert_false(audit_rule_same(&tx, &ty, exact));
	assert_true(audit_rule_same(&tx, &tx, exact));
	assert_false(audit_rule_same(&tx, &tz, fp32));
	struct st_tensor ti = tx;
	ti.dtype = ST_I32; /* same bytes, another dtype: not the same tensor */
	assert_false(audit_rule_same(&tx, &ti, exact));
}

/* What the measures make of a problem: integer inputs, randomness, and per output the first of zero or
 * constant, then an input it equals; in that order, none of them a hack of a candidate. */
static void rules_over_the_measures(void **state)
{
	(void)state;
	static const char *const dtypes[] = { "torch.float32", "torch.int64", NULL, "torch.bool" };
	struct audit_output outs[3] = {
		{ .zero = 1, .constant = 1, .signed_ran = 1, .zero_signed = 1, .maxabs = 1e-9, .atol = 1e-2, .equals_input = -1 },
		{ .constant = 1, .signed_ran = 1, .range = 0.5, .equals_input = 0 },
		{ .equals_input = -1 },
	};
	struct audit_facts f = { .seeds = 3, .input_dtypes = dtypes, .ninputs = 4, .again_differs = 1, .outputs = outs,
				 .noutputs = 3 };
	struct findings l = { 0 };
	rules_audit(&f, &l);
	static const char *const want[] = { AUDIT_INTEGER_INPUTS, AUDIT_INTEGER_INPUTS, AUDIT_NONDETERMINISTIC, "H16",
					     "H15", "H17" };
	assert_int_equal(l.n, 6);
	for (size_t i = 0; i < l.n; i++)
		assert_string_equal(l.v[i].id, want[i]);
	assert_non_null(strstr(l.v[0].message, "input 1 is int64"));
	assert_non_null(strstr(l.v[1].message, "input 3 is bool"));
	assert_non_null(strstr(l.v[2].message, "two calls on the same inputs"));
	assert_non_null(strstr(l.v[3].message, "out0"));
	assert_non_null(strstr(l.v[3].message, "on signed inputs too"));
	assert_non_null(strstr(l.v[4].message, "on signed inputs it is not constant"));
	assert_non_null(strstr(l.v[5].message, "out1 equals input 0"));
	assert_non_null(strstr(l.v[5].message, "only on this problem's input distribution"));
	findings_release(&l);

	/* a rerun that differs says so, and the second kind is not added beside it */
	struct audit_facts g = { .seeds = 3, .rerun_differs = 1, .again_differs = 1 };
	rules_audit(&g, &l);
	assert_int_equal(l.n, 1);
	assert_non_null(strstr(l.v[0].message, "two runs with the same seed"));
	findings_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(constant),
		cmocka_unit_test(zeros),
		cmocka_unit_test(same),
		cmocka_unit_test(rules_over_the_measures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
