/* report.c - turns a trace into per-call numbers, a kernel table and findings: records are attributed
 * to calls by their trial ids, the timed window comes from the worker's own CUDA events. */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/timing/timing.h"
#include "kclass.h"

/* Slack between CUPTI's GPU and host clocks when checking that an event lies inside its trial. */
#define CLOCK_SLACK_NS 20000

void prof_report_init(struct prof_report *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->end_event, sizeof(r->end_event), "none");
}

void prof_report_release(struct prof_report *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].name);
		free(r->rows[i].mangled);
		free(r->rows[i].short_name);
	}
	free(r->rows);
	free(r->trials);
	prof_report_init(r);
}

void prof_report_unavailable(struct prof_report *r, const char *fmt, ...)
{
	va_list ap;
	int started = r->started; /* that the tracer started stays true of this report */
	prof_report_release(r);
	r->started = started;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

static void add_reason(struct prof_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_reason(struct prof_report *r, const char *fmt, ...)
{
	size_t used = strlen(r->reason);
	va_list ap;
	if (used && used + 2 < sizeof(r->reason))
		used += (size_t)snprintf(r->reason + used, sizeof(r->reason) - used, "; ");
	va_start(ap, fmt);
	vsnprintf(r->reason + used, sizeof(r->reason) - used, fmt, ap);
	va_end(ap);
}

/* ---------- calls by trial id ---------- */

struct call_idx {
	uint64_t trial;
	size_t i;
};

static int cmp_idx(const void *a, const void *b)
{
	const struct call_idx *x = a, *y = b;
	return x->trial < y->trial ? -1 : x->trial > y->trial;
}

/* The index of the call with this trial id, or -1 (not a profiled call: warm-up, or none). */
static long call_of(const struct call_idx *idx, size_t n, uint64_t trial)
{
	if (!trial)
		return -1;
	struct call_idx key = { trial, 0 };
	const struct call_idx *hit = bsearch(&key, idx, n, sizeof(*idx), cmp_idx);
	return hit ? (long)hit->i : -1;
}

/* The timed window of one call on the GPU clock. */
struct window {
	const struct trace_event *start, *end;
	uint64_t lo, hi;             /* hi = 0: no bound on the end */
	int source;                  /* 2 cuda_event, 1 event_sync, 0 none */
	int64_t stream;
};

static void find_windows(const struct trace *t, const struct call_idx *idx, size_t n, struct window *w)
{
	for (size_t e = 0; e < t->nevents; e++) {
		const struct trace_event *ev = &t->events[e];
		long i = call_of(idx, n, trace_trial_of(t, ev->corr));
		if (i < 0)
			continue;
		if (!w[i].start || ev->corr < w[i].start->corr)
			w[i].start = ev;
		if (!w[i].end || ev->corr > w[i].end->corr)
			w[i].end = ev;
	}
	for (size_t i = 0; i < n; i++) {
		const struct trace_trial *tr = trace_find_trial(t, idx[i].trial);
		size_t c = idx[i].i;
		const struct trace_event *s = w[c].start, *e = w[c].end;
		/* the timed stream: as CUPTI named it at trial_begin, else the stream of the start event */
		w[c].stream = tr && tr->stream >= 0 ? tr->stream : s ? (int64_t)s->stream : -1;
		if (!tr)
			continue;
		w[c].lo = tr->begin;
		/* device timestamps count only if they fall inside the trial's host window: same clock */
		if (s && e && s != e && s->ts && e->ts && s->ts <= e->ts && s->ts + CLOCK_SLACK_NS >= tr->begin &&
		    e->ts <= tr->end + CLOCK_SLACK_NS) {
			w[c].lo = s->ts;
			w[c].hi = e->ts;
			w[c].source = 2;
			continue;
		}
		/* else the end of the worker's synchronisation on the end event, a little after the event itself:
		 * the call's last event synchronisation (on the end event, when its record is there) */
		const struct trace_sync *last = NULL;
		for (size_t k = 0; k < t->nsyncs; k++) {
			const struct trace_sync *y = &t->syncs[k];
			if (!strcmp(y->type, "event_sync") && (!e || y->event == (int64_t)e->event) &&
			    trace_trial_of(t, y->corr) == idx[i].trial && (!last || y->corr > last->corr))
				last = y;
		}
		if (last) {
			w[c].hi = last->end;
			w[c].source = 1;
		}
	}
}

/* ---------- rows ---------- */

static struct prof_row *new_row(struct prof_report *r, size_t *cap)
{
	if (r->nrows == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		r->rows = xrealloc(r->rows, *cap * sizeof(*r->rows));
	}
	struct prof_row *row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	hw_metrics_init(&row->hw);
	return row;
}

static void add_kernel_row(struct prof_report *r, size_t *cap, long *row_of, const struct trace *t,
			   const struct trace_kernel *k, const struct kclass *kc)
{
	struct prof_row *row;
	if (row_of[k->name] < 0) {
		row_of[k->name] = (long)r->nrows;
		row = new_row(r, cap);
		row->kind = 'k';
		row->name = xstrdup(trace_name_of(t, k->name));
		row->mangled = xstrdup(trace_mangled_of(t, k->name));
		row->short_name = kname_short(row->name, 200);
		row->custom = kc->custom;
		row->library = kc->custom ? NULL : kc->library;
		row->stream = k->stream;
		memcpy(row->grid, k->grid, sizeof(row->grid));
		memcpy(row->block, k->block, sizeof(row->block));
		row->regs = k->regs;
		row->static_smem = k->static_smem;
		row->dynamic_smem = k->dynamic_smem;
	}
	row = &r->rows[row_of[k->name]];
	row->calls++;
	row->total_us += (double)(k->end - k->start) / 1000.0;
	if (row->stream != (int64_t)k->stream)
		row->stream = -1;
	if (memcmp(row->grid, k->grid, sizeof(row->grid)) || memcmp(row->block, k->block, sizeof(row->block)))
		row->launch_varies = 1;
}

static void add_copy_row(struct prof_report *r, size_t *cap, const struct trace_copy *c)
{
	char name[32];
	snprintf(name, sizeof(name), c->memset ? "[memset]" : "[memcpy %s]", c->kind);
	struct prof_row *row = NULL;
	for (size_t i = 0; i < r->nrows && !row; i++)
		if (r->rows[i].kind != 'k' && !strcmp(r->rows[i].name, name))
			row = &r->rows[i];
	if (!row) {
		row = new_row(r, cap);
		row->kind = c->memset ? 's' : 'c';
		row->name = xstrdup(name);
		row->mangled = xstrdup(name);
		row->short_name = xstrdup(name);
		row->stream = c->stream;
	}
	row->calls++;
	row->bytes += c->bytes;
	row->total_us += (double)(c->end - c->start) / 1000.0;
	if (row->stream != (int64_t)c->stream)
		row->stream = -1;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct prof_row *x = a, *y = b;
	if (x->total_us != y->total_us)
		return x->total_us > y->total_us ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* ---------- the report ---------- */

static void kernels_pass(struct prof_report *r, const struct trace *t, const struct call_idx *idx, size_t n,
			 const struct window *w, const struct kclass *kc, long *row_of, size_t *cap)
{
	uint64_t *first = xcalloc(n ? n : 1, sizeof(uint64_t)), *last = xcalloc(n ? n : 1, sizeof(uint64_t));
	for (size_t j = 0; j < t->nkernels; j++) {
		const struct trace_kernel *k = &t->kernels[j];
		uint64_t trial = trace_trial_of(t, k->corr);
		long i = call_of(idx, n, trial);
		if (i < 0) {
			/* launched by no profiled call: another thread's work if it ran inside a timed window */
			for (size_t c = 0; trial == 0 && k->end && c < n; c++)
				if (w[c].source && k->end > w[c].lo && k->start < w[c].hi)
					r->trials[c].foreign_kernels++;
			continue;
		}
		struct prof_trial *pt = &r->trials[i];
		pt->kernels++;
		pt->custom_kernels += kc[k->name].custom;
		if (w[i].stream >= 0 && (int64_t)k->stream != w[i].stream)
			pt->other_stream_kernels++;
		if (!k->start && !k->end)
			continue; /* untimed: counted, not summed */
		pt->kernel_sum_us += (double)(k->end - k->start) / 1000.0;
		if (!first[i] || k->start < first[i])
			first[i] = k->start;
		if (k->end > last[i])
			last[i] = k->end;
		uint64_t slack = w[i].source == 2 ? PROF_LATE_NS : 0;
		if (w[i].hi && k->end > w[i].hi + slack) {
			double by = (double)(k->end - w[i].hi) / 1000.0;
			pt->late_kernels++;
			if (by > pt->late_by_us)
				pt->late_by_us = by;
		}
		/* launched by the call but run before its start event fired: a side stream that does not wait for
		 * the timed stream runs during the device-side lead, outside the window (and reads inputs the
		 * timed stream may still be writing) */
		if (w[i].source == 2 && k->start + PROF_LATE_NS < w[i].lo) {
			double by = (double)(w[i].lo - k->start) / 1000.0;
			pt->early_kernels++;
			if (by > pt->early_by_us)
				pt->early_by_us = by;
		}
		add_kernel_row(r, cap, row_of, t, k, &kc[k->name]);
	}
	for (size_t i = 0; i < n; i++)
		r->trials[i].span_us = last[i] ? (double)(last[i] - first[i]) / 1000.0 : 0;
	free(first);
	free(last);
}

static void medians(struct prof_report *r)
{
	double *a = xcalloc(r->ntrials + 1, sizeof(double)), *b = xcalloc(r->ntrials + 1, sizeof(double)),
	       *c = xcalloc(r->ntrials + 1, sizeof(double));
	size_t m = 0;
	struct sample_stats s;
	for (size_t i = 0; i < r->ntrials; i++) {
		if (!r->trials[i].found)
			continue;
		a[m] = r->trials[i].kernel_sum_us;
		b[m] = r->trials[i].span_us;
		c[m++] = r->trials[i].event_us;
	}
	stats_compute(a, m, &s);
	r->kernel_sum_us = s.median;
	stats_compute(b, m, &s);
	r->span_us = s.median;
	stats_compute(c, m, &s);
	r->event_us = s.median;
	free(a);
	free(b);
	free(c);
}

void prof_report_build(struct prof_report *r, const struct trace *t, const struct prof_call *calls, size_t ncalls,
		       const char *const *objects, size_t nobjects)
{
	prof_report_init(r);
	r->available = 1;
	r->complete = t->complete;
	r->dropped = t->dropped;
	r->untimed = t->untimed;
	r->cupti_api = t->cupti_api;
	r->attributed = t->next > 0;
	r->objects = nobjects;
	if (!t->complete)
		add_reason(r, "the trace has no end line: the worker stopped before profiling finished");
	if (t->dropped)
		add_reason(r, "CUPTI dropped %llu records", (unsigned long long)t->dropped);
	if (t->untimed)
		add_reason(r, "%zu kernels have no timestamps (CUPTI lacked device memory for them)", t->untimed);
	if (!r->attributed)
		add_reason(r, "no record carries a trial id, so nothing can be attributed to a call%s%s",
			   t->disabled[0] ? " (CUPTI refused: " : "", t->disabled[0] ? t->disabled : "");
	if (t->disabled[0] && r->attributed)
		add_reason(r, "CUPTI refused some activity kinds: %s", t->disabled);

	struct call_idx *idx = xcalloc(ncalls ? ncalls : 1, sizeof(*idx));
	r->trials = xcalloc(ncalls ? ncalls : 1, sizeof(*r->trials));
	r->ntrials = ncalls;
	for (size_t i = 0; i < ncalls; i++) {
		idx[i] = (struct call_idx){ calls[i].trial, i };
		r->trials[i].id = calls[i].trial;
		r->trials[i].event_us = calls[i].event_us;
		r->trials[i].found = trace_find_trial(t, calls[i].trial) != NULL;
		r->trials[i].gpu_window_us = NAN;
	}
	qsort(idx, ncalls, sizeof(*idx), cmp_idx);

	struct window *w = xcalloc(ncalls ? ncalls : 1, sizeof(*w));
	find_windows(t, idx, ncalls, w);
	int weakest = 2, any = 0;
	for (size_t i = 0; i < ncalls; i++) {
		if (!r->trials[i].found)
			continue;
		any = 1;
		if (w[i].source < weakest)
			weakest = w[i].source;
		if (w[i].source == 2)
			r->trials[i].gpu_window_us = (double)(w[i].hi - w[i].lo) / 1000.0;
	}
	snprintf(r->end_event, sizeof(r->end_event), "%s", !any ? "none" : weakest == 2 ? "cuda_event"
		 : weakest == 1 ? "event_sync" : "none");

	/* classify every name once; the candidate's objects decide for template libraries it may instantiate */
	struct kclass *kc = xcalloc(t->nnames + 1, sizeof(*kc));
	struct kclass_objects objs;
	kclass_objects_load(&objs, objects, nobjects);
	kclass_of("?", &kc[0]);
	for (size_t i = 1; i <= t->nnames; i++) {
		kclass_of(trace_name_of(t, (uint32_t)i), &kc[i]);
		if (kc[i].instantiable && kclass_objects_contain(&objs, trace_mangled_of(t, (uint32_t)i))) {
			kc[i].custom = 1;
			kc[i].library = NULL;
		}
	}
	kclass_objects_release(&objs);

	long *row_of = xcalloc(t->nnames + 1, sizeof(long));
	for (size_t i = 0; i <= t->nnames; i++)
		row_of[i] = -1;
	size_t cap = 0;
	kernels_pass(r, t, idx, ncalls, w, kc, row_of, &cap);
	for (size_t j = 0; j < t->ncopies; j++) {
		const struct trace_copy *c = &t->copies[j];
		long i = call_of(idx, ncalls, trace_trial_of(t, c->corr));
		if (i < 0)
			continue;
		if (c->memset)
			r->trials[i].memsets++;
		else
			r->trials[i].memcpys++;
		r->trials[i].copy_us += (double)(c->end - c->start) / 1000.0;
		add_copy_row(r, &cap, c);
	}
	for (size_t i = 0; i < r->nrows; i++)
		r->total_us += r->rows[i].total_us;
	for (size_t i = 0; i < r->nrows; i++) {
		r->rows[i].mean_us = r->rows[i].calls ? r->rows[i].total_us / (double)r->rows[i].calls : 0;
		r->rows[i].share = r->total_us > 0 ? r->rows[i].total_us / r->total_us : 0;
	}
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
	size_t missing = 0;
	for (size_t i = 0; i < ncalls; i++)
		missing += !r->trials[i].found;
	if (missing)
		add_reason(r, "%zu of %zu profiled calls are missing from the trace", missing, ncalls);
	medians(r);
	free(row_of);
	free(kc);
	free(w);
	free(idx);
}

/* ---------- findings ---------- */

/* "A (61%), B (22%)": the largest rows that match `pick`. */
static void list_rows(const struct prof_report *r, int pytorch_only, struct strbuf *sb)
{
	int shown = 0;
	for (size_t i = 0; i < r->nrows && shown < 3; i++) {
		const struct prof_row *row = &r->rows[i];
		if (row->kind != 'k')
			continue;
		struct kclass kc;
		kclass_of(row->name, &kc);
		if (pytorch_only && !kc.pytorch_compute)
			continue;
		char *s = kname_short(row->name, 60);
		strbuf_addf(sb, "%s%s %s (%.0f%%)", shown ? ", " : "", row->library ? row->library : "custom", s,
			    100 * row->share);
		free(s);
		shown++;
	}
}

size_t prof_findings(const struct prof_report *r, struct findings *out)
{
	size_t n0 = out->n;
	struct strbuf top = STRBUF_INIT, pytorch_top = STRBUF_INIT;
	struct prof_facts f = {
		.started = r->started, .available = r->available, .complete = r->complete, .attributed = r->attributed,
		.dropped = r->dropped, .own_library_calls = r->own_library_calls,
	};
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct prof_trial *t = &r->trials[i];
		if (!t->found)
			continue;
		f.calls++;
		f.kernels += t->kernels;
		f.custom += t->custom_kernels;
		f.late += t->late_kernels;
		f.early += t->early_kernels;
		if (t->early_by_us > f.early_by_us)
			f.early_by_us = t->early_by_us;
		f.foreign += t->foreign_kernels;
		f.copies += t->memcpys + t->memsets;
		if (t->late_by_us > f.late_by_us)
			f.late_by_us = t->late_by_us;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		struct kclass kc;
		if (r->rows[i].kind != 'k')
			continue;
		kclass_of(r->rows[i].name, &kc);
		f.pytorch |= !r->rows[i].custom && kc.pytorch_compute;
		f.kernel_us += r->rows[i].total_us;
		if (!r->rows[i].custom && kc.pytorch_compute)
			f.pytorch_us += r->rows[i].total_us;
	}
	list_rows(r, 0, &top);
	list_rows(r, 1, &pytorch_top);
	f.kernels_top = top.buf;
	f.pytorch_top = pytorch_top.buf;
	rules_profile(&f, out);
	strbuf_release(&top);
	strbuf_release(&pytorch_top);
	return out->n - n0;
}
