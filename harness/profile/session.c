/* session.c - drives a worker through a profiled run (profile_start, timed calls, profile_stop; see
 * docs/worker.md) and turns the trace it wrote into a report; keeps traces for fixtures on request; and
 * runs the profile step of an evaluation (prof_candidate). */
#include "session.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../checks/static.h"
#include "../eval/timing/timing.h"

static int ask(struct worker *w, json_t *req, json_t **reply, double deadline, struct worker_fault *fault, char **msg)
{
	int rc = worker_call(w, req, reply, deadline, fault);
	const char *cmd = json_string_value(json_object_get(req, "cmd"));
	if (rc) {
		*msg = xstrfmt("the worker failed during %s: %s", cmd, fault->what);
	} else if (!json_is_true(json_object_get(*reply, "ok"))) {
		fault->kind = WF_NONE;
		*msg = xstrfmt("the worker failed during %s: %s", cmd,
			       json_string_value(json_object_get(*reply, "message")) ?: "?");
		json_decref(*reply);
		*reply = NULL;
		rc = -1;
	}
	json_decref(req);
	return rc;
}

static int setup(struct worker *w, const struct prof_plan *p, double deadline, struct worker_fault *f, char **msg)
{
	json_t *seeds = json_array(), *reply;
	for (int k = 0; k < p->nsets; k++)
		json_array_append_new(seeds, json_integer(p->seeds ? eval_seed(p->seeds, SEED_PROFILE, (uint32_t)k)
							: trial_seed(p->base_seed, 1000 + k)));
	if (ask(w, json_pack("{s:s, s:o, s:I}", "cmd", "timing_setup", "seeds", seeds, "flush_bytes",
			     (json_int_t)p->flush_bytes), &reply, deadline, f, msg))
		return -1;
	json_decref(reply);
	if (ask(w, json_pack("{s:s, s:s, s:i, s:i}", "cmd", "warmup", "which", p->which, "min_ms", p->warmup_ms,
			     "min_calls", p->warmup_calls), &reply, deadline, f, msg))
		return -1;
	json_decref(reply);
	return 0;
}

/* Only objects inside the build folder count: the list comes from the candidate's process. */
static size_t trusted_objects(json_t *list, const char *under, char ***out)
{
	char root[PATH_MAX];
	size_t n = 0, i;
	json_t *o;
	*out = xcalloc(json_array_size(list) + 1, sizeof(char *));
	if (!under || !realpath(under, root))
		return 0;
	size_t len = strlen(root);
	json_array_foreach(list, i, o) {
		char real[PATH_MAX];
		const char *s = json_string_value(o);
		if (s && realpath(s, real) && !strncmp(real, root, len) && real[len] == '/')
			(*out)[n++] = xstrdup(real);
	}
	return n;
}

/* A kept copy is for fixtures and the reference cache: best effort, a file that cannot be read or
 * written is simply not kept. */
static void copy_file(const char *from, const char *to)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, from, 1u << 30) == 0) {
		FILE *t = fopen(to, "w");
		if (t) {
			fwrite(sb.buf, 1, sb.len, t);
			fclose(t);
		}
	}
	strbuf_release(&sb);
}

static void keep_trace(const struct prof_plan *p, const struct prof_call *calls, size_t n, long long io_bytes)
{
	char *path = xstrfmt("%s.calls", p->keep);
	FILE *f = fopen(path, "w");
	copy_file(p->trace, p->keep);
	if (f) {
		fprintf(f, "# stitchbench profiled calls (docs/trace.md): call TRIAL CUDA_EVENT_US\nio_bytes %lld\n", io_bytes);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "call %llu %.3f\n", (unsigned long long)calls[i].trial, calls[i].event_us);
		fclose(f);
	}
	free(path);
}

void prof_report_attach_metrics(struct prof_report *r, const char *path)
{
	struct hw_file f;
	struct sb_error err = { 0 };
	r->metrics_asked = 1;
	if (hw_file_read(path, &f, &err)) {
		snprintf(r->metrics_reason, sizeof(r->metrics_reason), "%s", err.msg);
		return;
	}
	snprintf(r->metrics_chip, sizeof(r->metrics_chip), "%s", f.chip);
	r->metrics_passes = f.passes;
	/* ranges are matched to launches by their order: when CUPTI made ranges for launches the callbacks
	 * did not see (or the reverse), no range can be trusted to be the kernel it would be matched to */
	if (f.names != f.nranges) {
		snprintf(r->metrics_reason, sizeof(r->metrics_reason), "CUPTI measured %zu launches but %zu were seen "
			 "launched (a CUDA graph or a launch path the callbacks miss): the metrics are not attributed",
			 f.nranges, f.names);
		hw_file_release(&f);
		return;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		struct prof_row *row = &r->rows[i];
		if (row->kind != 'k' || !row->mangled)
			continue;
		hw_file_kernel(&f, row->mangled, &row->hw);
		r->metrics_kernels += row->hw.measured != 0;
	}
	size_t kernels = 0;
	for (size_t i = 0; i < r->nrows; i++)
		kernels += r->rows[i].kind == 'k';
	if (f.dropped)
		snprintf(r->metrics_reason, sizeof(r->metrics_reason), "CUPTI dropped %zu launches (more than it had room "
			 "for)", f.dropped);
	else if (r->metrics_kernels < kernels)
		snprintf(r->metrics_reason, sizeof(r->metrics_reason), "%zu of %zu kernels did not run in the measured call",
			 kernels - r->metrics_kernels, kernels);
	hw_file_release(&f);
}

/* One more call, with every launch replayed by the range profiler until its counters are read. It comes
 * after the traced calls, so the replays never reach the trace; a failure here costs the metrics only. */
static void metrics_pass(struct worker *w, const struct prof_plan *p, double deadline, struct prof_report *r)
{
	json_t *reply;
	struct worker_fault fault;
	char *msg = NULL;
	r->metrics_asked = 1;
	remove(p->metrics);
	if (ask(w, json_pack("{s:s, s:s, s:s}", "cmd", "metrics_start", "lib", p->lib, "out", p->metrics), &reply,
		deadline, &fault, &msg))
		goto failed;
	int available = json_is_true(json_object_get(reply, "available"));
	if (!available)
		snprintf(r->metrics_reason, sizeof(r->metrics_reason), "%s",
			 json_string_value(json_object_get(reply, "reason")) ?: "the metrics session did not start");
	json_decref(reply);
	if (!available)
		return;
	uint32_t seed = p->seeds ? eval_seed(p->seeds, SEED_PROFILE, 5000) : trial_seed(p->base_seed, 9500);
	if (ask(w, json_pack("{s:s, s:s, s:[i], s:[I], s:b, s:i}", "cmd", "time", "which", p->which, "sets", 0, "seeds",
			     (json_int_t)seed, "fresh", 1, "lead_us", 0),
		&reply, deadline, &fault, &msg))
		goto failed;
	json_decref(reply);
	if (ask(w, json_pack("{s:s}", "cmd", "metrics_stop"), &reply, deadline, &fault, &msg))
		goto failed;
	available = json_is_true(json_object_get(reply, "available"));
	if (!available)
		snprintf(r->metrics_reason, sizeof(r->metrics_reason), "%s",
			 json_string_value(json_object_get(reply, "reason")) ?: "the metrics session failed");
	json_decref(reply);
	if (available) {
		prof_report_attach_metrics(r, p->metrics);
		if (p->keep) {
			char *to = xstrfmt("%s.metrics", p->keep);
			copy_file(p->metrics, to);
			free(to);
		}
	}
	return;
failed:
	snprintf(r->metrics_reason, sizeof(r->metrics_reason), "%s", msg ? msg : "the worker failed");
	free(msg);
}

int prof_session_run(struct worker *w, const struct prof_plan *p, double deadline, struct prof_report *r,
		     struct worker_fault *fault, char **msg)
{
	json_t *reply;
	*msg = NULL;
	memset(fault, 0, sizeof(*fault));
	if (p->setup && setup(w, p, deadline, fault, msg))
		return -1;
	remove(p->trace);
	if (ask(w, json_pack("{s:s, s:s, s:s}", "cmd", "profile_start", "lib", p->lib, "trace", p->trace), &reply, deadline,
		fault, msg))
		return -1;
	int available = json_is_true(json_object_get(reply, "available"));
	if (!available)
		prof_report_unavailable(r, "%s", json_string_value(json_object_get(reply, "reason")) ?: "profiling did not start");
	json_decref(reply);
	if (!available)
		return 0;

	struct prof_call *calls = xcalloc((size_t)p->calls, sizeof(*calls));
	size_t n = 0;
	/* one block of back-to-back calls, like the timing loop (docs/worker.md) */
	json_t *sets = json_array(), *seeds = json_array();
	for (int i = 0; i < p->calls; i++) {
		json_array_append_new(sets, json_integer(i % p->nsets));
		json_array_append_new(seeds, json_integer(p->seeds ? eval_seed(p->seeds, SEED_PROFILE, 1000 + (uint32_t)i)
							: trial_seed(p->base_seed, 9000 + (uint32_t)i)));
	}
	/* fresh values in place for every call, as the timed calls get them */
	if (ask(w, json_pack("{s:s, s:s, s:o, s:o, s:b, s:i}", "cmd", "time", "which", p->which, "sets", sets, "seeds", seeds,
			     "fresh", 1, "lead_us", p->lead_us),
		&reply, deadline, fault, msg)) {
		free(calls);
		return -1;
	}
	json_t *trials = json_object_get(reply, "trials"), *us = json_object_get(reply, "us");
	for (size_t i = 0; i < json_array_size(trials) && i < json_array_size(us) && n < (size_t)p->calls; i++) {
		json_int_t trial = json_integer_value(json_array_get(trials, i));
		if (trial > 0)
			calls[n++] = (struct prof_call){ (uint64_t)trial, json_number_value(json_array_get(us, i)) };
	}
	json_decref(reply);
	json_t *req = json_pack("{s:s, s:s}", "cmd", "profile_stop", "which", p->which);
	if (p->objects_under)
		json_object_set_new(req, "objects_under", json_string(p->objects_under));
	if (ask(w, req, &reply, deadline, fault, msg)) {
		free(calls);
		return -1;
	}
	char **objects;
	size_t nobj = trusted_objects(json_object_get(reply, "objects"), p->objects_under, &objects);
	long long io_bytes = json_integer_value(json_object_get(reply, "io_bytes"));
	json_decref(reply);

	struct trace t;
	struct sb_error err = { 0 };
	if (trace_parse_file(p->trace, &t, &err)) {
		prof_report_unavailable(r, "the trace is unusable: %s", err.msg);
	} else {
		prof_report_build(r, &t, calls, n, (const char *const *)objects, nobj);
		r->io_bytes = io_bytes;
		trace_release(&t);
		if (n < (size_t)p->calls)
			snprintf(r->reason + strlen(r->reason), sizeof(r->reason) - strlen(r->reason),
				 "%s%zu of %d calls carried no trial id", r->reason[0] ? "; " : "", (size_t)p->calls - n, p->calls);
	}
	r->started = 1; /* after the report is built: a blinded tracer is judged by prof_findings */
	if (p->keep)
		keep_trace(p, calls, n, io_bytes);
	if (p->metrics && r->available)
		metrics_pass(w, p, deadline, r);
	for (size_t i = 0; i < nobj; i++)
		free(objects[i]);
	free(objects);
	free(calls);
	return 0;
}

int prof_report_from_kept(const char *trace_path, struct prof_report *r, struct sb_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s.calls", trace_path);
	int rc = strbuf_read_file(&sb, path, 1u << 24);
	struct prof_call *calls = NULL;
	size_t n = 0, cap = 0;
	long long io_bytes = 0;
	int have_calls = rc == 0;
	char *save = NULL;
	for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long trial;
		double us;
		if (sscanf(line, "io_bytes %lld", &io_bytes) == 1)
			continue;
		if (sscanf(line, "call %llu %lf", &trial, &us) != 2)
			continue;
		if (n == cap)
			calls = xrealloc(calls, (cap = cap ? 2 * cap : 16) * sizeof(*calls));
		calls[n++] = (struct prof_call){ trial, us };
	}
	struct trace t;
	if ((rc = trace_parse_file(trace_path, &t, err)) == 0) {
		if (!have_calls) /* a trace alone: every trial in it, CUDA-event times unknown */
			for (size_t i = 0; i < t.ntrials; i++) {
				if (n == cap)
					calls = xrealloc(calls, (cap = cap ? 2 * cap : 16) * sizeof(*calls));
				calls[n++] = (struct prof_call){ t.trials[i].id, NAN };
			}
		prof_report_build(r, &t, calls, n, NULL, 0);
		r->io_bytes = io_bytes;
		trace_release(&t);
	}
	free(calls);
	free(path);
	strbuf_release(&sb);
	if (rc == 0) { /* a kept metrics file beside the trace, when there is one */
		char *mpath = xstrfmt("%s.metrics", trace_path);
		if (access(mpath, R_OK) == 0)
			prof_report_attach_metrics(r, mpath);
		free(mpath);
	}
	return rc;
}

static const struct verdict_profile_ops report_ops = { prof_report_release, prof_report_json, prof_report_summary };

void prof_candidate(const struct eval_env *e, const struct config *cfg, const struct eval_live *c, struct verdict *v)
{
	v->profile = xcalloc(1, sizeof(*v->profile));
	v->profile_ops = &report_ops;
	prof_report_init(v->profile);
	if (access(e->prof_lib, R_OK) != 0) {
		prof_report_unavailable(v->profile, "%s is missing: build it with make where the CUDA toolkit's CUPTI "
					"headers are, or set STITCHBENCH_PROF_LIB", e->prof_lib);
		return;
	}
	char *trace = xstrfmt("%s/profile.trace", c->dir), *msg = NULL;
	char *metrics = cfg->eval.profile_metrics == PM_CUPTI ? xstrfmt("%s/profile.metrics", c->dir) : NULL;
	struct prof_plan plan = {
		.lib = e->prof_lib, .trace = trace, .objects_under = c->ext_dir, .which = "model",
		.calls = cfg->eval.profile_trials, .setup = !v->timing.ran, .nsets = c->nsets, .seeds = c->seeds, .base_seed = (uint32_t)cfg->eval.seed,
		.flush_bytes = eval_flush_bytes(e), .warmup_ms = cfg->eval.warmup_ms, .warmup_calls = cfg->eval.warmup_calls,
		.lead_us = -1, .keep = e->keep_trace, .metrics = metrics,
	};
	struct worker_fault f;
	if (prof_session_run(c->worker, &plan, c->deadline, v->profile, &f, &msg))
		prof_report_unavailable(v->profile, "%s", msg);
	free(msg);
	free(trace);
	free(metrics);
	struct findings found = { 0 };
	/* a candidate calling cuBLAS from its own C++ runs only library kernels honestly; a torch op in
	 * forward doing the same is the static checks' H01 */
	v->profile->own_library_calls = c->src->calls_library;
	prof_findings(v->profile, &found);
	verdict_add_findings(v, cfg->checks.policy, found.v, found.n);
	findings_release(&found);
}
