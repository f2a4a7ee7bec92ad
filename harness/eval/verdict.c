/* verdict.c - verdicts as JSON (docs/verdict.md, stable field names) and as the text a person
 * reads after `stitchbench eval`. Non-finite numbers become null: JSON cannot carry them. */
#include "verdict.h"

#include "../core/nvml.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtchecks.h"

static const char *const status_names[] = {
	"pass", "incorrect", "compile_error", "runtime_error", "timeout", "rejected", "format_error", "cannot_judge",
	"harness_error",
};

const char *verdict_status_name(enum verdict_status s)
{
	return status_names[s];
}

void verdict_init(struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->reward = NAN;
	v->robust.passed = -1;
	v->robust.max_abs_err = NAN;
}

void verdict_release(struct verdict *v)
{
	free(v->message);
	free(v->detail);
	free(v->candidate_path);
	for (size_t i = 0; i < v->ntrials; i++)
		free(v->trials[i].outputs);
	free(v->trials);
	findings_release(&v->findings);
	free(v->timing.eager_us);
	free(v->timing.trusted.round_us);
	free(v->timing.trusted.first_finding);
	free(v->timing.candidate_us);
	free(v->timing.compiled_us);
	free(v->log_tail);
	if (v->profile)
		v->profile_ops->release(v->profile);
	free(v->profile);
	if (v->runtime)
		rt_report_release(v->runtime);
	free(v->runtime);
	json_decref(v->audit);
	json_decref(v->rubric);
	json_decref(v->builds);
	json_decref(v->settings.identity);
	memset(v, 0, sizeof(*v));
}

void verdict_fail(struct verdict *v, enum verdict_status s, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	v->status = s;
	free(v->message);
	v->message = strbuf_detach(&sb, NULL);
}

struct finding *verdict_add_finding(struct verdict *v, const enum policy_action policy[SB_HACK_IDS], const char *id,
				    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct finding *f = findings_vadd(&v->findings, id, fmt, ap);
	va_end(ap);
	policy_apply(policy, f, 1);
	return f;
}

int verdict_add_findings(struct verdict *v, const enum policy_action policy[SB_HACK_IDS], const struct finding *f,
			 size_t n)
{
	int rejected = 0;
	for (size_t i = 0; i < n; i++) {
		struct finding *x = findings_append(&v->findings, &f[i]);
		policy_apply(policy, x, 1);
		if (x->severity != SEV_REJECT)
			continue;
		if (v->status == V_PASS)
			verdict_fail(v, V_REJECTED, "%s: %s", x->id, x->message);
		rejected |= v->status == V_REJECTED;
	}
	return rejected;
}

/* ---------- JSON ---------- */

static json_t *jreal(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *stats_json(const struct sample_stats *s, int as_us)
{
	const char *sfx = as_us ? "_us" : "";
	char k[6][16];
	snprintf(k[0], 16, "median%s", sfx); snprintf(k[1], 16, "mean%s", sfx); snprintf(k[2], 16, "p25%s", sfx);
	snprintf(k[3], 16, "p75%s", sfx); snprintf(k[4], 16, "min%s", sfx); snprintf(k[5], 16, "max%s", sfx);
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, k[0], jreal(s->median));
	json_object_set_new(o, k[1], jreal(s->mean));
	json_object_set_new(o, k[2], jreal(s->p25));
	json_object_set_new(o, k[3], jreal(s->p75));
	json_object_set_new(o, k[4], jreal(s->min));
	json_object_set_new(o, k[5], jreal(s->max));
	json_object_set_new(o, "cv", jreal(s->cv));
	return o;
}

static json_t *compare_json(const struct output_check *oc)
{
	const struct compare_result *c = &oc->cmp;
	json_t *coord = json_array();
	for (int d = 0; c->worst_index >= 0 && d < ST_MAX_DIMS && d < oc->ndim; d++)
		json_array_append_new(coord, json_integer(c->worst_coord[d]));
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(oc->name));
	json_object_set_new(o, "pass", json_boolean(c->pass));
	json_object_set_new(o, "shape_mismatch", json_boolean(c->shape_mismatch));
	json_object_set_new(o, "dtype_mismatch", json_boolean(c->dtype_mismatch));
	json_object_set_new(o, "mismatched", json_integer(c->n_mismatched));
	json_object_set_new(o, "max_abs_error", jreal(c->max_abs));
	json_object_set_new(o, "max_rel_error", jreal(c->max_rel));
	json_object_set_new(o, "worst_index", json_integer(c->worst_index));
	json_object_set_new(o, "worst_coord", coord);
	json_object_set_new(o, "worst_expected", jreal(c->worst_expected));
	json_object_set_new(o, "worst_actual", jreal(c->worst_actual));
	json_object_set_new(o, "detail", json_string(c->detail));
	return o;
}

/* null on the CPU; on a GPU the clock readings, or {"available": false, "note"} saying why there are none */
static json_t *noise_json(const struct machine_noise *n)
{
	return json_pack("{s:b, s:b, s:i, s:o, s:o, s:o, s:s}", "measured", n->measured, "noisy", n->noisy, "cpus",
			 n->cpus, "others_pct", jreal(n->others_pct), "steal_pct", jreal(n->steal_pct), "reference_cv",
			 jreal(n->reference_cv), "why", n->why);
}

static json_t *gpu_clock_json(const struct timing_result *t)
{
	const struct gpu_clock *g = &t->gpu_clock;
	if (strcmp(t->clock, "cuda_event") != 0)
		return json_null();
	if (!g->available)
		return json_pack("{s:b, s:s}", "available", 0, "note", g->note);
	const char *names[16];
	size_t n = nvml_reason_list(g->reasons, names, 16);
	json_t *reasons = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(reasons, json_string(names[i]));
	return json_pack("{s:b, s:I, s:i, s:i, s:i, s:i, s:o}", "available", 1, "samples", (json_int_t)g->samples,
			 "sm_mhz_min", (int)g->mhz_min, "sm_mhz_median", (int)g->mhz_median, "sm_mhz_max", (int)g->mhz_max,
			 "sm_mhz_limit", (int)g->mhz_limit, "reasons", reasons);
}

/* A candidate whose host time per call is well above its GPU time and the reference's host time, timed
 * with a lead (so its launches were kept out of the timed span): its speedup counts GPU time its users
 * would wait longer for. Stated in the JSON (timing.host_bound) and warned about in the text. */
int timing_gpu_view(const struct timing_result *t, const struct sample_stats **ref_gpu, const struct sample_stats **ref_host,
		    const struct sample_stats **cand_gpu, const struct sample_stats **cand_host)
{
	const struct timing_side *c = &t->candidate, *e = &t->eager;
	if (e->host_us.n && c->host_us.n && e->lead_us_max > 0 && c->lead_us_max > 0) {
		*ref_gpu = &e->us, *ref_host = &e->host_us, *cand_gpu = &c->us, *cand_host = &c->host_us;
		return 1;
	}
	const struct gpu_only_time *g = &t->gpu_only;
	if (!g->measured || !g->eager_host.n || !g->candidate_host.n)
		return 0;
	*ref_gpu = &g->eager, *ref_host = &g->eager_host, *cand_gpu = &g->candidate, *cand_host = &g->candidate_host;
	return 1;
}

static int host_bound(const struct timing_result *t)
{
	const struct sample_stats *eg, *eh, *cg, *ch;
	if (!timing_gpu_view(t, &eg, &eh, &cg, &ch))
		return 0;
	return ch->median > 2 * cg->median && ch->median > 1.5 * eh->median;
}

/* A reference of many small kernels: its host time per call (timed with a lead, on a GPU) at least 3x
 * its GPU time. Such a model's GPU time is a property of the process that runs it (L3/4 lands at one of
 * two levels per process; BENCHMARKS.md, "The process factor"), so its speedup carries that
 * between-process spread beyond its interval, which only knows the calls of these two processes. Stated in the JSON (timing.launch_bound) and the text. */
static int launch_bound(const struct timing_result *t)
{
	const struct sample_stats *eg, *eh, *cg, *ch;
	return timing_gpu_view(t, &eg, &eh, &cg, &ch) && eh->median >= 3 * eg->median;
}

/* timing.process_factor: null where it was not measured nor tried (eval.process_factor = off, auto on the
 * CPU or on a problem recorded as not launch-heavy) */
static json_t *factor_json(const struct process_factor *f)
{
	if (!f->measured && !f->note[0])
		return json_null();
	if (!f->measured)
		return json_pack("{s:b, s:s}", "measured", 0, "note", f->note);
	return json_pack("{s:b, s:b, s:b, s:b, s:o, s:[o,o], s:I, s:o, s:o, s:o}", "measured", 1, "applied", f->applied,
			 "widened", f->widened,
			 "launch_heavy", f->launch_heavy, "value", jreal(f->value), "ci95", jreal(f->lo), jreal(f->hi),
			 "pairs", (json_int_t)f->pairs, "reference_us", jreal(f->ref_us), "in_candidate_us",
			 jreal(f->cand_us), "seconds", jreal(f->seconds));
}

/* The parent's clock around the timed blocks (struct trusted_clock). */
static json_t *trusted_json(const struct trusted_clock *tc)
{
	if (!tc->measured)
		return json_null();
	json_t *rounds = json_array();
	for (size_t i = 0; i < tc->nround; i++)
		json_array_append_new(rounds, json_pack("[o,o,o,o,o]", jreal(tc->round_us[5 * i]), jreal(tc->round_us[5 * i + 1]),
							jreal(tc->round_us[5 * i + 2]), jreal(tc->round_us[5 * i + 3]),
							jreal(tc->round_us[5 * i + 4])));
	json_t *o = json_pack("{s:b, s:o, s:I, s:o, s:[o,o], s:o, s:o, s:o, s:o, s:[o,o]}", "judged", tc->judged, "note",
			 tc->note[0] ? json_string(tc->note) : json_null(), "rounds", (json_int_t)tc->rounds, "speedup",
			 jreal(tc->speedup), "ci95", jreal(tc->lo), jreal(tc->hi), "reported", jreal(tc->reported),
			 "reference_overhead_us",
			 jreal(tc->ref_overhead_us), "candidate_overhead_us", jreal(tc->cand_overhead_us), "excess_us",
			 jreal(tc->excess_us), "excess_ci95_us", jreal(tc->excess_lo_us), jreal(tc->excess_hi_us));
	json_object_set_new(o, "excess_noise_us", jreal(tc->excess_noise_us));
	json_object_set_new(o, "reference_least_us", jreal(tc->ref_least_us));
	json_object_set_new(o, "block_speedup", jreal(tc->block_speedup));
	json_object_set_new(o, "block_gap", jreal(tc->block_gap));
	json_object_set_new(o, "block_capped", json_boolean(tc->block_capped));
	json_object_set_new(o, "retimed", tc->first_finding ? json_pack("{s:s, s:o, s:o}", "first_finding", tc->first_finding,
									"first_excess_us", jreal(tc->first_excess_us),
									"first_excess_noise_us", jreal(tc->first_noise_us))
							    : json_null());
	json_object_set_new(o, "rounds_us", rounds);
	return o;
}

/* One side's per-call device times, with the host's time for the same calls and the lead they had. */
static json_t *side_json(const struct timing_side *s)
{
	json_t *o = stats_json(&s->us, 1);
	json_object_set_new(o, "host", stats_json(&s->host_us, 1));
	json_object_set_new(o, "lead_us_max", json_integer(s->lead_us_max));
	json_object_set_new(o, "exposed_calls", json_integer(s->exposed));
	return o;
}

/* timing.gpu_only: null where the calls were not timed end to end on a GPU */
static json_t *gpu_only_json(const struct gpu_only_time *g)
{
	if (!g->measured)
		return json_null();
	json_t *e = stats_json(&g->eager, 1), *c = stats_json(&g->candidate, 1);
	json_object_set_new(e, "host", stats_json(&g->eager_host, 1));
	json_object_set_new(c, "host", stats_json(&g->candidate_host, 1));
	return json_pack("{s:i, s:o, s:o, s:o}", "lead_us_max", g->lead_us, "eager", e, "candidate", c, "speedup",
			 jreal(g->speedup));
}

static json_t *timing_json(const struct timing_result *t)
{
	if (!t->ran)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "clock", json_string(t->clock));
	json_object_set_new(o, "method", json_string(t->method[0] ? t->method : "paired_median"));
	json_object_set_new(o, "gpu_only", gpu_only_json(&t->gpu_only));
	json_object_set_new(o, "pairs", json_integer((json_int_t)t->pairs));
	json_object_set_new(o, "stop_reason", json_string(t->stop_reason));
	json_object_set_new(o, "eager", side_json(&t->eager));
	json_object_set_new(o, "candidate", side_json(&t->candidate));
	json_object_set_new(o, "compiled", t->compiled.available ? side_json(&t->compiled) : json_null());
	json_object_set_new(o, "ratio_eager", stats_json(&t->ratio_eager, 0));
	json_object_set_new(o, "ratio_compiled", t->compiled.available ? stats_json(&t->ratio_compiled, 0) : json_null());
	json_object_set_new(o, "revalidated", json_boolean(t->revalidated));
	json_object_set_new(o, "checked_calls", json_integer((json_int_t)t->checked_calls));
	json_object_set_new(o, "trusted_clock", trusted_json(&t->trusted));
	json_object_set_new(o, "repeats", t->repeats.n ? json_pack("{s:I, s:o, s:o, s:o}", "calls", (json_int_t)t->repeats.n,
								   "ratio_repeat", jreal(t->repeats.ratio_repeat),
								   "ratio_fresh", jreal(t->repeats.ratio_fresh),
								   "within_round", jreal(t->repeats.within))
							: json_null());
	json_object_set_new(o, "order_bias", jreal(t->order_bias));
	json_object_set_new(o, "host_bound", json_boolean(host_bound(t)));
	json_object_set_new(o, "launch_bound", json_boolean(launch_bound(t)));
	json_object_set_new(o, "process_factor", factor_json(&t->factor));
	json_object_set_new(o, "process_spread_pct", jreal(t->process_spread_pct));
	json_object_set_new(o, "cpu", t->cpu >= 0 ? json_integer(t->cpu) : json_null());
	json_object_set_new(o, "pinned", json_boolean(t->pinned));
	json_object_set_new(o, "gpu_clock", gpu_clock_json(t));
	json_object_set_new(o, "noise", noise_json(&t->noise));
	json_t *raw = json_object(), *e = json_array(), *c = json_array(), *k = json_array();
	for (size_t i = 0; i < t->pairs; i++) {
		json_array_append_new(e, jreal(t->eager_us[i]));
		json_array_append_new(c, jreal(t->candidate_us[i]));
		if (t->compiled.available)
			json_array_append_new(k, jreal(t->compiled_us[i]));
	}
	json_object_set_new(raw, "eager_us", e);
	json_object_set_new(raw, "candidate_us", c);
	json_object_set_new(raw, "compiled_us", k);
	json_object_set_new(o, "samples", raw);
	return o;
}

static json_t *robust_json(const struct robust_result *r)
{
	return json_pack("{s:i, s:o, s:o, s:o}", "trials", r->trials, "passed", r->passed < 0 ? json_null()
			 : json_boolean(r->passed), "note", r->note[0] ? json_string(r->note) : json_null(), "max_abs_err",
			 jreal(r->max_abs_err));
}

static json_t *speedup_json(const struct timing_result *t)
{
	if (!t->ran)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "vs_eager", jreal(t->speedup_eager));
	json_object_set_new(o, "vs_eager_ci95", json_pack("[o,o]", jreal(t->speedup_eager_lo), jreal(t->speedup_eager_hi)));
	json_object_set_new(o, "vs_compiled", t->compiled.available ? jreal(t->speedup_compiled) : json_null());
	json_object_set_new(o, "vs_compiled_ci95", t->compiled.available
			    ? json_pack("[o,o]", jreal(t->speedup_compiled_lo), jreal(t->speedup_compiled_hi)) : json_null());
	json_object_set_new(o, "vs_eager_mean_method", jreal(t->speedup_eager_mean_method));
	json_object_set_new(o, "vs_eager_paired_median", jreal(t->ratio_eager.median));
	json_object_set_new(o, "vs_eager_uncorrected", jreal(t->speedup_eager_raw));
	json_object_set_new(o, "vs_eager_uncorrected_ci95",
			    json_pack("[o,o]", jreal(t->speedup_eager_raw_lo), jreal(t->speedup_eager_raw_hi)));
	return o;
}

json_t *verdict_to_json(const struct verdict *v)
{
	json_t *o = json_object(), *trials = json_array(), *findings = json_array();
	for (size_t i = 0; i < v->ntrials; i++) {
		const struct trial_result *t = &v->trials[i];
		json_t *outs = json_array();
		for (size_t j = 0; j < t->noutputs; j++)
			json_array_append_new(outs, compare_json(&t->outputs[j]));
		json_array_append_new(trials, json_pack("{s:I, s:b, s:b, s:o, s:o}", "seed", (json_int_t)t->seed, "pass", t->pass,
							"inputs_mutated", t->inputs_mutated, "run_s", jreal(t->run_s), "outputs", outs));
	}
	for (size_t i = 0; i < v->findings.n; i++) {
		const struct finding *f = &v->findings.v[i];
		json_array_append_new(findings, json_pack("{s:s, s:s, s:s, s:i, s:i}", "id", f->id, "severity", severity_name(f->severity),
							  "message", f->message, "line", f->line, "col", f->col));
	}
	json_object_set_new(o, "schema", json_integer(VERDICT_SCHEMA));
	json_object_set_new(o, "status", json_string(verdict_status_name(v->status)));
	json_object_set_new(o, "message", jstr(v->message));
	json_object_set_new(o, "detail", jstr(v->detail));
	json_object_set_new(o, "problem", json_pack("{s:s, s:s}", "ref", v->problem, "sha256", v->problem_sha256));
	json_object_set_new(o, "candidate", json_pack("{s:o, s:s}", "path", jstr(v->candidate_path), "sha256", v->candidate_sha256));
	json_object_set_new(o, "seeds", v->seeds_secret[0] ? json_pack("{s:s, s:b}", "secret", v->seeds_secret, "replayed",
								       v->seeds_replayed) : json_null());
	json_object_set_new(o, "trials", trials);
	json_object_set_new(o, "robust", robust_json(&v->robust));
	json_object_set_new(o, "timing", timing_json(&v->timing));
	json_object_set_new(o, "speedup", speedup_json(&v->timing));
	json_object_set_new(o, "findings", findings);
	json_object_set_new(o, "env", json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "device", v->env.device, "gpu", v->env.gpu,
						"sm", v->env.sm, "torch", v->env.torch, "torch_cuda", v->env.torch_cuda,
						"python", v->env.python));
	json_object_set_new(o, "sandbox", json_pack("{s:b, s:b, s:i, s:b, s:b, s:o, s:s}", "network_namespace", v->sandbox.netns,
						    "pid_namespace", v->sandbox.pidns, "landlock_abi", v->sandbox.landlock_abi,
						    "capabilities_dropped", v->sandbox.caps_dropped, "private_tmp",
						    v->sandbox.private_tmp && v->sandbox.private_shm, "memory_limit_bytes", v->sandbox.memory_limit
						    ? json_integer(v->sandbox.memory_limit) : json_null(), "notes", v->sandbox.notes));
	json_object_set_new(o, "settings", json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:i, s:b, s:o, s:s, s:O*}", "preset",
						     v->settings.preset[0] ? v->settings.preset : "stitchbench", "trials", v->settings.trials,
						     "robust_trials", v->settings.robust_trials,
						     "perf_trials", v->settings.perf_trials, "seed", v->settings.seed, "tolerance",
						     v->settings.tolerance, "timing_lead_us", v->settings.timing_lead_us, "timing_gc",
						     v->settings.timing_gc, "hash_seed",
						     v->settings.hash_seed >= 0 ? json_integer(v->settings.hash_seed) : json_null(),
						     "exchange", v->settings.exchange, "identity", v->settings.identity));
	json_object_set_new(o, "seconds", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "total",
						    jreal(v->seconds.total), "static", jreal(v->seconds.static_checks),
						    "reference", jreal(v->seconds.reference), "build", jreal(v->seconds.build),
						    "correctness", jreal(v->seconds.correctness), "robust",
						    jreal(v->seconds.robust), "reference_worker",
						    jreal(v->seconds.reference_worker), "timing", jreal(v->seconds.timing),
						    "checks", jreal(v->seconds.checks), "profile", jreal(v->seconds.profile),
						    "finish", jreal(v->seconds.finish), "first_evaluation",
						    jreal(v->seconds.first_evaluation)));
	json_object_set_new(o, "reference_cached", json_boolean(v->reference_cached));
	json_object_set_new(o, "reference_worker_reused", json_boolean(v->reference_worker_reused));
	json_object_set_new(o, "candidate_worker_prestarted", json_boolean(v->candidate_worker_prestarted));
	json_object_set_new(o, "reference_worker_prestarted", json_boolean(v->reference_worker_prestarted));
	json_object_set_new(o, "candidate_worker_forked", json_boolean(v->candidate_worker_forked));
	json_object_set_new(o, "log_tail", jstr(v->log_tail));
	json_object_set_new(o, "profile", v->profile ? v->profile_ops->json(v->profile, 20) : json_null());
	json_object_set_new(o, "runtime", v->runtime ? rt_report_json(v->runtime) : json_null());
	json_object_set_new(o, "audit", v->audit ? json_incref(v->audit) : json_null());
	json_object_set_new(o, "rubric", v->rubric ? json_incref(v->rubric) : json_null());
	/* a reward is the rubric's: without scores there is none, whatever the field holds */
	json_object_set_new(o, "reward", v->rubric ? jreal(v->reward) : json_null());
	json_object_set_new(o, "builds", v->builds ? json_incref(v->builds) : json_array());
	return o;
}

/* ---------- text ---------- */

/* The clock line of a GPU verdict, and a warning when the times were taken below the GPU's best. */
static void print_gpu_clock(struct strbuf *out, const struct timing_result *t)
{
	const struct gpu_clock *g = &t->gpu_clock;
	if (strcmp(t->clock, "cuda_event") != 0)
		return;
	if (!g->available) {
		strbuf_addf(out, "  GPU clock            not read (%s)\n", g->note);
		return;
	}
	struct strbuf r = STRBUF_INIT;
	nvml_reason_names(g->reasons, &r);
	strbuf_addf(out, "  GPU clock            SM %u MHz median (%u-%u over %zu blocks), limit %u MHz%s%s\n", g->mhz_median,
		    g->mhz_min, g->mhz_max, g->samples, g->mhz_limit, r.len ? "; held down by " : "", r.buf);
	if (r.len || (g->mhz_limit && g->mhz_min < 0.9 * g->mhz_limit))
		strbuf_addstr(out, "  warning: part of the timing ran below the GPU's full clock; the speedup compares "
			      "like with like, the absolute times are not the GPU's best\n");
	strbuf_release(&r);
}

static void print_side(struct strbuf *out, const char *name, const struct timing_side *s, int gpu)
{
	if (!s->available)
		return;
	strbuf_addf(out, "  %-10s median %10.2f us   mean %10.2f   p25 %10.2f   p75 %10.2f   min %10.2f   cv %5.2f%%\n", name,
		    s->us.median, s->us.mean, s->us.p25, s->us.p75, s->us.min, 100 * s->us.cv);
	if (gpu && s->host_us.n)
		strbuf_addf(out, "  %-10s host   %10.2f us per call (median), lead up to %d us, %d of %zu calls launched "
			    "after their start\n", "", s->host_us.median, s->lead_us_max, s->exposed, s->host_us.n);
}

static void print_host_bound(struct strbuf *out, const struct timing_result *t)
{
	const struct timing_side *c = &t->candidate, *e = &t->eager;
	if (host_bound(t))
		strbuf_addf(out, "  warning: the candidate is host-bound: %.1f us of host time per call against %.1f us on "
			    "the GPU (the reference: %.1f us on the host); the speedup compares GPU time\n",
			    c->host_us.median, c->us.median, e->host_us.median);
}

static void print_launch_bound(struct strbuf *out, const struct timing_result *t)
{
	const struct timing_side *e = &t->eager;
	if (launch_bound(t) && !t->factor.applied)
		strbuf_addf(out, "  note: the reference is launch-bound (%.1f us of host time per call for %.1f us on the GPU): "
			    "such a model's GPU time differs between processes (by up to ~8%% on a GPU node), which the interval "
			    "above does not include\n", e->host_us.median, e->us.median);
}

static void print_gpu_only(struct strbuf *out, const struct gpu_only_time *g)
{
	if (g->measured)
		strbuf_addf(out, "  GPU only (diagnostic: %zu calls per side behind a lead, the host's launch not timed): "
			    "eager %.2f us, candidate %.2f us (medians), %.3fx\n", g->eager.n, g->eager.median,
			    g->candidate.median, g->speedup);
}

static void print_factor(struct strbuf *out, const struct timing_result *t)
{
	const struct process_factor *f = &t->factor;
	if (f->applied)
		strbuf_addf(out, "  process factor       %.4f  (95%% CI %.4f-%.4f, %zu pairs: the reference %.1f us in its worker, "
			    "%.1f us in the candidate's process); divided into the speedup vs eager, which was %.3fx before\n",
			    f->value, f->lo, f->hi, f->pairs, f->ref_us, f->cand_us, t->speedup_eager_raw);
	else if (f->measured)
		strbuf_addf(out, "  process factor       %.4f  (95%% CI %.4f-%.4f), not applied: the reference is not launch-heavy%s\n",
			    f->value, f->lo, f->hi, f->widened ? "; the speedup's interval spans it" : "");
	else if (f->note[0])
		strbuf_addf(out, "  process factor       not measured: %s\n", f->note);
}

static void print_robust(struct strbuf *out, const struct robust_result *r)
{
	if (r->passed > 0)
		strbuf_addf(out, "  robust (%d trial%s on signed, scaled inputs) ok  max abs %.3g\n", r->trials,
			    r->trials == 1 ? "" : "s", r->max_abs_err);
	else if (r->passed == 0)
		strbuf_addf(out, "  robust FAIL  %s\n", r->note);
	else if (r->trials)
		strbuf_addf(out, "  robust %s\n", r->note);
}

void verdict_print(const struct verdict *v, struct strbuf *out)
{
	strbuf_addf(out, "%s %s: %s\n", v->problem, v->candidate_path ? v->candidate_path : "", verdict_status_name(v->status));
	if (v->message)
		strbuf_addf(out, "  %s\n", v->message);
	for (size_t i = 0; i < v->ntrials; i++) {
		const struct trial_result *t = &v->trials[i];
		for (size_t j = 0; j < t->noutputs; j++) {
			const struct compare_result *c = &t->outputs[j].cmp;
			if (c->shape_mismatch || c->dtype_mismatch) /* no element was compared: no errors to show */
				strbuf_addf(out, "  trial %zu (seed %u) %-5s FAIL  %s\n", i, t->seed, t->outputs[j].name, c->detail);
			else
				strbuf_addf(out, "  trial %zu (seed %u) %-5s %s  max abs %.3g  max rel %.3g%s%s\n", i, t->seed,
					    t->outputs[j].name, c->pass ? "ok  " : "FAIL", c->max_abs, c->max_rel,
					    c->pass ? "" : "  ", c->pass ? "" : c->detail);
		}
		if (t->inputs_mutated)
			strbuf_addf(out, "  trial %zu: the candidate modified its inputs\n", i);
	}
	print_robust(out, &v->robust);
	if (v->timing.ran) {
		const struct timing_result *t = &v->timing;
		int unpaired = !strcmp(t->method, "unpaired_mean");
		strbuf_addf(out, "  timing (%s, %zu %s, stopped by %s):\n", t->clock, t->pairs,
			    unpaired ? "calls per side, KernelBench's means" : "interleaved pairs", t->stop_reason);
		int gpu = strcmp(t->clock, "host") != 0;
		print_side(out, "eager", &t->eager, gpu);
		print_side(out, "candidate", &t->candidate, gpu);
		print_side(out, "compiled", &t->compiled, gpu);
		if (unpaired)
			strbuf_addf(out, "  speedup vs eager     %.3fx  (95%% CI %.3f-%.3f; mean over mean; median of the pair "
				    "ratios %.3fx)\n", t->speedup_eager, t->speedup_eager_lo, t->speedup_eager_hi,
				    t->ratio_eager.median);
		else
			strbuf_addf(out, "  speedup vs eager     %.3fx  (95%% CI %.3f-%.3f; KernelBench mean method %.3fx)\n",
				    t->speedup_eager, t->speedup_eager_lo, t->speedup_eager_hi, t->speedup_eager_mean_method);
		if (t->trusted.block_capped)
			strbuf_addf(out, "  held to %.1fx its blocks' sums: within a round, the median of its pair ratios "
				    "was %.2fx the ratio of the round's sums (the median over rounds); the pair ratios' "
				    "median over all calls was %.3fx\n", BLOCK_CAP, t->trusted.block_gap,
				    t->trusted.reported);
		if (t->trusted.first_finding)
			strbuf_addf(out, "  judged twice: a first evaluation (%.1f s) was rejected by the timing's own clocks "
				    "alone (H08: %s); this verdict is of a second one in fresh worker processes\n",
				    v->seconds.first_evaluation, t->trusted.first_finding);
		print_gpu_only(out, &t->gpu_only);
		if (isfinite(t->order_bias) && fabs(t->order_bias - 1) > 0.02)
			strbuf_addf(out, "  warning: call order matters (eager-first rounds / eager-second rounds = %.3f); "
				    "the speedup's interval is wider than noise alone\n", t->order_bias);
		if (t->cpu >= 0)
			strbuf_addf(out, t->pinned ? "  workers pinned to CPU %d while timing\n"
						   : "  warning: eval.timing_cpu = %d, but a worker's threads were not all on that CPU\n",
				    t->cpu);
		print_gpu_clock(out, t);
		if (t->noise.noisy)
			strbuf_addf(out, "  warning: timed on a busy machine (%s): the speedup's interval is wider than the "
				    "code's own spread, and may not cover it; time it again on a quiet machine\n",
				    t->noise.why);
		print_host_bound(out, t);
		print_factor(out, t);
		print_launch_bound(out, t);
		if (t->compiled.available)
			strbuf_addf(out, "  speedup vs compiled  %.3fx  (95%% CI %.3f-%.3f)\n", t->speedup_compiled,
				    t->speedup_compiled_lo, t->speedup_compiled_hi);
		else
			strbuf_addstr(out, "  speedup vs compiled  n/a (torch.compile is not available with this torch)\n");
	}
	if (v->profile)
		v->profile_ops->summary(v->profile, out);
	if (v->runtime)
		rt_report_summary(v->runtime, out);
	for (size_t i = 0; v->audit && i < json_array_size(json_object_get(v->audit, "findings")); i++) {
		json_t *a = json_array_get(json_object_get(v->audit, "findings"), i);
		strbuf_addf(out, "  audit of the problem: %s: %s\n", json_string_value(json_object_get(a, "id")) ?: "?",
			    json_string_value(json_object_get(a, "message")) ?: "");
	}
	for (size_t i = 0; i < v->findings.n; i++)
		strbuf_addf(out, "  finding %s (%s): %s\n", v->findings.v[i].id, severity_name(v->findings.v[i].severity),
			    v->findings.v[i].message);
	if (v->rubric) {
		json_t *total = json_object_get(v->rubric, "total");
		const char *why = json_string_value(json_object_get(v->rubric, "error"));
		strbuf_addf(out, "  rubric (%s): ", json_string_value(json_object_get(v->rubric, "model")) ?: "?");
		if (why)
			strbuf_addf(out, "not scored: %s\n", why);
		else
			strbuf_addf(out, "%.2f\n", json_number_value(total));
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(v->rubric, "criteria"), i, c)
			strbuf_addf(out, "    %s %.2f: %s\n", json_string_value(json_object_get(c, "name")) ?: "?",
				    json_number_value(json_object_get(c, "score")),
				    json_string_value(json_object_get(c, "reason")) ?: "");
		if (isfinite(v->reward))
			strbuf_addf(out, "  reward %.3f (lambda %g)\n", v->reward,
				    json_number_value(json_object_get(v->rubric, "reward_lambda")));
		else if (!why)
			strbuf_addstr(out, "  reward n/a: a pass that was not timed\n");
	}
	if (v->detail && *v->detail)
		strbuf_addf(out, "  ---\n%s%s", v->detail, v->detail[strlen(v->detail) - 1] == '\n' ? "" : "\n");
	const struct sandbox_report *sb = &v->sandbox;
	if (!sb->netns && !sb->pidns && !sb->landlock_abi && !sb->caps_dropped && !*sb->notes) /* no worker ran */
		strbuf_addf(out, "  env: %s%s%s, torch %s; sandbox: not started\n", v->env.device, *v->env.gpu ? " " : "",
			    v->env.gpu, v->env.torch);
	else
		strbuf_addf(out, "  env: %s%s%s, torch %s; sandbox: netns %s, pidns %s, landlock %s%s%s\n", v->env.device,
			    *v->env.gpu ? " " : "", v->env.gpu, v->env.torch, sb->netns ? "yes" : "no",
			    sb->pidns ? "yes" : "no", sb->landlock_abi ? "yes" : "no", *sb->notes ? "; " : "", sb->notes);
	strbuf_addf(out, "  seconds: total %.2f (static %.2f, reference %.2f%s, build %.2f, correctness %.2f, robust %.2f, "
		    "reference worker %.2f, timing %.2f, checks %.2f, profile %.2f, finish %.2f)\n", v->seconds.total,
		    v->seconds.static_checks, v->seconds.reference, v->reference_cached ? " cached" : "", v->seconds.build,
		    v->seconds.correctness, v->seconds.robust, v->seconds.reference_worker, v->seconds.timing, v->seconds.checks,
		    v->seconds.profile, v->seconds.finish);
	if (v->seconds.first_evaluation > 0)
		strbuf_addf(out, "  seconds: %.2f of the total were a first evaluation, judged again\n", v->seconds.first_evaluation);
}
