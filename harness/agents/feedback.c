/* feedback.c - verdict JSON to feedback text. The Coder reads this instead of the raw verdict: a long
 * build log or a 100-round timing table would drown the one line it must act on, and cost tokens. */
#include "feedback.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#define LINE_MAX_BYTES 300

struct line {
	const char *s;
	size_t len;
};

static size_t split_lines(const char *text, struct line **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[n++] = (struct line){ p, len };
		p = nl ? nl + 1 : p + len;
	}
	return n;
}

static int mentions_error(const struct line *l)
{
	for (size_t i = 0; i + 5 <= l->len; i++)
		if (!strncasecmp(l->s + i, "error", 5))
			return 1;
	return 0;
}

void feedback_trim(const char *text, size_t max_lines, size_t max_bytes, int tail, struct strbuf *out)
{
	struct line *lines;
	size_t n = split_lines(text, &lines), nkeep = 0;
	unsigned char *keep = xcalloc(n ? n : 1, 1);
	int any_error = 0;
	for (size_t i = 0; !tail && i < n; i++)
		if (mentions_error(&lines[i])) {
			keep[i] = 1;
			if (i > 0)
				keep[i - 1] = 1;
			any_error = 1;
		}
	if (!any_error)
		memset(keep, 1, n);
	/* walk from the chosen end; stop at the line or byte limit */
	size_t bytes = 0;
	size_t *chosen = xcalloc(n ? n : 1, sizeof(*chosen));
	for (size_t k = 0; k < n; k++) {
		size_t i = tail ? n - 1 - k : k;
		if (!keep[i])
			continue;
		size_t len = lines[i].len < LINE_MAX_BYTES ? lines[i].len : LINE_MAX_BYTES;
		if (nkeep >= max_lines || bytes + len + 1 > max_bytes)
			break;
		chosen[nkeep++] = i;
		bytes += len + 1;
	}
	for (size_t k = 0; k < nkeep; k++) {
		size_t i = chosen[tail ? nkeep - 1 - k : k];
		size_t len = lines[i].len < LINE_MAX_BYTES ? lines[i].len : LINE_MAX_BYTES;
		strbuf_add(out, lines[i].s, len);
		if (len < lines[i].len)
			strbuf_addstr(out, " [...]");
		strbuf_addch(out, '\n');
	}
	if (nkeep < n)
		strbuf_addf(out, "(%zu of %zu lines shown%s)\n", nkeep, n,
			    any_error ? ": the lines mentioning errors" : tail ? ": the last ones" : "");
	free(chosen);
	free(keep);
	free(lines);
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void add_failing_trials(json_t *v, struct strbuf *out)
{
	json_t *trials = json_object_get(v, "trials"), *t;
	size_t i, shown = 0, failing = 0;
	json_array_foreach(trials, i, t) {
		if (json_is_true(json_object_get(t, "pass")))
			continue;
		failing++;
		if (shown >= FEEDBACK_MAX_TRIALS)
			continue;
		shown++;
		strbuf_addf(out, "- trial %zu (seed %lld):", i, (long long)json_integer_value(json_object_get(t, "seed")));
		if (json_is_true(json_object_get(t, "inputs_mutated")))
			strbuf_addstr(out, " your forward modified its input tensors;");
		json_t *o;
		size_t k;
		json_array_foreach(json_object_get(t, "outputs"), k, o)
			if (!json_is_true(json_object_get(o, "pass")))
				strbuf_addf(out, " %s: %s;", str(o, "name"), str(o, "detail"));
		strbuf_setlen(out, out->len - (out->buf[out->len - 1] == ';'));
		strbuf_addch(out, '\n');
	}
	if (failing > shown)
		strbuf_addf(out, "(%zu more failing trials not shown)\n", failing - shown);
	if (failing)
		strbuf_addf(out, "%zu of %zu trials failed.\n", failing, json_array_size(trials));
}

static void add_findings(json_t *v, const char *severity, struct strbuf *out)
{
	json_t *f;
	size_t i, shown = 0;
	json_array_foreach(json_object_get(v, "findings"), i, f) {
		if (strcmp(str(f, "severity"), severity) || shown >= FEEDBACK_MAX_FINDINGS)
			continue;
		if (!shown++)
			strbuf_addstr(out, !strcmp(severity, "reject")
				      ? "Reward-hack findings that reject this candidate (each says what to do instead):\n"
				      : "Flagged by the reward-hack checks (not rejected, but reported with the result):\n");
		long long line = json_integer_value(json_object_get(f, "line"));
		strbuf_addf(out, "- %s", str(f, "id"));
		if (line > 0)
			strbuf_addf(out, " at line %lld", line);
		strbuf_addf(out, ": %s\n", str(f, "message"));
	}
}

static void add_timing(json_t *v, double target, struct strbuf *out)
{
	json_t *t = json_object_get(v, "timing"), *s = json_object_get(v, "speedup");
	if (!json_is_object(t) || !json_is_object(s)) {
		strbuf_addstr(out, "It was not timed (eval.perf_trials is 0).\n");
		return;
	}
	double eager = num(json_object_get(t, "eager"), "median_us");
	double cand = num(json_object_get(t, "candidate"), "median_us");
	double comp = num(json_object_get(t, "compiled"), "median_us");
	double sp = num(s, "vs_eager"), spc = num(s, "vs_compiled");
	json_t *ci = json_object_get(s, "vs_eager_ci95");
	strbuf_addf(out, "Timing (%s clock, %lld interleaved rounds): PyTorch eager %.1f us, yours %.1f us", str(t, "clock"),
		    (long long)json_integer_value(json_object_get(t, "pairs")), eager, cand);
	if (isfinite(comp))
		strbuf_addf(out, ", torch.compile %.1f us", comp);
	strbuf_addf(out, " (medians).\nSpeedup vs eager: %.3fx", sp);
	if (json_array_size(ci) == 2)
		strbuf_addf(out, " (95%% CI %.3f-%.3f)", json_number_value(json_array_get(ci, 0)),
			    json_number_value(json_array_get(ci, 1)));
	if (isfinite(spc))
		strbuf_addf(out, "; vs torch.compile: %.3fx", spc);
	strbuf_addstr(out, ".\n");
	/* the target is reached when the whole interval is at or above it (stage.c), and said so here */
	double lo = json_array_size(ci) == 2 ? json_number_value(json_array_get(ci, 0)) : sp;
	if (target > 0 && isfinite(sp) && lo >= target)
		strbuf_addf(out, "Target %.2fx: reached.\n", target);
	else if (target > 0 && isfinite(sp) && sp >= target)
		strbuf_addf(out, "Target %.2fx: not yet shown: the speedup's interval reaches down to %.3fx, so the gain is "
			    "within the measurement's noise; %.2fx faster makes it certain.\n", target, lo, target / lo);
	else if (target > 0 && isfinite(sp))
		strbuf_addf(out, "Target %.2fx: not reached; %.2fx faster is still needed.\n", target, target / sp);
}

/* A kernel row's hardware metrics (docs/verdict.md: bound, limiter and the percentages), measured when
 * the row has a bound class. The strings stay the row's. */
static void row_metrics(json_t *k, struct hw_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->bound = json_string_value(json_object_get(k, "bound"));
	m->measured = m->bound != NULL;
	m->limiter = json_string_value(json_object_get(k, "limiter"));
	m->roofline_pct = num(k, "roofline_pct");
	m->duration_us = num(k, "duration_us");
	m->sm_pct = num(k, "sm_pct");
	m->mem_pct = num(k, "mem_pct");
	m->dram_pct = num(k, "dram_pct");
	m->l2_pct = num(k, "l2_pct");
	m->l1_pct = num(k, "l1_pct");
	m->occupancy_pct = num(k, "occupancy_pct");
	m->tensor_pct = num(k, "tensor_pct");
}

/* The profile a verdict may carry (libstitchprof): profile.kernels[] with name, and total_us
 * or share, and where measured each kernel's bound class and throughputs, then one hint per class
 * shown. Verdicts without one (CPU runs, no CUPTI) simply get no kernel section. */
static void add_profile(json_t *v, const struct bound_hints *hints, struct strbuf *out)
{
	json_t *kernels = json_object_get(json_object_get(v, "profile"), "kernels"), *k;
	struct bound_notes notes;
	size_t i;
	double total = 0;
	if (!json_array_size(kernels))
		return;
	bound_notes_init(&notes);
	json_array_foreach(kernels, i, k)
		if (isfinite(num(k, "total_us")))
			total += num(k, "total_us");
	strbuf_addstr(out, "Top kernels by share of kernel time:\n");
	json_array_foreach(kernels, i, k) {
		if (i >= FEEDBACK_MAX_KERNELS)
			break;
		double share = num(k, "share"), us = num(k, "total_us");
		if (!isfinite(share) && isfinite(us) && total > 0)
			share = us / total;
		strbuf_addf(out, "- %.80s", str(k, "name"));
		if (isfinite(share))
			strbuf_addf(out, ": %.1f%%", 100 * (share > 1 ? share / 100 : share));
		if (isfinite(us))
			strbuf_addf(out, " (%.1f us", us);
		if (json_is_integer(json_object_get(k, "calls")))
			strbuf_addf(out, "%s%lld calls", isfinite(us) ? ", " : " (",
				    (long long)json_integer_value(json_object_get(k, "calls")));
		if (isfinite(us) || json_is_integer(json_object_get(k, "calls")))
			strbuf_addch(out, ')');
		struct hw_metrics m;
		row_metrics(k, &m);
		bound_metrics_line(&m, out);
		bound_notes_add(&notes, str(k, "name"), &m);
		strbuf_addch(out, '\n');
	}
	if (json_array_size(kernels) > FEEDBACK_MAX_KERNELS)
		strbuf_addf(out, "(%zu more kernels)\n", json_array_size(kernels) - FEEDBACK_MAX_KERNELS);
	bound_notes_write(&notes, hints, out);
	bound_notes_release(&notes);
}

void feedback_from_verdict(json_t *v, double target, const struct bound_hints *hints, struct strbuf *out)
{
	struct strbuf fb = STRBUF_INIT;
	const char *status = str(v, "status");
	const char *detail = json_string_value(json_object_get(v, "detail"));
	const char *tailtext = json_string_value(json_object_get(v, "log_tail"));
	strbuf_addf(&fb, "Verdict: %s. %s\n", status, str(v, "message"));
	if (!strcmp(status, "compile_error") || !strcmp(status, "format_error")) {
		if (detail && *detail) {
			strbuf_addstr(&fb, "Compiler / loader errors (trimmed):\n```\n");
			feedback_trim(detail, FEEDBACK_MAX_LINES, 3000, 0, &fb);
			strbuf_addstr(&fb, "```\n");
		}
	} else if (!strcmp(status, "runtime_error") || !strcmp(status, "timeout")) {
		const char *t = detail && *detail ? detail : tailtext;
		if (t && *t) {
			strbuf_addstr(&fb, "Error output (last lines):\n```\n");
			feedback_trim(t, 25, 2500, 1, &fb);
			strbuf_addstr(&fb, "```\n");
		}
	} else if (!strcmp(status, "incorrect")) {
		add_failing_trials(v, &fb);
		if (!json_array_size(json_object_get(v, "trials")) && detail && *detail)
			feedback_trim(detail, 10, 1500, 0, &fb);
	} else if (!strcmp(status, "rejected")) {
		add_findings(v, "reject", &fb);
		strbuf_addstr(&fb, "A rejected candidate scores nothing, however fast: do the work in your own kernel.\n");
	} else if (!strcmp(status, "pass")) {
		strbuf_addf(&fb, "All %zu correctness trials matched the reference.\n",
			    json_array_size(json_object_get(v, "trials")));
		add_timing(v, target, &fb);
	}
	add_findings(v, "flag", &fb);
	add_profile(v, hints, &fb);
	if (fb.len > FEEDBACK_MAX_BYTES) {
		strbuf_setlen(&fb, FEEDBACK_MAX_BYTES);
		strbuf_addstr(&fb, "\n(feedback cut here)\n");
	}
	strbuf_add(out, fb.buf, fb.len);
	strbuf_release(&fb);
}
