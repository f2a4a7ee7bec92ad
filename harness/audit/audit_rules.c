/* audit_rules.c - the audit's measures over reference outputs read from the workers' files: whether a
 * constant passes every seed, zeros pass, an output equals an input, two runs are equal. What that makes
 * of the problem (H15, H16, H17) is checks/rules_audit.c's to say. */
#include <math.h>
#include <string.h>

#include "audit.h"

/* The comparison's own element rule (eval/check/check.h): |a - e| <= atol + rtol * |e|, NaN never passes. */
static int close_enough(double a, double e, struct tolerance tol)
{
	if (isnan(a) || isnan(e))
		return 0;
	if (isinf(a) || isinf(e))
		return a == e;
	return fabs(a - e) <= tol.atol + tol.rtol * fabs(e);
}

static int same_layout(const struct st_tensor *a, const struct st_tensor *b)
{
	return a->dtype == b->dtype && a->ndim == b->ndim && a->numel == b->numel &&
	       !memcmp(a->shape, b->shape, sizeof(a->shape[0]) * (size_t)a->ndim);
}

int audit_rule_constant(const struct st_tensor *const *outs, size_t n, struct tolerance tol)
{
	if (n < 2 || !outs[0]->numel)
		return 0;
	for (size_t k = 1; k < n; k++)
		if (!same_layout(outs[0], outs[k]))
			return 0;
	for (int64_t i = 0; i < outs[0]->numel; i++) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t k = 0; k < n; k++) {
			double x = st_value(outs[k], i);
			if (isnan(x))
				return 0;
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		double mid = isinf(lo) || isinf(hi) ? (lo == hi ? lo : NAN) : lo + (hi - lo) / 2;
		for (size_t k = 0; k < n; k++)
			if (!close_enough(mid, st_value(outs[k], i), tol))
				return 0;
	}
	return 1;
}

int audit_rule_zero(const struct st_tensor *const *outs, size_t n, struct tolerance tol)
{
	if (!n || !outs[0]->numel)
		return 0;
	for (size_t k = 0; k < n; k++)
		for (int64_t i = 0; i < outs[k]->numel; i++)
			if (!close_enough(0.0, st_value(outs[k], i), tol))
				return 0;
	return 1;
}

int audit_rule_same(const struct st_tensor *a, const struct st_tensor *b, struct tolerance tol)
{
	if (!same_layout(a, b))
		return 0;
	if (tol.atol == 0 && tol.rtol == 0)
		return !memcmp(a->data, b->data, a->nbytes) || a->nbytes == 0;
	for (int64_t i = 0; i < a->numel; i++)
		if (!close_enough(st_value(a, i), st_value(b, i), tol))
			return 0;
	return 1;
}
