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
#include "../checks/static.h"
#include "eval_int.h"
#include "check/check.h"
#include "ref/ref.h"
#include "rtchecks.h"
#include "seeds.h"
#include "static_verdict.h"
#include "timing/timing.h"
#include "proc/proc.h"


/* ---------- small pieces ---------- */

const char *jstr_or(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

/* The reply to a request sent to the trusted reference; a failure is the problem's or the machine's,
 * not the candidate's. */
int eval_ref_reply(struct worker *w, json_t **reply, const char *stage, struct sb_error *err)
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
	return eval_ref_reply(w, reply, stage, err);
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
	if (eval_ref_reply(&c->ref, &reply, "compiling the problem with torch.compile", err))
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
	int rc = c->ref_load_pending ? eval_ref_reply(&c->ref, &reply, "loading the problem", err)
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
	struct timing_plan plan;
	eval_timing_plan(c, &plan);
	if (c->cfg->eval.perf_trials > 0)
		json_object_set_new(req, "timing_setup", timing_setup_request(&plan));
	if (worker_send(&c->ref, req, &f) == 0)
		c->ref_load_pending = 1;
	json_decref(req);
}

/* The problem's facts (ref/ref.h), found with this evaluation's seeds: the bytes its outputs take, the
 * bytes a call moves, whether it repeats itself under a seed (run twice and compared: a reference that does
 * not makes a candidate's second run, H19, meaningless), and whether its output for one input set passes
 * as its output for another (the answer barely depends on the inputs: any pass there says little).
 * Published as a fresh cache entry; the outputs themselves are dropped, since no later evaluation draws
 * these seeds. */
static json_t *fill_problem_facts(struct eval_ctx *c, const char *entry, struct sb_error *err)
{
	char *tmp = xstrfmt("%s.tmp-%d", entry, (int)getpid());
	char *first = xchg_shared(c) ? xstrdup("ref/facts_0") : xstrfmt("%s/facts_0.safetensors", c->ref_dir);
	char *again = xchg_shared(c) ? xstrdup("ref/facts_1") : xstrfmt("%s/facts_1.safetensors", c->ref_dir);
	char *other = xchg_shared(c) ? xstrdup("ref/facts_2") : xstrfmt("%s/facts_2.safetensors", c->ref_dir);
	json_t *meta = NULL, *reply = NULL;
	struct outputs_cmp same = { 0 }, across = { 0 };
	fs_mkdirs(tmp, 0700);
	if (xchg_expect(c, c->seeds[0], first, XCHG_FACTS, &reply, err) || xchg_expect(c, c->seeds[0], again, 0, NULL, err) ||
	    xchg_expect(c, c->rot_seeds[0], other, 0, NULL, err))
		goto out;
	long long max_bytes = 0;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(reply, "outputs"), i, o)
		max_bytes += rt_numel(json_object_get(o, "shape")) * 8; /* an upper bound on any dtype's size */
	if (xchg_compare(c, first, again, &same, err) || xchg_compare(c, other, first, &across, err))
		goto out;
	meta = json_pack("{s:b, s:b, s:I, s:I, s:s}", "reproducible", same.bitwise, "input_independent",
			 across.readable && across.pass, "io_bytes", (json_int_t)rt_io_bytes(reply), "output_bytes_max",
			 (json_int_t)max_bytes, "problem", c->p->sha256);
	if (refcache_publish(tmp, entry, meta, err)) {
		json_decref(meta);
		meta = NULL;
	}
out:
	outputs_cmp_release(&same);
	outputs_cmp_release(&across);
	json_decref(reply);
	xchg_drop(c, first);
	xchg_drop(c, again);
	xchg_drop(c, other);
	fs_remove_tree(tmp); /* still there only when another evaluation published first */
	free(tmp);
	free(first);
	free(again);
	free(other);
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

/* What a block's frozen outputs may take on each side: each call's are kept until the round is checked
 * (a sealed memfd, or exported device memory), so a problem with large outputs times shorter blocks,
 * down to one call. */
#define SNAPSHOT_BUDGET (4LL << 30)

/* Timing input sets each worker holds: TIMING_SETS, or one for a problem whose data alone is beyond
 * TIMING_BIG_SET_BYTES. Each worker keeps its sets and draws one more for every fresh call, and two
 * workers share the device: three sets of a 6-8 GB level-1 problem on each side leave a 140 GB GPU
 * without room for the reference's own temporaries. One set costs only the rotation of addresses
 * between calls; every call still gets new values in place and is checked. */
int eval_timing_sets(const struct eval_ctx *c)
{
	return c->io_bytes > TIMING_BIG_SET_BYTES ? 1 : TIMING_SETS;
}

void eval_timing_plan(const struct eval_ctx *c, struct timing_plan *plan)
{
	const struct config *cfg = c->cfg;
	int gpu = strcmp(c->e->device, "cpu") != 0;
	long long fits = c->out_bytes > 0 ? SNAPSHOT_BUDGET / c->out_bytes : cfg->eval.timing_block;
	*plan = (struct timing_plan){
		.max_pairs = cfg->eval.perf_trials,
		.block = fits < 1 ? 1 : fits < cfg->eval.timing_block ? (int)fits : cfg->eval.timing_block,
		.prime_ms = gpu ? cfg->eval.timing_prime_ms : 0, .lead_us = eval_lead_us(c->e, cfg),
		.cpu = eval_timing_cpu(c->e, cfg), .gc = cfg->eval.timing_gc,
		.warmup_ms = cfg->eval.warmup_ms, .warmup_calls = cfg->eval.warmup_calls,
		.rse_target = cfg->eval.rse_target, .cap_s = cfg->eval.timing_cap_s, .nsets = eval_timing_sets(c),
		.seeds = &c->secret, .set_use = SEED_TIMING_SET, .call_use = SEED_TIMING_CALL,
		.base_seed = (uint32_t)cfg->eval.seed, .max_output_bytes = evalctx_max_output(c),
		.flush_bytes = eval_flush_bytes(c->e), .ref_inputs = c->ref_timing_inputs,
		.unpaired_mean = preset_unpaired_mean(cfg->eval.preset), .block_cap = cfg->checks.runtime_checks,
		.per_call = cfg->checks.runtime_checks,
	};
}

/* The GPU-only diagnostic's calls per side (timing.gpu_only): enough for a median, few enough to cost
 * little beside the timing's own calls. */
#define GPU_ONLY_CALLS 10

static int run_timing(struct eval_ctx *c, double deadline, struct sb_error *err)
{
	const struct config *cfg = c->cfg;
	int gpu = strcmp(c->e->device, "cpu") != 0;
	struct timing_plan plan;
	struct timed_check check;
	double w0 = proc_now();
	int wrc = evalctx_start_ref(c, err) || eval_load_ref(c, err);
	c->v->seconds.reference_worker += proc_now() - w0; /* 0 for a kept, loaded one */
	if (wrc)
		return -1;
	eval_timing_plan(c, &plan); /* its ref_inputs: drawn by this evaluation's early load, or NULL */
	plan.with_compiled = c->ref_compiled;
	plan.gpu_only_calls = gpu && plan.lead_us == 0 ? GPU_ONLY_CALLS : 0;
	plan.fresh = 1;
	plan.ship = !gpu;
	eval_timed_check(c, &check);
	plan.check = &check;
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
		eval_apply_process_factor(&c->v->timing, cfg->eval.process_factor == PF_ON);
		eval_widen_for_processes(&c->v->timing, eval_process_spread(cfg, gpu));
		eval_record_launch_heavy(c);
	}
	if (rc > 0) /* a timed call's outputs were wrong: the check said so in the verdict */
		return 1;
	if (rc) {
		if (!cand_failed)
			rc = sb_error_set(err, SB_EENV, "%s", msg);
		else if (f.kind == WF_TIMEOUT)
			verdict_fail(c->v, V_TIMEOUT, "no answer within the %d s limit while timing", cfg->eval.timeout_s);
		else
			verdict_fail(c->v, V_RUNTIME_ERROR, "%s", msg);
		free(msg);
		return cand_failed ? 1 : -1;
	}
	return 0;
}

/* ---------- H18: shapes other than the problem's (eval.extra_shapes) ---------- */

/* "at the problem's shape constants halved ({"DIM":[4096,2048]}), the candidate failed: why; ..." */
static void shapes_finding(struct eval_ctx *c, const char *consts, const char *what, const char *why)
{
	char *msg = xstrfmt("at the problem's shape constants halved (%s), %s: %.300s; read sizes from the inputs "
			    "rather than writing the problem's in", consts, what, why);
	if (verdict_add_finding(c->v, c->cfg->checks.policy, "H18", "%s", msg)->severity == SEV_REJECT)
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
	uint32_t seed = eval_seed(&c->secret, SEED_SHAPES, 0);
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
	return e->profile && strcmp(e->device, "cpu") && cfg->eval.profile &&
	       (cfg->eval.perf_trials > 0 || e->profile_only);
}

/* The caller's profile step (eval_env.profile), after the timing loop so that it never touches the speedup. */
static void run_profile(struct eval_ctx *c, double deadline)
{
	struct eval_live live = { .worker = &c->cand, .dir = c->cand_dir, .ext_dir = c->ext_dir,
				  .nsets = eval_timing_sets(c), .seeds = &c->secret, .src = c->src, .deadline = deadline };
	c->e->profile(c->e, c->cfg, &live, c->v);
}

/* A failed allocation under the candidate's memory limit (proc/proc.h, address_space) says so: the
 * candidate asked for more than it may use, which is its verdict, told plainly. */
static void memory_verdict(struct verdict *v, long long limit)
{
	static const char *const markers[] = { "MemoryError", "can't allocate memory", "std::bad_alloc",
						"Cannot allocate memory", "out of memory", NULL };
	if (!limit || v->status != V_RUNTIME_ERROR || !v->message)
		return;
	for (const char *const *m = markers; *m; m++)
		if (strstr(v->message, *m) || (v->detail && strstr(v->detail, *m))) {
			char *msg = xstrfmt("the candidate ran out of the memory it may use (%.1f GiB, three quarters of the "
					    "machine's): %s", (double)limit / (1 << 30), v->message);
			free(v->message);
			v->message = msg;
			return;
		}
}

/* ---------- the whole evaluation ---------- */

/* The header without the candidate's digest: evaluate() takes it from the bytes it read. */
static void verdict_header(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			   const char *candidate_path, struct verdict *v)
{
	struct eval_ctx ctx = { .e = e, .cfg = cfg, .p = p, .v = v };
	struct eval_ctx *c = &ctx;
	snprintf(v->problem, sizeof(v->problem), "L%d/%d", c->p->level, c->p->id);
	memcpy(v->problem_sha256, c->p->sha256, 65);
	v->candidate_path = xstrdup(candidate_path);
	snprintf(v->settings.preset, sizeof(v->settings.preset), "%s", preset_name(c->cfg->eval.preset));
	v->settings.trials = c->cfg->eval.trials;
	v->settings.robust_trials = c->cfg->eval.robust_trials;
	v->settings.perf_trials = c->cfg->eval.perf_trials;
	v->settings.seed = c->cfg->eval.seed;
	v->settings.timing_lead_us = eval_lead_us(c->e, c->cfg);
	v->settings.timing_gc = c->cfg->eval.timing_gc;
	v->settings.hash_seed = c->e->hash_seed;
	snprintf(v->settings.tolerance, sizeof(v->settings.tolerance), "%s", tolerance_name(c->cfg->eval.tolerance));
	snprintf(v->settings.exchange, sizeof(v->settings.exchange), "%s", xchg_shared(c) ? "shared" : "files");
	v->settings.identity = config_identity(c->cfg);
	snprintf(v->env.device, sizeof(v->env.device), "%s", c->e->device);
	snprintf(v->env.gpu, sizeof(v->env.gpu), "%s", c->e->gpu);
	snprintf(v->env.sm, sizeof(v->env.sm), "%s", c->e->sm);
	snprintf(v->env.torch, sizeof(v->env.torch), "%s", c->e->torch);
	snprintf(v->env.torch_cuda, sizeof(v->env.torch_cuda), "%s", c->e->torch_cuda);
	snprintf(v->env.python, sizeof(v->env.python), "%s", c->e->python_version);
}

void eval_verdict_header(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			 const char *candidate_path, struct verdict *v)
{
	verdict_header(e, cfg, p, candidate_path, v);
	if (sha256_file_hex(candidate_path, v->candidate_sha256))
		v->candidate_sha256[0] = '\0';
}

uint32_t *eval_trial_seeds(const struct config *cfg, const struct eval_seeds *secret)
{
	uint32_t *s = xcalloc((size_t)cfg->eval.trials + 2, sizeof(uint32_t));
	for (int k = 0; k < cfg->eval.trials; k++)
		s[k] = eval_seed(secret, SEED_TRIAL, (uint32_t)k);
	for (int k = 0; k < 2; k++) /* the rotation's two sets */
		s[cfg->eval.trials + k] = eval_seed(secret, SEED_ROTATION, (uint32_t)k);
	return s;
}

char *eval_refcache_entry(const struct eval_env *e, const struct config *cfg, const struct problem *p)
{
	struct refcache_key key = { p->sha256, cfg->eval.seed, e->gpu[0] ? e->gpu : "cpu", e->torch, cfg->eval.tf32 };
	return refcache_dir(e->cache_root, &key);
}

int evaluate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate_path,
	     int own_ref, struct verdict *v, struct sb_error *err)
{
	struct candidate_source src;
	struct eval_ctx c = { .e = e, .cfg = cfg, .p = p, .v = v, .src = &src, .own_ref = own_ref };
	double t0 = proc_now();
	json_t *meta = NULL, *reply;
	int rc;

	verdict_init(v);
	verdict_header(e, cfg, p, candidate_path, v);
	sb_trace("eval: %s on %s", candidate_path, p->path);
	/* 0. static checks: a reject finding stops here, before any Python starts (DESIGN §5.1); an answer that
	 * is no candidate at all (empty, no ModelNew) is format_error before them. The file is read once, and
	 * its digest is of those bytes: the worker's copy must match what was checked. */
	candidate_source_load(&src, candidate_path);
	if (!src.read_errno)
		sha256_hex(src.text.buf, src.text.len, v->candidate_sha256);
	int rejected = eval_format_check(e, &src, v) || static_judge(cfg, p->path, &src, v) ||
		       eval_device_check(e, cfg, &src, v);
	v->seconds.static_checks = proc_now() - t0;
	if (rejected) {
		candidate_source_release(&src);
		v->seconds.total = proc_now() - t0;
		return 0;
	}
	/* the fork server imports torch while the reference's outputs are found or made */
	eval_fork_server(e);
	/* 1. the build: by the trusted builder, published under the key of this file's bytes (build.c);
	 * the candidate's worker gets a private copy of it */
	double b0 = proc_now();
	int built = 0;
	enum verdict_status bstatus;
	char *bmsg = NULL, *bdetail = NULL, *build_dir = eval_build_dir(e, cfg, &src);
	json_t *builds = NULL;
	if ((rc = eval_build(e, cfg, p, &src, &built, &bstatus, &bmsg, &bdetail, &builds, err)))
		goto out;
	if (!built) {
		verdict_fail(v, bstatus, "%s", bmsg ? bmsg : "build failed");
		v->detail = bdetail;
		free(bmsg);
		v->seconds.build = proc_now() - b0;
		goto judged_by_build;
	}
	double build_s = proc_now() - b0;
	/* what the build imports, before any of its code runs */
	int brc = build_dir && eval_build_published(build_dir) ? static_judge_build(cfg, build_dir, v, err) : 0;
	if (brc) {
		if (builds)
			eval_keep_builds(v, builds);
		v->seconds.build = build_s;
		rc = brc < 0 ? -1 : 0;
		goto judged_by_build;
	}
	if ((rc = evalctx_dirs(&c, 1, err)))
		goto out;
	evalctx_env(&c, 0);
	/* the input seeds: this evaluation's own secret, drawn from the kernel's CSPRNG (or an earlier
	 * verdict's, to replay it), written into the verdict; no worker learns a seed before it draws */
	if ((rc = e->replay_seeds[0] ? eval_seeds_parse(&c.secret, e->replay_seeds, err) : eval_seeds_draw(&c.secret, err)))
		goto out;
	eval_seeds_hex(&c.secret, v->seeds_secret);
	v->seeds_replayed = c.secret.replayed;
	c.seeds = eval_trial_seeds(cfg, &c.secret);
	for (int k = 0; k < 2; k++)
		c.rot_seeds[k] = c.seeds[cfg->eval.trials + k];

	/* 1. the reference: the trusted worker computes every expected output of this evaluation; what the
	 * problem is (its outputs' bytes, whether it repeats itself) comes from the cache or is found now */
	char *entry = eval_refcache_entry(e, cfg, p);
	c.ref_entry = entry; /* before the reference's `load`: what it records decides the process factor */
	c.launch_heavy_recorded = eval_recorded_launch_heavy(entry);
	meta = refcache_lookup(entry);
	v->reference_cached = meta != NULL;
	/* starting it waits for the fork server's torch import where this evaluation is the first: seconds of
	 * the reference worker's, which the stages must account for */
	double w0 = proc_now();
	if ((rc = evalctx_start_ref(&c, err)))
		goto out_entry;
	if (meta)
		load_ref_begin(&c);
	v->seconds.reference_worker += proc_now() - w0;
	if (!meta) {
		double r0 = proc_now();
		if ((rc = eval_load_ref(&c, err)) || !(meta = fill_problem_facts(&c, entry, err))) {
			rc = rc ? rc : -1;
			goto out_entry;
		}
		v->seconds.reference = proc_now() - r0;
	}
	c.out_bytes = json_integer_value(json_object_get(meta, "output_bytes_max"));
	c.io_bytes = json_integer_value(json_object_get(meta, "io_bytes"));
	rt_session_init(&c.rt, cfg, cfg->eval.trials, !json_is_false(json_object_get(meta, "reproducible")), v);

	/* 2. the candidate, in a fresh sandboxed process (started ahead by the previous evaluation, or now) */
	double deadline = proc_now() + cfg->eval.timeout_s;
	b0 = proc_now() - build_s;
	if (evalctx_adopt(&c, deadline) == 0)
		v->candidate_worker_prestarted = 1;
	else if ((rc = evalctx_start_cand(&c, err)))
		goto out_entry;
	v->candidate_worker_forked = c.cand.forked;
	sandbox_describe(&c.sb, &v->sandbox);
	rt_observe_process(&c.rt, c.cand.h.pid, 0, "before its code ran"); /* the baseline */
	/* before any of the candidate's code runs: the reference timed in its process (procfactor.c); its
	 * seconds go to the timing and to the reference worker, not to the build */
	double pf0 = proc_now();
	if ((rc = eval_process_factor(&c, deadline, err)))
		goto out_entry;
	double factor_wall = proc_now() - pf0;
	eval_ref_compile_begin(&c);
	int crc = build_dir && eval_build_published(build_dir) ? fs_copy_tree(build_dir, c.ext_dir) : 0;
	if (crc) {
		rc = sb_error_set(err, SB_EIO, "cannot copy the build %s for the candidate's worker: %s", build_dir, strerror(-crc));
		goto out_entry;
	}
	char *copy = evalctx_candidate_copy(&c, candidate_path, v->candidate_sha256, err);
	if (!copy) {
		rc = -1;
		goto out_entry;
	}
	/* the record of ATen operators (the CPU), installed before the candidate's import */
	if ((rc = rt_oprec_start(&c.rt, e, &c.cand, c.cand_dir, deadline, err))) {
		free(copy);
		goto out_entry;
	}
	json_t *load = eval_load_request(e, cfg, p, copy, c.ext_dir, 0, 0);
	free(copy);
	json_object_set_new(load, "file_bytes", json_integer(evalctx_cand_file_bytes(&c)));
	if (eval_cand_ask(&c.cand, load, &reply, deadline, v,
		     "building and constructing ModelNew", cfg->eval.timeout_s) == 0) {
		eval_keep_builds(v, builds ? builds : json_object_get(reply, "builds"));
		rt_observe_load(&c.rt, reply);
		rt_observe_process(&c.rt, c.cand.h.pid, c.ref.started ? c.ref.h.pid : 0, "after its import and construction");
		json_decref(reply);
		/* the whole wait: worker start-up and imports, builds (each also in builds[]), construction */
		v->seconds.build = proc_now() - b0 - factor_wall;
		/* the next candidate's worker imports torch while this one runs its trials; so does the next
		 * problem's reference worker */
		evalctx_prestart(&c);
		evalctx_prestart_ref(&c);
		double c0 = proc_now();
		/* a replaced harness function at import (H08) could fake everything that follows */
		rc = rt_apply(&c.rt, v) ? 1 : eval_run_trials(&c, deadline, err);
		if (rc == 0) {
			eval_judge_trials(&c);
			rt_apply(&c.rt, v);
			struct rt_io io = eval_runtime_io(&c, deadline);
			rc = rt_after_trials(&c.rt, &io, v, err);
			rt_observe_process(&c.rt, c.cand.h.pid, c.ref.started ? c.ref.h.pid : 0, "after the correctness calls");
			rt_apply(&c.rt, v);
		}
		v->seconds.correctness = proc_now() - c0;
		if (rc < 0)
			goto out_entry;
		/* the robust trials only once KernelBench's own inputs have passed: what they find is a finding */
		double r0 = proc_now();
		int spent = 0;
		if (rc == 0 && v->status == V_PASS && !v->message)
			spent = eval_run_robust(&c, deadline, err);
		else if (cfg->eval.robust_trials > 0)
			snprintf(v->robust.note, sizeof(v->robust.note), "not run: the verdict (%s) was decided before them",
				 verdict_status_name(v->status));
		v->seconds.robust = proc_now() - r0;
		if (spent < 0) {
			rc = -1;
			goto out_entry;
		}
		/* a worker that failed on the robust inputs is asked nothing more: it may be dead, its CUDA context
		 * broken, and the status is what KernelBench's inputs decided */
		if (rc == 0 && !spent) {
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
				struct rt_io io = eval_runtime_io(&c, deadline);
				if (rc == 0 && v->timing.ran && rt_after_timing(&c.rt, &io, meta, v) == 0) {
					rt_observe_process(&c.rt, c.cand.h.pid, c.ref.started ? c.ref.h.pid : 0, "after the timed calls");
					rt_apply(&c.rt, v);
				}
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
		/* a flaw of the problem, not the candidate's doing: a flag whatever the policy says of H15 */
		if (v->status == V_PASS && json_is_true(json_object_get(meta, "input_independent")))
			findings_add(&v->findings, "H15",
				     "the reference's output for one input set passes as its output for another: the "
				     "problem's answer barely depends on its inputs (a constant, or values below the "
				     "tolerance), so a pass here proves little (stitchbench audit)")->flag_only = 1;
		if (v->status == V_PASS) {
			rt_oprec_judge(&c.rt, v);
			rt_apply(&c.rt, v);
		}
		rt_finish(&c.rt, v);
		if (v->status == V_PASS && !v->message && spent)
			v->message = xstrfmt("all %d correctness trials passed; not timed: the candidate's worker failed on "
					     "the robust trials' inputs (H17)", cfg->eval.trials);
		else if (v->status == V_PASS && !v->message)
			v->message = v->timing.ran ? xstrfmt("all %d correctness trials and all %zu timed calls passed",
							     cfg->eval.trials, v->timing.checked_calls)
						   : xstrfmt("all %d correctness trials passed", cfg->eval.trials);
	}
	memory_verdict(v, c.sb.address_space);
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
	json_decref(builds);
	free(build_dir);
	candidate_source_release(&src);
	double f0 = proc_now();
	evalctx_retire(&c, &v->log_tail);
	v->seconds.finish = proc_now() - f0;
	v->seconds.total = proc_now() - t0;
	sb_trace("eval: done, %.3f s", v->seconds.total);
	return rc;

judged_by_build: /* a verdict from the build alone: no worker of this evaluation started */
	json_decref(builds);
	free(build_dir);
	candidate_source_release(&src);
	v->seconds.total = proc_now() - t0;
	return rc;
}
