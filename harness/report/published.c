/* published.c - fast_p against a published baseline timing file (published.h). */
#include "published.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"

int published_load(struct published *b, const char *path, struct sb_error *err)
{
	json_error_t jerr;
	memset(b, 0, sizeof(*b));
	b->root = json_load_file(path, 0, &jerr);
	if (!b->root)
		return sb_error_set(err, SB_EINPUT, "--baseline %s: %s (line %d)", path, jerr.text, jerr.line);
	const char *lk;
	json_t *level;
	int entries = 0;
	json_object_foreach(b->root, lk, level) {
		const char *pk;
		json_t *e;
		if (strncmp(lk, "level", 5) || !json_is_object(level))
			continue;
		json_object_foreach(level, pk, e) {
			entries += json_is_number(json_object_get(e, "mean"));
			const char *hw = json_string_value(json_object_get(e, "hardware"));
			if (hw && !b->hardware[0])
				snprintf(b->hardware, sizeof(b->hardware), "%s", hw);
		}
	}
	if (!entries) {
		json_decref(b->root);
		b->root = NULL;
		return sb_error_set(err, SB_EINPUT, "--baseline %s: no timing in it: KernelBench's layout is {\"level1\": "
				    "{\"19_ReLU.py\": {\"mean\": ms, ...}}} ('stitchbench baseline' writes one)", path);
	}
	b->path = xstrdup(path);
	if (!b->hardware[0]) { /* KernelBench keeps them in results/timing/HARDWARE/ */
		char *copy = xstrdup(path), *dir = dirname(copy);
		snprintf(b->hardware, sizeof(b->hardware), "%s (its folder)", basename(dir));
		free(copy);
	}
	return 0;
}

int published_keep(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err)
{
	struct published *b = arg;
	(void)err;
	if (index >= b->nrows) {
		b->rows = xrealloc(b->rows, (index + 1) * sizeof(*b->rows));
		memset(b->rows + b->nrows, 0, (index + 1 - b->nrows) * sizeof(*b->rows));
		b->nrows = index + 1;
	}
	struct published_row *r = &b->rows[index];
	json_t *j = json_loads(v->json, 0, NULL);
	json_t *mean = json_object_get(json_object_get(json_object_get(j, "timing"), "candidate"), "mean_us");
	const char *gpu = json_string_value(json_object_get(json_object_get(j, "env"), "gpu"));
	r->candidate_ms = json_is_number(mean) ? json_number_value(mean) / 1000.0 : NAN;
	snprintf(r->gpu, sizeof(r->gpu), "%s", gpu && *gpu ? gpu : "cpu");
	json_decref(j);
	return 0;
}

void published_release(struct published *b)
{
	json_decref(b->root);
	free(b->path);
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

/* The baseline's mean for problem "L<level>/<id>": the entry of "level<level>" whose file name starts with
 * "<id>_" (KernelBench names problem files ID_Name.py). NAN when the file has none. */
static double baseline_ms(const struct published *b, const char *problem)
{
	int level, id;
	if (sscanf(problem, "L%d/%d", &level, &id) != 2)
		return NAN;
	char key[16], prefix[16];
	snprintf(key, sizeof(key), "level%d", level);
	snprintf(prefix, sizeof(prefix), "%d_", id);
	const char *pk;
	json_t *e;
	json_object_foreach(json_object_get(b->root, key), pk, e)
		if (!strncmp(pk, prefix, strlen(prefix)) && json_is_number(json_object_get(e, "mean")))
			return json_number_value(json_object_get(e, "mean"));
	return NAN;
}

/* One agent's numbers against the baseline, over the problems of its "all" cell. */
struct vs {
	size_t problems, fast[METRICS_NP], timed, missing;
	double log_sum;
	char missing_list[256];
};

static void agent_vs(const struct published *b, const struct metric_agent *a, const struct metric_row *rows,
		     struct vs *o)
{
	memset(o, 0, sizeof(*o));
	o->problems = a->cells[0].problems;
	for (size_t i = 0; i < a->nproblems; i++) {
		const struct metric_row *r = a->problems[i].rep;
		double base = baseline_ms(b, r->problem);
		if (!isfinite(base)) {
			o->missing++;
			size_t len = strlen(o->missing_list);
			if (len < sizeof(o->missing_list) - 16)
				snprintf(o->missing_list + len, sizeof(o->missing_list) - len, "%s%s", len ? ", " : "", r->problem);
			continue;
		}
		double cand = NAN;
		if (!r->missing && (size_t)(r - rows) < b->nrows)
			cand = b->rows[r - rows].candidate_ms;
		if (!metrics_clean(r) || !(cand > 0))
			continue;
		double s = base / cand;
		o->timed++;
		o->log_sum += log(s);
		for (int p = 0; p < METRICS_NP; p++)
			o->fast[p] += s > metrics_p[p];
	}
}

/* The GPUs the representatives were timed on, when one differs from the baseline's hardware. */
static void machines(const struct published *b, const struct metrics *m, const struct metric_row *rows,
		     struct strbuf *out)
{
	for (size_t a = 0; a < m->nagents; a++)
		for (size_t i = 0; i < m->agents[a].nproblems; i++) {
			const struct metric_row *r = m->agents[a].problems[i].rep;
			const char *gpu = !r->missing && (size_t)(r - rows) < b->nrows ? b->rows[r - rows].gpu : "";
			if (*gpu && !strstr(b->hardware, gpu) && !strstr(gpu, b->hardware) && !strstr(out->buf ? out->buf : "", gpu))
				strbuf_addf(out, "%s%s", out->len ? ", " : "", gpu);
		}
}

static double pct(size_t k, size_t n)
{
	return n ? 100.0 * (double)k / (double)n : NAN;
}

void published_markdown(const struct published *b, const struct metrics *m, const struct metric_row *rows,
			struct strbuf *out)
{
	strbuf_addf(out, "\n## fast_p against the published baseline %s (hardware: %s)\n\n", b->path, b->hardware);
	strbuf_addstr(out, "KernelBench's way: the baseline's mean time over the candidate's mean per call, for each "
			   "problem's representative clean pass; fast_p over the same problems as the table above.");
	struct strbuf other = STRBUF_INIT;
	machines(b, m, rows, &other);
	if (other.len)
		strbuf_addf(out, " **The candidates were timed on %s, not on the baseline's hardware: these ratios compare "
			    "two machines.**", other.buf);
	strbuf_release(&other);
	strbuf_addstr(out, "\n\n| agent | problems | fast_0 | fast_0.5 | fast_0.8 | fast_1 | fast_1.5 | fast_2 | "
			   "geomean (n) | no baseline entry |\n|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t a = 0; a < m->nagents; a++) {
		struct vs o;
		agent_vs(b, &m->agents[a], rows, &o);
		strbuf_addf(out, "| %s | %zu |", m->agents[a].name, o.problems);
		for (int p = 0; p < METRICS_NP; p++)
			strbuf_addf(out, " %.1f |", pct(o.fast[p], o.problems));
		if (o.timed)
			strbuf_addf(out, " %.3fx (%zu) |", exp(o.log_sum / (double)o.timed), o.timed);
		else
			strbuf_addstr(out, " n/a (0) |");
		strbuf_addf(out, " %s |\n", o.missing ? o.missing_list : "-");
	}
}

json_t *published_json(const struct published *b, const struct metrics *m, const struct metric_row *rows)
{
	json_t *agents = json_array();
	for (size_t a = 0; a < m->nagents; a++) {
		struct vs o;
		agent_vs(b, &m->agents[a], rows, &o);
		json_t *fast = json_object();
		for (int p = 0; p < METRICS_NP; p++) {
			char key[8];
			snprintf(key, sizeof(key), "%g", metrics_p[p]);
			json_object_set_new(fast, key, o.problems ? json_real(pct(o.fast[p], o.problems)) : json_null());
		}
		json_array_append_new(agents, json_pack("{s:s, s:I, s:o, s:o, s:I, s:I}", "agent", m->agents[a].name,
							"problems", (json_int_t)o.problems, "fast_pct", fast, "geomean",
							o.timed ? json_real(exp(o.log_sum / (double)o.timed)) : json_null(),
							"geomean_n", (json_int_t)o.timed, "without_baseline",
							(json_int_t)o.missing));
	}
	struct strbuf other = STRBUF_INIT;
	machines(b, m, rows, &other);
	json_t *o = json_pack("{s:s, s:s, s:s?, s:o}", "file", b->path, "hardware", b->hardware, "timed_on_other_hardware",
			      other.len ? other.buf : NULL, "agents", agents);
	strbuf_release(&other);
	return o;
}
