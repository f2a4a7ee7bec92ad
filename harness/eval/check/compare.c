/* compare.c - the elementwise allclose check of candidate outputs, with the statistics a verdict reports.
 * One specialised loop per dtype so that a 1e8-element fp32 output is judged in a fraction of a second. */
#include "check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/parallel.h"
#include "../../core/strbuf.h"

struct tolerance tolerance_for(enum tolerance_preset preset, enum st_dtype dtype)
{
	double t;
	if (!st_dtype_is_float(dtype))
		t = 0;
	else if (preset == TOL_KERNELBENCH_V0)
		t = 1e-2;
	else
		t = dtype == ST_F16 || dtype == ST_BF16 ? 1e-2 : 1e-4;
	return (struct tolerance){ t, t };
}

/* Running totals of one comparison. */
struct acc {
	double atol, rtol;
	int64_t n_mismatched, n_nan, n_inf;
	double max_abs, max_rel;
	int64_t max_abs_i;
	double worst_excess; /* |a-e| - allowed of worst_i; +inf for a NaN/inf mismatch */
	int64_t worst_i;
};

/* One element whose difference d = |a-e| is a number; ae = |e|. */
static inline void account(struct acc *a, int64_t i, double ae, double d)
{
	if (d > a->max_abs) {
		a->max_abs = d;
		a->max_abs_i = i;
	}
	/* compared by multiplication so the common case divides nothing */
	if (d > a->max_rel * ae && ae != 0)
		a->max_rel = d / ae;
	double excess = d - (a->atol + a->rtol * ae);
	if (excess > 0)
		a->n_mismatched++;
	if (excess > a->worst_excess) {
		a->worst_excess = excess;
		a->worst_i = i;
	}
}

/* Kept out of line: outputs are almost always finite, and this keeps the hot loop small. */
static __attribute__((noinline)) void account_nonfinite(struct acc *a, int64_t i, double e, double x)
{
	if (!isnan(x) && !isnan(e) && x == e) { /* the same infinity */
		account(a, i, 0, 0);
		return;
	}
	if (isfinite(e)) {
		a->n_nan += isnan(x) != 0;
		a->n_inf += isinf(x) != 0; /* glibc's isinf is -1 for -inf */
	}
	if (!isnan(x) && !isnan(e)) { /* an infinity against a finite value or the other infinity */
		if (INFINITY > a->max_abs) {
			a->max_abs = INFINITY;
			a->max_abs_i = i;
		}
		if (isfinite(e) && e != 0)
			a->max_rel = INFINITY;
	}
	a->n_mismatched++;
	if (a->worst_excess < INFINITY) { /* the first non-finite mismatch stays the worst */
		a->worst_excess = INFINITY;
		a->worst_i = i;
	}
}

static inline double ld_f32(const unsigned char *p, int64_t i) { float v; memcpy(&v, p + 4 * i, 4); return v; }
static inline double ld_f64(const unsigned char *p, int64_t i) { double v; memcpy(&v, p + 8 * i, 8); return v; }
static inline double ld_f16(const unsigned char *p, int64_t i) { uint16_t v; memcpy(&v, p + 2 * i, 2); return st_f16_to_double(v); }
static inline double ld_bf16(const unsigned char *p, int64_t i) { uint16_t v; memcpy(&v, p + 2 * i, 2); return st_bf16_to_double(v); }
static inline int64_t ld_i64(const unsigned char *p, int64_t i) { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
static inline int64_t ld_i32(const unsigned char *p, int64_t i) { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
static inline int64_t ld_i16(const unsigned char *p, int64_t i) { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
static inline int64_t ld_i8(const unsigned char *p, int64_t i) { return (int8_t)p[i]; }
static inline int64_t ld_u8(const unsigned char *p, int64_t i) { return p[i]; }
static inline int64_t ld_bool(const unsigned char *p, int64_t i) { return p[i] != 0; } /* torch: non-zero is true */

/* |x - e| without the int64 overflow of x - e; exactly 0 only when x == e. */
static inline double int_dist(int64_t e, int64_t x)
{
	return x > e ? (double)((uint64_t)x - (uint64_t)e) : (double)((uint64_t)e - (uint64_t)x);
}

#define FLOAT_LOOP(ld)                                                  \
	for (int64_t i = lo; i < hi; i++) {                             \
		double e = ld(pe, i), x = ld(pa, i);                    \
		if (isfinite(e) && isfinite(x))                         \
			account(a, i, fabs(e), fabs(x - e));            \
		else                                                    \
			account_nonfinite(a, i, e, x);                  \
	}                                                               \
	break
#define INT_LOOP(ld)                                                    \
	for (int64_t i = lo; i < hi; i++) {                             \
		int64_t e = ld(pe, i), x = ld(pa, i);                   \
		account(a, i, fabs((double)e), int_dist(e, x));         \
	}                                                               \
	break

/* Elements [lo, hi) of expected and actual (same dtype and shape) into a. */
static void compare_range(const struct st_tensor *expected, const struct st_tensor *actual, int64_t lo, int64_t hi,
			  struct acc *a)
{
	const unsigned char *pe = expected->data, *pa = actual->data;
	switch (expected->dtype) {
	case ST_F32: FLOAT_LOOP(ld_f32);
	case ST_F64: FLOAT_LOOP(ld_f64);
	case ST_F16: FLOAT_LOOP(ld_f16);
	case ST_BF16: FLOAT_LOOP(ld_bf16);
	case ST_I64: INT_LOOP(ld_i64);
	case ST_I32: INT_LOOP(ld_i32);
	case ST_I16: INT_LOOP(ld_i16);
	case ST_I8: INT_LOOP(ld_i8);
	case ST_U8: INT_LOOP(ld_u8);
	case ST_BOOL: INT_LOOP(ld_bool);
	}
}

/* Large outputs are compared in blocks of a fixed number of elements on several threads (parallel.h),
 * each block into running totals of its own, which are then combined in block order. The block size is
 * fixed, not the thread count's share, so a result never depends on how many threads there were. */
#define COMPARE_BLOCK ((int64_t)1 << 20)

struct compare_job {
	const struct st_tensor *expected, *actual;
	struct acc *blocks;
};

static void compare_block(void *arg, size_t b)
{
	struct compare_job *job = arg;
	int64_t lo = (int64_t)b * COMPARE_BLOCK, hi = lo + COMPARE_BLOCK;
	compare_range(job->expected, job->actual, lo, hi < job->expected->numel ? hi : job->expected->numel,
		      &job->blocks[b]);
}

/* b's totals after a's, as if one loop had run over both: maxima keep the earlier element on ties,
 * and the first infinite excess (a non-finite mismatch) stays the worst, as in account(). */
static void merge(struct acc *a, const struct acc *b)
{
	a->n_mismatched += b->n_mismatched;
	a->n_nan += b->n_nan;
	a->n_inf += b->n_inf;
	if (b->max_abs > a->max_abs) {
		a->max_abs = b->max_abs;
		a->max_abs_i = b->max_abs_i;
	}
	if (b->max_rel > a->max_rel)
		a->max_rel = b->max_rel;
	if (b->worst_excess > a->worst_excess) {
		a->worst_excess = b->worst_excess;
		a->worst_i = b->worst_i;
	}
}

static void format_shape(char *buf, size_t len, int ndim, const int64_t *dims)
{
	size_t used = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < ndim && used < len; d++)
		used += (size_t)snprintf(buf + used, len - used, "%s%" PRId64, d ? ", " : "", dims[d]);
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

/* Element i of t as text: integers exactly (a double would round I64), floats to 6 digits. */
static void format_value(char *buf, size_t len, const struct st_tensor *t, int64_t i)
{
	const unsigned char *p = t->data;
	switch (t->dtype) {
	case ST_I64: snprintf(buf, len, "%" PRId64, ld_i64(p, i)); break;
	case ST_I32: snprintf(buf, len, "%" PRId64, ld_i32(p, i)); break;
	case ST_I16: snprintf(buf, len, "%" PRId64, ld_i16(p, i)); break;
	case ST_I8: snprintf(buf, len, "%" PRId64, ld_i8(p, i)); break;
	case ST_U8: snprintf(buf, len, "%" PRId64, ld_u8(p, i)); break;
	case ST_BOOL: snprintf(buf, len, "%s", ld_bool(p, i) ? "true" : "false"); break;
	default: snprintf(buf, len, "%.6g", st_value(t, i)); break;
	}
}

static int same_shape(const struct st_tensor *a, const struct st_tensor *b)
{
	if (a->ndim != b->ndim)
		return 0;
	for (int d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

void compare_describe(struct compare_result *r, int ndim, const int64_t *shape, int64_t numel, const char *ev,
		      const char *av, struct tolerance tol)
{
	char where[160];
	size_t used;
	format_shape(where, sizeof(where), ndim, r->worst_coord);
	if (numel == 0) {
		format_shape(where, sizeof(where), ndim, shape);
		snprintf(r->detail, sizeof(r->detail), "empty output of shape %s: nothing to compare", where);
		return;
	}
	if (r->pass) {
		snprintf(r->detail, sizeof(r->detail), "all %" PRId64 " elements within tolerance; max abs %.3g at %s, max rel %.3g",
			 numel, r->max_abs, where, r->max_rel);
		return;
	}
	used = (size_t)snprintf(r->detail, sizeof(r->detail),
				"%" PRId64 " of %" PRId64 " elements differ; worst at %s: %s vs expected %s (abs %.3g, allowed %.1e)",
				r->n_mismatched, numel, where, av, ev, fabs(r->worst_actual - r->worst_expected),
				tol.atol + tol.rtol * fabs(r->worst_expected));
	if (used < sizeof(r->detail) && (r->n_nan_actual || r->n_inf_actual))
		snprintf(r->detail + used, sizeof(r->detail) - used, "; the candidate has %" PRId64 " NaN and %" PRId64
			 " inf where the reference is finite", r->n_nan_actual, r->n_inf_actual);
}

void compare_describe_mismatch(struct compare_result *r, const char *dtype, const char *expected_dtype, int ndim,
			       const int64_t *shape, int expected_ndim, const int64_t *expected_shape)
{
	char es[80], as[80];
	size_t used = 0;
	if (r->dtype_mismatch)
		used = (size_t)snprintf(r->detail, sizeof(r->detail),
					"dtype %s != expected %s (an output must keep the reference's dtype)%s", dtype,
					expected_dtype, r->shape_mismatch ? "; " : "");
	if (r->shape_mismatch && used < sizeof(r->detail)) {
		format_shape(es, sizeof(es), expected_ndim, expected_shape);
		format_shape(as, sizeof(as), ndim, shape);
		snprintf(r->detail + used, sizeof(r->detail) - used, "shape %s != expected %s", as, es);
	}
}

void compare_worst_coord(struct compare_result *r, int ndim, const int64_t *shape)
{
	for (int64_t d = ndim - 1, rest = r->worst_index; d >= 0; d--) {
		r->worst_coord[d] = rest % shape[d];
		rest /= shape[d];
	}
}

static void describe(const struct st_tensor *exp, const struct st_tensor *act, struct tolerance tol,
		     struct compare_result *r)
{
	char ev[32] = "", av[32] = "";
	if (exp->numel) {
		format_value(ev, sizeof(ev), exp, r->worst_index);
		format_value(av, sizeof(av), act, r->worst_index);
	}
	compare_describe(r, exp->ndim, exp->shape, exp->numel, ev, av, tol);
}

void compare_tensors(const struct st_tensor *expected, const struct st_tensor *actual, struct tolerance tol,
		     struct compare_result *r)
{
	memset(r, 0, sizeof(*r));
	r->worst_index = -1;
	r->dtype_mismatch = expected->dtype != actual->dtype;
	r->shape_mismatch = !same_shape(expected, actual);
	if (r->dtype_mismatch || r->shape_mismatch) {
		compare_describe_mismatch(r, st_dtype_name(actual->dtype), st_dtype_name(expected->dtype), actual->ndim,
					  actual->shape, expected->ndim, expected->shape);
		return;
	}

	const struct acc start = { .atol = tol.atol, .rtol = tol.rtol, .max_abs = -1, .max_abs_i = -1,
				   .worst_excess = -INFINITY, .worst_i = -1 };
	struct acc a = start;
	size_t nblocks = par_blocks((size_t)expected->numel, (size_t)COMPARE_BLOCK);
	if (nblocks == 1) {
		compare_range(expected, actual, 0, expected->numel, &a);
	} else {
		struct compare_job job = { expected, actual, xcalloc(nblocks, sizeof(struct acc)) };
		for (size_t b = 0; b < nblocks; b++)
			job.blocks[b] = start;
		par_for(nblocks, compare_block, &job);
		for (size_t b = 0; b < nblocks; b++)
			merge(&a, &job.blocks[b]);
		free(job.blocks);
	}

	r->n_mismatched = a.n_mismatched;
	r->n_nan_actual = a.n_nan;
	r->n_inf_actual = a.n_inf;
	r->pass = a.n_mismatched == 0;
	r->max_abs = a.max_abs < 0 ? 0 : a.max_abs;
	r->max_rel = a.max_rel;
	r->worst_index = r->pass ? a.max_abs_i : a.worst_i;
	if (r->worst_index >= 0) {
		compare_worst_coord(r, expected->ndim, expected->shape);
		r->worst_expected = st_value(expected, r->worst_index);
		r->worst_actual = st_value(actual, r->worst_index);
	}
	describe(expected, actual, tol, r);
}
