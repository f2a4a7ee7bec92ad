/* check.h - correctness: the candidate's outputs against the reference's, call by call.
 *   safetensors.c: reads the safetensors files the workers write, validating every field (the writer is untrusted).
 *   compare.c: judges an output tensor against the reference's the way torch.allclose does, and says where it is wrong.
 *   outputs.c: one call's output file against another: every output compared, with digests, all-zero and NaN noted.
 *   exchange.c: how a call's outputs reach the comparison (eval.exchange): files, or shared with the reference worker.
 *   trials.c and timedcheck.c run the correctness trials and check every timed call (eval_int.h declares them).
 * verdict.h includes this header (struct compare_result), so this one does not include verdict.h: outputs_cmp
 * only points to the verdict's output_check. */
#ifndef SB_EVAL_CHECK_H
#define SB_EVAL_CHECK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../core/config.h"
#include "../../core/error.h"

/* safetensors.c - reads the safetensors files the workers write (harness/worker/sbtensors.py).
 * The writer is untrusted: st_open validates every field and offset before anything is exposed. */

enum st_dtype { ST_F32, ST_F16, ST_BF16, ST_F64, ST_I64, ST_I32, ST_I16, ST_I8, ST_U8, ST_BOOL };
#define ST_MAX_DIMS 8
/* A header larger than this is an attack or a bug, not model outputs. */
#define ST_MAX_HEADER (100u << 20)

struct st_tensor {
	char *name;
	enum st_dtype dtype;
	int ndim;
	int64_t shape[ST_MAX_DIMS];
	int64_t numel;          /* 1 for a 0-dim tensor, 0 for an empty one */
	const void *data;       /* inside the file's bytes in memory; not aligned: read through st_value() or memcpy */
	size_t nbytes;          /* == numel * st_dtype_size(dtype) */
};

struct st_file {
	void *map;              /* the file's bytes (a copy read into memory of our own) */
	size_t size;
	struct st_tensor *tensors;  /* in header order */
	size_t ntensors;
	char **meta_keys, **meta_values;
	size_t nmeta;
};

/* Reads `path` into memory and validates it: lengths, JSON, dtypes, shapes, offsets (in bounds, sizes that
 * match the shape, no overlaps and, as the format requires, no holes or trailing bytes), duplicate names,
 * string metadata. On error *f is left closed and err names the file and what is wrong (SB_EINPUT for a
 * malformed file, SB_EIO when it cannot be read). The file is copied, not mapped, so a writer that is still
 * alive and truncates it cannot make the parent fault (SIGBUS); a file that changes while read is an error. */
int st_open(const char *path, struct st_file *f, struct sb_error *err);
/* Safe on a zeroed or already closed struct. */
void st_close(struct st_file *f);
const struct st_tensor *st_find(const struct st_file *f, const char *name);
const char *st_meta(const struct st_file *f, const char *key);           /* NULL if absent */
const char *st_dtype_name(enum st_dtype d);                               /* "F32" ... */
size_t st_dtype_size(enum st_dtype d);                                    /* bytes per element */
int st_dtype_is_float(enum st_dtype d);
int st_dtype_parse(const char *name, enum st_dtype *d);                  /* "F32" -> ST_F32; -1 if unknown */
/* Element i (flat, C order) as a double; f16/bf16 exactly, I64 beyond 2^53 rounded, BOOL as 0/1
 * (any non-zero byte is true, as torch reads it). NaN when i is outside [0, numel). */
double st_value(const struct st_tensor *t, int64_t i);

/* Half and bfloat16 bit patterns to double, exactly (subnormals, infinities, NaN). Inline and free of
 * ldexp because compare.c converts every element of a half-precision output through them. */
static inline double st_f16_to_double(uint16_t h)
{
	unsigned exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	uint64_t bits = (uint64_t)(h >> 15) << 63;
	double v;
	if (exp == 0) {
		v = mant * 0x1p-24; /* zero and subnormals: mant * 2^-14 * 2^-10, exact */
		return h >> 15 ? -v : v;
	}
	if (exp == 31)
		bits |= mant ? 0x7ff8000000000000ull : 0x7ff0000000000000ull;
	else /* rebias the exponent (15 -> 1023) and widen the 10 mantissa bits to 52 */
		bits |= (uint64_t)(exp - 15 + 1023) << 52 | (uint64_t)mant << 42;
	memcpy(&v, &bits, sizeof(v));
	return v;
}

static inline double st_bf16_to_double(uint16_t b)
{
	/* bfloat16 is the top half of an IEEE float, so widening the bits is exact for every class. */
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* compare.c - judges a candidate's output tensor against the reference's, the way torch.allclose does
 * (DESIGN §5.4), and says in one line where and by how much it is wrong. */

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

/* outputs.c - one call's output file against another (the reference's, or the candidate's own first run):
 * the element comparison of every output, plus what the runtime checks need (digests, all-zero, NaN). */

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

/* exchange.c - how a call's outputs reach the comparison (eval.exchange, DESIGN §5.4).
 *
 * files: each worker writes its outputs to a file, and stitchbench reads both and compares them
 * (outputs.c). shared: nothing is written. The candidate's worker hands its outputs over as a file
 * descriptor (device memory on a GPU, a memfd on the CPU) with its reply; we pass the descriptor on to the
 * trusted reference worker, which copies the bytes into its own memory, keeps them under a key, and
 * compares two kept sets where they lie, on the device, returning the numbers outputs_compare would. The
 * rule and the verdict stay here. This removes the write, the read and the host's pass over every
 * output, which for a 1.6 GB output costs about 0.6 s per call (BENCHMARKS.md).
 *
 * A key names a set of outputs in both modes: the file's path, or what the reference worker keeps. */

struct eval_ctx;

/* Whether this evaluation shares outputs: eval.exchange, with auto meaning shared on a GPU. */
int xchg_shared(const struct eval_ctx *c);
int xchg_shared_on(const struct config *cfg, const char *device);
/* Marks a request that saves outputs to a key: shared, the candidate's worker exports them, the
 * reference worker (trusted) keeps them. No change with files. */
void xchg_mark(const struct eval_ctx *c, json_t *req, int trusted);
/* After the candidate's reply to a request marked above: with files nothing; shared, its descriptor
 * (and `shared`, the reply's description of it) goes to the reference worker, which keeps a copy under
 * key. Returns 0; 1 when the candidate's outputs cannot be taken (its fault: why says what); -1 when the
 * reference worker failed (err). */
int xchg_take(struct eval_ctx *c, json_t *shared, const char *key, char *why, size_t whylen, struct sb_error *err);
/* The same with the descriptor from another worker's reply (the reference's own timed outputs, which it
 * exports as the candidate does so both blocks cost the same). */
struct worker;
int xchg_take_from(struct eval_ctx *c, struct worker *from, json_t *shared, const char *key, char *why, size_t whylen,
		   struct sb_error *err);
/* What the reference's call for the expected outputs also does. */
enum xchg_expect_flags {
	XCHG_FACTS = 1,          /* fingerprint the inputs and describe the call */
	XCHG_SHIFT = 2,          /* draw a robust trial's shifted inputs, and count the outputs' NaN and inf */
};

/* The reference's outputs for a seed under key, computed now by the trusted reference worker: written to
 * the file `key` (files) or kept by the worker (shared). Expected outputs are never cached: the seeds are
 * this evaluation's own (seeds.h). `flags` are xchg_expect_flags; *reply (not NULL then) gets the worker's
 * reply. The two halves let the candidate's worker run its own call meanwhile: begin sends, end reads the
 * answer (nothing else may be asked of the reference between). */
int xchg_expect(struct eval_ctx *c, uint32_t seed, const char *key, unsigned flags, json_t **reply,
		struct sb_error *err);
int xchg_expect_begin(struct eval_ctx *c, uint32_t seed, const char *key, unsigned flags, struct sb_error *err);
int xchg_expect_end(struct eval_ctx *c, const char *key, json_t **reply, struct sb_error *err);
/* outputs_compare in either mode. Shared, `actual` is unreadable when it was never taken. */
int xchg_compare(struct eval_ctx *c, const char *expected, const char *actual, struct outputs_cmp *r,
		 struct sb_error *err);
/* outputs_drop in either mode. */
void xchg_drop(struct eval_ctx *c, const char *key);
/* Shared: everything the reference worker still keeps for this evaluation is dropped. */
void xchg_finish(struct eval_ctx *c);

/* Reads a `compare` reply into r (exported for the unit test). Returns 0, or -1 when it is malformed. */
int xchg_parse_stats(json_t *reply, enum tolerance_preset tol, struct outputs_cmp *r);

#endif
