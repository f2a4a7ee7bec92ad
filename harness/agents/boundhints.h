/* boundhints.h - what a kernel's hardware metrics say to an agent: a compact line per kernel (its bound
 * class, how close it is to the roofline, the limiting unit, DRAM and SM throughput, occupancy) and one
 * hint per bound class among the kernels shown, taken from the template bound-hints.md so that a
 * prompts_dir can reword them (docs/agents.md "Verifier feedback"). */
#ifndef SB_BOUNDHINTS_H
#define SB_BOUNDHINTS_H

#include "../core/error.h"
#include "../core/strbuf.h"
#include "../profile/hwmetrics.h"
#include "prompt.h"

/* The template's sections: one per bound class, two where the metrics call for different advice. */
enum bound_hint {
	HINT_MEMORY,
	HINT_COMPUTE_TENSOR_IDLE,    /* compute-bound, tensor pipes below BOUND_TENSOR_IDLE_PCT */
	HINT_COMPUTE_TENSOR_BUSY,
	HINT_LATENCY_LOW_OCCUPANCY,  /* latency-bound, occupancy below HW_LOW_OCCUPANCY_PCT */
	HINT_LATENCY_OCCUPANCY_OK,
	HINT_LAUNCH,
	HINT_NSECTIONS
};

/* A compute-bound kernel whose tensor pipes stay below this does its math on the ordinary pipes. */
#define BOUND_TENSOR_IDLE_PCT 20.0
/* A rendered hint is cut here, so that a long override cannot crowd out the rest of the feedback. */
#define BOUND_HINT_MAX_BYTES 700
/* The bound classes hw_classify assigns. */
#define BOUND_NCLASSES 4

/* The sections of bound-hints.md, unrendered ({{kernels}} is filled per use). */
struct bound_hints {
	char *where;                       /* the file they came from */
	char *section[HINT_NSECTIONS];     /* "" for a section left empty: no hint for that case */
};

/* Loads template bound-hints from the prompt folders (a prompts_dir's copy first) and checks it: every
 * section present once, no unknown one, and each renders with {{kernels}}. SB_EINPUT naming file:line. */
int bound_hints_load(struct bound_hints *h, const struct prompt_dirs *d, struct sb_error *err);
void bound_hints_release(struct bound_hints *h);

/* The section that fits a kernel's metrics; -1 for a bound class it does not know. */
int bound_hint_for(const struct hw_metrics *m);

/* Appends "; memory-bound at 85% of roofline, limiter: DRAM bandwidth; DRAM 85%, SM 12%, occupancy 70%"
 * for a kernel with a bound class (tensor pipes too when compute-bound); nothing otherwise. */
void bound_metrics_line(const struct hw_metrics *m, struct strbuf *out);

/* The bound classes among the kernels shown, in the order they first appear, each with its kernels. The
 * hint of a class is picked by its first (largest) kernel: the one a change pays off most on. */
struct bound_notes {
	size_t n;
	struct {
		const char *bound;
		int hint;
		struct strbuf kernels;
	} cls[BOUND_NCLASSES];
};
void bound_notes_init(struct bound_notes *n);
void bound_notes_release(struct bound_notes *n);
/* Notes a kernel shown with its metrics; one without a bound class, or of an unknown one, is ignored. */
void bound_notes_add(struct bound_notes *n, const char *kernel, const struct hw_metrics *m);
/* Appends a heading and one hint per class noted, each with its kernels; nothing without hints or notes. */
void bound_notes_write(const struct bound_notes *n, const struct bound_hints *h, struct strbuf *out);

#endif
