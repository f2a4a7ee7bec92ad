/* trials.c - the correctness trials of an evaluation (DESIGN §5.4): each on inputs from its own seed,
 * run by the candidate's worker while the parent compares the one before with the cached reference
 * outputs, judged only once all ran; and what the runtime checks need to make calls of their own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/config.h"
#include "../eval_int.h"
#include "check.h"
#include "../rtchecks.h"

/* H09: NaN written into freed device memory before the second run of the first trial, enough to cover
 * a call's allocations (twice the largest output, an upper bound already, and room for temporaries);
 * 0 on the CPU. The trials themselves run on memory as it comes, as they would anywhere else. */
static long long poison_bytes(const struct eval_ctx *c)
{
	if (!strcmp(c->e->device, "cpu"))
		return 0;
	long long n = 2 * c->out_bytes + (256LL << 20);
	return n > (8LL << 30) ? (8LL << 30) : n;
}

/* Compares a call's outputs with the reference's into t; an unreadable file or a wrong number of outputs
 * names the verdict at once. *keep (if not NULL) receives the comparison for the runtime checks. */
int eval_compare_trial(struct eval_ctx *c, struct verdict *v, const char *refpath, const char *candpath,
		       struct trial_result *t, struct outputs_cmp *keep, struct sb_error *err)
{
	struct outputs_cmp r;
	if (xchg_compare(c, refpath, candpath, &r, err))
		return -1; /* our own cache is unreadable: a harness error */
	t->pass = r.readable && r.pass;
	if (r.error[0])
		verdict_fail(v, V_INCORRECT, "%s", r.error);
	t->noutputs = r.noutputs;
	t->outputs = xcalloc(r.noutputs ? r.noutputs : 1, sizeof(*t->outputs));
	memcpy(t->outputs, r.outputs, r.noutputs * sizeof(*t->outputs));
	int rc = r.readable ? 0 : 1;
	if (keep)
		*keep = r;
	else
		outputs_cmp_release(&r);
	return rc;
}

/* One set of trials through the same pipeline: the correctness trials on get_inputs() as drawn (the
 * verdict's trials[]), or the robust ones on shifted inputs (docs/verdict.md, "Robust correctness"). */
struct trial_set {
	const char *name;            /* names its outputs' files and keys: "trial", "robust" */
	const uint32_t *seeds;
	int n;
	int robust;                  /* shifted inputs; the runtime checks neither see the calls nor keep outputs */
	struct trial_result *out;    /* room for n, filled in order */
	size_t nout;
	struct verdict *v;           /* where a failure of the candidate is told */
	long long ref_nonfinite;     /* robust: NaN and inf in the reference's outputs of the trial it stopped at */
};

static char *trial_key(const struct eval_ctx *c, const struct trial_set *set, int k, int ref)
{
	if (!ref)
		return xstrfmt("%s/%s_%d.safetensors", c->cand_dir, set->name, k);
	return xchg_shared(c) ? xstrfmt("ref/%s_%d", set->name, k) : xstrfmt("%s/%s_%d.safetensors", c->ref_dir, set->name, k);
}

static json_t *trial_request(const struct eval_ctx *c, const struct trial_set *set, int k)
{
	char *out = trial_key(c, set, k, 0);
	json_t *req = json_pack("{s:s, s:I, s:s, s:I}", "cmd", "run", "seed", (json_int_t)set->seeds[k], "out", out,
				"max_output_bytes", (json_int_t)evalctx_max_output(c));
	free(out);
	if (set->robust)
		json_object_set_new(req, "shift", json_true());
	xchg_mark(c, req, 0);
	return req;
}

/* The trials of a set, pipelined: the reference computes trial k's expected outputs while the candidate's
 * worker runs trial k, and trial k+1 is sent before trial k's outputs are compared, so the worker runs one
 * while the parent reads and compares the other (the two take about as long on large outputs). A robust
 * set stops at the first trial whose expected outputs are not all finite, where there is nothing to
 * compare against (set->ref_nonfinite). 0; 1: the candidate failed (set->v says how); -1: a harness error. */
static int run_set(struct eval_ctx *c, struct trial_set *set, double deadline, struct sb_error *err)
{
	struct verdict *v = set->v;
	const int n = set->n, timeout_s = c->cfg->eval.timeout_s;
	char stage[64];
	if (n > 0 && eval_cand_send(&c->cand, trial_request(c, set, 0), v, set->robust ? "running robust trial 0"
				    : "running correctness trial 0", timeout_s))
		return 1;
	for (int k = 0; k < n; k++) {
		struct trial_result *t = &set->out[set->nout++];
		json_t *reply, *expected = NULL;
		t->seed = set->seeds[k];
		char *refpath = trial_key(c, set, k, 1);
		if (xchg_expect_begin(c, t->seed, refpath, XCHG_FACTS | (set->robust ? XCHG_SHIFT : 0), err)) {
			free(refpath);
			return -1;
		}
		snprintf(stage, sizeof(stage), "running %s trial %d", set->robust ? "robust" : "correctness", k);
		if (eval_cand_receive(&c->cand, &reply, deadline, v, stage, timeout_s)) {
			int rrc = xchg_expect_end(c, refpath, NULL, err); /* its answer is read: the worker stays usable */
			xchg_drop(c, refpath);
			free(refpath);
			return rrc ? -1 : 1;
		}
		if (xchg_expect_end(c, refpath, &expected, err)) {
			json_decref(reply);
			free(refpath);
			return -1;
		}
		/* shared outputs are taken before the next trial runs: the worker reuses its buffers */
		char *out = trial_key(c, set, k, 0), why[400];
		int trc = xchg_take(c, json_object_get(reply, "shared"), out, why, sizeof(why), err);
		if (trc) {
			json_decref(reply);
			json_decref(expected);
			xchg_drop(c, refpath);
			free(refpath);
			free(out);
			if (trc > 0)
				verdict_fail(v, V_INCORRECT, "%s %d: %s", set->robust ? "robust trial" : "trial", k, why);
			return trc;
		}
		if (set->robust)
			set->ref_nonfinite = json_integer_value(json_object_get(expected, "nonfinite"));
		snprintf(stage, sizeof(stage), "running %s trial %d", set->robust ? "robust" : "correctness", k + 1);
		if (set->ref_nonfinite ||
		    (k + 1 < n && eval_cand_send(&c->cand, trial_request(c, set, k + 1), v, stage, timeout_s))) {
			json_decref(reply);
			json_decref(expected);
			xchg_drop(c, refpath);
			xchg_drop(c, out);
			free(refpath);
			free(out);
			return set->ref_nonfinite ? 0 : 1;
		}
		t->run_s = json_number_value(json_object_get(reply, "run_s"));
		json_t *before = json_object_get(reply, "inputs_before");
		t->inputs_mutated = !json_equal(before, json_object_get(reply, "inputs_after"));
		int same_inputs = json_equal(before, json_object_get(expected, "inputs_before"));
		if (!set->robust)
			rt_observe_ref(&c->rt, (size_t)k, expected);
		json_decref(expected);
		if (!same_inputs) {
			json_decref(reply);
			xchg_drop(c, refpath);
			free(refpath);
			free(out);
			verdict_fail(v, V_INCORRECT, "%s %d: the inputs drawn in the candidate's process differ from the "
				     "reference's for the same seed (the candidate changes random number generation)",
				     set->robust ? "robust trial" : "trial", k);
			return 1;
		}
		struct outputs_cmp cmp;
		int rc = eval_compare_trial(c, v, refpath, out, t, set->robust ? NULL : &cmp, err);
		xchg_drop(c, refpath);
		/* correctness trial 0's outputs are what the second run (rtchecks.c) is compared with; robust
		 * outputs are never read again */
		if (k > 0 || set->robust)
			xchg_drop(c, out);
		free(refpath);
		free(out);
		if (rc >= 0 && !set->robust) {
			rt_observe_trial(&c->rt, (size_t)k, reply, &cmp, c->e->device);
			outputs_cmp_release(&cmp);
		}
		json_decref(reply);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int eval_run_trials(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	struct verdict *v = c->v;
	const int n = c->cfg->eval.trials;
	v->trials = xcalloc((size_t)n, sizeof(*v->trials));
	/* the reference computes the expected outputs: it must be up first */
	double w0 = proc_now();
	int wrc = evalctx_start_ref(c, err) || eval_load_ref(c, err);
	v->seconds.reference_worker += proc_now() - w0;
	if (wrc)
		return -1;
	struct trial_set set = { .name = "trial", .seeds = c->seeds, .n = n, .out = v->trials, .v = v };
	int rc = run_set(c, &set, deadline, err);
	v->ntrials = set.nout;
	return rc;
}


/* Trials are judged only once all ran: the first failing one names the verdict. */
void eval_judge_trials(struct eval_ctx *c)
{
	struct verdict *v = c->v;
	for (size_t k = 0; k < v->ntrials; k++) {
		struct trial_result *t = &v->trials[k];
		if (t->inputs_mutated) {
			if (verdict_add_finding(v, c->cfg->checks.policy, "H10",
						"the candidate modified its input tensors during forward")->severity == SEV_REJECT) {
				verdict_fail(v, V_REJECTED, "H10: the candidate modified its inputs (trial %zu)", k);
				return;
			}
			break;
		}
	}
	for (size_t k = 0; k < v->ntrials; k++) {
		struct trial_result *t = &v->trials[k];
		if (t->pass)
			continue;
		for (size_t j = 0; j < t->noutputs; j++)
			if (!t->outputs[j].cmp.pass) {
				verdict_fail(v, V_INCORRECT, "trial %zu (seed %u), %s: %s", k, t->seed, t->outputs[j].name,
					     t->outputs[j].cmp.detail);
				return;
			}
		if (v->status != V_INCORRECT)
			verdict_fail(v, V_INCORRECT, "trial %zu failed", k);
		return;
	}
}

/* What the runtime checks' extra calls need (rtchecks.h). */
struct rt_io eval_runtime_io(struct eval_ctx *c, double deadline)
{
	return (struct rt_io){
		.cand = &c->cand, .ref = c->ref_loaded ? &c->ref : NULL, .device = c->e->device, .cand_dir = c->cand_dir,
		.ref_dir = c->ref_dir, .cache_root = c->e->cache_root,
		.seeds = c->seeds, .rot_seeds = { c->rot_seeds[0], c->rot_seeds[1] }, .deadline = deadline,
		.timeout_s = c->cfg->eval.timeout_s, .max_output_bytes = evalctx_max_output(c),
		.poison_bytes = poison_bytes(c), .keep_files = c->e->keep_workdirs, .ctx = c,
	};
}

/* ---------- robust correctness ---------- */

/* The largest absolute error among a trial's compared outputs; NAN when none was compared. */
static double trial_max_abs(const struct trial_result *t)
{
	double m = NAN;
	for (size_t j = 0; j < t->noutputs; j++) {
		const struct compare_result *r = &t->outputs[j].cmp;
		if (!r->shape_mismatch && !r->dtype_mismatch && !isnan(r->max_abs) && !(r->max_abs <= m))
			m = r->max_abs;
	}
	return m;
}

/* What went wrong in a failing robust trial t: its first failing output's line, or what the comparison
 * wrote in `failed` (a wrong number of outputs, unreadable outputs). */
static const char *failure_detail(const struct trial_result *t, const struct verdict *failed)
{
	for (size_t j = 0; j < t->noutputs; j++)
		if (!t->outputs[j].cmp.pass)
			return t->outputs[j].cmp.detail;
	return failed->message ? failed->message : "the outputs do not match";
}

/* Robust trials run where the correctness trials ran, in the same pipeline, with the candidate's
 * failures written to a verdict of their own: KernelBench's inputs passed, so what the shifted ones show
 * is a finding about the candidate (H17: correct only where the input distribution makes the operation
 * trivial, ReLU or abs on [0, 1)), and the policy decides what it does, as for any other finding. */
int eval_run_robust(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	struct verdict *v = c->v, failed;
	struct robust_result *r = &v->robust;
	const int n = c->cfg->eval.robust_trials;
	if (n <= 0) {
		snprintf(r->note, sizeof(r->note), "off (eval.robust_trials = 0)");
		return 0;
	}
	uint32_t *seeds = xcalloc((size_t)n, sizeof(*seeds));
	for (int k = 0; k < n; k++)
		seeds[k] = eval_seed(&c->secret, SEED_ROBUST, (uint32_t)k);
	struct trial_result *trials = xcalloc((size_t)n, sizeof(*trials));
	verdict_init(&failed);
	struct trial_set set = { .name = "robust", .seeds = seeds, .n = n, .robust = 1, .out = trials, .v = &failed };
	int rc = run_set(c, &set, deadline, err);
	/* a failure to answer is the trial it was asked for: failed.message names it */
	int bad = rc == 1 ? 0 : -1;
	r->trials = rc == 1 && !set.nout ? 1 : (int)set.nout;
	for (size_t k = 0; rc == 0 && k < set.nout; k++) {
		double m = trial_max_abs(&trials[k]);
		if (!isnan(m) && !(m <= r->max_abs_err))
			r->max_abs_err = m;
		/* the trial the set stopped at was not compared: its reference has nothing finite to compare with */
		if (!trials[k].pass && bad < 0 && !(set.ref_nonfinite && k + 1 == set.nout))
			bad = (int)k;
	}
	if (rc >= 0 && bad >= 0) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "correct only on the problem's own input distribution: ");
		if (rc == 1) {
			strbuf_addf(&sb, "fails on signed, scaled inputs: %s", failed.message ? failed.message : "it failed");
		} else {
			double m = trial_max_abs(&trials[bad]);
			strbuf_addf(&sb, "wrong on signed, scaled inputs (robust trial %d", bad);
			if (!isnan(m))
				strbuf_addf(&sb, ", max abs err %.3g", m);
			strbuf_addf(&sb, "): %s", failure_detail(&trials[bad], &failed));
		}
		strbuf_addstr(&sb, "; compute the operation for any input values, not only those get_inputs() draws");
		char *msg = strbuf_detach(&sb, NULL);
		r->passed = 0;
		snprintf(r->note, sizeof(r->note), "%s", msg);
		if (verdict_add_finding(v, c->cfg->checks.policy, "H17", "%s", msg)->severity == SEV_REJECT && v->status == V_PASS)
			verdict_fail(v, V_REJECTED, "H17: %s", msg);
		free(msg);
	} else if (rc == 0 && set.ref_nonfinite) {
		snprintf(r->note, sizeof(r->note), "not applicable: the reference's own outputs on robust trial %zu's inputs "
			 "hold %lld NaN or infinite elements, so there is nothing to compare with (an operation such as log "
			 "or sqrt is not defined on signed inputs)", set.nout - 1, set.ref_nonfinite);
	} else if (rc == 0) {
		r->passed = 1;
	}
	for (size_t k = 0; k < set.nout; k++)
		free(trials[k].outputs);
	free(trials);
	free(seeds);
	verdict_release(&failed);
	return rc;
}
