/* compare.h - judges a candidate's output tensor against the reference's, the way torch.allclose does
 * (DESIGN §5.4), and says in one line where and by how much it is wrong. */
#ifndef SB_COMPARE_H
#define SB_COMPARE_H

#include <stdint.h>

#include "../core/config.h"
#include "safetensors.h"

struct tolerance {
	double atol, rtol;
};

/* kernelbench: F32/F64 1e-4, F16/BF16 1e-2; kernelbench-v0: 1e-2 for every float dtype;
 * integer and bool dtypes: exact (0, 0) under both. atol == rtol in every case. */
struct tolerance tolerance_for(enum tolerance_preset preset, enum st_dtype dtype);

struct compare_result {
	int pass;
	int shape_mismatch, dtype_mismatch;   /* then nothing else is compared */
	int64_t n_mismatched;                 /* elements outside tolerance */
	int64_t n_nan_actual, n_inf_actual;   /* non-finite values in the candidate where the reference is finite */
	/* Over every element whose difference is a number: a NaN on either side is left out (it is counted
	 * and fails), inf against a finite value counts as inf, equal infinities as 0. max_rel leaves out
	 * elements whose expected value is 0. */
	double max_abs, max_rel;
	/* The element furthest beyond |a-e| - (atol + rtol*|e|) (NaN/inf mismatches count as infinitely
	 * far; the first such wins), or of max_abs when every element passes; -1 if empty. */
	int64_t worst_index;
	int64_t worst_coord[ST_MAX_DIMS];
	double worst_expected, worst_actual;
	/* One human line: "shape [2, 3] != expected [3, 2]",
	 * "417 of 4096 elements differ; worst at [3, 17]: 0.1234 vs expected 0.5678 (abs 0.444, allowed 1.0e-04)" */
	char detail[256];
};

/* Element rule (expected = reference): |a - e| <= atol + rtol*|e|; NaN on either side fails; an infinity
 * passes only against the same infinity. Integer and bool dtypes are compared as exact integers (so I64
 * beyond 2^53 is not rounded) before any tolerance is applied. dtype and shape must match exactly (no
 * promotion, no broadcasting). One pass over the data; above a million elements it is split into blocks of
 * a fixed size compared on several threads (par_for), with the same result as one thread's. */
void compare_tensors(const struct st_tensor *expected, const struct st_tensor *actual, struct tolerance tol,
		     struct compare_result *r);

/* The pieces of compare_tensors that do not need the data, for statistics computed elsewhere (a worker
 * comparing on the device, exchange.c): r's detail line from its numbers, with the worst element's two
 * values already formatted (ev, av: integers exactly, floats as %.6g); the line for a dtype or shape
 * mismatch (r's flags set); worst_coord from worst_index. */
void compare_describe(struct compare_result *r, int ndim, const int64_t *shape, int64_t numel, const char *ev,
		      const char *av, struct tolerance tol);
void compare_describe_mismatch(struct compare_result *r, const char *dtype, const char *expected_dtype, int ndim,
			       const int64_t *shape, int expected_ndim, const int64_t *expected_shape);
void compare_worst_coord(struct compare_result *r, int ndim, const int64_t *shape);

#endif
