/* exchange.h - how a call's outputs reach the comparison (eval.exchange, DESIGN §5.4).
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
#ifndef SB_EXCHANGE_H
#define SB_EXCHANGE_H

#include <jansson.h>
#include <stdint.h>

#include "../core/error.h"
#include "outputs.h"

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
