/* test_compare.c - output comparison on hand-computed fixtures: tolerances at their edges per preset
 * and dtype, non-finite values, exact integers, shape and dtype mismatches, and the detail line. */
#include "testutil.h"

#include <math.h>
#include <time.h>

#include "eval/check/check.h"

/* A tensor over caller-owned data; shape given as up to 8 dims. */
static struct st_tensor mk(enum st_dtype dt, const void *data, int ndim, const int64_t *shape)
{
	struct st_tensor t = { .name = "out", .dtype = dt, .ndim = ndim, .numel = 1, .data = data };
	for (int d = 0; d < ndim; d++) {
		t.shape[d] = shape[d];
		t.numel *= shape[d];
	}
	t.nbytes = (size_t)t.numel * st_dtype_size(dt);
	return t;
}

static const int64_t S1[] = { 1 }, S2[] = { 2 }, S3[] = { 3 };

/* Compares one expected/actual pair of fp32 values of a 1-element tensor. */
static int f32_pair_passes(float e, float a, struct tolerance tol)
{
	struct st_tensor te = mk(ST_F32, &e, 1, S1), ta = mk(ST_F32, &a, 1, S1);
	struct compare_result r;
	compare_tensors(&te, &ta, tol, &r);
	assert_int_equal(r.n_mismatched, !r.pass);
	return r.pass;
}

static void presets_give_the_documented_tolerances(void **state)
{
	(void)state;
	struct tolerance t = tolerance_for(TOL_KERNELBENCH, ST_F32);
	assert_true(t.atol == 1e-4 && t.rtol == 1e-4);
	t = tolerance_for(TOL_KERNELBENCH, ST_F64);
	assert_true(t.atol == 1e-4 && t.rtol == 1e-4);
	t = tolerance_for(TOL_KERNELBENCH, ST_F16);
	assert_true(t.atol == 1e-2 && t.rtol == 1e-2);
	t = tolerance_for(TOL_KERNELBENCH, ST_BF16);
	assert_true(t.atol == 1e-2 && t.rtol == 1e-2);
	for (enum st_dtype d = ST_F32; d <= ST_F64; d++) {
		t = tolerance_for(TOL_KERNELBENCH_V0, d);
		assert_true(t.atol == 1e-2 && t.rtol == 1e-2);
	}
	for (enum st_dtype d = ST_I64; d <= ST_BOOL; d++)
		for (int p = TOL_KERNELBENCH; p <= TOL_KERNELBENCH_V0; p++) {
			t = tolerance_for((enum tolerance_preset)p, d);
			assert_true(t.atol == 0 && t.rtol == 0);
		}
}

static void exact_equality_passes(void **state)
{
	(void)state;
	const float v[] = { 1.5f, -2.0f, 0.0f };
	struct st_tensor e = mk(ST_F32, v, 1, S3), a = mk(ST_F32, v, 1, S3);
	struct compare_result r;
	compare_tensors(&e, &a, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_true(r.pass);
	assert_false(r.shape_mismatch || r.dtype_mismatch);
	assert_int_equal(r.n_mismatched, 0);
	assert_true(r.max_abs == 0 && r.max_rel == 0);
	assert_int_equal(r.worst_index, 0);
	assert_string_equal(r.detail, "all 3 elements within tolerance; max abs 0 at [0], max rel 0");
}

static void fp32_edges_under_both_presets(void **state)
{
	(void)state;
	struct tolerance kb = tolerance_for(TOL_KERNELBENCH, ST_F32), v0 = tolerance_for(TOL_KERNELBENCH_V0, ST_F32);
	/* e = 1: allowed 1e-4 + 1e-4 * 1 = 2e-4 (kernelbench), 2e-2 (v0) */
	assert_true(f32_pair_passes(1.0f, 1.0001220703125f, kb)); /* 1 + 2^-13: off by 1.22e-4 */
	assert_false(f32_pair_passes(1.0f, 1.000244140625f, kb)); /* 1 + 2^-12: off by 2.44e-4 */
	assert_true(f32_pair_passes(1.0f, 1.000244140625f, v0));
	assert_false(f32_pair_passes(1.0f, 1.03125f, v0));        /* off by 3.1e-2 > 2e-2 */
	/* e = +-64: rtol dominates, allowed 1e-4 + 64e-4 = 6.5e-3 */
	assert_true(f32_pair_passes(64.0f, 64.00390625f, kb));    /* off by 2^-8 = 3.9e-3 */
	assert_false(f32_pair_passes(64.0f, 64.0078125f, kb));    /* off by 2^-7 = 7.8e-3 */
	assert_true(f32_pair_passes(-64.0f, -64.00390625f, kb));  /* |e|, not e */
	assert_false(f32_pair_passes(-64.0f, -64.0078125f, kb));
	assert_true(f32_pair_passes(64.0f, 64.0078125f, v0));
	/* e = 0: only atol, and the tolerance is not symmetric in a and e */
	assert_true(f32_pair_passes(0.0f, 6.103515625e-05f, kb)); /* 2^-14 */
	assert_false(f32_pair_passes(0.0f, 1.220703125e-04f, kb)); /* 2^-13 */
	assert_true(f32_pair_passes(0.0f, 1.220703125e-04f, v0));
	assert_true(f32_pair_passes(64.0f, 63.9921875f, (struct tolerance){ 0, 1.0 / 8192 }));  /* 2^-7 <= 64/8192 */
	assert_false(f32_pair_passes(63.9921875f, 64.0f, (struct tolerance){ 0, 1.0 / 8192 })); /* > 63.99/8192 */
}

static int half_pair_passes(enum st_dtype dt, uint16_t e, uint16_t a)
{
	struct st_tensor te = mk(dt, &e, 0, NULL), ta = mk(dt, &a, 0, NULL);
	struct compare_result r;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, dt), &r);
	return r.pass;
}

static void half_precision_tolerances(void **state)
{
	(void)state;
	/* e = 1: allowed 1e-2 + 1e-2 = 2e-2 */
	assert_true(half_pair_passes(ST_F16, 0x3C00, 0x3C10));   /* 1.015625 */
	assert_false(half_pair_passes(ST_F16, 0x3C00, 0x3C20));  /* 1.03125 */
	assert_true(half_pair_passes(ST_BF16, 0x3F80, 0x3F82));  /* 1.015625 */
	assert_false(half_pair_passes(ST_BF16, 0x3F80, 0x3F84)); /* 1.03125 */
	/* 65504 and its neighbour 65472 differ by 32 <= 1e-2 + 655.04 */
	assert_true(half_pair_passes(ST_F16, 0x7BFF, 0x7BFE));
	assert_false(half_pair_passes(ST_F16, 0x7BFF, 0x7C00)); /* 65504 vs inf */
}

static void worst_element_is_the_furthest_beyond_tolerance(void **state)
{
	(void)state;
	static const int64_t shape[] = { 2, 3, 4 };
	float e[24] = { 0 }, a[24] = { 0 };
	e[6] = 1000.0f; /* [0, 1, 2]: off by 5 but allowed 0.01 + 10 -> passes, yet the largest abs */
	a[6] = 1005.0f;
	a[23] = 0.5f;   /* [1, 2, 3]: off by 0.5, allowed 0.01 -> the worst */
	a[13] = 0.25f;  /* [1, 0, 1]: off by 0.25 -> fails, not the worst */
	struct st_tensor te = mk(ST_F32, e, 3, shape), ta = mk(ST_F32, a, 3, shape);
	struct compare_result r;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH_V0, ST_F32), &r);
	assert_false(r.pass);
	assert_int_equal(r.n_mismatched, 2);
	assert_true(r.max_abs == 5.0);
	assert_int_equal(r.worst_index, 23);
	assert_memory_equal(r.worst_coord, ((int64_t[]){ 1, 2, 3 }), 3 * sizeof(int64_t));
	assert_true(r.worst_expected == 0 && r.worst_actual == 0.5);
	assert_string_equal(r.detail, "2 of 24 elements differ; worst at [1, 2, 3]: 0.5 vs expected 0 (abs 0.5, allowed 1.0e-02)");

	/* once everything passes, the element with the largest abs difference is reported */
	a[23] = a[13] = 0;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH_V0, ST_F32), &r);
	assert_true(r.pass);
	assert_int_equal(r.worst_index, 6);
	assert_memory_equal(r.worst_coord, ((int64_t[]){ 0, 1, 2 }), 3 * sizeof(int64_t));
	assert_true(r.worst_expected == 1000 && r.worst_actual == 1005);
	assert_string_equal(r.detail, "all 24 elements within tolerance; max abs 5 at [0, 1, 2], max rel 0.005");
}

static void nan_and_infinity(void **state)
{
	(void)state;
	struct tolerance tol = tolerance_for(TOL_KERNELBENCH_V0, ST_F64);
	struct compare_result r;
	double e[3] = { 1, 2, 3 }, a[3] = { 1, NAN, 3 };
	struct st_tensor te = mk(ST_F64, e, 1, S3), ta = mk(ST_F64, a, 1, S3);

	compare_tensors(&te, &ta, tol, &r); /* NaN in the candidate */
	assert_false(r.pass);
	assert_int_equal(r.n_mismatched, 1);
	assert_int_equal(r.n_nan_actual, 1);
	assert_int_equal(r.n_inf_actual, 0);
	assert_int_equal(r.worst_index, 1);
	assert_true(r.max_abs == 0); /* the NaN has no difference to report */
	assert_non_null(strstr(r.detail, "1 of 3 elements differ; worst at [1]: nan vs expected 2"));
	assert_non_null(strstr(r.detail, "the candidate has 1 NaN and 0 inf where the reference is finite"));

	e[1] = NAN; /* NaN in both: equal_nan=False, still a mismatch, but not the candidate's doing */
	compare_tensors(&te, &ta, tol, &r);
	assert_false(r.pass);
	assert_int_equal(r.n_mismatched, 1);
	assert_int_equal(r.n_nan_actual, 0);

	e[1] = INFINITY; /* inf vs inf */
	a[1] = INFINITY;
	compare_tensors(&te, &ta, tol, &r);
	assert_true(r.pass);
	assert_true(r.max_abs == 0);
	e[1] = a[1] = -INFINITY;
	compare_tensors(&te, &ta, tol, &r);
	assert_true(r.pass);

	a[1] = INFINITY; /* -inf expected, +inf given */
	compare_tensors(&te, &ta, tol, &r);
	assert_false(r.pass);
	assert_int_equal(r.n_inf_actual, 0);
	assert_true(isinf(r.max_abs));

	e[1] = 2; /* inf where the reference is finite */
	compare_tensors(&te, &ta, tol, &r);
	assert_false(r.pass);
	assert_int_equal(r.n_inf_actual, 1);
	assert_true(isinf(r.max_abs) && isinf(r.max_rel));
	assert_int_equal(r.worst_index, 1);

	e[1] = INFINITY; /* a finite value where the reference is inf: rtol * inf must not excuse it */
	a[1] = 1e308;
	compare_tensors(&te, &ta, tol, &r);
	assert_false(r.pass);
	assert_int_equal(r.n_inf_actual, 0);

	/* the first non-finite mismatch is the worst, however large the finite errors elsewhere */
	double e2[3] = { 0, 0, 0 }, a2[3] = { 1e30, NAN, INFINITY };
	struct st_tensor te2 = mk(ST_F64, e2, 1, S3), ta2 = mk(ST_F64, a2, 1, S3);
	compare_tensors(&te2, &ta2, tol, &r);
	assert_int_equal(r.n_mismatched, 3);
	assert_int_equal(r.worst_index, 1);
	assert_int_equal(r.n_nan_actual, 1);
	assert_int_equal(r.n_inf_actual, 1);

	/* -inf counts once too (glibc's isinf returns -1 for it: the count once went down) */
	a2[2] = -INFINITY;
	compare_tensors(&te2, &ta2, tol, &r);
	assert_int_equal(r.n_inf_actual, 1);
	assert_non_null(strstr(r.detail, "1 NaN and 1 inf"));
}

static void integers_and_bools_compare_exactly(void **state)
{
	(void)state;
	struct compare_result r;
	int64_t e[2] = { 7, (int64_t)1 << 60 }, a[2] = { 8, (int64_t)1 << 60 };
	struct st_tensor te = mk(ST_I64, e, 1, S2), ta = mk(ST_I64, a, 1, S2);
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH_V0, ST_I64), &r);
	assert_false(r.pass);
	assert_int_equal(r.worst_index, 0);
	assert_string_equal(r.detail, "1 of 2 elements differ; worst at [0]: 8 vs expected 7 (abs 1, allowed 0.0e+00)");

	a[0] = 7; /* off by one beyond 2^53, where doubles could not tell them apart */
	a[1] = ((int64_t)1 << 60) + 1;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_I64), &r);
	assert_false(r.pass);
	assert_int_equal(r.worst_index, 1);
	assert_non_null(strstr(r.detail, "1152921504606846977 vs expected 1152921504606846976"));
	e[0] = INT64_MIN; /* no overflow in the difference */
	a[0] = INT64_MAX;
	a[1] = e[1];
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_I64), &r);
	assert_false(r.pass);
	assert_true(r.max_abs > 1.8e19);

	uint8_t be[3] = { 1, 0, 1 }, ba[3] = { 1, 1, 1 };
	struct st_tensor tbe = mk(ST_BOOL, be, 1, S3), tba = mk(ST_BOOL, ba, 1, S3);
	compare_tensors(&tbe, &tba, tolerance_for(TOL_KERNELBENCH, ST_BOOL), &r);
	assert_false(r.pass);
	assert_int_equal(r.worst_index, 1);
	assert_string_equal(r.detail, "1 of 3 elements differ; worst at [1]: true vs expected false (abs 1, allowed 0.0e+00)");
	ba[1] = 0;
	ba[2] = 2; /* any non-zero byte is true, as torch reads it */
	compare_tensors(&tbe, &tba, tolerance_for(TOL_KERNELBENCH, ST_BOOL), &r);
	assert_true(r.pass);

	int8_t ie[2] = { -128, 5 }, ia[2] = { 127, 5 };
	struct st_tensor tie = mk(ST_I8, ie, 1, S2), tia = mk(ST_I8, ia, 1, S2);
	compare_tensors(&tie, &tia, tolerance_for(TOL_KERNELBENCH, ST_I8), &r);
	assert_false(r.pass);
	assert_true(r.max_abs == 255);
}

static void shape_and_dtype_must_match(void **state)
{
	(void)state;
	static const int64_t s23[] = { 2, 3 }, s32[] = { 3, 2 }, s6[] = { 6 };
	float v[6] = { 0 };
	uint16_t h[6] = { 0 };
	struct compare_result r;
	struct st_tensor e = mk(ST_F32, v, 2, s23), a = mk(ST_F32, v, 2, s32);
	compare_tensors(&e, &a, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_false(r.pass);
	assert_true(r.shape_mismatch);
	assert_false(r.dtype_mismatch);
	assert_int_equal(r.worst_index, -1);
	assert_string_equal(r.detail, "shape [3, 2] != expected [2, 3]");

	a = mk(ST_F32, v, 1, s6); /* same elements, no reshaping or broadcasting */
	compare_tensors(&e, &a, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_true(r.shape_mismatch);
	assert_string_equal(r.detail, "shape [6] != expected [2, 3]");

	a = mk(ST_F16, h, 2, s23); /* an fp16 answer to an fp32 problem */
	compare_tensors(&e, &a, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_false(r.pass);
	assert_true(r.dtype_mismatch);
	assert_false(r.shape_mismatch);
	assert_int_equal(r.n_mismatched, 0);
	assert_string_equal(r.detail, "dtype F16 != expected F32 (an output must keep the reference's dtype)");

	a = mk(ST_F16, h, 1, s6);
	compare_tensors(&e, &a, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_true(r.dtype_mismatch && r.shape_mismatch);
	assert_string_equal(r.detail, "dtype F16 != expected F32 (an output must keep the reference's dtype); "
				      "shape [6] != expected [2, 3]");
}

static void zero_dim_and_empty(void **state)
{
	(void)state;
	static const int64_t s03[] = { 0, 3 }, s30[] = { 3, 0 };
	float e = 2.0f, a = 2.5f;
	struct compare_result r;
	struct st_tensor te = mk(ST_F32, &e, 0, NULL), ta = mk(ST_F32, &a, 0, NULL);
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_false(r.pass);
	assert_int_equal(r.worst_index, 0);
	assert_string_equal(r.detail, "1 of 1 elements differ; worst at []: 2.5 vs expected 2 (abs 0.5, allowed 3.0e-04)");
	a = 2.0f;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_true(r.pass);

	struct st_tensor ee = mk(ST_F32, NULL, 2, s03), ea = mk(ST_F32, NULL, 2, s03);
	compare_tensors(&ee, &ea, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_true(r.pass);
	assert_int_equal(r.worst_index, -1);
	assert_int_equal(r.n_mismatched, 0);
	assert_string_equal(r.detail, "empty output of shape [0, 3]: nothing to compare");
	ea = mk(ST_F32, NULL, 2, s30); /* empty, but not the same shape */
	compare_tensors(&ee, &ea, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	assert_false(r.pass);
	assert_true(r.shape_mismatch);
}

static void max_rel_leaves_out_zero_references(void **state)
{
	(void)state;
	const float e[3] = { 0.0f, 2.0f, -4.0f }, a[3] = { 0.001953125f, 2.0009765625f, -4.0009765625f };
	struct st_tensor te = mk(ST_F32, e, 1, S3), ta = mk(ST_F32, a, 1, S3);
	struct compare_result r;
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH_V0, ST_F32), &r);
	assert_true(r.pass);
	assert_true(r.max_abs == 0.001953125); /* the zero reference still counts for abs */
	assert_true(r.max_rel == 0.00048828125); /* 2^-10 / 2, not 2^-9 / 0 */
	assert_int_equal(r.worst_index, 0);
}

static void a_large_output_is_judged_quickly(void **state)
{
	(void)state;
	enum { N = 10 * 1000 * 1000 };
	static const int64_t shape[] = { N / 1000, 1000 };
	float *e = xmalloc(N * sizeof(float)), *a = xmalloc(N * sizeof(float));
	for (int i = 0; i < N; i++) {
		e[i] = (float)(i % 1000) * 0.001f;
		a[i] = e[i] + (i % 7 ? 1e-5f : -1e-5f);
	}
	a[N - 5] = 3.0f;
	struct st_tensor te = mk(ST_F32, e, 2, shape), ta = mk(ST_F32, a, 2, shape);
	struct compare_result r;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	compare_tensors(&te, &ta, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	assert_int_equal(r.n_mismatched, 1);
	assert_int_equal(r.worst_index, N - 5);
	assert_int_equal(r.worst_coord[0], N / 1000 - 1);
	assert_int_equal(r.worst_coord[1], 995);
	/* 1e8 elements must take well under a second; 1e7 gets a tenth of that with room for a busy CI */
	if (s > 0.5)
		fail_msg("1e7 fp32 elements took %.3f s", s);
	free(e);
	free(a);
}

/* Compares e and a with STITCHBENCH_THREADS set to `threads` (NULL: unset). */
static struct compare_result compare_with_threads(const struct st_tensor *e, const struct st_tensor *a,
						  const char *threads)
{
	struct compare_result r;
	if (threads)
		setenv("STITCHBENCH_THREADS", threads, 1);
	else
		unsetenv("STITCHBENCH_THREADS");
	compare_tensors(e, a, tolerance_for(TOL_KERNELBENCH, ST_F32), &r);
	unsetenv("STITCHBENCH_THREADS");
	return r;
}

/* Above a million elements the comparison runs in blocks on several threads: the blocks' totals must
 * combine to what one loop over every element gives (first of equal maxima, first non-finite mismatch,
 * counts summed), whatever the number of threads. */
static void blocks_combine_as_one_loop_would(void **state)
{
	(void)state;
	enum { N = 4 * (1 << 20) + 12345 }; /* five blocks, the last one short */
	const int64_t shape[] = { N };
	float *e = malloc(N * sizeof(float)), *a = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++)
		e[i] = a[i] = (float)(i % 977) * 0.25f;
	/* equal largest differences in blocks 1 and 3: the earlier one is max_abs's element */
	a[(1 << 20) + 7] += 8.0f;
	a[3 * (1 << 20) + 9] += 8.0f;
	/* a mismatch beyond tolerance in block 0, smaller than those */
	a[5] += 1.0f;
	struct st_tensor te = mk(ST_F32, e, 1, shape), ta = mk(ST_F32, a, 1, shape);
	struct compare_result one = compare_with_threads(&te, &ta, "1"), many = compare_with_threads(&te, &ta, "8");
	assert_int_equal(one.n_mismatched, 3);
	assert_true(one.max_abs == 8.0);
	assert_int_equal(one.worst_index, (1 << 20) + 7); /* furthest beyond tolerance: e is smaller there */
	assert_int_equal(many.n_mismatched, one.n_mismatched);
	assert_int_equal(many.worst_index, one.worst_index);
	assert_true(many.max_abs == one.max_abs && many.max_rel == one.max_rel);
	assert_string_equal(many.detail, one.detail);

	/* a NaN in block 4 and an inf in block 2: the first non-finite mismatch (block 2's) is the worst */
	a[4 * (1 << 20) + 3] = NAN;
	a[2 * (1 << 20) + 11] = INFINITY;
	one = compare_with_threads(&te, &ta, "1");
	many = compare_with_threads(&te, &ta, NULL);
	assert_int_equal(one.n_mismatched, 5);
	assert_int_equal(one.n_nan_actual, 1);
	assert_int_equal(one.n_inf_actual, 1);
	assert_int_equal(one.worst_index, 2 * (1 << 20) + 11);
	assert_true(isinf(one.max_abs));
	assert_int_equal(many.worst_index, one.worst_index);
	assert_int_equal(many.n_nan_actual, 1);
	assert_string_equal(many.detail, one.detail);

	/* everything within tolerance: worst_index is max_abs's element, the first of equal maxima */
	memcpy(a, e, N * sizeof(float));
	e[3 * (1 << 20) + 1] = e[(1 << 20) + 2] = 1.0f;
	a[3 * (1 << 20) + 1] = a[(1 << 20) + 2] = 1.0f + 0x1p-17f; /* the same difference, within tolerance */
	one = compare_with_threads(&te, &ta, "1");
	many = compare_with_threads(&te, &ta, "3");
	assert_true(one.pass && many.pass);
	assert_int_equal(one.worst_index, (1 << 20) + 2);
	assert_int_equal(many.worst_index, (1 << 20) + 2);
	assert_true(one.max_abs == 0x1p-17 && many.max_abs == one.max_abs);
	free(e);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(presets_give_the_documented_tolerances),
		cmocka_unit_test(exact_equality_passes),
		cmocka_unit_test(fp32_edges_under_both_presets),
		cmocka_unit_test(half_precision_tolerances),
		cmocka_unit_test(worst_element_is_the_furthest_beyond_tolerance),
		cmocka_unit_test(nan_and_infinity),
		cmocka_unit_test(integers_and_bools_compare_exactly),
		cmocka_unit_test(shape_and_dtype_must_match),
		cmocka_unit_test(zero_dim_and_empty),
		cmocka_unit_test(max_rel_leaves_out_zero_references),
		cmocka_unit_test(a_large_output_is_judged_quickly),
		cmocka_unit_test(blocks_combine_as_one_loop_would),
	};
	return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
