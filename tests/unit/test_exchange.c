/* test_exchange.c - reading the reference worker's `compare` reply (eval.exchange = shared, exchange.c).
 * The replies are the numbers tests/worker/test_exchange.py pins for the worker's statistics on the same
 * data; here compare.c judges that data itself, and the parsed reply must read exactly as its result:
 * counts, worst element, the detail line, mismatches, and a malformed reply refused. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "eval/check/check.h"
#include "eval/verdict.h"

static struct st_tensor mk(enum st_dtype dt, const void *data, int ndim, const int64_t *shape)
{
	struct st_tensor t = { .name = "out0", .dtype = dt, .ndim = ndim, .numel = 1, .data = data };
	for (int d = 0; d < ndim; d++) {
		t.shape[d] = shape[d];
		t.numel *= shape[d];
	}
	t.nbytes = (size_t)t.numel * st_dtype_size(dt);
	return t;
}

static json_t *reply_of(const char *text)
{
	json_error_t e;
	json_t *r = json_loads(text, 0, &e);
	assert_non_null(r);
	return r;
}

/* The worker's reply for e = [1, 2, inf, 4, nan, 6], a = [1, nan, inf, -inf, nan, 6.5] as 2 x 3 fp32
 * (test_exchange.py's test_nan_and_infinities_follow_compare_c pins these numbers). */
static const char NONFINITE[] =
	"{\"bitwise\": false, \"digest_expected\": \"00000000000000ff\", \"digest_actual\": \"8000000000000001\","
	" \"count\": 1, \"expected_count\": 1, \"outputs\": [{\"name\": \"out0\", \"zero_expected\": false,"
	" \"zero_actual\": false, \"dtype\": \"F32\", \"actual_dtype\": \"F32\", \"shape\": [2, 3],"
	" \"actual_shape\": [2, 3], \"ndim\": 2, \"n_mismatched\": 4, \"n_nan\": 1, \"n_inf\": 1, \"max_abs\": \"inf\","
	" \"max_rel\": \"inf\", \"worst_index\": 1, \"numel\": 6, \"worst_expected\": 2.0, \"worst_actual\": \"nan\"}]}";

static void a_parsed_reply_reads_as_compare_c_judges(void **state)
{
	(void)state;
	static const int64_t s23[] = { 2, 3 };
	float e[6] = { 1, 2, INFINITY, 4, NAN, 6 }, a[6] = { 1, NAN, INFINITY, -INFINITY, NAN, 6.5f };
	struct st_tensor te = mk(ST_F32, e, 2, s23), ta = mk(ST_F32, a, 2, s23);
	struct compare_result want;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_F32), &want);

	json_t *reply = reply_of(NONFINITE);
	struct outputs_cmp r;
	assert_int_equal(xchg_parse_stats(reply, TOL_KERNELBENCH, &r), 0);
	json_decref(reply);
	assert_true(r.readable);
	assert_false(r.pass);
	assert_int_equal(r.noutputs, 1);
	assert_true(r.nan_actual);
	assert_true(r.digest_expected == 0xffu && r.digest_actual == 0x8000000000000001ull);
	const struct compare_result *got = &r.outputs[0].cmp;
	assert_int_equal(got->n_mismatched, want.n_mismatched);
	assert_int_equal(got->n_nan_actual, want.n_nan_actual);
	assert_int_equal(got->n_inf_actual, want.n_inf_actual);
	assert_int_equal(got->worst_index, want.worst_index);
	assert_int_equal(got->worst_coord[0], want.worst_coord[0]);
	assert_int_equal(got->worst_coord[1], want.worst_coord[1]);
	assert_true(isinf(got->max_abs) && isinf(want.max_abs) && isinf(got->max_rel) && isinf(want.max_rel));
	assert_string_equal(got->detail, want.detail);
	assert_string_equal(r.outputs[0].name, "out0");
	outputs_cmp_release(&r);
}

static void a_pass_and_an_exact_integer_read_as_compare_c_judges(void **state)
{
	(void)state;
	static const int64_t s3[] = { 3 };
	int64_t e[3] = { (int64_t)1 << 60, 5, -3 }, a[3] = { ((int64_t)1 << 60) + 1, 5, -3 };
	struct st_tensor te = mk(ST_I64, e, 1, s3), ta = mk(ST_I64, a, 1, s3);
	struct compare_result want;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_I64), &want);
	/* test_integers_compare_exactly_beyond_2_to_53: one mismatch at 0, the values exact */
	json_t *reply = reply_of("{\"bitwise\": false, \"digest_expected\": \"1\", \"digest_actual\": \"2\", \"count\": 1,"
				 " \"outputs\": [{\"name\": \"out0\", \"zero_expected\": false, \"zero_actual\": false,"
				 " \"dtype\": \"I64\", \"actual_dtype\": \"I64\", \"shape\": [3], \"actual_shape\": [3],"
				 " \"n_mismatched\": 1, \"n_nan\": 0, \"n_inf\": 0, \"max_abs\": 1.0, \"max_rel\": 8.673617379884035e-19,"
				 " \"worst_index\": 0, \"numel\": 3, \"worst_expected\": 1152921504606846976,"
				 " \"worst_actual\": 1152921504606846977}]}");
	struct outputs_cmp r;
	assert_int_equal(xchg_parse_stats(reply, TOL_KERNELBENCH, &r), 0);
	json_decref(reply);
	assert_string_equal(r.outputs[0].cmp.detail, want.detail);
	assert_non_null(strstr(want.detail, "1152921504606846977 vs expected 1152921504606846976"));
	outputs_cmp_release(&r);

	/* a passing fp32 output: the first element is the worst, as compare.c reports it */
	static const int64_t s2[] = { 2 };
	float f[2] = { 0.5f, 0.25f };
	te = mk(ST_F32, f, 1, s2);
	compare_tensors(&te, &te, tolerance_for(TOL_KERNELBENCH, ST_F32), &want);
	reply = reply_of("{\"bitwise\": true, \"digest_expected\": \"a\", \"digest_actual\": \"a\", \"count\": 1,"
			 " \"outputs\": [{\"name\": \"out0\", \"zero_expected\": false, \"zero_actual\": false, \"dtype\": \"F32\","
			 " \"actual_dtype\": \"F32\", \"shape\": [2], \"actual_shape\": [2], \"n_mismatched\": 0, \"n_nan\": 0,"
			 " \"n_inf\": 0, \"max_abs\": 0.0, \"max_rel\": 0.0, \"worst_index\": 0, \"numel\": 2,"
			 " \"worst_expected\": 0.5, \"worst_actual\": 0.5}]}");
	assert_int_equal(xchg_parse_stats(reply, TOL_KERNELBENCH, &r), 0);
	json_decref(reply);
	assert_true(r.pass && r.bitwise && !r.nan_actual);
	assert_string_equal(r.outputs[0].cmp.detail, want.detail);
	outputs_cmp_release(&r);
}

static void mismatched_missing_and_miscounted_outputs(void **state)
{
	(void)state;
	static const int64_t s23[] = { 2, 3 }, s32[] = { 3, 2 };
	float v[6] = { 0 };
	struct st_tensor te = mk(ST_F32, v, 2, s23), ta = mk(ST_F32, v, 2, s32);
	struct compare_result want;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_F32), &want);
	json_t *reply = reply_of("{\"count\": 2, \"digest_expected\": \"0\", \"digest_actual\": \"0\", \"outputs\": ["
				 "{\"name\": \"out0\", \"zero_expected\": true, \"zero_actual\": true, \"dtype\": \"F32\","
				 " \"actual_dtype\": \"F32\", \"shape\": [2, 3], \"actual_shape\": [3, 2], \"ndim\": 2},"
				 "{\"name\": \"out1\", \"zero_expected\": false, \"missing\": true}]}");
	struct outputs_cmp r;
	assert_int_equal(xchg_parse_stats(reply, TOL_KERNELBENCH, &r), 0);
	json_decref(reply);
	assert_false(r.pass);
	assert_int_equal(r.noutputs, 2);
	assert_true(r.outputs[0].cmp.shape_mismatch);
	assert_string_equal(r.outputs[0].cmp.detail, want.detail);
	assert_true(r.zero_expected[0] && r.zero_actual[0]);
	assert_string_equal(r.outputs[1].cmp.detail, "output out1 is missing");
	assert_string_equal(r.error, "");

	reply = reply_of("{\"count\": 1, \"outputs\": [{\"name\": \"out0\", \"missing\": true}, {\"name\": \"out1\", \"missing\": true}]}");
	assert_int_equal(xchg_parse_stats(reply, TOL_KERNELBENCH, &r), 0);
	json_decref(reply);
	assert_false(r.pass);
	assert_string_equal(r.error, "the candidate returned 1 output, the reference 2");
	outputs_cmp_release(&r);
}

static void a_malformed_reply_is_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"count\": 1}",                                                       /* no outputs */
		"{\"count\": 1, \"outputs\": [{\"name\": \"out0\", \"dtype\": \"F32\", \"actual_dtype\": \"F32\"}]}", /* no shapes */
		"{\"count\": 1, \"outputs\": [{\"name\": \"out0\", \"dtype\": \"C64\", \"actual_dtype\": \"C64\","
		" \"shape\": [1], \"actual_shape\": [1]}]}",                            /* a dtype nobody compares */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *reply = reply_of(bad[i]);
		struct outputs_cmp r;
		assert_int_equal(xchg_parse_stats(reply, TOL_KERNELBENCH, &r), -1);
		json_decref(reply);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_parsed_reply_reads_as_compare_c_judges),
		cmocka_unit_test(a_pass_and_an_exact_integer_read_as_compare_c_judges),
		cmocka_unit_test(mismatched_missing_and_miscounted_outputs),
		cmocka_unit_test(a_malformed_reply_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
