/* session.h - a profiled run on a live worker: libstitchprof on, a few timed calls, off; then the
 * trace is parsed into a report. Used after the timing loop of `eval` and by `stitchbench profile`. */
#ifndef SB_PROF_SESSION_H
#define SB_PROF_SESSION_H

#include <stdint.h>

#include "../eval/evaluate.h"
#include "../eval/seeds.h"
#include "../eval/proc/proc.h"
#include "report.h"

struct prof_plan {
	const char *lib;             /* lib/libstitchprof.so */
	const char *trace;           /* where the worker writes the trace (its own folder) */
	const char *objects_under;   /* the candidate's build folder (its .so files name its kernels), or NULL */
	const char *which;           /* "model" */
	int calls;                   /* profiled calls */
	int setup;                   /* draw the input sets and warm up first (no timing loop ran before) */
	int nsets;
	const struct eval_seeds *seeds; /* the evaluation's (SEED_PROFILE); NULL: from base_seed (a reference alone) */
	uint32_t base_seed;
	long long flush_bytes;
	int warmup_ms, warmup_calls;
	int lead_us;                 /* the device-side lead before each call's start event (worker.md; -1: from
				      * the host's recent calls, 0: none). The candidate's profile always leads:
				      * without a lead the end event waits for the host's launch, so work a call
				      * leaves running on a side stream ends inside the window and H05 never sees
				      * it, whatever eval.timing_lead_us the timing itself used */
	const char *metrics;         /* where the worker writes the hardware metrics of one more call (the CUPTI
				      * range profiler, hwmetrics.h); NULL: no metrics pass */
	const char *keep;            /* copy the trace here and the calls to KEEP.calls; NULL: don't */
};

/* Runs the profiled calls and fills `r` (initialised by the caller). A library that does not load or a
 * CUPTI that refuses is not a failure: `r` then says why there is no profile. Returns -1 only when the
 * worker failed (died, timed out, or answered an error), with `fault` and `*msg` (freed by the caller). */
int prof_session_run(struct worker *w, const struct prof_plan *p, double deadline, struct prof_report *r,
		     struct worker_fault *fault, char **msg);

/* The profile step of an evaluation (eval_env.profile): more timed calls of the passing candidate with
 * libstitchprof recording them (docs/profile.md), into v->profile. Only a finding changes the status: a
 * profiler that fails leaves its reason in the verdict's profile. */
void prof_candidate(const struct eval_env *e, const struct config *cfg, const struct eval_live *c, struct verdict *v);

/* Attaches the kernels' hardware metrics from the metrics file at `path` to r's rows (and says why
 * not in r->metrics_reason). */
void prof_report_attach_metrics(struct prof_report *r, const char *path);

/* Reads a kept trace (prof_plan.keep) and its .calls back into a report: recorded fixtures, tests.
 * Without a .calls file every trial of the trace counts, with unknown CUDA-event times. */
int prof_report_from_kept(const char *trace_path, struct prof_report *r, struct sb_error *err);

#endif
