/* entry.c - the evaluator's one door for everything that judges candidates (`eval`, `eval --samples`,
 * `run`'s agents and repeats, `serve`, `profile`): an optional build tried ahead, the evaluation, and the
 * problem's audit, so a failed build yields the same compile_error verdict everywhere and every verdict
 * carries its problem's flaws. */
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "auditcache.h"
#include "evaluate.h"

void prebuild_release(struct prebuild *b)
{
	free(b->msg);
	free(b->detail);
	memset(b, 0, sizeof(*b));
}

int prebuild_run(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		 struct prebuild *b, struct sb_error *err)
{
	int ok = 0;
	memset(b, 0, sizeof(*b));
	int rc = eval_prebuild(e, cfg, p, path, &ok, &b->status, &b->msg, &b->detail, err);
	if (rc == 0) {
		b->done = 1;
		b->ok = ok;
	}
	return rc;
}

/* The one finding that rejects v where it is an H08 of the timing's own clocks (the parent's clock around
 * the blocks, or the blocks' sums) and nothing else rejects it; NULL otherwise. */
static const struct finding *clock_alone_rejects(const struct verdict *v)
{
	if (v->status != V_REJECTED || !v->timing.trusted.fired)
		return NULL;
	const struct finding *only = NULL;
	for (size_t i = 0; i < v->findings.n; i++) {
		if (v->findings.v[i].severity != SEV_REJECT)
			continue;
		if (only)
			return NULL;
		only = &v->findings.v[i];
	}
	return only && !strcmp(only->id, "H08") ? only : NULL;
}

/* The timing's clocks judge against their rounds' own spread, but the rounds share one pair of worker
 * processes, and what two processes' harness work costs per call differs from one pair to the next by
 * more than that spread on a loaded machine (an honest CPU file of 70 us calls: its excess ranged -127 to
 * +46 us over 17 evaluations, and 176 us, five of its standard errors, in one; its paired median 1.54x
 * against its blocks' sums' 1.00x once in 30 evaluations three at a time; BENCHMARKS.md). So a verdict
 * that those clocks alone reject is judged again, whole, in fresh worker processes on both sides (not the
 * pool's kept reference worker) with fresh seeds, and the second verdict stands: a lie repeats in the
 * second pair, a pair's offset or a burst of load does not. Only a rejection is judged again, so no pass
 * is traded for a second chance, and the second verdict times what the second evaluation ran; a lie the
 * clocks find with probability q per evaluation is found with q squared, and an honest file's false
 * rejection rate f falls to f squared. */
static int evaluate_judged(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			   const char *path, struct verdict *v, struct sb_error *err)
{
	int rc = evaluate(e, cfg, p, path, 0, v, err);
	const struct finding *first = rc ? NULL : clock_alone_rejects(v);
	if (!first)
		return rc;
	char *finding = xstrdup(first->message ? first->message : "");
	double excess = v->timing.trusted.excess_us, noise = v->timing.trusted.excess_noise_us;
	double seconds = v->seconds.total;
	sb_trace("eval: rejected by the timing's clocks alone (%s); judged again in fresh processes", finding);
	verdict_release(v);
	if ((rc = evaluate(e, cfg, p, path, 1, v, err))) {
		free(finding);
		return rc;
	}
	struct trusted_clock *tc = &v->timing.trusted;
	tc->first_finding = finding;
	tc->first_excess_us = excess;
	tc->first_noise_us = noise;
	v->seconds.first_evaluation = seconds; /* its time is spent too: a GPU-time budget counts it */
	v->seconds.total += seconds;
	return 0;
}

int eval_candidate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		   struct prebuild *b, struct verdict *v, struct sb_error *err)
{
	if (!b || !b->done || b->ok) {
		int rc = evaluate_judged(e, cfg, p, path, v, err);
		audit_attach(e->cache_root, v);
		return rc;
	}
	eval_failure(e, cfg, p, path, b->status, b->msg ? b->msg : "build failed", v);
	v->detail = b->detail;
	b->detail = NULL;
	return 0;
}

void eval_failure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		  enum verdict_status status, const char *message, struct verdict *v)
{
	verdict_init(v);
	eval_verdict_header(e, cfg, p, path, v);
	audit_attach(e->cache_root, v);
	verdict_fail(v, status, "%s", message);
}
