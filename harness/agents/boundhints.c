/* boundhints.c - the bound class of a kernel turned into words an agent can act on. The numbers alone
 * ("DRAM 85%") leave the model to recall what a memory-bound kernel needs; one concrete hint per class
 * shown says it, once, however many kernels share the class. */
#include "boundhints.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HINTS_TEMPLATE "bound-hints"

static const char *const section_names[HINT_NSECTIONS] = {
	[HINT_MEMORY] = "memory",
	[HINT_COMPUTE_TENSOR_IDLE] = "compute-tensor-idle",
	[HINT_COMPUTE_TENSOR_BUSY] = "compute-tensor-busy",
	[HINT_LATENCY_LOW_OCCUPANCY] = "latency-low-occupancy",
	[HINT_LATENCY_OCCUPANCY_OK] = "latency-occupancy-ok",
	[HINT_LAUNCH] = "launch",
};

static const char *const class_names[BOUND_NCLASSES] = { "memory", "compute", "latency", "launch" };

static int class_of(const char *bound)
{
	for (int i = 0; bound && i < BOUND_NCLASSES; i++)
		if (!strcmp(bound, class_names[i]))
			return i;
	return -1;
}

static int is_limiter(const struct hw_metrics *m, const char *unit)
{
	return m->limiter && !strcmp(m->limiter, unit);
}

/* Unmeasured tensor pipes count as idle unless the limiter names them: the advice to use them is the
 * larger gain, and a kernel already on them says so through its limiter. */
static int tensor_busy(const struct hw_metrics *m)
{
	return is_limiter(m, "tensor pipelines") || (isfinite(m->tensor_pct) && m->tensor_pct >= BOUND_TENSOR_IDLE_PCT);
}

static int occupancy_low(const struct hw_metrics *m)
{
	return is_limiter(m, "occupancy") || (isfinite(m->occupancy_pct) && m->occupancy_pct < HW_LOW_OCCUPANCY_PCT);
}

int bound_hint_for(const struct hw_metrics *m)
{
	switch (class_of(m->bound)) {
	case 0:
		return HINT_MEMORY;
	case 1:
		return tensor_busy(m) ? HINT_COMPUTE_TENSOR_BUSY : HINT_COMPUTE_TENSOR_IDLE;
	case 2:
		return occupancy_low(m) ? HINT_LATENCY_LOW_OCCUPANCY : HINT_LATENCY_OCCUPANCY_OK;
	case 3:
		return HINT_LAUNCH;
	}
	return -1;
}

static int section_of(const char *name, size_t len)
{
	for (int i = 0; i < HINT_NSECTIONS; i++)
		if (strlen(section_names[i]) == len && !strncmp(name, section_names[i], len))
			return i;
	return -1;
}

static int bad_section(struct sb_error *err, const char *where, int line, const char *what, const char *name,
		       size_t len)
{
	struct strbuf known = STRBUF_INIT;
	for (int i = 0; i < HINT_NSECTIONS; i++)
		strbuf_addf(&known, "%s%s", i ? ", " : "", section_names[i]);
	sb_error_set(err, SB_EINPUT, "%s:%d: %s section '## %.*s' (the sections: %s)", where, line, what,
		     (int)(len < 60 ? len : 60), name, known.buf);
	strbuf_release(&known);
	return SB_EINPUT;
}

/* Splits the text at its "## NAME" lines; what comes before the first one is the file's own notes. */
static int split_sections(struct bound_hints *h, const char *text, struct sb_error *err)
{
	int cur = -1, line = 0;
	const char *body = NULL;
	for (const char *p = text;; line++) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		int heading = len > 3 && !strncmp(p, "## ", 3);
		if (heading || !*p) {
			if (cur >= 0)
				h->section[cur] = xstrndup(body, (size_t)(p - body));
			if (!*p)
				break;
			const char *name = p + 3;
			size_t nlen = len - 3;
			while (nlen && (name[nlen - 1] == ' ' || name[nlen - 1] == '\t' || name[nlen - 1] == '\r'))
				nlen--;
			cur = section_of(name, nlen);
			if (cur < 0)
				return bad_section(err, h->where, line + 1, "unknown", name, nlen);
			if (h->section[cur])
				return bad_section(err, h->where, line + 1, "a second", name, nlen);
			body = eol ? eol + 1 : p + len;
		}
		if (!eol) {
			p += len;
			continue;
		}
		p = eol + 1;
	}
	for (int i = 0; i < HINT_NSECTIONS; i++)
		if (!h->section[i]) {
			sb_error_set(err, SB_EINPUT, "%s: no section '## %s' (leave it empty for no hint in that case)",
				     h->where, section_names[i]);
			return SB_EINPUT;
		}
	return 0;
}

/* Renders the whole file once, so that a bad placeholder is reported at its own line of the file. */
static int check_renders(const struct bound_hints *h, const char *text, struct sb_error *err)
{
	struct tvars v = TVARS_INIT;
	struct strbuf out = STRBUF_INIT;
	tvars_set(&v, "kernels", "k");
	int rc = prompt_render(text, h->where, &v, &out, err);
	strbuf_release(&out);
	tvars_release(&v);
	return rc;
}

int bound_hints_load(struct bound_hints *h, const struct prompt_dirs *d, struct sb_error *err)
{
	struct strbuf text = STRBUF_INIT;
	memset(h, 0, sizeof(*h));
	int rc = prompt_load(d, HINTS_TEMPLATE, &text, &h->where, err);
	if (!rc)
		rc = check_renders(h, text.buf, err);
	if (!rc)
		rc = split_sections(h, text.buf, err);
	strbuf_release(&text);
	if (rc)
		bound_hints_release(h);
	return rc;
}

void bound_hints_release(struct bound_hints *h)
{
	for (int i = 0; i < HINT_NSECTIONS; i++)
		free(h->section[i]);
	free(h->where);
	memset(h, 0, sizeof(*h));
}

static void add_pct(struct strbuf *out, const char *sep, const char *label, double pct)
{
	if (isfinite(pct))
		strbuf_addf(out, "%s%s %.0f%%", sep, label, pct);
}

void bound_metrics_line(const struct hw_metrics *m, struct strbuf *out)
{
	if (!m->measured || !m->bound)
		return;
	strbuf_addf(out, "; %.20s-bound", m->bound);
	if (isfinite(m->roofline_pct))
		strbuf_addf(out, " at %.0f%% of roofline", m->roofline_pct);
	if (m->limiter)
		strbuf_addf(out, ", limiter: %.40s", m->limiter);
	size_t before = out->len;
	add_pct(out, "; ", "DRAM", m->dram_pct);
	add_pct(out, out->len > before ? ", " : "; ", "SM", m->sm_pct);
	add_pct(out, out->len > before ? ", " : "; ", "occupancy", m->occupancy_pct);
	if (class_of(m->bound) == 1)
		add_pct(out, out->len > before ? ", " : "; ", "tensor", m->tensor_pct);
}

void bound_notes_init(struct bound_notes *n)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < BOUND_NCLASSES; i++)
		strbuf_init(&n->cls[i].kernels, 0);
}

void bound_notes_release(struct bound_notes *n)
{
	for (size_t i = 0; i < BOUND_NCLASSES; i++)
		strbuf_release(&n->cls[i].kernels);
	n->n = 0;
}

void bound_notes_add(struct bound_notes *n, const char *kernel, const struct hw_metrics *m)
{
	int cls = m->measured ? class_of(m->bound) : -1;
	if (cls < 0)
		return;
	size_t i = 0;
	while (i < n->n && strcmp(n->cls[i].bound, class_names[cls]))
		i++;
	if (i == n->n) {
		n->cls[i].bound = class_names[cls];
		n->cls[i].hint = bound_hint_for(m);
		n->n++;
	}
	strbuf_addf(&n->cls[i].kernels, "%s%.60s", n->cls[i].kernels.len ? ", " : "", kernel ? kernel : "?");
}

/* One hint as a list item: trimmed, cut at BOUND_HINT_MAX_BYTES, continuation lines indented. */
static void add_hint(const char *section, const char *where, const char *kernels, struct strbuf *out)
{
	struct tvars v = TVARS_INIT;
	struct strbuf hint = STRBUF_INIT;
	struct sb_error err = { 0 };
	tvars_set(&v, "kernels", kernels);
	/* the file rendered whole when it was loaded, so its sections render too */
	if (!prompt_render(section, where, &v, &hint, &err)) {
		strbuf_trim(&hint);
		if (hint.len > BOUND_HINT_MAX_BYTES) {
			strbuf_setlen(&hint, BOUND_HINT_MAX_BYTES);
			strbuf_addstr(&hint, " [...]");
		}
	} else {
		strbuf_reset(&hint);
	}
	if (hint.len) {
		strbuf_addstr(out, "- ");
		for (const char *p = hint.buf; *p; p++) {
			strbuf_addch(out, *p);
			if (*p == '\n')
				strbuf_addstr(out, "  ");
		}
		strbuf_addch(out, '\n');
	}
	strbuf_release(&hint);
	tvars_release(&v);
}

void bound_notes_write(const struct bound_notes *n, const struct bound_hints *h, struct strbuf *out)
{
	if (!h || !n->n)
		return;
	size_t start = out->len;
	strbuf_addstr(out, "What each bound class above calls for:\n");
	size_t heading = out->len;
	for (size_t i = 0; i < n->n; i++)
		add_hint(h->section[n->cls[i].hint], h->where, n->cls[i].kernels.buf, out);
	if (out->len == heading)
		strbuf_setlen(out, start); /* every section it needed was left empty */
}
