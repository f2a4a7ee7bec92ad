/* hwmetrics.c - reads the metrics file libstitchprof writes (docs/trace.md) and classifies each kernel
 * the way Nsight Compute's Speed of Light rule does: the busier of the compute and memory sides bounds
 * a kernel when it reaches 60% of its peak; below that on both, a short kernel is launch-bound and a
 * long one latency-bound (occupancy too low to hide latency, or stalls despite enough warps). */
#include "hwmetrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

void hw_metrics_init(struct hw_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->duration_us = m->sm_pct = m->mem_pct = m->dram_pct = m->l2_pct = m->l1_pct = NAN;
	m->occupancy_pct = m->tensor_pct = m->roofline_pct = NAN;
}

static double nanmax(double a, double b)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	return a > b ? a : b;
}

void hw_classify(struct hw_metrics *m)
{
	m->bound = m->limiter = NULL;
	m->roofline_pct = NAN;
	if (!m->measured)
		return;
	/* the memory side is Nsight Compute's "Memory Throughput" (the busiest memory unit over the elapsed
	 * cycles); the units stand in only where it was not measured. l1_pct counts active cycles only, so
	 * it names a limiter but never lifts a kernel over the roof threshold by itself */
	double mem = isnan(m->mem_pct) ? nanmax(m->dram_pct, nanmax(m->l2_pct, m->l1_pct)) : m->mem_pct;
	double roof = nanmax(m->sm_pct, mem);
	if (isnan(roof))
		return;
	m->roofline_pct = roof;
	if (roof >= HW_ROOF_PCT) {
		if (!isnan(mem) && (isnan(m->sm_pct) || mem >= m->sm_pct)) {
			m->bound = "memory";
			/* the busiest memory level names the limiter (an L1-bound kernel needs other fixes than a
			 * DRAM-bound one); every DRAM byte also passes through L2, so a streaming kernel keeps L2
			 * about as busy as DRAM, and DRAM, the scarcer of the two, is named while it is within 80% */
			double d = isnan(m->dram_pct) ? -1 : m->dram_pct, l2 = isnan(m->l2_pct) ? -1 : m->l2_pct,
			       l1 = isnan(m->l1_pct) ? -1 : m->l1_pct;
			double cache = l2 > l1 ? l2 : l1;
			m->limiter = d >= HW_DRAM_SHARE * cache ? "DRAM bandwidth" : l2 >= l1 ? "L2 bandwidth" : "L1/shared bandwidth";
		} else {
			m->bound = "compute";
			m->limiter = !isnan(m->tensor_pct) && m->tensor_pct >= HW_ROOF_PCT ? "tensor pipelines" : "SM pipelines";
		}
	} else if (!isnan(m->duration_us) && m->duration_us < HW_LAUNCH_US) {
		m->bound = "launch";
		m->limiter = "launch overhead";
	} else {
		m->bound = "latency";
		m->limiter = !isnan(m->occupancy_pct) && m->occupancy_pct < HW_LOW_OCCUPANCY_PCT ? "occupancy"
											   : "latency (stalls)";
	}
}

/* ---------- the file ---------- */

enum field { F_DURATION, F_SM, F_MEM, F_DRAM, F_L2, F_L1, F_OCC, F_TENSOR, F_UNKNOWN };

static enum field field_of(const char *metric)
{
	static const struct { const char *prefix; enum field f; } map[] = {
		{ "gpu__time_duration.", F_DURATION }, { "sm__throughput.", F_SM },
		{ "gpu__compute_memory_throughput.", F_MEM }, { "dram__throughput.", F_DRAM },
		{ "lts__throughput.", F_L2 }, { "l1tex__throughput.", F_L1 }, { "sm__warps_active.", F_OCC },
		{ "sm__pipe_tensor_op_", F_TENSOR },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strncmp(metric, map[i].prefix, strlen(map[i].prefix)))
			return map[i].f;
	return F_UNKNOWN;
}

#define MAX_METRICS 32
#define MAX_RANGES_READ 100000

static void set_field(struct hw_metrics *m, enum field f, double v)
{
	/* the file comes from the candidate's process: a percentage outside what a counter can give is
	 * not a measurement */
	if (isnan(v) || v < 0 || (f != F_DURATION && v > 150))
		return;
	switch (f) {
	case F_DURATION: m->duration_us = v / 1000.0; break;
	case F_SM: m->sm_pct = v; break;
	case F_MEM: m->mem_pct = v; break;
	case F_DRAM: m->dram_pct = v; break;
	case F_L2: m->l2_pct = v; break;
	case F_L1: m->l1_pct = v; break;
	case F_OCC: m->occupancy_pct = v; break;
	case F_TENSOR: m->tensor_pct = nanmax(m->tensor_pct, v); break;
	case F_UNKNOWN: break;
	}
}

void hw_file_release(struct hw_file *f)
{
	for (size_t i = 0; i < f->nranges; i++)
		free(f->ranges[i].mangled);
	free(f->ranges);
	memset(f, 0, sizeof(*f));
}

int hw_file_read(const char *path, struct hw_file *f, struct sb_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	enum field cols[MAX_METRICS];
	size_t ncols = 0, cap = 0, lineno = 0;
	int rc = 0;
	memset(f, 0, sizeof(*f));
	if (strbuf_read_file(&sb, path, 64u << 20) != 0) {
		strbuf_release(&sb);
		return sb_error_set(err, SB_EINPUT, "%s: cannot read the metrics file", path);
	}
	char *save = NULL;
	for (char *line = strtok_r(sb.buf, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
		char word[32], name[4096];
		size_t idx, a, b;
		int in_call, n = 0;
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, "stitchmetrics 1") != 0)
				rc = sb_error_set(err, SB_EINPUT, "%s:1: not a metrics file of format 1", path);
			continue;
		}
		if (f->complete) {
			rc = sb_error_set(err, SB_EINPUT, "%s:%zu: a line after the end line", path, lineno);
		} else if (sscanf(line, "%31s", word) != 1) {
			rc = sb_error_set(err, SB_EINPUT, "%s:%zu: an empty line", path, lineno);
		} else if (!strcmp(word, "chip")) {
			if (sscanf(line, "chip %31s", f->chip) != 1)
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: chip without a name", path, lineno);
		} else if (!strcmp(word, "passes")) {
			if (sscanf(line, "passes %d", &f->passes) != 1 || f->passes < 0)
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: bad passes line", path, lineno);
		} else if (!strcmp(word, "metric")) {
			if (sscanf(line, "metric %zu %4095s", &idx, name) != 2 || idx != ncols || ncols >= MAX_METRICS)
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: metric lines must be numbered 0, 1, ... (at most %d)",
						  path, lineno, MAX_METRICS);
			else
				cols[ncols++] = field_of(name);
		} else if (!strcmp(word, "launches")) {
			if (sscanf(line, "launches %zu %zu", &a, &b) != 2)
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: bad launches line", path, lineno);
			f->names = a;
		} else if (!strcmp(word, "range")) {
			if (sscanf(line, "range %zu %d %4095s %n", &idx, &in_call, name, &n) != 3 || idx != f->nranges ||
			    (in_call != 0 && in_call != 1) || f->nranges >= MAX_RANGES_READ) {
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: bad range line (ranges are numbered 0, 1, ...)", path,
						  lineno);
				break;
			}
			if (f->nranges == cap)
				f->ranges = xrealloc(f->ranges, (cap = cap ? 2 * cap : 64) * sizeof(*f->ranges));
			struct hw_range *r = &f->ranges[f->nranges++];
			r->mangled = in_call && strcmp(name, "-") ? xstrdup(name) : NULL;
			hw_metrics_init(&r->m);
			r->m.measured = 1;
			r->m.launches = 1;
			char *p = line + n;
			for (size_t c = 0; c < ncols; c++) {
				char *end;
				double v = strtod(p, &end);
				if (end == p) {
					rc = sb_error_set(err, SB_EINPUT, "%s:%zu: range %zu has %zu values, %zu metrics", path,
							  lineno, idx, c, ncols);
					break;
				}
				set_field(&r->m, cols[c], v);
				p = end;
			}
		} else if (!strcmp(word, "dropped")) {
			if (sscanf(line, "dropped %zu", &f->dropped) != 1)
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: bad dropped line", path, lineno);
		} else if (!strcmp(word, "end")) {
			if (sscanf(line, "end %zu", &a) != 1 || a != f->nranges)
				rc = sb_error_set(err, SB_EINPUT, "%s:%zu: the end line counts %zu ranges, the file has %zu", path,
						  lineno, a, f->nranges);
			f->complete = 1;
		}
		/* other words (`skipped`, later additions) are skipped */
	}
	if (!rc && lineno == 0)
		rc = sb_error_set(err, SB_EINPUT, "%s: the metrics file is empty", path);
	if (!rc && !f->complete)
		rc = sb_error_set(err, SB_EINPUT, "%s: the metrics file has no end line (cut short)", path);
	strbuf_release(&sb);
	if (rc)
		hw_file_release(f);
	return rc;
}

void hw_file_kernel(const struct hw_file *f, const char *mangled, struct hw_metrics *out)
{
	/* sums of value x weight and of weights, per field: a launch that lacks a metric does not pull the
	 * mean of that metric towards zero */
	double sum[8] = { 0 }, w[8] = { 0 };
	hw_metrics_init(out);
	for (size_t i = 0; mangled && i < f->nranges; i++) {
		const struct hw_range *r = &f->ranges[i];
		if (!r->mangled || strcmp(r->mangled, mangled))
			continue;
		const double v[8] = { r->m.duration_us, r->m.sm_pct, r->m.mem_pct, r->m.dram_pct, r->m.l2_pct, r->m.l1_pct,
				      r->m.occupancy_pct, r->m.tensor_pct };
		double weight = isnan(r->m.duration_us) || r->m.duration_us <= 0 ? 1e-3 : r->m.duration_us;
		for (int k = 0; k < 8; k++)
			if (!isnan(v[k])) {
				sum[k] += (k == 0 ? 1 : weight) * v[k];
				w[k] += k == 0 ? 1 : weight;
			}
		out->launches++;
	}
	if (!out->launches)
		return;
	out->measured = 1;
	double *dst[8] = { &out->duration_us, &out->sm_pct, &out->mem_pct, &out->dram_pct, &out->l2_pct, &out->l1_pct,
			   &out->occupancy_pct, &out->tensor_pct };
	for (int k = 0; k < 8; k++)
		*dst[k] = w[k] > 0 ? sum[k] / w[k] : NAN;
	hw_classify(out);
}
