/* rtchecks.c - runs the runtime hack checks of one evaluation: it gathers the facts of each candidate call,
 * makes the extra calls the rules need, hands everything to harness/checks/runtime.c and floor.c, and
 * turns what they find into verdict findings with the policy's severity. */
#include "rtchecks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref/ref.h"
#include "eval_int.h"
#include "check/check.h"
#include "proc/proc.h"

/* ---------- the report ---------- */

/* runtime.operators: null where no record was asked for (a GPU, eval.profile off) */
static json_t *operators_json(const struct rt_report *r)
{
	const struct rt_operators *o = &r->ops;
	if (!o->recorded)
		return *r->ops_note ? json_pack("{s:b, s:s}", "recorded", 0, "note", r->ops_note) : json_null();
	json_t *top = json_array();
	for (size_t i = 0; i < o->ntop; i++)
		json_array_append_new(top, json_pack("{s:s, s:f, s:I}", "name", o->top[i].name, "ms", o->top[i].ms, "calls",
						     (json_int_t)o->top[i].calls));
	return json_pack("{s:b, s:I, s:I, s:f, s:o, s:f, s:I, s:f, s:I, s:o, s:I, s:I, s:I}", "recorded", 1, "calls",
			 (json_int_t)o->windows, "calls_expected", (json_int_t)o->expected, "calls_ms", o->window_ms,
			 "reference_call_ms", o->ref_call_ms > 0 ? json_real(o->ref_call_ms) : json_null(),
			 "compute_ms", o->compute_ms, "compute_operators", (json_int_t)o->compute_calls, "other_ms",
			 o->other_ms, "other_operators", (json_int_t)o->other_calls, "top", top, "unchecked",
			 (json_int_t)o->unchecked, "lost", (json_int_t)o->lost, "malformed", (json_int_t)o->malformed);
}

json_t *rt_report_json(const struct rt_report *r)
{
	json_t *o = json_object(), *outs = json_array(), *skipped = json_array();
	for (size_t i = 0; i < r->noutputs; i++) {
		const struct rt_output *x = &r->outputs[i];
		char name[24];
		snprintf(name, sizeof(name), "out%zu", i);
		json_array_append_new(outs, json_pack("{s:s, s:s, s:b, s:s, s:b, s:s}", "name", name, "type", x->type, "exact",
						      x->exact, "layout", x->layout, "contiguous", x->contiguous, "device",
						      x->device));
	}
	json_object_set_new(o, "outputs", outs);
	json_object_set_new(o, "threads", r->threads_known
			    ? json_pack("{s:i, s:i, s:i, s:i}", "python_before", r->py_before, "python_after", r->py_after,
					"os_before", r->os_before, "os_after", r->os_after) : json_null());
	json_object_set_new(o, "idle", r->idle_wall_ms > 0
			    ? json_pack("{s:f, s:f}", "cpu_ms", r->idle_cpu_ms, "wall_ms", r->idle_wall_ms) : json_null());
	json_object_set_new(o, "determinism", *r->determinism ? json_string(r->determinism) : json_null());
	json_object_set_new(o, "rotation", *r->rotation ? json_string(r->rotation) : json_null());
	json_object_set_new(o, "poison_bytes", r->poison_bytes >= 0 ? json_integer(r->poison_bytes) : json_null());
	if (r->floor_present) {
		const struct floor_result *f = &r->floor;
		json_t *fl = json_object();
		json_object_set_new(fl, "bytes", json_real(r->floor_bytes));
		json_object_set_new(fl, "peak_bytes_per_s", r->peak_bytes_per_s > 0 ? json_real(r->peak_bytes_per_s) : json_null());
		json_object_set_new(fl, "peak_cached", json_boolean(r->peak_cached));
		json_object_set_new(fl, "floor_us", f->floor_us > 0 ? json_real(f->floor_us) : json_null());
		json_object_set_new(fl, "time_us", r->floor_time_us > 0 ? json_real(r->floor_time_us) : json_null());
		json_object_set_new(fl, "time", json_string(r->floor_gpu_only ? "gpu_only" : "end_to_end"));
		json_object_set_new(fl, "judged", json_boolean(f->judged));
		json_object_set_new(fl, "below", json_boolean(f->below));
		json_object_set_new(fl, "fast", json_boolean(f->fast));
		json_object_set_new(fl, "skipped", *f->skipped ? json_string(f->skipped) : json_null());
		json_object_set_new(o, "floor", fl);
	} else {
		json_object_set_new(o, "floor", json_null());
	}
	json_object_set_new(o, "operators", operators_json(r));
	for (size_t i = 0; i < r->skipped.nr; i++)
		json_array_append_new(skipped, json_string(r->skipped.v[i]));
	json_object_set_new(o, "skipped", skipped);
	return o;
}

void rt_report_summary(const struct rt_report *r, struct strbuf *out)
{
	strbuf_addstr(out, "  runtime checks:");
	if (r->noutputs)
		strbuf_addf(out, " outputs %s%s", r->outputs[0].type, r->noutputs > 1 ? ", ..." : "");
	if (*r->determinism)
		strbuf_addf(out, "; second run %s", r->determinism);
	if (*r->rotation)
		strbuf_addf(out, "; rotation %s", r->rotation);
	if (r->floor_present && r->floor.judged)
		strbuf_addf(out, "; floor %.2f us", r->floor.floor_us);
	strbuf_addstr(out, "\n");
	for (size_t i = 0; i < r->skipped.nr; i++)
		strbuf_addf(out, "    not checked: %s\n", r->skipped.v[i]);
}

void rt_report_release(struct rt_report *r)
{
	free(r->outputs);
	strvec_clear(&r->skipped);
	rt_operators_release(&r->ops);
	memset(r, 0, sizeof(*r));
}

/* ---------- the session ---------- */

void rt_session_init(struct rt_session *s, const struct config *cfg, int ntrials, int reproducible, struct verdict *v)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->on = cfg->checks.runtime_checks;
	if (!s->on)
		return;
	s->ntrials = (size_t)ntrials;
	s->cand_digest = xcalloc(s->ntrials + 1, sizeof(uint64_t));
	s->ref_digest = xcalloc(s->ntrials + 1, sizeof(uint64_t));
	s->digest_ok = xcalloc(s->ntrials + 1, sizeof(int));
	s->trial_pass = xcalloc(s->ntrials + 1, sizeof(int));
	s->ref = xcalloc(s->ntrials + 1, sizeof(*s->ref));
	s->nref = s->ntrials;
	s->ref_reproducible = reproducible;
	v->runtime = xcalloc(1, sizeof(*v->runtime));
	s->report = v->runtime;
	s->report->poison_bytes = -1;
}

void rt_session_release(struct rt_session *s)
{
	for (size_t i = 0; i < s->ncalls; i++) {
		rt_call_release(&s->calls[i]);
		free(s->names[i]);
	}
	for (size_t i = 0; i < s->nref; i++)
		rt_call_release(&s->ref[i]);
	free(s->calls);
	free(s->names);
	free(s->ref);
	free(s->cand_digest);
	free(s->ref_digest);
	free(s->digest_ok);
	free(s->trial_pass);
	findings_release(&s->found);
	if (s->ops_open)
		close(s->ops_fd);
	strbuf_release(&s->ops_pending);
	memset(s, 0, sizeof(*s));
}

void rt_observe_ref(struct rt_session *s, size_t k, json_t *reply)
{
	if (!s->on || k >= s->nref)
		return;
	rt_call_release(&s->ref[k]);
	rt_call_parse(reply, &s->ref[k]);
}

static struct rt_call *add_call(struct rt_session *s, json_t *reply, char *name)
{
	s->calls = xrealloc(s->calls, (s->ncalls + 1) * sizeof(*s->calls));
	s->names = xrealloc(s->names, (s->ncalls + 1) * sizeof(*s->names));
	struct rt_call *c = &s->calls[s->ncalls];
	rt_call_parse(reply, c);
	s->names[s->ncalls++] = name;
	return c;
}

void rt_observe_load(struct rt_session *s, json_t *reply)
{
	if (!s->on)
		return;
	struct rt_call c;
	rt_call_parse(reply, &c);
	rt_rule_patched(&c.patched, "while the candidate was imported and constructed", &s->found);
	rt_call_release(&c);
}

void rt_observe_process(struct rt_session *s, pid_t pid, pid_t ref_pid, const char *when)
{
	struct proc_view now, ref = { 0 };
	if (!s->on)
		return;
	procwatch_read(pid, &now, 1);
	if (!s->base.known) {
		s->base = now;
		return;
	}
	if (!now.known)
		return;
	if (ref_pid > 0)
		procwatch_read(ref_pid, &ref, 0);
	/* Signals 32 and 33 are glibc's: it installs its handlers there when a process starts threads. The
	 * sandbox's seccomp filter (sandbox.c) refuses the candidate's process, glibc included, every new action
	 * for them, so a bit there is what was installed before its code ran and is judged like any other.
	 * Without the filter (STITCHBENCH_SANDBOX_DISABLE) the bits cannot tell glibc's handler from one put
	 * there by a raw rt_sigaction, and they are left out, with the verdict saying so. */
	uint64_t libc = (1ULL << (32 - 1)) | (1ULL << (33 - 1));
	int off = sandbox_disabled_from_env() & (SANDBOX_NO_SIGLOCK | SANDBOX_NO_ALL);
	if (now.seccomp == 2 && !off)
		libc = 0;
	else if (!s->siglock_noted) {
		s->siglock_noted = 1;
		strvec_push(&s->report->skipped, "H06 (signals 32 and 33): the worker runs without the seccomp filter "
			    "that keeps them glibc's, so a handler there is not judged");
	}
	/* the reference worker's handlers are the harness's own (Python's, the CUDA driver's); glibc's 32 and 33
	 * are not among what it excuses where the filter holds */
	uint64_t excused = ref.known ? ref.caught & ~((1ULL << (32 - 1)) | (1ULL << (33 - 1))) : 0;
	uint64_t added = now.caught & ~s->base.caught & ~excused & ~libc;
	char names[256];
	if (added)
		procwatch_signal_names(added, names, sizeof(names));
	rt_rule_process(added ? names : NULL, now.others, (int)now.first_other, when, &s->found);
}

/* The facts of one call: kinds of its outputs, aliasing, replaced functions. */
static void judge_call(struct rt_session *s, const struct rt_call *c, const struct rt_call *ref, const char *device,
		       const char *name)
{
	rt_rule_plain_outputs(c, ref, device, name, &s->found);
	rt_rule_alias(c, ref, name, &s->found);
	char *when = xstrfmt("during %s", name);
	rt_rule_patched(&c->patched, when, &s->found);
	free(when);
}

void rt_observe_trial(struct rt_session *s, size_t k, json_t *reply, const struct outputs_cmp *cmp, const char *device)
{
	if (!s->on || k >= s->ntrials)
		return;
	const struct rt_call *c = add_call(s, reply, xstrfmt("trial %zu", k));
	judge_call(s, c, k < s->nref ? &s->ref[k] : NULL, device, s->names[s->ncalls - 1]);
	struct rt_report *r = s->report;
	if (k == 0 && c->nout) {
		r->outputs = xcalloc(c->nout, sizeof(*r->outputs));
		memcpy(r->outputs, c->out, c->nout * sizeof(*c->out));
		r->noutputs = c->nout;
	}
	if (c->has_threads) {
		if (!r->threads_known) {
			r->py_before = c->py_before;
			r->os_before = c->os_before;
		}
		r->threads_known = 1;
		r->py_after = c->py_after;
		r->os_after = c->os_after;
	}
	if (!cmp || !cmp->readable)
		return;
	s->cand_digest[k] = cmp->digest_actual;
	s->ref_digest[k] = cmp->digest_expected;
	s->digest_ok[k] = 1;
	s->trial_pass[k] = cmp->pass;
	for (size_t i = 0; i < cmp->noutputs; i++)
		rt_rule_zero_output(cmp->zero_actual[i], cmp->zero_expected[i], cmp->outputs[i].cmp.pass,
				    cmp->outputs[i].name, s->names[s->ncalls - 1], &s->found);
}

/* ---------- the extra calls ---------- */

static json_t *run_cmd(const struct rt_io *io, uint32_t seed, const char *out, long long poison)
{
	json_t *r = json_pack("{s:s, s:I, s:s, s:I}", "cmd", "run", "seed", (json_int_t)seed, "out", out,
			      "max_output_bytes", (json_int_t)io->max_output_bytes);
	if (poison > 0)
		json_object_set_new(r, "poison_bytes", json_integer(poison));
	xchg_mark(io->ctx, r, 0);
	return r;
}

/* H11: new values through the same tensors. Returns 0, 1 (the candidate failed: verdict set), -1. */
static int rotation(struct rt_session *s, const struct rt_io *io, struct verdict *v, struct sb_error *err)
{
	json_t *reply;
	char *out[2] = { xstrfmt("%s/rot_0.safetensors", io->cand_dir), xstrfmt("%s/rot_1.safetensors", io->cand_dir) };
	json_t *req = json_pack("{s:s, s:[I, I], s:[s, s], s:I}", "cmd", "rotate", "seeds", (json_int_t)io->rot_seeds[0],
				(json_int_t)io->rot_seeds[1], "out", out[0], out[1], "max_output_bytes",
				(json_int_t)io->max_output_bytes);
	xchg_mark(io->ctx, req, 0);
	if (eval_cand_ask(io->cand, req, &reply, io->deadline, v, "checking rotated inputs", io->timeout_s)) {
		free(out[0]);
		free(out[1]);
		return 1;
	}
	static const char *const names[2] = { "the rotation's first call", "the rotation's second call" };
	struct outputs_cmp cmp[2];
	int got = 0, rc = 0;
	/* one call's outputs at a time, taken (shared), compared and dropped: a large problem's memory holds
	 * one of them, not both */
	for (int i = 0; i < 2; i++) {
		json_t *call = json_array_get(json_object_get(reply, "calls"), (size_t)i);
		const struct rt_call *c = add_call(s, call, xstrdup(names[i]));
		judge_call(s, c, s->nref ? &s->ref[0] : NULL, io->device, names[i]);
		char why[400];
		if ((rc = xchg_take(io->ctx, json_object_get(call, "shared"), out[i], why, sizeof(why), err)) != 0) {
			if (rc > 0)
				verdict_fail(v, V_INCORRECT, "checking rotated inputs: %s", why);
			break; /* 1: the candidate's fault (the verdict says how); -1: the reference worker's */
		}
		int shared = xchg_shared(io->ctx);
		char *refpath = shared ? xstrfmt("ref/rot_%d", i) : xstrfmt("%s/rot_%d.safetensors", io->ref_dir, i);
		rc = xchg_expect(io->ctx, io->rot_seeds[i], refpath, 0, NULL, err);
		if (rc == 0)
			rc = xchg_compare(io->ctx, refpath, out[i], &cmp[i], err);
		xchg_drop(io->ctx, refpath);
		if (shared)
			xchg_drop(io->ctx, out[i]);
		free(refpath);
		if (rc) {
			rc = -1;
			break;
		}
		got++;
	}
	json_decref(reply);
	if (got == 2) {
		if (!cmp[0].readable || !cmp[0].pass) {
			/* fresh tensors and a fresh seed: a plain wrong answer, not evidence of caching */
			verdict_fail(v, V_INCORRECT, "an extra input set (seed %u, drawn for the rotation check) gave a wrong "
				     "output: %s", io->rot_seeds[0], outputs_cmp_detail(&cmp[0]));
			snprintf(s->report->rotation, sizeof(s->report->rotation), "%s", "wrong");
		} else {
			int same = cmp[1].readable && cmp[0].digest_actual == cmp[1].digest_actual;
			int ref_same = cmp[0].digest_expected == cmp[1].digest_expected;
			const char *state = rt_rule_rotation(cmp[1].readable && cmp[1].pass, same, ref_same,
							     outputs_cmp_detail(&cmp[1]), &s->found);
			snprintf(s->report->rotation, sizeof(s->report->rotation), "%s", state);
		}
	}
	for (int i = 0; i < got; i++)
		outputs_cmp_release(&cmp[i]);
	for (int i = 0; i < 2; i++) {
		xchg_drop(io->ctx, out[i]);
		free(out[i]);
	}
	return rc;
}

/* H19: the first trial's inputs once more, after every other call; compared with its first output. On a
 * GPU, freed device memory is filled with NaN first (H09): an output that now holds NaN read memory the
 * call never wrote, which the first time happened to hold the right values. */
static int second_run(struct rt_session *s, const struct rt_io *io, struct verdict *v, struct sb_error *err)
{
	json_t *reply;
	char *out = xstrfmt("%s/again_0.safetensors", io->cand_dir), *first = xstrfmt("%s/trial_0.safetensors", io->cand_dir);
	int rc = eval_cand_ask(io->cand, run_cmd(io, io->seeds[0], out, io->poison_bytes), &reply, io->deadline, v,
			       "running the first trial's inputs a second time", io->timeout_s);
	char why[400];
	int trc = rc == 0 ? xchg_take(io->ctx, json_object_get(reply, "shared"), out, why, sizeof(why), err) : 0;
	if (trc) {
		json_decref(reply);
		if (trc > 0)
			verdict_fail(v, V_INCORRECT, "the second run of trial 0: %s", why);
		rc = trc < 0 ? -1 : 1;
		xchg_drop(io->ctx, first);
		free(out);
		free(first);
		return rc;
	}
	if (rc == 0) {
		const struct rt_call *c = add_call(s, reply, xstrdup("the second run of trial 0"));
		judge_call(s, c, s->nref ? &s->ref[0] : NULL, io->device, s->names[s->ncalls - 1]);
		json_decref(reply);
		struct outputs_cmp cmp;
		/* the candidate's own first output is the expected one: its file was read and hashed already,
		 * so a candidate that rewrote it since would not match the digest kept in memory */
		if (xchg_compare(io->ctx, first, out, &cmp, err) == 0) {
			int kept = cmp.digest_expected == s->cand_digest[0];
			int within = kept && cmp.readable && cmp.pass;
			const char *state = "differs";
			if (!within && kept && io->poison_bytes > 0 && cmp.nan_actual)
				rt_rule_poison(1, s->trial_pass[0], io->seeds[0], &s->found);
			if (!findings_has(&s->found, "H09"))
				state = rt_rule_determinism(kept && cmp.bitwise, within, io->seeds[0], kept ? outputs_cmp_detail(&cmp)
							    : "the first output's file changed after it was checked", &s->found);
			snprintf(s->report->determinism, sizeof(s->report->determinism), "%s", state);
			outputs_cmp_release(&cmp);
		} else {
			/* the first output is the candidate's file: unreadable now means it was tampered with */
			rt_rule_determinism(0, 0, io->seeds[0], "the first output's file can no longer be read", &s->found);
			snprintf(s->report->determinism, sizeof(s->report->determinism), "differs");
		}
	} else {
		rc = 1;
	}
	xchg_drop(io->ctx, out);
	xchg_drop(io->ctx, first);
	free(out);
	free(first);
	return rc;
}

int rt_after_trials(struct rt_session *s, const struct rt_io *io, struct verdict *v, struct sb_error *err)
{
	if (!s->on)
		return 0;
	rt_oprec_drain(s); /* the record's pipe empties before more calls fill it */
	struct rt_report *r = s->report;
	int gpu = strcmp(io->device, "cpu") != 0;
	r->poison_bytes = gpu && io->poison_bytes > 0 ? io->poison_bytes : -1;
	if (!gpu)
		strvec_push(&r->skipped, "H09: freed memory is poisoned on a GPU only (the CPU allocator keeps no freed "
			    "blocks to fill)");
	rt_rule_same_output(s->cand_digest, s->ref_digest, s->digest_ok, io->seeds, s->ntrials, &s->found);
	if (s->ntrials < 2)
		strvec_push(&r->skipped, "H11 (same output for different inputs): needs 2 or more correctness trials");

	int rc = 0;
	int all_ran = s->ntrials > 0 && v->ntrials == s->ntrials && s->digest_ok[0];
	if (v->status == V_PASS && !findings_has(&s->found, "H08"))
		rc = rotation(s, io, v, err);
	else if (rc == 0)
		strvec_push(&r->skipped, "H11 (rotation): runs only when every trial passed");
	if (rc == 0 && !s->ref_reproducible)
		strvec_push(&r->skipped, "H19: the reference itself gives other outputs for the same seed, so a second "
			    "run proves nothing (stitchbench audit calls the problem nondeterministic)");
	else if (rc == 0 && all_ran && (v->status == V_PASS || v->status == V_INCORRECT))
		rc = second_run(s, io, v, err);
	else if (rc == 0)
		strvec_push(&r->skipped, "H19: the trials did not all run");
	if (rc >= 0) {
		const char **names = xcalloc(s->ncalls + 1, sizeof(*names));
		for (size_t i = 0; i < s->ncalls; i++)
			names[i] = s->names[i];
		rt_rule_threads(s->calls, s->ncalls, names, &s->found);
		free(names);
		if (s->ncalls) {
			const struct rt_call *last = &s->calls[s->ncalls - 1];
			if (last->has_threads) {
				r->py_after = last->py_after;
				r->os_after = last->os_after;
			}
		}
	}
	return rc;
}

/* ---------- after timing ---------- */

static long long dtype_size(const char *dtype)
{
	static const struct { const char *name; int size; } sizes[] = {
		{ "torch.float64", 8 }, { "torch.int64", 8 }, { "torch.complex64", 8 }, { "torch.complex128", 16 },
		{ "torch.float32", 4 }, { "torch.int32", 4 }, { "torch.float16", 2 }, { "torch.bfloat16", 2 },
		{ "torch.int16", 2 }, { "torch.int8", 1 }, { "torch.uint8", 1 }, { "torch.bool", 1 },
	};
	for (size_t i = 0; dtype && i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(dtype, sizes[i].name))
			return sizes[i].size;
	return 4;
}

long long rt_numel(json_t *shape)
{
	long long n = 1;
	size_t d;
	json_t *dim;
	json_array_foreach(shape, d, dim)
		n *= json_integer_value(dim);
	return n;
}

long long rt_io_bytes(json_t *reply)
{
	long long bytes = 0;
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(reply, "inputs_before"), i, x)
		if (json_array_size(x) >= 4)
			bytes += json_integer_value(json_array_get(x, 2)) * dtype_size(json_string_value(json_array_get(x, 3)));
	struct rt_call call;
	rt_call_parse(reply, &call);
	json_array_foreach(json_object_get(reply, "outputs"), i, x)
		if (i >= call.nout || rt_output_alias(&call, i, NULL) != RT_ALIAS_INPUT)
			bytes += rt_numel(json_object_get(x, "shape")) * dtype_size(json_string_value(json_object_get(x, "dtype")));
	rt_call_release(&call);
	return bytes;
}


/* The floor bounds the time the GPU needs to move the problem's bytes. Timed end to end, a call that
 * skips the work still costs its host side (the Python call, a dictionary lookup, a one-element read),
 * which on a fast GPU takes longer than moving a large tensor would; the GPU-only time of the same
 * calls, where it was measured, is what the floor speaks of, so the lower of the two is held to it. */
double rt_floor_time(const struct timing_result *t, int *gpu_only)
{
	const struct sample_stats *eg, *eh, *cg, *ch;
	double us = t->candidate.us.median;
	*gpu_only = t->candidate.lead_us_max > 0;
	if (timing_gpu_view(t, &eg, &eh, &cg, &ch) && cg->n && cg->median > 0 && cg->median < us) {
		us = cg->median;
		*gpu_only = 1;
	}
	return us;
}

/* The candidate's process with no request in flight, right after its last answer: its CPU time, by the
 * kernel's clock for it, over IDLE_WINDOW_MS that start IDLE_SETTLE_MS later. A thread pool that spins
 * for a while after its last parallel region (libgomp: a few milliseconds) has gone to sleep by then;
 * a thread that works between calls (precomputing what later calls return, or just polling for work)
 * has not. Other processes on a busy machine can only take CPU from the candidate, never add to its. */
#define IDLE_SETTLE_MS 50
#define IDLE_WINDOW_MS 150

static void idle_probe(struct rt_session *s, const struct worker *cand)
{
	struct proc_view pv;
	int tids[64], n = 0;
	long long ticks[64];
	char busy[512] = "";
	if (!cand->started || cand->finished || cand->h.pid <= 0)
		return;
	procwatch_read(cand->h.pid, &pv, 0);
	pid_t pid = pv.known ? pv.worker : cand->h.pid;
	usleep(IDLE_SETTLE_MS * 1000);
	double t0 = proc_now(), c0 = procwatch_cpu_s(pid);
	procwatch_threads_busy(pid, tids, ticks, 64, &n, NULL, 0);
	usleep(IDLE_WINDOW_MS * 1000);
	double c1 = procwatch_cpu_s(pid), t1 = proc_now();
	procwatch_threads_busy(pid, tids, ticks, 64, &n, busy, sizeof(busy));
	if (c0 < 0 || c1 < 0)
		return;
	s->report->idle_cpu_ms = (c1 - c0) * 1e3;
	s->report->idle_wall_ms = (t1 - t0) * 1e3;
	rt_rule_idle_work(s->report->idle_cpu_ms, s->report->idle_wall_ms, busy, &s->found);
}

int rt_after_timing(struct rt_session *s, const struct rt_io *io, json_t *meta, struct verdict *v)
{
	if (!s->on)
		return 0;
	rt_oprec_drain(s); /* the record's pipe empties before more calls fill it */
	struct rt_report *r = s->report;
	json_t *reply;
	struct worker_fault f;
	json_t *req = json_pack("{s:s}", "cmd", "integrity");
	if (worker_call(io->cand, req, &reply, io->deadline, &f) == 0) {
		struct rt_call c;
		rt_call_parse(reply, &c);
		rt_rule_patched(&c.patched, "during the timing loop", &s->found);
		int py = (int)json_integer_value(json_object_get(json_object_get(reply, "threads"), "python"));
		if (r->threads_known)
			rt_rule_threads_after_timing(r->py_after, py, &s->found);
		rt_call_release(&c);
		json_decref(reply);
	} else {
		verdict_fail(v, V_RUNTIME_ERROR, "%s while checking the worker after timing", f.what);
		json_decref(req);
		return 1;
	}
	json_decref(req);

	idle_probe(s, io->cand);

	rt_rule_repeats(v->timing.repeats.n, v->timing.repeats.within, v->timing.repeats.ratio_repeat,
			v->timing.repeats.ratio_fresh, &s->found);
	const struct trusted_clock *tc = &v->timing.trusted;
	if (v->timing.ran && tc->judged) {
		struct rt_clock clk = { tc->reported, tc->speedup, tc->hi, tc->excess_us, tc->ref_least_us,
					tc->cand_overhead_us, tc->ref_overhead_us, tc->block_speedup, tc->block_calls,
					tc->excess_noise_us };
		v->timing.trusted.fired = rt_rule_trusted_clock(&clk, &s->found);
	}
	if (v->timing.ran && tc->measured && tc->rounds >= 3) {
		struct rt_clock clk = { .reported = tc->reported, .block_speedup = tc->block_speedup,
					.block_calls = tc->block_calls };
		v->timing.trusted.fired |= rt_rule_block_sums(&clk, &s->found);
	}
	else if (v->timing.ran)
		strvec_pushf(&r->skipped, "H08 (the parent's clock): %s", tc->measured ? tc->note : "no rounds were kept");

	struct floor_input in = { .gpu = strcmp(io->device, "cpu") != 0,
				  .bytes = json_number_value(json_object_get(meta, "io_bytes")),
				  .candidate_us = v->timing.ran ? rt_floor_time(&v->timing, &r->floor_gpu_only) : 0,
				  .speedup_eager = v->timing.ran ? v->timing.speedup_eager : 0,
				  .speedup_eager_lo = v->timing.ran ? v->timing.speedup_eager_lo : 0 };
	char why[256] = "";
	if (in.gpu && io->ref) {
		if (bandwidth_get(io->ref, io->device, io->cache_root, io->deadline + 600, &in.peak_bytes_per_s,
				  &r->peak_cached, why, sizeof(why)))
			in.peak_unknown = why;
	} else if (in.gpu) {
		in.peak_unknown = "the reference worker is not running";
	}
	floor_judge(&in, &r->floor, &s->found);
	r->floor_time_us = in.candidate_us;
	r->floor_present = 1;
	r->floor_bytes = in.bytes;
	r->peak_bytes_per_s = in.peak_bytes_per_s;
	if (*r->floor.skipped) {
		char *line = xstrfmt("H21 floor: %s", r->floor.skipped);
		strvec_push(&r->skipped, line);
		free(line);
	}
	return 0;
}

void rt_finish(struct rt_session *s, const struct verdict *v)
{
	if (!s->on)
		return;
	struct rt_report *r = s->report;
	if (!r->floor_present)
		strvec_push(&r->skipped, v->timing.ran ? "H21 and the checks after timing: the candidate failed during them"
				   : "H21 and the checks after timing (H06, H08): the candidate was not timed");
	if (!*r->rotation && !*r->determinism && v->ntrials < s->ntrials)
		strvec_push(&r->skipped, "H11 (rotation), H19: the correctness trials did not all run");
}

int rt_apply(struct rt_session *s, struct verdict *v)
{
	if (!s->on || s->applied >= s->found.n)
		return 0;
	int rejected = verdict_add_findings(v, s->cfg->checks.policy, &s->found.v[s->applied], s->found.n - s->applied);
	s->applied = s->found.n;
	return rejected;
}
