/* trials.c - the correctness trials of an evaluation (DESIGN §5.4): each on inputs from its own seed,
 * run by the candidate's worker while the parent compares the one before with the cached reference
 * outputs, judged only once all ran; and what the runtime checks need to make calls of their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "eval_int.h"
#include "exchange.h"
#include "outputs.h"
#include "rtchecks.h"

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
int eval_compare_trial(struct eval_ctx *c, const char *refpath, const char *candpath, struct trial_result *t,
		       struct outputs_cmp *keep, struct sb_error *err)
{
	struct outputs_cmp r;
	if (xchg_compare(c, refpath, candpath, &r, err))
		return -1; /* our own cache is unreadable: a harness error */
	t->pass = r.readable && r.pass;
	if (r.error[0])
		verdict_fail(c->v, V_INCORRECT, "%s", r.error);
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

static json_t *trial_request(const struct eval_ctx *c, int k)
{
	char *out = xstrfmt("%s/trial_%d.safetensors", c->cand_dir, k);
	json_t *req = json_pack("{s:s, s:I, s:s, s:I}", "cmd", "run", "seed", (json_int_t)c->seeds[k], "out", out,
				"max_output_bytes", (json_int_t)evalctx_max_output(c));
	free(out);
	xchg_mark(c, req, 0);
	return req;
}

/* The trials, pipelined: the reference computes trial k's expected outputs while the candidate's worker
 * runs trial k, and trial k+1 is sent before trial k's outputs are compared, so the worker runs one while
 * the parent reads and compares the other (the two take about as long on large outputs). */
int eval_run_trials(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	struct verdict *v = c->v;
	const int n = c->cfg->eval.trials, timeout_s = c->cfg->eval.timeout_s;
	char stage[64];
	v->trials = xcalloc((size_t)n, sizeof(*v->trials));
	/* the reference computes the expected outputs: it must be up first */
	double w0 = proc_now();
	int wrc = evalctx_start_ref(c, err) || eval_load_ref(c, err);
	v->seconds.reference_worker += proc_now() - w0;
	if (wrc)
		return -1;
	if (n > 0 && eval_cand_send(&c->cand, trial_request(c, 0), v, "running correctness trial 0", timeout_s))
		return 1;
	for (int k = 0; k < n; k++) {
		struct trial_result *t = &v->trials[v->ntrials++];
		json_t *reply, *expected = NULL;
		t->seed = c->seeds[k];
		char *refpath = xchg_shared(c) ? xstrfmt("ref/trial_%d", k) : xstrfmt("%s/trial_%d.safetensors", c->ref_dir, k);
		if (xchg_expect_begin(c, t->seed, refpath, 1, err)) {
			free(refpath);
			return -1;
		}
		snprintf(stage, sizeof(stage), "running correctness trial %d", k);
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
		char *out = xstrfmt("%s/trial_%d.safetensors", c->cand_dir, k), why[400];
		int trc = xchg_take(c, json_object_get(reply, "shared"), out, why, sizeof(why), err);
		if (trc) {
			json_decref(reply);
			json_decref(expected);
			xchg_drop(c, refpath);
			free(refpath);
			free(out);
			if (trc > 0)
				verdict_fail(v, V_INCORRECT, "trial %d: %s", k, why);
			return trc;
		}
		snprintf(stage, sizeof(stage), "running correctness trial %d", k + 1);
		if (k + 1 < n && eval_cand_send(&c->cand, trial_request(c, k + 1), v, stage, timeout_s)) {
			json_decref(reply);
			json_decref(expected);
			xchg_drop(c, refpath);
			free(refpath);
			free(out);
			return 1;
		}
		t->run_s = json_number_value(json_object_get(reply, "run_s"));
		json_t *before = json_object_get(reply, "inputs_before");
		t->inputs_mutated = !json_equal(before, json_object_get(reply, "inputs_after"));
		int same_inputs = json_equal(before, json_object_get(expected, "inputs_before"));
		rt_observe_ref(&c->rt, (size_t)k, expected);
		json_decref(expected);
		if (!same_inputs) {
			json_decref(reply);
			xchg_drop(c, refpath);
			free(refpath);
			free(out);
			verdict_fail(v, V_INCORRECT, "trial %d: the inputs drawn in the candidate's process differ from the "
				     "reference's for the same seed (the candidate changes random number generation)", k);
			return 1;
		}
		struct outputs_cmp cmp;
		int rc = eval_compare_trial(c, refpath, out, t, &cmp, err);
		xchg_drop(c, refpath);
		if (k > 0) /* trial 0's outputs are what the second run (rtchecks.c) is compared with */
			xchg_drop(c, out);
		free(refpath);
		free(out);
		if (rc >= 0) {
			rt_observe_trial(&c->rt, (size_t)k, reply, &cmp, c->e->device);
			outputs_cmp_release(&cmp);
		}
		json_decref(reply);
		if (rc < 0)
			return -1;
	}
	return 0;
}


/* Trials are judged only once all ran: the first failing one names the verdict. */
void eval_judge_trials(struct eval_ctx *c)
{
	struct verdict *v = c->v;
	for (size_t k = 0; k < v->ntrials; k++) {
		struct trial_result *t = &v->trials[k];
		if (t->inputs_mutated) {
			verdict_add_finding(v, "H10", config_policy(c->cfg, "H10"), 0, 0,
					    "the candidate modified its input tensors during forward");
			if (!strcmp(config_policy(c->cfg, "H10"), "reject")) {
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
