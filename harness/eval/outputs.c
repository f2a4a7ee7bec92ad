/* outputs.c - comparing two output files of the workers. The same walk over the tensors also hashes them
 * and notes all-zero outputs, so a file is read once for every check that needs it. */
#include "outputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "safetensors.h"

/* Four independent lanes of eight bytes, multiply and shift, then combined in order: several GB/s
 * (one lane is bound by its multiply's latency), where sha256 would take seconds on the gigabyte
 * outputs of large problems. Only ever compared within one run: the values may change between versions. */
static uint64_t mix(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t l[4] = { h, h ^ 0x9E3779B97F4A7C15ull, h ^ 0xC2B2AE3D27D4EB4Full, h ^ 0x165667B19E3779F9ull }, w;
	for (; n >= 32; p += 32, n -= 32)
		for (int j = 0; j < 4; j++) {
			memcpy(&w, p + 8 * j, 8);
			l[j] = (l[j] ^ w) * 0x9E3779B97F4A7C15ull;
			l[j] ^= l[j] >> 29;
		}
	h = l[0];
	for (int j = 1; j < 4; j++)
		h = (h ^ l[j]) * 0xBF58476D1CE4E5B9ull;
	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w ^ ((uint64_t)n << 56)) * 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 31);
}

static uint64_t digest(const struct st_file *f)
{
	uint64_t h = 0x243F6A8885A308D3ull;
	for (size_t i = 0; i < f->ntensors; i++) {
		const struct st_tensor *t = &f->tensors[i];
		char head[64 + 24 * ST_MAX_DIMS];
		int n = snprintf(head, sizeof(head), "%s %s %d", t->name, st_dtype_name(t->dtype), t->ndim);
		for (int d = 0; d < t->ndim && n < (int)sizeof(head) - 24; d++)
			n += snprintf(head + n, sizeof(head) - (size_t)n, " %lld", (long long)t->shape[d]);
		h = mix(h, head, (size_t)n);
		h = mix(h, t->data, t->nbytes);
	}
	return h;
}

/* Every byte 0: +0.0 for floats. -0.0 is a zero too, but no kernel that does nothing writes it. */
static int all_zero(const struct st_tensor *t)
{
	static const unsigned char zeros[4096];
	const unsigned char *p = t->data;
	for (size_t i = 0; i < t->nbytes; i += sizeof(zeros)) {
		size_t n = t->nbytes - i < sizeof(zeros) ? t->nbytes - i : sizeof(zeros);
		if (memcmp(p + i, zeros, n))
			return 0;
	}
	return 1;
}

static int same_bytes(const struct st_file *a, const struct st_file *b)
{
	if (a->ntensors != b->ntensors)
		return 0;
	for (size_t i = 0; i < a->ntensors; i++) {
		const struct st_tensor *x = &a->tensors[i], *y = &b->tensors[i];
		if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim ||
		    memcmp(x->shape, y->shape, sizeof(x->shape[0]) * (size_t)x->ndim) || x->nbytes != y->nbytes ||
		    memcmp(x->data, y->data, x->nbytes))
			return 0;
	}
	return 1;
}

int outputs_compare(const char *expected, const char *actual, enum tolerance_preset tol, struct outputs_cmp *r,
		    struct sb_error *err)
{
	struct st_file ef, af;
	struct sb_error e2 = { 0 };
	memset(r, 0, sizeof(*r));
	if (st_open(expected, &ef, err))
		return -1;
	if (st_open(actual, &af, &e2)) {
		st_close(&ef);
		snprintf(r->error, sizeof(r->error), "the candidate's outputs are unreadable: %s", e2.msg);
		return 0;
	}
	r->readable = 1;
	r->pass = 1;
	r->digest_expected = digest(&ef);
	r->digest_actual = digest(&af);
	r->bitwise = same_bytes(&ef, &af);
	if (af.ntensors != ef.ntensors) {
		r->pass = 0;
		snprintf(r->error, sizeof(r->error), "the candidate returned %zu output%s, the reference %zu", af.ntensors,
			 af.ntensors == 1 ? "" : "s", ef.ntensors);
	}
	size_t n = ef.ntensors ? ef.ntensors : 1;
	r->outputs = xcalloc(n, sizeof(*r->outputs));
	r->zero_expected = xcalloc(n, sizeof(int));
	r->zero_actual = xcalloc(n, sizeof(int));
	for (size_t i = 0; i < ef.ntensors && i < af.ntensors; i++) {
		const struct st_tensor *exp = &ef.tensors[i], *act = st_find(&af, exp->name);
		struct output_check *oc = &r->outputs[r->noutputs];
		snprintf(oc->name, sizeof(oc->name), "%s", exp->name);
		r->zero_expected[r->noutputs] = all_zero(exp);
		r->noutputs++;
		if (!act) {
			oc->cmp.pass = 0;
			snprintf(oc->cmp.detail, sizeof(oc->cmp.detail), "output %s is missing", exp->name);
			r->pass = 0;
			continue;
		}
		r->zero_actual[r->noutputs - 1] = all_zero(act);
		oc->ndim = act->ndim;
		compare_tensors(exp, act, tolerance_for(tol, exp->dtype), &oc->cmp);
		r->pass &= oc->cmp.pass;
		r->nan_actual |= oc->cmp.n_nan_actual > 0 || oc->cmp.n_inf_actual > 0;
	}
	st_close(&ef);
	st_close(&af);
	return 0;
}

const char *outputs_cmp_detail(const struct outputs_cmp *r)
{
	for (size_t i = 0; i < r->noutputs; i++)
		if (!r->outputs[i].cmp.pass)
			return r->outputs[i].cmp.detail;
	return r->error;
}

void outputs_cmp_release(struct outputs_cmp *r)
{
	free(r->outputs);
	free(r->zero_expected);
	free(r->zero_actual);
	memset(r, 0, sizeof(*r));
}
