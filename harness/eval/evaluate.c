/* evaluate.c - one evaluation, in the order of DESIGN §5: reference outputs (cached on disk),
 * the candidate in a fresh sandboxed worker (build, construct, correctness trials), then paired
 * timing with both workers alive. Every fault of the candidate ends as a verdict, never a crash. */
#include "evaluate.h"

#include "../core/log.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/python.h"
#include "../core/sha256.h"
#include "../audit/audit.h"
#include "../checks/static.h"
#include "../checks/static_verdict.h"
#include "../profile/session.h"
#include "eval_int.h"
#include "exchange.h"
#include "outputs.h"
#include "refcache.h"
#include "refpool.h"
#include "rtchecks.h"
#include "timing.h"
#include "worker_client.h"


/* ---------- small pieces ---------- */

/* The first compiler errors with a little context, not the whole build log (DESIGN §5). */
static char *trim_compiler_output(const char *text)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = text;
	int keep = 0, lines = 0;
	while (*p && lines < 40) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xstrndup(p, n);
		if (strstr(line, "error") || strstr(line, "Error"))
			keep = 3;
		if (keep > 0) {
			strbuf_addf(&out, "%.300s\n", line);
			keep--;
			lines++;
		}
		free(line);
		p += n + (eol ? 1 : 0);
	}
	if (!out.len) {
		size_t len = strlen(text);
		strbuf_addstr(&out, len > 3000 ? text + len - 3000 : text);
	}
	return strbuf_detach(&out, NULL);
}

const char *jstr_or(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

static enum verdict_status status_of_kind(const char *kind)
{
	if (!strcmp(kind, "compile_error"))
		return V_COMPILE_ERROR;
	return V_RUNTIME_ERROR;
}

/* A fault of the candidate's worker as the verdict's status and message. */
static int cand_fault(struct verdict *v, const struct worker_fault *f, const char *stage, int timeout_s)
{
	if (f->kind == WF_TIMEOUT)
		verdict_fail(v, V_TIMEOUT, "no answer within the %d s limit while %s", timeout_s, stage);
	else
		verdict_fail(v, V_RUNTIME_ERROR, "%s while %s", f->what, stage);
	return -1;
}

int eval_cand_send(struct worker *w, json_t *req, struct verdict *v, const char *stage, int timeout_s)
{
	struct worker_fault f;
	int rc = worker_send(w, req, &f);
	json_decref(req);
	return rc ? cand_fault(v, &f, stage, timeout_s) : 0;
}

int eval_cand_receive(struct worker *w, json_t **reply, double deadline, struct verdict *v, const char *stage,
		      int timeout_s)
{
	struct worker_fault f;
	if (worker_receive(w, reply, deadline, &f))
		return cand_fault(v, &f, stage, timeout_s);
	if (!json_is_true(json_object_get(*reply, "ok"))) {
		const char *kind = jstr_or(*reply, "kind", "runtime_error");
		const char *msg = jstr_or(*reply, "message", "");
		verdict_fail(v, status_of_kind(kind), "%s while %s: %.300s", kind, stage, msg);
		const char *tb = jstr_or(*reply, "traceback", "");
		free(v->detail);
		v->detail = !strcmp(kind, "compile_error") ? trim_compiler_output(msg) : xstrdup(*tb ? tb : msg);
		json_decref(*reply);
		*reply = NULL;
		return -1;
	}
	return 0;
}

int eval_cand_ask(struct worker *w, json_t *req, json_t **reply, double deadline, struct verdict *v, const char *stage,
		  int timeout_s)
{
	*reply = NULL;
	if (eval_cand_send(w, req, v, stage, timeout_s))
		return -1;
	return eval_cand_receive(w, reply, deadline, v, stage, timeout_s);
}

/* The reply to a request sent to the trusted reference; a failure is the problem's or the machine's,
 * not the candidate's. */
static int ref_reply(struct worker *w, json_t **reply, const char *stage, struct sb_error *err)
{
	struct worker_fault f;
	if (worker_receive(w, reply, proc_now() + REF_TIMEOUT_S, &f))
		return sb_error_set(err, SB_EENV, "the reference worker failed while %s: %s", stage, f.what);
	if (!json_is_true(json_object_get(*reply, "ok"))) {
		int rc = sb_error_set(err, SB_EINPUT, "the reference failed while %s: %s: %.400s", stage,
				      jstr_or(*reply, "kind", "?"), jstr_or(*reply, "message", ""));
		json_decref(*reply);
		*reply = NULL;
		return rc;
	}
	return 0;
}

int eval_ref_ask(struct worker *w, json_t *req, json_t **reply, const char *stage, struct sb_error *err)
{
	struct worker_fault f;
	*reply = NULL;
	int rc = worker_send(w, req, &f);
	json_decref(req);
	if (rc)
		return sb_error_set(err, SB_EENV, "the reference worker failed while %s: %s", stage, f.what);
	return ref_reply(w, reply, stage, err);
}

json_t *eval_load_request(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			  const char *candidate, const char *ext_dir, int compile, int build_only)
{
	json_t *r = json_pack("{s:s, s:s, s:s, s:i, s:b, s:b, s:b, s:b, s:b, s:b}", "cmd", "load", "problem", p->path,
			      "device", e->device, "seed", cfg->eval.seed, "compile", compile, "build_only", build_only,
			      "lean_headers", cfg->eval.lean_headers, "lite_headers", cfg->eval.lite_headers, "tf32", cfg->eval.tf32,
			      "split_nvcc", cfg->eval.split_nvcc);
	if (candidate)
		json_object_set_new(r, "candidate", json_string(candidate));
	if (ext_dir)
		json_object_set_new(r, "ext_dir", json_string(ext_dir));
	return r;
}

/* ---------- the two workers ---------- */

/* The candidate worker's account of its load_inline builds (name, cache key, cache hit, seconds, seconds
 * per ninja step), kept in the verdict so a slow build says which compiler it waited for. The worker is
 * untrusted: only these fields, with their types checked and strings bounded, are copied. */
static void keep_builds(struct verdict *v, json_t *builds)
{
	size_t i, n = 0;
	json_t *b;
	if (!json_is_array(builds))
		return;
	json_decref(v->builds);
	v->builds = json_array();
	json_array_foreach(builds, i, b) {
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *key = json_string_value(json_object_get(b, "key"));
		const char *arch = json_string_value(json_object_get(b, "arch"));
		const char *headers = json_string_value(json_object_get(b, "headers"));
		json_t *steps = json_object_get(b, "steps"), *o, *kept = json_object();
		const char *step;
		json_t *sec;
		if (n++ >= 16)
			break;
		json_object_foreach(steps, step, sec)
			if (json_is_number(sec) && strlen(step) < 128 && json_object_size(kept) < 16)
				json_object_set_new(kept, step, json_real(json_number_value(sec)));
		o = json_pack("{s:s%, s:s%, s:s%, s:s%, s:b, s:b, s:o, s:o}", "name", name ? name : "",
			      name ? strnlen(name, 128) : 0, "key", key ? key : "", key ? strnlen(key, 64) : 0, "arch",
			      arch ? arch : "", arch ? strnlen(arch, 32) : 0, "headers", headers ? headers : "",
			      headers ? strnlen(headers, 16) : 0, "cached",
			      json_is_true(json_object_get(b, "cached")), "lean_headers",
			      json_is_true(json_object_get(b, "lean_headers")), "seconds",
			      json_real(json_number_value(json_object_get(b, "seconds"))), "steps", kept);
		json_array_append_new(v->builds, o);
	}
}

/* Whether the reference worker's `load` compiles too. With the process factor it compiles later
 * (eval_ref_compile_begin): the factor's timing needs the worker first, and torch.compile's first call
 * takes seconds. */
static int ref_compiles_at_load(const struct eval_ctx *c)
{
	return evalctx_ref_compiles(c) && !eval_process_factor_planned(c);
}

void eval_ref_compile_begin(struct eval_ctx *c)
{
	struct worker_fault f;
	if (!evalctx_ref_compiles(c) || c->ref_compiled || c->ref_compile_pending)
		return;
	/* behind a `load` still in flight too (the worker answers in order, and eval_load_ref reads both),
	 * unless that `load` compiles itself */
	if (!c->ref_loaded && (!c->ref_load_pending || ref_compiles_at_load(c)))
		return;
	json_t *req = json_pack("{s:s, s:b, s:i}", "cmd", "compile", "warm", 1, "seed", c->cfg->eval.seed);
	if (worker_send(&c->ref, req, &f) == 0)
		c->ref_compile_pending = 1;
	json_decref(req);
}

/* Reads the answer to eval_ref_compile_begin's `compile`, if one is due: before anything else is asked. */
static int ref_settle(struct eval_ctx *c, struct sb_error *err)
{
	json_t *reply;
	if (!c->ref_compile_pending)
		return 0;
	c->ref_compile_pending = 0;
	if (ref_reply(&c->ref, &reply, "compiling the problem with torch.compile", err))
		return -1;
	c->ref_compiled = json_is_true(json_object_get(reply, "compile_available"));
	json_decref(reply);
	return 0;
}

int eval_load_ref(struct eval_ctx *c, struct sb_error *err)
{
	json_t *reply;
	if (c->ref_loaded)
		return ref_settle(c, err);
	int rc = c->ref_load_pending ? ref_reply(&c->ref, &reply, "loading the problem", err)
				     : eval_ref_ask(&c->ref, eval_load_request(c->e, c->cfg, c->p, NULL, NULL, ref_compiles_at_load(c), 0),
					       &reply, "loading the problem", err);
	c->ref_load_pending = 0;
	if (rc)
		return -1;
	c->ref_compiled = json_is_true(json_object_get(reply, "compile_available"));
	json_t *inputs = json_object_get(reply, "timing_inputs");
	if (json_is_array(inputs))
		c->ref_timing_inputs = json_incref(inputs);
	json_decref(reply);
	c->ref_loaded = 1;
	return ref_settle(c, err);
}

/* Sends the reference's `load` now, to be answered when the timing needs it (eval_load_ref): its model and
 * torch.compile'd model are built (and, when it compiles, called once each: torch.compile compiles
 * then), and its timing inputs drawn, while the candidate builds and runs its trials. A worker that
 * cannot take it is left to eval_load_ref, which then reports why. */
static void load_ref_begin(struct eval_ctx *c)
{
	struct worker_fault f;
	if (c->ref_loaded || c->ref_load_pending || !c->ref.started)
		return;
	json_t *req = eval_load_request(c->e, c->cfg, c->p, NULL, NULL, ref_compiles_at_load(c), 0);
	/* off the evaluation's path: torch.compile's first call, and the timing inputs (run_timing) */
	if (ref_compiles_at_load(c))
		json_object_set_new(req, "warm", json_true());
	json_object_set_new(req, "timing_setup", timing_setup_request(TIMING_SETS, (uint32_t)c->cfg->eval.seed,
								      eval_flush_bytes(c->e)));
	if (worker_send(&c->ref, req, &f) == 0)
		c->ref_load_pending = 1;
	json_decref(req);
}

/* Runs the reference on every correctness seed and on the rotation check's two seeds into a fresh
 * cache entry; its meta keeps the input fingerprints, the reference's own call facts (the runtime rules
 * compare the candidate's with them) and the bytes a call moves. */
static json_t *fill_refcache(struct eval_ctx *c, const char *entry, struct sb_error *err)
{
	char *tmp = xstrfmt("%s.tmp-%d", entry, (int)getpid());
	json_t *meta = json_object(), *inputs = json_array(), *facts = json_array(), *rot = json_array(), *reply;
	long long max_bytes = 0, moved = 0;
	int ntrials = c->cfg->eval.trials;
	fs_mkdirs(tmp, 0700);
	for (int k = 0; k < ntrials + 2; k++) {
		char *out = k < ntrials ? xstrfmt("%s/trial_%d.safetensors", tmp, k) : xstrfmt("%s/rot_%d.safetensors", tmp, k - ntrials);
		uint32_t seed = k < ntrials ? c->seeds[k] : c->rot_seeds[k - ntrials];
		json_t *req = json_pack("{s:s, s:I}", "cmd", "run", "seed", (json_int_t)seed);
		if (!xchg_shared(c)) /* shared: the reference worker computes them again when they are compared */
			json_object_set_new(req, "out", json_string(out));
		free(out);
		if (eval_ref_ask(&c->ref, req, &reply, "computing the expected outputs", err)) {
			json_decref(meta);
			json_decref(inputs);
			json_decref(facts);
			json_decref(rot);
			free(tmp);
			return NULL;
		}
		json_array_append(k < ntrials ? inputs : rot, json_object_get(reply, "inputs_before"));
		if (k < ntrials)
			json_array_append_new(facts, json_pack("{s:O, s:O, s:O}", "outputs", json_object_get(reply, "outputs"),
							       "inputs_storage", json_object_get(reply, "inputs_storage"),
							       "params_storage", json_object_get(reply, "params_storage")));
		long long bytes = 0, io = rt_io_bytes(reply);
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(reply, "outputs"), i, o) {
			long long n = 1;
			size_t d;
			json_t *dim;
			json_array_foreach(json_object_get(o, "shape"), d, dim)
				n *= json_integer_value(dim);
			bytes += n * 8; /* an upper bound on any dtype's size */
		}
		if (bytes > max_bytes)
			max_bytes = bytes;
		if (io > moved)
			moved = io;
		json_decref(reply);
	}
	/* the first seed once more: a reference that does not repeat itself under a seed makes a candidate's
	 * second run (H19) meaningless */
	char *again = xstrfmt("%s/again_0.safetensors", tmp), *first = xstrfmt("%s/trial_0.safetensors", tmp);
	struct outputs_cmp same = { 0 };
	/* shared: both runs kept by the reference worker and compared there */
	int repeated = ntrials > 0 && xchg_expect(c, c->seeds[0], first, err) == 0;
	if (repeated && xchg_shared(c)) {
		repeated = xchg_expect(c, c->seeds[0], again, err) == 0;
	} else if (repeated) {
		repeated = !eval_ref_ask(&c->ref, json_pack("{s:s, s:I, s:s}", "cmd", "run", "seed", (json_int_t)c->seeds[0],
							    "out", again), &reply, "repeating the first trial", err);
		if (repeated)
			json_decref(reply);
	}
	if (repeated) {
		if (xchg_compare(c, first, again, &same, err) == 0)
			json_object_set_new(meta, "reproducible", json_boolean(same.bitwise));
		outputs_cmp_release(&same);
		xchg_drop(c, again);
		if (xchg_shared(c))
			xchg_drop(c, first); /* files: the entry's own trial_0 */
	}
	free(again);
	free(first);
	json_object_set_new(meta, "inputs", inputs);
	json_object_set_new(meta, "rotation_inputs", rot);
	json_object_set_new(meta, "facts", facts);
	json_object_set_new(meta, "io_bytes", json_integer(moved));
	json_object_set_new(meta, "output_bytes_max", json_integer(max_bytes));
	json_object_set_new(meta, "problem", json_string(c->p->sha256));
	if (refcache_publish(tmp, entry, meta, err)) {
		json_decref(meta);
		meta = NULL;
	}
	fs_remove_tree(tmp); /* still there only when another evaluation published first */
	free(tmp);
	return meta;
}

/* ---------- timing ---------- */

/* NVML's handle on the GPU the reference worker times on, found by the UUID torch reports; NULL (and
 * the verdict says why) when there is none. The reference worker is trusted: the candidate never
 * names the GPU whose clock is read. */
static struct nvml_gpu *timing_gpu(struct eval_ctx *c, double deadline)
{
	struct gpu_clock *gc = &c->v->timing.gpu_clock;
	json_t *reply = NULL;
	struct worker_fault f;
	if (worker_call(&c->ref, json_pack("{s:s, s:s}", "cmd", "hello", "device", c->e->device), &reply, deadline, &f)) {
		snprintf(gc->note, sizeof(gc->note), "the reference worker did not say which GPU it uses: %s", f.what);
		return NULL;
	}
	const char *uuid = json_string_value(json_object_get(reply, "uuid"));
	struct nvml_gpu *g = NULL;
	if (!uuid || !*uuid)
		snprintf(gc->note, sizeof(gc->note), "torch reports no UUID for %s", c->e->device);
	else
		g = nvml_open(uuid, gc->note, sizeof(gc->note));
	json_decref(reply);
	return g;
}

void eval_timing_plan(const struct eval_ctx *c, struct timing_plan *plan)
{
	const struct config *cfg = c->cfg;
	int gpu = strcmp(c->e->device, "cpu") != 0;
	*plan = (struct timing_plan){
		.max_pairs = cfg->eval.perf_trials, .block = cfg->eval.timing_block,
		.prime_ms = gpu ? cfg->eval.timing_prime_ms : 0, .lead_us = eval_lead_us(c->e, cfg),
		.cpu = cfg->eval.timing_cpu, .gc = cfg->eval.timing_gc,
		.warmup_ms = cfg->eval.warmup_ms, .warmup_calls = cfg->eval.warmup_calls,
		.rse_target = cfg->eval.rse_target, .cap_s = cfg->eval.timing_cap_s, .nsets = TIMING_SETS,
		.base_seed = (uint32_t)cfg->eval.seed, .max_output_bytes = evalctx_max_output(c),
		.flush_bytes = eval_flush_bytes(c->e), .ref_inputs = c->ref_timing_inputs,
	};
}

/* eval.exchange = shared: what the last timed calls returned, kept by the reference worker (its own,
 * and the candidate's, shared). 0, 1 (the candidate failed: the verdict says how), -1. */
static int share_timed(struct eval_ctx *c, const char *ref_out, const char *cand_out, double deadline,
		       struct sb_error *err)
{
	json_t *req = json_pack("{s:s, s:s, s:s}", "cmd", "save_last", "which", "model", "out", ref_out), *reply;
	xchg_mark(c, req, 1);
	if (eval_ref_ask(&c->ref, req, &reply, "keeping its timed outputs", err))
		return -1;
	json_decref(reply);
	strvec_push(&c->held, ref_out);
	req = json_pack("{s:s, s:s, s:s, s:I}", "cmd", "save_last", "which", "model", "out", cand_out, "max_output_bytes",
			(json_int_t)evalctx_max_output(c));
	xchg_mark(c, req, 0);
	if (eval_cand_ask(&c->cand, req, &reply, deadline, c->v, "sharing the timed outputs", c->cfg->eval.timeout_s))
		return 1;
	char why[400];
	int rc = xchg_take(c, json_object_get(reply, "shared"), cand_out, why, sizeof(why), err);
	json_decref(reply);
	if (rc > 0)
		verdict_fail(c->v, V_INCORRECT, "the timed outputs: %s", why);
	return rc;
}

static int run_timing(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	const struct config *cfg = c->cfg;
	int gpu = strcmp(c->e->device, "cpu") != 0;
	struct timing_plan plan;
	double w0 = proc_now();
	int wrc = evalctx_start_ref(c, err) || eval_load_ref(c, err);
	c->v->seconds.reference_worker += proc_now() - w0; /* 0 for a kept, loaded one */
	if (wrc)
		return -1;
	eval_timing_plan(c, &plan); /* its ref_inputs: drawn by this evaluation's early load, or NULL */
	plan.with_compiled = c->ref_compiled;
	char *ref_out = xstrfmt("%s/timed.safetensors", c->ref_dir), *cand_out = xstrfmt("%s/timed.safetensors", c->cand_dir);
	/* shared: the timed outputs are kept and shared after the loop, below */
	plan.ref_out = xchg_shared(c) ? NULL : ref_out;
	plan.cand_out = cand_out;
	struct worker_fault f;
	int cand_failed = 0;
	char *msg = NULL;
	snprintf(c->v->timing.clock, sizeof(c->v->timing.clock), "%s", gpu ? "cuda_event" : "host");
	double t0 = proc_now();
	plan.nvml = gpu ? timing_gpu(c, t0 + 120) : NULL;
	int rc = timing_run(&c->ref, &c->cand, &plan, deadline, &c->v->timing, &f, &cand_failed, &msg);
	nvml_close(plan.nvml);
	c->v->seconds.timing = proc_now() - t0 + c->v->timing.factor.seconds;
	if (rc == 0) {
		eval_apply_process_factor(&c->v->timing);
		eval_record_launch_heavy(c);
	}
	if (rc) {
		if (!cand_failed)
			rc = sb_error_set(err, SB_EENV, "%s", msg);
		else if (f.kind == WF_TIMEOUT)
			verdict_fail(c->v, V_TIMEOUT, "no answer within the %d s limit while timing", cfg->eval.timeout_s);
		else
			verdict_fail(c->v, V_RUNTIME_ERROR, "%s", msg);
		free(msg);
		free(ref_out);
		free(cand_out);
		return cand_failed ? 1 : -1;
	}
	/* re-validate what the timed calls returned (H12: honest only while checked) */
	struct trial_result t = { 0 };
	if (xchg_shared(c) && (rc = share_timed(c, ref_out, cand_out, deadline, err)))
		goto timed_out;
	rc = eval_compare_trial(c, ref_out, cand_out, &t, NULL, err);
	if (rc == 0) {
		c->v->timing.revalidated = 1;
		if (!t.pass) {
			verdict_add_finding(c->v, "H12", config_policy(cfg, "H12"), 0, 0,
					    "outputs of the timed calls differ from the reference's, although the correctness trials passed");
			verdict_fail(c->v, !strcmp(config_policy(cfg, "H12"), "reject") ? V_REJECTED : V_INCORRECT,
				     "H12: the timed outputs are wrong%s%s", t.noutputs ? ": " : "",
				     t.noutputs ? t.outputs[0].cmp.detail : "");
		}
	}
	free(t.outputs);
timed_out:
	xchg_drop(c, ref_out);
	xchg_drop(c, cand_out);
	free(ref_out);
	free(cand_out);
	return rc < 0 ? -1 : rc;
}

/* ---------- H18: shapes other than the problem's (eval.extra_shapes) ---------- */

/* "at the problem's shape constants halved ({"DIM":[4096,2048]}), the candidate failed: why; ..." */
static void shapes_finding(struct eval_ctx *c, const char *consts, const char *what, const char *why)
{
	const char *action = config_policy(c->cfg, "H18");
	char *msg = xstrfmt("at the problem's shape constants halved (%s), %s: %.300s; read sizes from the inputs "
			    "rather than writing the problem's in", consts, what, why);
	verdict_add_finding(c->v, "H18", action, 0, 0, msg);
	if (!strcmp(action, "reject"))
		verdict_fail(c->v, V_REJECTED, "H18: %s", msg);
	free(msg);
}

static void shapes_skip(struct eval_ctx *c, const char *why)
{
	if (c->v->runtime)
		strvec_pushf(&c->v->runtime->skipped, "H18 (extra shapes): %s", why);
}

/* Both workers build a model with the problem's upper-case integer constants halved and run it once on
 * the same seed. A candidate that fails there, or disagrees with the reference, computes only the shapes
 * it was given. A reference that cannot run at those shapes (constants tied to each other) leaves the
 * check unrun, and says so. Run last: a candidate that crashes here has been judged on everything else. */
static int run_shapes(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	uint32_t seed = trial_seed((uint32_t)c->cfg->eval.seed, 3000);
	char *ref_out = xstrfmt("%s/shapes.safetensors", c->ref_dir), *cand_out = xstrfmt("%s/shapes.safetensors", c->cand_dir);
	json_t *reply = NULL, *ref_changed = NULL;
	struct sb_error rerr = { 0 };
	struct worker_fault f;
	int rc = 0;
	if ((rc = evalctx_start_ref(c, err)) || (rc = eval_load_ref(c, err)))
		goto out;
	json_t *rreq = json_pack("{s:s, s:i, s:i, s:I, s:s}", "cmd", "shapes", "num", 1, "den", 2, "seed", (json_int_t)seed,
				 "out", ref_out);
	xchg_mark(c, rreq, 1);
	if (eval_ref_ask(&c->ref, rreq, &reply, "running at other shapes", &rerr)) {
		shapes_skip(c, rerr.msg);
		goto out;
	}
	if (xchg_shared(c))
		strvec_push(&c->held, ref_out);
	ref_changed = json_incref(json_object_get(reply, "changed"));
	json_decref(reply);
	if (!json_object_size(ref_changed)) {
		shapes_skip(c, "the problem has no upper-case integer constants (>= 2) to scale");
		goto out;
	}
	json_t *req = json_pack("{s:s, s:i, s:i, s:I, s:s, s:I}", "cmd", "shapes", "num", 1, "den", 2, "seed",
				(json_int_t)seed, "out", cand_out, "max_output_bytes", (json_int_t)evalctx_max_output(c));
	xchg_mark(c, req, 0);
	int crc = worker_call(&c->cand, req, &reply, deadline, &f);
	json_decref(req);
	char *consts = json_dumps(ref_changed, JSON_COMPACT | JSON_SORT_KEYS), why[400];
	int trc = 0;
	if (crc == 0 && json_is_true(json_object_get(reply, "ok")) &&
	    (trc = xchg_take(c, json_object_get(reply, "shared"), cand_out, why, sizeof(why), err)) < 0)
		rc = -1;
	if (rc < 0) {
	} else if (trc > 0) {
		shapes_finding(c, consts, "the candidate's outputs could not be compared", why);
	} else if (crc) {
		shapes_finding(c, consts, "the candidate's worker failed", f.what);
	} else if (!json_is_true(json_object_get(reply, "ok"))) {
		shapes_finding(c, consts, "the candidate failed", jstr_or(reply, "message", "?"));
	} else if (!json_equal(json_object_get(reply, "changed"), ref_changed)) {
		shapes_finding(c, consts, "the candidate's worker scaled other constants", "not comparable");
	} else {
		struct outputs_cmp r;
		if ((rc = xchg_compare(c, ref_out, cand_out, &r, err)) == 0) {
			if (!r.readable || !r.pass) {
				const char *why = r.error[0] ? r.error : "they differ";
				for (size_t i = 0; !r.error[0] && i < r.noutputs; i++)
					if (!r.outputs[i].cmp.pass) {
						why = r.outputs[i].cmp.detail;
						break;
					}
				shapes_finding(c, consts, "the outputs are wrong", why);
			}
			outputs_cmp_release(&r);
		}
	}
	free(consts);
	json_decref(reply);
out:
	json_decref(ref_changed);
	if (xchg_shared(c)) {
		xchg_drop(c, ref_out);
		xchg_drop(c, cand_out);
	}
	free(ref_out);
	free(cand_out);
	return rc;
}

/* ---------- profile ---------- */

static int wants_profile(const struct eval_env *e, const struct config *cfg)
{
	return strcmp(e->device, "cpu") && cfg->eval.profile && (cfg->eval.perf_trials > 0 || e->profile_only);
}

/* More timed calls of the candidate with libstitchprof recording them (docs/profile.md), after the timing
 * loop so that CUPTI never touches the speedup. Only a finding changes the status: a profiler that fails
 * leaves its reason in the verdict's profile. */
static void run_profile(struct eval_ctx *c, double deadline)
{
	const struct config *cfg = c->cfg;
	struct verdict *v = c->v;
	v->profile = xcalloc(1, sizeof(*v->profile));
	prof_report_init(v->profile);
	if (access(c->e->prof_lib, R_OK) != 0) {
		prof_report_unavailable(v->profile, "%s is missing: build it with make where the CUDA toolkit's CUPTI "
					"headers are, or set STITCHBENCH_PROF_LIB", c->e->prof_lib);
		return;
	}
	char *trace = xstrfmt("%s/profile.trace", c->cand_dir), *msg = NULL;
	struct prof_plan plan = {
		.lib = c->e->prof_lib, .trace = trace, .objects_under = c->ext_dir, .which = "model",
		.calls = cfg->eval.profile_trials, .setup = !v->timing.ran, .nsets = TIMING_SETS, .base_seed = (uint32_t)cfg->eval.seed,
		.flush_bytes = eval_flush_bytes(c->e), .warmup_ms = cfg->eval.warmup_ms, .warmup_calls = cfg->eval.warmup_calls,
		.keep = c->e->keep_trace,
	};
	struct worker_fault f;
	if (prof_session_run(&c->cand, &plan, deadline, v->profile, &f, &msg))
		prof_report_unavailable(v->profile, "%s", msg);
	free(msg);
	free(trace);
	struct prof_finding found[8];
	/* a candidate calling cuBLAS from its own C++ runs only library kernels honestly; a torch op in
	 * forward doing the same is the static checks' H01 */
	v->profile->own_library_calls = static_file_calls_library(v->candidate_path);
	size_t n = prof_findings(v->profile, cfg, found, 8);
	for (size_t i = 0; i < n; i++) {
		verdict_add_finding(v, found[i].id, found[i].severity, 0, 0, found[i].message);
		if (!strcmp(found[i].severity, "reject") && v->status == V_PASS)
			verdict_fail(v, V_REJECTED, "%s: %s", found[i].id, found[i].message);
		free(found[i].message);
	}
}

/* ---------- the whole evaluation ---------- */

void eval_verdict_header(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			 const char *candidate_path, struct verdict *v)
{
	struct eval_ctx ctx = { .e = e, .cfg = cfg, .p = p, .v = v };
	struct eval_ctx *c = &ctx;
	snprintf(v->problem, sizeof(v->problem), "L%d/%d", c->p->level, c->p->id);
	memcpy(v->problem_sha256, c->p->sha256, 65);
	v->candidate_path = xstrdup(candidate_path);
	if (sha256_file_hex(candidate_path, v->candidate_sha256))
		v->candidate_sha256[0] = '\0';
	v->settings.trials = c->cfg->eval.trials;
	v->settings.perf_trials = c->cfg->eval.perf_trials;
	v->settings.seed = c->cfg->eval.seed;
	v->settings.timing_lead_us = eval_lead_us(c->e, c->cfg);
	v->settings.timing_gc = c->cfg->eval.timing_gc;
	v->settings.hash_seed = c->e->hash_seed;
	snprintf(v->settings.tolerance, sizeof(v->settings.tolerance), "%s", tolerance_name(c->cfg->eval.tolerance));
	snprintf(v->settings.exchange, sizeof(v->settings.exchange), "%s", xchg_shared(c) ? "shared" : "files");
	snprintf(v->env.device, sizeof(v->env.device), "%s", c->e->device);
	snprintf(v->env.gpu, sizeof(v->env.gpu), "%s", c->e->gpu);
	snprintf(v->env.sm, sizeof(v->env.sm), "%s", c->e->sm);
	snprintf(v->env.torch, sizeof(v->env.torch), "%s", c->e->torch);
	snprintf(v->env.torch_cuda, sizeof(v->env.torch_cuda), "%s", c->e->torch_cuda);
	snprintf(v->env.python, sizeof(v->env.python), "%s", c->e->python_version);
	/* the problem's own flaws, when `stitchbench audit` has looked at this very file (docs/audit.md) */
	json_t *audit = audit_cache_read(c->e->cache_root, c->p->sha256);
	if (audit)
		v->audit = json_pack("{s:O, s:O, s:O}", "findings", json_object_get(audit, "findings"), "device",
				     json_object_get(audit, "device"), "torch", json_object_get(audit, "torch"));
	json_decref(audit);
}

uint32_t *eval_seeds(const struct config *cfg)
{
	uint32_t *s = xcalloc((size_t)cfg->eval.trials + 2, sizeof(uint32_t));
	for (int k = 0; k < cfg->eval.trials; k++)
		s[k] = trial_seed((uint32_t)cfg->eval.seed, k);
	for (int k = 0; k < 2; k++) /* the rotation's two sets; the cache holds their outputs too */
		s[cfg->eval.trials + k] = trial_seed((uint32_t)cfg->eval.seed, 2000 + k);
	return s;
}

char *eval_refcache_entry(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			  const uint32_t *seeds)
{
	struct refcache_key key = { p->sha256, seeds, cfg->eval.trials + 2, cfg->eval.seed,
				    e->gpu[0] ? e->gpu : "cpu", e->torch, cfg->eval.tf32, xchg_shared_on(cfg, e->device) };
	return refcache_dir(e->cache_root, &key);
}

int evaluate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate_path,
	     struct verdict *v, struct sb_error *err)
{
	struct eval_ctx c = { .e = e, .cfg = cfg, .p = p, .v = v };
	double t0 = proc_now();
	json_t *meta = NULL, *reply;
	int rc;

	verdict_init(v);
	eval_verdict_header(e, cfg, p, candidate_path, v);
	sb_trace("eval: %s on %s", candidate_path, p->path);
	/* 0. static checks: a reject finding stops here, before any Python starts (DESIGN §5.1) */
	int rejected = static_judge(cfg, p->path, candidate_path, v);
	v->seconds.static_checks = proc_now() - t0;
	if (rejected) {
		v->seconds.total = proc_now() - t0;
		return 0;
	}
	/* the fork server imports torch while the reference's outputs are found or made */
	eval_fork_server(e);
	if ((rc = evalctx_dirs(&c, 1, err)))
		goto out;
	evalctx_env(&c, 0);
	c.seeds = eval_seeds(cfg);
	for (int k = 0; k < 2; k++)
		c.rot_seeds[k] = c.seeds[cfg->eval.trials + k];

	/* 1. expected outputs: from the cache, or computed now by the trusted worker */
	char *entry = eval_refcache_entry(e, cfg, p, c.seeds);
	c.ref_entry = entry; /* before the reference's `load`: what it records decides the process factor */
	c.launch_heavy_recorded = eval_recorded_launch_heavy(entry);
	meta = refcache_lookup(entry);
	v->reference_cached = meta != NULL;
	if (cfg->eval.perf_trials > 0 || !meta)
		if ((rc = evalctx_start_ref(&c, err)))
			goto out_entry;
	if (meta && cfg->eval.perf_trials > 0)
		load_ref_begin(&c);
	if (!meta) {
		double r0 = proc_now();
		if ((rc = eval_load_ref(&c, err)) || !(meta = fill_refcache(&c, entry, err))) {
			rc = rc ? rc : -1;
			goto out_entry;
		}
		v->seconds.reference = proc_now() - r0;
	}
	json_object_set_new(meta, "_dir", json_string(entry));
	c.out_bytes = json_integer_value(json_object_get(meta, "output_bytes_max"));
	rt_session_init(&c.rt, cfg, cfg->eval.trials, meta, v);

	/* 2. the candidate, in a fresh sandboxed process (started ahead by the previous evaluation, or now) */
	double deadline = proc_now() + cfg->eval.timeout_s;
	double b0 = proc_now();
	if (evalctx_adopt(&c, deadline) == 0)
		v->candidate_worker_prestarted = 1;
	else if ((rc = evalctx_start_cand(&c, err)))
		goto out_entry;
	v->candidate_worker_forked = c.cand.forked;
	sandbox_describe(&c.sb, &v->sandbox);
	/* before any of the candidate's code runs: the reference timed in its process (procfactor.c); its
	 * seconds go to the timing and to the reference worker, not to the build */
	double pf0 = proc_now();
	if ((rc = eval_process_factor(&c, deadline, err)))
		goto out_entry;
	double factor_wall = proc_now() - pf0;
	eval_ref_compile_begin(&c);
	json_t *load = eval_load_request(e, cfg, p, candidate_path, c.ext_dir, 0, 0);
	json_object_set_new(load, "file_bytes", json_integer(evalctx_cand_file_bytes(&c)));
	if (eval_cand_ask(&c.cand, load, &reply, deadline, v,
		     "building and constructing ModelNew", cfg->eval.timeout_s) == 0) {
		keep_builds(v, json_object_get(reply, "builds"));
		rt_observe_load(&c.rt, reply);
		json_decref(reply);
		/* the whole wait: worker start-up and imports, builds (each also in builds[]), construction */
		v->seconds.build = proc_now() - b0 - factor_wall;
		/* the next candidate's worker imports torch while this one runs its trials; so does the next
		 * problem's reference worker */
		evalctx_prestart(&c);
		evalctx_prestart_ref(&c);
		double c0 = proc_now();
		/* a replaced harness function at import (H08) could fake everything that follows */
		rc = rt_apply(&c.rt, v) ? 1 : eval_run_trials(&c, meta, deadline, err);
		if (rc == 0) {
			eval_judge_trials(&c);
			rt_apply(&c.rt, v);
			struct rt_io io = eval_runtime_io(&c, meta, deadline);
			rc = rt_after_trials(&c.rt, &io, v, err);
			rt_apply(&c.rt, v);
		}
		v->seconds.correctness = proc_now() - c0;
		if (rc < 0)
			goto out_entry;
		if (rc == 0) {
			if (v->status == V_PASS && !v->message && cfg->eval.perf_trials > 0) {
				/* The last candidate's worker is gone before this one is timed. The next one's, maybe
				 * still importing torch, is waited for when the host's clock times: a GPU time is the
				 * GPU's, with the call queued ahead (eval.timing_lead_us), whatever else the host does. */
				evalctx_retired_settle();
				if (eval_lead_us(e, cfg) == 0)
					evalctx_prestart_settle(proc_now() + 120);
				rc = run_timing(&c, deadline, err);
				if (rc < 0)
					goto out_entry;
				double k0 = proc_now();
				struct rt_io io = eval_runtime_io(&c, meta, deadline);
				if (rc == 0 && v->timing.ran && rt_after_timing(&c.rt, &io, meta, v) == 0)
					rt_apply(&c.rt, v);
				v->seconds.checks += proc_now() - k0;
			}
			double p0 = proc_now();
			if (v->status == V_PASS && !v->message && wants_profile(e, cfg))
				run_profile(&c, deadline);
			v->seconds.profile = proc_now() - p0;
			double k1 = proc_now();
			int src = v->status == V_PASS && !v->message && cfg->eval.extra_shapes ? run_shapes(&c, deadline, err) : 0;
			v->seconds.checks += proc_now() - k1;
			if (src < 0)
				goto out_entry;
		}
		rc = 0;
		rt_finish(&c.rt, v);
		if (v->status == V_PASS && !v->message)
			v->message = xstrfmt("all %d correctness trials passed%s", cfg->eval.trials,
					     v->timing.ran ? "; timed outputs re-validated" : "");
	}
out_entry:
	xchg_finish(&c);
	free(entry);
	if (v->runtime && !c.rt.ncalls) { /* forward never ran: no runtime facts to show */
		rt_report_release(v->runtime);
		free(v->runtime);
		v->runtime = NULL;
	}
out:
	json_decref(meta);
	double f0 = proc_now();
	evalctx_retire(&c, &v->log_tail);
	v->seconds.finish = proc_now() - f0;
	v->seconds.total = proc_now() - t0;
	sb_trace("eval: done, %.3f s", v->seconds.total);
	return rc;
}

int eval_prebuild(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate_path,
		  int *ok, char **msg, char **detail, struct sb_error *err)
{
	struct verdict v;
	struct eval_ctx c = { .e = e, .cfg = cfg, .p = p, .v = &v };
	json_t *reply;
	int rc;
	verdict_init(&v);
	*ok = 0;
	*msg = *detail = NULL;
	if (static_judge(cfg, p->path, candidate_path, &v)) {
		verdict_release(&v);
		*ok = 1; /* rejected before any build: the evaluation proper reports it */
		return 0;
	}
	if ((rc = evalctx_dirs(&c, 1, err)) == 0) {
		evalctx_env(&c, 0);
		c.out_bytes = 0;
		if ((rc = evalctx_start_cand(&c, err)) == 0) {
			if (eval_cand_ask(&c.cand, eval_load_request(e, cfg, p, candidate_path, c.ext_dir, 0, 1), &reply,
				     proc_now() + cfg->eval.timeout_s, &v, "building", cfg->eval.timeout_s) == 0) {
				json_decref(reply);
				*ok = 1;
			} else if (v.status == V_COMPILE_ERROR) {
				*msg = xstrdup(v.message ? v.message : "build failed");
				*detail = v.detail ? xstrdup(v.detail) : NULL;
			} else {
				*ok = 1; /* not a build failure: the evaluation proper will report it */
			}
		}
	}
	evalctx_release(&c);
	verdict_release(&v);
	return rc;
}
