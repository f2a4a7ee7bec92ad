/* procfactor.c - the process factor (eval.process_factor). A model of many small kernels runs at one
 * of two speeds, ~5% apart, chosen per process and kept for the process's life: the same model in one
 * process after another takes 240-242 or 252-256 us (L3/4), with or without MPS, with ASLR on or off
 * (BENCHMARKS.md, a launch-bound model's GPU time). The reference worker and the candidate's worker each
 * draw one, so a paired timing alone compares the two processes as much as the two models.
 *
 * So before the candidate's code runs, its worker loads the reference and both workers time it in
 * interleaved pairs, as the timing proper does. The median ratio (reference worker / candidate's process)
 * is the factor; the speedup vs eager is divided by it, which compares the candidate with the reference
 * as both run in the candidate's process. The candidate cannot reach these calls: its worker unloads
 * the reference, with the memory it used filled with NaN, before it imports the candidate.
 *
 * It is applied where the process's share is large: a launch-heavy reference (below), or with
 * eval.process_factor = on. A model's time also moves by ~1-2% with where its tensors lie, so the factor
 * of a 60 us model of a few kernels (L2/1) is off by as much as it corrects, while on L3/4 it halves the
 * reference-as-candidate's distance from 1.0 (BENCHMARKS.md, the process factor). In auto mode a problem
 * the last timing found not launch-heavy (a file in its reference cache entry) is not measured at all:
 * the factor costs 0.3-1.3 s. */
#include "../eval_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/log.h"
#include "timing.h"

#define FACTOR_PAIRS 30 /* the factor's pairs at most; it may stop at 20 (timing.c's MIN_PAIRS) */
#define LB_FILE "launch_heavy" /* in the reference cache entry: "1" or "0", from the last timing */
/* Launch-heavy: the reference's median host time per call (timed with a lead) at least this many times its
 * median GPU time. The ratio moves with the host's speed: L3/4 lies at 4.8-7.6 and L3/3 at 2.7-4.7 (at
 * times under verdict.c's 3 for launch_bound), L3/1 at 1.6-3.5, every other bundled problem at 1.7 or
 * less (BENCHMARKS.md, the process factor); 2 keeps L3/3 and L3/4 in. */
#define HEAVY_HOST_RATIO 2.0

static int launch_heavy(const struct timing_result *t)
{
	const struct sample_stats *eg, *eh, *cg, *ch;
	return timing_gpu_view(t, &eg, &eh, &cg, &ch) && eh->median >= HEAVY_HOST_RATIO * eg->median;
}

int eval_recorded_launch_heavy(const char *ref_entry)
{
	if (!ref_entry)
		return -1;
	char *path = xstrfmt("%s/%s", ref_entry, LB_FILE);
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return -1;
	int ch = fgetc(f);
	fclose(f);
	return ch == '1' ? 1 : ch == '0' ? 0 : -1;
}

void eval_record_launch_heavy(const struct eval_ctx *c)
{
	if (!c->ref_entry || !strcmp(c->e->device, "cpu") || !c->v->timing.ran)
		return;
	int lb = launch_heavy(&c->v->timing);
	if (c->launch_heavy_recorded == lb)
		return; /* the file already says so */
	/* written whole, then renamed: evaluations on other GPUs of the node may read it meanwhile */
	char *path = xstrfmt("%s/%s", c->ref_entry, LB_FILE), *tmp = xstrfmt("%s.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (f) {
		int ok = fputs(lb ? "1\n" : "0\n", f) >= 0;
		if (fclose(f) == 0 && ok)
			rename(tmp, path);
	}
	unlink(tmp); /* gone already when renamed */
	free(tmp);
	free(path);
}

int eval_process_factor_planned(const struct eval_ctx *c)
{
	enum process_factor_mode m = c->cfg->eval.process_factor;
	if (c->cfg->eval.perf_trials <= 0 || m == PF_OFF)
		return 0;
	return m == PF_ON || strcmp(c->e->device, "cpu");
}

/* One request to the candidate's worker; on a failure the note says why. Nothing of the candidate's has
 * run yet, so a failure here is not its verdict: the `load` that follows reports a dead worker. */
static int cand_call(struct eval_ctx *c, json_t *req, double deadline, const char *what)
{
	struct process_factor *pf = &c->v->timing.factor;
	struct worker_fault f;
	json_t *reply = NULL;
	int rc = worker_call(&c->cand, req, &reply, deadline, &f);
	if (rc)
		snprintf(pf->note, sizeof(pf->note), "the candidate's worker failed while %s: %s", what, f.what);
	else if (!json_is_true(json_object_get(reply, "ok"))) {
		snprintf(pf->note, sizeof(pf->note), "the candidate's worker failed while %s: %s", what,
			 json_string_value(json_object_get(reply, "message")) ?: "?");
		rc = -1;
	}
	json_decref(reply);
	return rc;
}

/* The reference's pairs: reference worker against the reference in the candidate's worker. */
static void time_reference(struct eval_ctx *c, double deadline)
{
	struct process_factor *pf = &c->v->timing.factor;
	struct timing_plan plan;
	struct timing_result t = { 0 };
	struct worker_fault f;
	int cand_failed = 0;
	char *msg = NULL;
	eval_timing_plan(c, &plan);
	/* seeds of their own: these calls run in the candidate's process before its code loads, and what
	 * they leave in its memory must tell it nothing about the timing's seeds */
	plan.set_use = plan.call_use = SEED_FACTOR;
	plan.ref_inputs = NULL; /* both draw the factor's sets; the timing proper draws its own again */
	json_decref(c->ref_timing_inputs);
	c->ref_timing_inputs = NULL;
	plan.max_pairs = plan.max_pairs < FACTOR_PAIRS ? plan.max_pairs : FACTOR_PAIRS;
	if (timing_run(&c->ref, &c->cand, &plan, deadline, &t, &f, &cand_failed, &msg) == 0) {
		pf->measured = t.speedup_eager > 0 && isfinite(t.speedup_eager);
		pf->value = t.speedup_eager;
		pf->lo = t.speedup_eager_lo;
		pf->hi = t.speedup_eager_hi;
		pf->pairs = t.pairs;
		pf->ref_us = t.eager.us.median;
		pf->cand_us = t.candidate.us.median;
		/* these pairs' own host and GPU times, or what the last timing of the problem found */
		pf->launch_heavy = launch_heavy(&t) || c->launch_heavy_recorded == 1;
		pf->applied = 0; /* decided after the timing proper (eval_apply_process_factor) */
		if (!pf->measured)
			snprintf(pf->note, sizeof(pf->note), "the pairs gave no usable ratio");
	} else {
		snprintf(pf->note, sizeof(pf->note), "%s", msg ? msg : "the pairs failed");
	}
	free(msg);
	free(t.eager_us);
	free(t.candidate_us);
	free(t.compiled_us);
}

int eval_process_factor(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	struct process_factor *pf = &c->v->timing.factor;
	if (!eval_process_factor_planned(c))
		return 0;
	double t0 = proc_now();
	int wrc = evalctx_start_ref(c, err) || eval_load_ref(c, err);
	c->v->seconds.reference_worker += proc_now() - t0;
	if (wrc)
		return -1;
	double l0 = proc_now();
	json_t *load = eval_load_request(c->e, c->cfg, c->p, NULL, NULL, 0, 0);
	if (cand_call(c, load, deadline, "loading the reference") == 0) {
		double p0 = proc_now();
		time_reference(c, deadline);
		sb_trace("process factor: %s %.4f (%zu pairs; the reference %.1f us in its worker, %.1f us in the "
			 "candidate's), load %.3f s, pairs %.3f s", pf->measured ? "measured" : "not measured", pf->value,
			 pf->pairs, pf->ref_us, pf->cand_us, p0 - l0, proc_now() - p0);
	}
	/* always: the candidate's code must not find the reference's model or outputs in its process */
	if (cand_call(c, json_pack("{s:s}", "cmd", "unload"), deadline, "unloading the reference"))
		pf->measured = pf->applied = 0; /* the note says why */
	pf->seconds = proc_now() - l0; /* its own work; waiting for the reference worker is that stage's */
	return 0;
}

void eval_apply_process_factor(struct timing_result *t, int forced)
{
	struct process_factor *f = &t->factor;
	if (!f->measured || !(f->lo > 0) || !(f->hi > 0))
		return;
	/* the timing proper's GPU-only calls tell a launch-heavy reference when the factor's pairs could not
	 * (timed end to end, they have no GPU-only time of their own) */
	f->launch_heavy = f->launch_heavy || launch_heavy(t);
	f->applied = f->launch_heavy || forced;
	if (f->applied) {
		/* both intervals at once, at their unfavourable ends, and never narrower than the speedup as
		 * measured: a factor of a process that drew an odd speed (L3/3 once measured 1.18) can move the
		 * point the wrong way, and the interval keeps the reading it would have had without it */
		double raw_lo = t->speedup_eager_lo, raw_hi = t->speedup_eager_hi;
		t->speedup_eager /= f->value;
		t->speedup_eager_lo = fmin(raw_lo, raw_lo / f->hi);
		t->speedup_eager_hi = fmax(raw_hi, raw_hi / f->lo);
		return;
	}
	/* Not launch-heavy: the point stays as measured, but the process's share is a measured uncertainty of
	 * it, so the interval spans both readings (as measured, and as if both had run in one process). */
	double lo = t->speedup_eager_lo / f->hi, hi = t->speedup_eager_hi / f->lo;
	f->widened = lo < t->speedup_eager_lo || hi > t->speedup_eager_hi;
	t->speedup_eager_lo = lo < t->speedup_eager_lo ? lo : t->speedup_eager_lo;
	t->speedup_eager_hi = hi > t->speedup_eager_hi ? hi : t->speedup_eager_hi;
}

/* Two processes of one program time it differently: beyond the factor above, the reference judged as its
 * own candidate lands off 1.0 by 1.75% rms over 153 evaluations on an H100 where its intervals, from the
 * calls of the two processes, explain 0.99% (a standard error): 1.44% is between the processes
 * (scripts/bench/fidelity_spread.py), and an interval blind to it held 1.0 in 86-94% of a batch. The
 * spread is added to each side of an interval in quadrature, on a log scale, as an independent source of
 * error: a wide interval barely moves, a narrow one grows to about +-2.7%. */
#define GPU_PROCESS_SPREAD_PCT 1.4

double eval_process_spread(const struct config *cfg, int gpu)
{
	if (cfg->eval.process_spread_pct >= 0)
		return cfg->eval.process_spread_pct;
	return gpu ? GPU_PROCESS_SPREAD_PCT : 0; /* unmeasured on the CPU: nothing is claimed */
}

static void widen(double point, double *lo, double *hi, double half)
{
	if (!(point > 0) || !(*lo > 0) || !(*hi > 0))
		return;
	double a = log(point / *lo), b = log(*hi / point);
	a = a > 0 ? a : 0, b = b > 0 ? b : 0;
	*lo = point * exp(-sqrt(a * a + half * half));
	*hi = point * exp(sqrt(b * b + half * half));
}

void eval_widen_for_processes(struct timing_result *t, double spread_pct)
{
	if (!t->ran || !(spread_pct > 0))
		return;
	double half = 1.96 * spread_pct / 100; /* a 95% interval's half-width of that spread */
	t->process_spread_pct = spread_pct;
	widen(t->speedup_eager, &t->speedup_eager_lo, &t->speedup_eager_hi, half);
	if (t->compiled.available)
		widen(t->speedup_compiled, &t->speedup_compiled_lo, &t->speedup_compiled_hi, half);
}
