/* outputs.c - comparing two output files of the workers. The same walk over the tensors also hashes them
 * and notes all-zero outputs, so a file is read once for every check that needs it. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/log.h"
#include "../../core/parallel.h"
#include "../../core/proc.h"
#include "../../core/strbuf.h"
#include "../verdict.h"

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

/* The passes below over a large tensor's bytes run in blocks of this size on several threads (parallel.h);
 * each block's answer is combined in block order, so nothing depends on the number of threads. */
#define PASS_BLOCK ((size_t)4 << 20)

enum pass_kind { PASS_HASH, PASS_ZERO, PASS_EQUAL };

struct pass_job {
	enum pass_kind kind;
	const unsigned char *a, *b; /* b: PASS_EQUAL's other side */
	size_t n;
	uint64_t *res;              /* one answer per block */
};

/* Every byte 0: +0.0 for floats. -0.0 is a zero too, but no kernel that does nothing writes it. */
static int zero_bytes(const unsigned char *p, size_t n)
{
	static const unsigned char zeros[4096];
	for (size_t i = 0; i < n; i += sizeof(zeros))
		if (memcmp(p + i, zeros, n - i < sizeof(zeros) ? n - i : sizeof(zeros)))
			return 0;
	return 1;
}

static void pass_block(void *arg, size_t blk)
{
	struct pass_job *job = arg;
	size_t off = blk * PASS_BLOCK, len = job->n - off < PASS_BLOCK ? job->n - off : PASS_BLOCK;
	switch (job->kind) {
	case PASS_HASH: job->res[blk] = mix(0x243F6A8885A308D3ull + blk, job->a + off, len); break;
	case PASS_ZERO: job->res[blk] = zero_bytes(job->a + off, len); break;
	case PASS_EQUAL: job->res[blk] = !memcmp(job->a + off, job->b + off, len); break;
	}
}

/* One pass over n bytes (n > PASS_BLOCK): the blocks' answers, *nblocks of them, to be freed. */
static uint64_t *pass_run(enum pass_kind kind, const void *a, const void *b, size_t n, size_t *nblocks)
{
	struct pass_job job = { kind, a, b, n, NULL };
	*nblocks = par_blocks(n, PASS_BLOCK);
	job.res = xcalloc(*nblocks, sizeof(uint64_t));
	par_for(*nblocks, pass_block, &job);
	return job.res;
}

/* PASS_ZERO and PASS_EQUAL: every block said yes. */
static int pass_all(enum pass_kind kind, const void *a, const void *b, size_t n)
{
	if (n <= PASS_BLOCK)
		return kind == PASS_ZERO ? zero_bytes(a, n) : !memcmp(a, b, n);
	size_t nb;
	uint64_t *res = pass_run(kind, a, b, n, &nb);
	int all = 1;
	for (size_t i = 0; i < nb; i++)
		all &= res[i] != 0;
	free(res);
	return all;
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
		if (t->nbytes <= PASS_BLOCK) {
			h = mix(h, t->data, t->nbytes);
		} else { /* the hash of the blocks' hashes */
			size_t nb;
			uint64_t *res = pass_run(PASS_HASH, t->data, NULL, t->nbytes, &nb);
			h = mix(h, res, nb * sizeof(uint64_t));
			free(res);
		}
	}
	return h;
}

static int all_zero(const struct st_tensor *t)
{
	return pass_all(PASS_ZERO, t->data, NULL, t->nbytes);
}

static int same_bytes(const struct st_file *a, const struct st_file *b)
{
	if (a->ntensors != b->ntensors)
		return 0;
	for (size_t i = 0; i < a->ntensors; i++) {
		const struct st_tensor *x = &a->tensors[i], *y = &b->tensors[i];
		if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim ||
		    memcmp(x->shape, y->shape, sizeof(x->shape[0]) * (size_t)x->ndim) || x->nbytes != y->nbytes ||
		    !pass_all(PASS_EQUAL, x->data, y->data, x->nbytes))
			return 0;
	}
	return 1;
}

int outputs_compare(const char *expected, const char *actual, enum tolerance_preset tol, struct outputs_cmp *r,
		    struct sb_error *err)
{
	struct st_file ef, af;
	struct sb_error e2 = { 0 };
	double t0 = proc_now();
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
	if (sb_trace_on()) {
		const char *base = strrchr(actual, '/');
		sb_trace("compare %s: %.3f s (%d threads)", base ? base + 1 : actual, proc_now() - t0, par_threads());
	}
	return 0;
}

void outputs_drop(const char *path, int keep)
{
	if (!keep)
		unlink(path); /* gone already is fine: the folder goes at the end anyway */
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
