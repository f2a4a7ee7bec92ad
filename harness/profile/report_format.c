/* report_format.c - a profile report as the verdict's "profile" JSON (docs/verdict.md) and as the
 * table `stitchbench profile` prints (docs/profile.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kclass.h"
#include "report.h"

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *dims(const int32_t d[3])
{
	return json_pack("[i,i,i]", d[0], d[1], d[2]);
}

static json_t *trial_json(const struct prof_trial *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "trial", json_integer((json_int_t)t->id));
	json_object_set_new(o, "found", json_boolean(t->found));
	json_object_set_new(o, "event_us", jnum(t->event_us));
	json_object_set_new(o, "gpu_window_us", jnum(t->gpu_window_us));
	json_object_set_new(o, "kernel_sum_us", jnum(t->kernel_sum_us));
	json_object_set_new(o, "span_us", jnum(t->span_us));
	json_object_set_new(o, "kernels", json_integer(t->kernels));
	json_object_set_new(o, "custom_kernels", json_integer(t->custom_kernels));
	json_object_set_new(o, "other_stream_kernels", json_integer(t->other_stream_kernels));
	json_object_set_new(o, "late_kernels", json_integer(t->late_kernels));
	json_object_set_new(o, "late_by_us", jnum(t->late_by_us));
	json_object_set_new(o, "early_kernels", json_integer(t->early_kernels));
	json_object_set_new(o, "early_by_us", jnum(t->early_by_us));
	json_object_set_new(o, "foreign_kernels", json_integer(t->foreign_kernels));
	json_object_set_new(o, "memcpys", json_integer(t->memcpys));
	json_object_set_new(o, "memsets", json_integer(t->memsets));
	json_object_set_new(o, "copy_us", jnum(t->copy_us));
	return o;
}

/* Long template names (ATen's lambdas run to kilobytes) are cut in verdicts, which are stored by the
 * thousand; the table and --ncu use the full names in memory. */
#define JSON_NAME_MAX 512

static json_t *jname(const char *s)
{
	if (strlen(s) <= JSON_NAME_MAX)
		return json_string(s);
	char *cut = xstrfmt("%.*s...", JSON_NAME_MAX - 3, s);
	json_t *j = json_string(cut);
	free(cut);
	return j;
}

static const char *kind_name(char k)
{
	return k == 'k' ? "kernel" : k == 'c' ? "memcpy" : "memset";
}

static json_t *row_json(const struct prof_row *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", jname(r->short_name));
	json_object_set_new(o, "demangled", jname(r->name));
	json_object_set_new(o, "mangled", jname(r->mangled));
	json_object_set_new(o, "kind", json_string(kind_name(r->kind)));
	json_object_set_new(o, "custom", json_boolean(r->custom));
	json_object_set_new(o, "library", r->library ? json_string(r->library) : json_null());
	json_object_set_new(o, "calls", json_integer((json_int_t)r->calls));
	json_object_set_new(o, "total_us", jnum(r->total_us));
	json_object_set_new(o, "mean_us", jnum(r->mean_us));
	json_object_set_new(o, "share", jnum(r->share));
	json_object_set_new(o, "stream", r->stream >= 0 ? json_integer(r->stream) : json_null());
	if (r->kind == 'k') {
		json_object_set_new(o, "grid", dims(r->grid));
		json_object_set_new(o, "block", dims(r->block));
		json_object_set_new(o, "launch_varies", json_boolean(r->launch_varies));
		json_object_set_new(o, "registers", json_integer(r->regs));
		json_object_set_new(o, "static_smem", json_integer(r->static_smem));
		json_object_set_new(o, "dynamic_smem", json_integer(r->dynamic_smem));
	} else {
		json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
	}
	if (r->kind == 'k' && r->hw.measured) {
		const struct hw_metrics *m = &r->hw;
		if (m->bound)
			json_object_set_new(o, "bound", json_string(m->bound));
		if (m->limiter)
			json_object_set_new(o, "limiter", json_string(m->limiter));
		const struct { const char *key; double v; } nums[] = {
			{ "roofline_pct", m->roofline_pct }, { "sm_pct", m->sm_pct }, { "mem_pct", m->mem_pct },
			{ "dram_pct", m->dram_pct }, { "l2_pct", m->l2_pct }, { "l1_pct", m->l1_pct },
			{ "occupancy_pct", m->occupancy_pct }, { "tensor_pct", m->tensor_pct },
			{ "duration_us", m->duration_us },
		};
		/* an unmeasured number is left out, not null: readers test for the key */
		for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
			if (isfinite(nums[i].v))
				json_object_set_new(o, nums[i].key, json_real(round(nums[i].v * 100) / 100));
		json_object_set_new(o, "metric_launches", json_integer((json_int_t)m->launches));
	}
	return o;
}

json_t *prof_report_json(const struct prof_report *r, size_t max_rows)
{
	json_t *o = json_object();
	json_object_set_new(o, "available", json_boolean(r->available));
	json_object_set_new(o, "reason", r->reason[0] ? json_string(r->reason) : json_null());
	if (!r->available)
		return o;
	json_object_set_new(o, "trace_complete", json_boolean(r->complete));
	json_object_set_new(o, "attributed", json_boolean(r->attributed));
	json_object_set_new(o, "dropped_records", json_integer((json_int_t)r->dropped));
	json_object_set_new(o, "untimed_kernels", json_integer((json_int_t)r->untimed));
	json_object_set_new(o, "cupti_version", json_integer(r->cupti_api));
	json_object_set_new(o, "end_event", json_string(r->end_event));
	json_object_set_new(o, "calls", json_integer((json_int_t)r->ntrials));
	json_object_set_new(o, "event_us", jnum(r->event_us));
	json_object_set_new(o, "kernel_sum_us", jnum(r->kernel_sum_us));
	json_object_set_new(o, "span_us", jnum(r->span_us));
	json_object_set_new(o, "total_us", jnum(r->total_us));
	json_object_set_new(o, "io_bytes", json_integer(r->io_bytes));
	json_object_set_new(o, "candidate_objects", json_integer((json_int_t)r->objects));
	json_t *trials = json_array(), *rows = json_array();
	for (size_t i = 0; i < r->ntrials; i++)
		json_array_append_new(trials, trial_json(&r->trials[i]));
	for (size_t i = 0; i < r->nrows && i < max_rows; i++)
		json_array_append_new(rows, row_json(&r->rows[i]));
	json_object_set_new(o, "trials", trials);
	json_object_set_new(o, "kernels", rows);
	json_object_set_new(o, "kernels_omitted", json_integer((json_int_t)(r->nrows > max_rows ? r->nrows - max_rows : 0)));
	if (r->metrics_asked)
		json_object_set_new(o, "metrics", json_pack("{s:s, s:s?, s:i, s:I, s:s?}", "source", "cupti", "chip",
							    r->metrics_chip[0] ? r->metrics_chip : NULL, "passes",
							    r->metrics_passes, "kernels_measured",
							    (json_int_t)r->metrics_kernels, "reason",
							    r->metrics_reason[0] ? r->metrics_reason : NULL));
	return o;
}

/* ---------- the table ---------- */

static void launch(const struct prof_row *r, char *buf, size_t len)
{
	if (r->kind != 'k') {
		double b = (double)r->bytes / (double)(r->calls ? r->calls : 1);
		if (b >= 1e6)
			snprintf(buf, len, "%.1f MB", b / 1e6);
		else
			snprintf(buf, len, "%.1f KB", b / 1e3);
		return;
	}
	if (r->grid[1] == 1 && r->grid[2] == 1 && r->block[1] == 1 && r->block[2] == 1)
		snprintf(buf, len, "%dx%d%s", r->grid[0], r->block[0], r->launch_varies ? "*" : "");
	else
		snprintf(buf, len, "(%d,%d,%d)x(%d,%d,%d)%s", r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
			 r->block[2], r->launch_varies ? "*" : "");
}

/* Bandwidth of the top row where its bytes are known: copies move what they say; a kernel that is
 * the only one of each call moved at least the call's inputs and outputs. */
static void bandwidth(const struct prof_report *r, struct strbuf *out)
{
	if (!r->nrows)
		return;
	const struct prof_row *top = &r->rows[0];
	size_t kernel_rows = 0;
	for (size_t i = 0; i < r->nrows; i++)
		kernel_rows += r->rows[i].kind == 'k';
	char *s = kname_short(top->name, 60);
	if (top->kind != 'k' && top->total_us > 0)
		strbuf_addf(out, "top: %s moved %.1f MB per call at %.1f GB/s\n", s,
			    (double)top->bytes / (double)top->calls / 1e6, (double)top->bytes / (top->total_us * 1e3));
	else if (kernel_rows == 1 && r->io_bytes > 0 && top->mean_us > 0 && top->calls == r->ntrials)
		strbuf_addf(out, "top: %s is the only kernel of each call, so it read the inputs and wrote the outputs "
			    "(%.1f MB): at least %.1f GB/s achieved\n", s, (double)r->io_bytes / 1e6,
			    (double)r->io_bytes / (top->mean_us * 1e3));
	else
		strbuf_addf(out, "top: %s (bandwidth unknown: %zu kernels share the call's inputs and outputs)\n", s,
			    kernel_rows);
	free(s);
}

static void pct(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "-");
}

/* The kernels' hardware metrics (hwmetrics.h), numbered as in the table above. */
static void hw_table(const struct prof_report *r, size_t max_rows, struct strbuf *out)
{
	if (!r->metrics_asked)
		return;
	if (!r->metrics_kernels) {
		strbuf_addf(out, "hardware metrics: none (%s)\n", r->metrics_reason[0] ? r->metrics_reason : "not measured");
		return;
	}
	strbuf_addf(out, "hardware metrics (CUPTI range profiler on %s, one more call, each launch replayed %d times; "
		    "%% of peak):\n", r->metrics_chip[0] ? r->metrics_chip : "this GPU", r->metrics_passes);
	strbuf_addf(out, "%3s  %-34s %-8s %6s  %-19s %6s %6s %6s %6s %6s\n", "#", "kernel", "bound", "roof%", "limiter",
		    "DRAM", "SM", "memory", "occup", "tensor");
	for (size_t i = 0; i < r->nrows && i < max_rows; i++) {
		const struct prof_row *row = &r->rows[i];
		const struct hw_metrics *m = &row->hw;
		if (row->kind != 'k' || !m->measured)
			continue;
		char *s = kname_short(row->name, 34), roof[16], d[16], sm[16], mem[16], occ[16], ten[16];
		pct(roof, sizeof(roof), m->roofline_pct);
		pct(d, sizeof(d), m->dram_pct);
		pct(sm, sizeof(sm), m->sm_pct);
		pct(mem, sizeof(mem), m->mem_pct);
		pct(occ, sizeof(occ), m->occupancy_pct);
		pct(ten, sizeof(ten), m->tensor_pct);
		strbuf_addf(out, "%3zu  %-34s %-8s %6s  %-19s %6s %6s %6s %6s %6s\n", i + 1, s, m->bound ? m->bound : "-", roof,
			    m->limiter ? m->limiter : "-", d, sm, mem, occ, ten);
		free(s);
	}
	if (r->metrics_reason[0])
		strbuf_addf(out, "note: %s\n", r->metrics_reason);
}

void prof_report_table(const struct prof_report *r, size_t max_rows, struct strbuf *out)
{
	if (!r->available) {
		strbuf_addf(out, "no profile: %s\n", r->reason[0] ? r->reason : "not recorded");
		return;
	}
	char events[32] = "n/a";
	if (isfinite(r->event_us))
		snprintf(events, sizeof(events), "%.2f us", r->event_us);
	strbuf_addf(out, "per call (median of %zu): CUDA events %s, kernel time %.2f us (sum), span %.2f us "
		    "(first kernel start to last kernel end)\n", r->ntrials, events, r->kernel_sum_us, r->span_us);
	strbuf_addf(out, "%3s  %-50s %6s %11s %6s %10s %6s %-10s %s\n", "#", "kernel", "calls", "total us", "share",
		    "mean us", "stream", "class", "grid x block");
	for (size_t i = 0; i < r->nrows && i < max_rows; i++) {
		const struct prof_row *row = &r->rows[i];
		char *s = kname_short(row->name, 50), stream[16], geo[64];
		if (row->stream >= 0)
			snprintf(stream, sizeof(stream), "%lld", (long long)row->stream);
		else
			snprintf(stream, sizeof(stream), "many");
		launch(row, geo, sizeof(geo));
		strbuf_addf(out, "%3zu  %-50s %6zu %11.2f %5.1f%% %10.2f %6s %-10s %s\n", i + 1, s, row->calls, row->total_us,
			    100 * row->share, row->mean_us, stream,
			    row->custom ? "custom" : row->library ? row->library : "copy", geo);
		free(s);
	}
	if (r->nrows > max_rows)
		strbuf_addf(out, "     ... %zu more row%s (--json lists up to 20)\n", r->nrows - max_rows,
			    r->nrows - max_rows == 1 ? "" : "s");
	bandwidth(r, out);
	hw_table(r, max_rows, out);
	if (r->reason[0])
		strbuf_addf(out, "note: %s\n", r->reason);
}

void prof_report_summary(const struct prof_report *r, struct strbuf *out)
{
	if (!r->available) {
		strbuf_addf(out, "  profile: none (%s)\n", r->reason[0] ? r->reason : "not recorded");
		return;
	}
	strbuf_addf(out, "  profile (%zu calls, CUPTI): kernel time %.2f us, span %.2f us per call (median)\n", r->ntrials,
		    r->kernel_sum_us, r->span_us);
	strbuf_addstr(out, "    top:");
	for (size_t i = 0; i < r->nrows && i < 3; i++) {
		char *s = kname_short(r->rows[i].name, 48);
		strbuf_addf(out, "%s %s %.0f%% (%s)", i ? "," : "", s, 100 * r->rows[i].share,
			    r->rows[i].custom ? "custom" : r->rows[i].library ? r->rows[i].library : "copy");
		free(s);
	}
	strbuf_addf(out, "%s\n", r->nrows ? "" : " no kernels");
	if (r->metrics_kernels) {
		strbuf_addstr(out, "    bound:");
		for (size_t i = 0, shown = 0; i < r->nrows && shown < 3; i++) {
			const struct hw_metrics *m = &r->rows[i].hw;
			if (r->rows[i].kind != 'k' || !m->measured || !m->bound)
				continue;
			char *s = kname_short(r->rows[i].name, 40);
			strbuf_addf(out, "%s %s %s-bound at %.0f%% of its roof (%s)", shown++ ? "," : "", s, m->bound,
				    m->roofline_pct, m->limiter);
			free(s);
		}
		strbuf_addch(out, '\n');
	}
	if (r->reason[0])
		strbuf_addf(out, "    note: %s\n", r->reason);
}
