/* outputs.h - one call's output file against another (the reference's, or the candidate's own first run):
 * the element comparison of every output, plus what the runtime checks need (digests, all-zero, NaN). */
#ifndef SB_OUTPUTS_H
#define SB_OUTPUTS_H

#include <stdint.h>

#include "../core/config.h"
#include "../core/error.h"
#include "verdict.h"

struct outputs_cmp {
	int readable;                /* the actual file was a valid safetensors file */
	char error[400];             /* why not, or "returned 2 outputs, the reference 1" */
	int pass;                    /* every output matched within tolerance, and the counts agree */
	struct output_check *outputs;/* one per expected output (owned; hand over to a trial_result) */
	size_t noutputs;
	int bitwise;                 /* same names, dtypes, shapes and bytes (compared, not hashed) */
	/* A 64-bit hash over every output's name, dtype, shape and bytes, for "are these two calls' outputs
	 * identical" across calls. Not cryptographic: equal outputs always hash alike, so a candidate can
	 * only make its own distinct outputs look identical (a finding against itself), never the reverse. */
	uint64_t digest_expected, digest_actual;
	int *zero_expected, *zero_actual; /* per output: every element is 0 */
	int nan_actual;              /* some output holds NaN or inf where the expected value is finite */
};

/* Compares `actual` with `expected`. Returns 0 (see r->readable and r->pass), or -1 when `expected`
 * cannot be read (the harness's own file: err says why). */
int outputs_compare(const char *expected, const char *actual, enum tolerance_preset tol, struct outputs_cmp *r,
		    struct sb_error *err);
void outputs_cmp_release(struct outputs_cmp *r);
/* An output file that has been compared and is not read again: removed now, unless keep (--keep-workdir).
 * A candidate's outputs then take disk only while they are needed (a 1.6 GB output times nine files
 * would fill 14 GB of the folder), and pages deleted before the kernel writes them back never reach it. */
void outputs_drop(const char *path, int keep);
/* The first failing output's detail, or r->error. */
const char *outputs_cmp_detail(const struct outputs_cmp *r);

#endif
