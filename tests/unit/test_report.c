/* test_report.c - reports: escaping of untrusted text in Markdown and HTML, SVG made safe to inline, the
 * series behind the plots against hand-computed values, the audit hook, passes with a hack finding and
 * problems whose reference failed read from a store, and whole reports drawn by the real gnuplot from a store
 * written through the store API as an iterative agent writes it.
 * `test_report --make-store DIR` only writes that store (tests/e2e/test_report.sh opens its report in Chromium). */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>

#include "core/config.h"
#include "core/proc.h"
#include "core/sha256.h"
#include "report/doc.h"
#include "report/gnuplot.h"
#include "report/report.h"
#include "report/report_int.h"
#include "report/table.h"
#include "store/store.h"

/* An agent name and a finding message as hostile as the sources they come from can make them. */
#define EVIL_AGENT "<img src=x onerror=alert(1)>\"&'|*_[l](http://x)"
#define EVIL_MESSAGE "inputs modified <script>alert('m')</script> & \"quoted\""

static char *source_root(void)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	return xstrdup(root && *root ? root : ".");
}

/* ---------- the rich store ---------- */

/* The fixture verdicts (tests/fixtures/verdicts), one template per status, and each problem's ref/sha256. */
struct templates {
	json_t *by_status[8];
	json_t *problem[8];
	size_t nproblem;
};

static const char *const statuses[] = { "pass", "incorrect", "compile_error", "runtime_error", "rejected", NULL };

static void load_templates(struct templates *t)
{
	char *root = source_root();
	memset(t, 0, sizeof(*t));
	for (int f = 0; f < 2; f++) {
		char *path = xstrfmt("%s/tests/fixtures/verdicts/shard_%c.jsonl", root, f ? 'b' : 'a');
		FILE *in = fopen(path, "r");
		if (!in)
			fail_msg("cannot read %s (set SB_SOURCE_ROOT to the source tree)", path);
		char *line = NULL;
		size_t cap = 0;
		while (getline(&line, &cap, in) > 0) {
			json_t *v = json_loads(line, 0, NULL);
			assert_non_null(v);
			const char *st = json_string_value(json_object_get(v, "status"));
			for (int i = 0; statuses[i]; i++)
				if (!strcmp(st, statuses[i]) && !t->by_status[i])
					t->by_status[i] = json_incref(v);
			const char *ref = json_string_value(json_object_get(json_object_get(v, "problem"), "ref"));
			int seen = 0;
			for (size_t i = 0; i < t->nproblem; i++)
				seen |= !strcmp(ref, json_string_value(json_object_get(t->problem[i], "ref")));
			if (!seen)
				t->problem[t->nproblem++] = json_deep_copy(json_object_get(v, "problem"));
			json_decref(v);
		}
		free(line);
		fclose(in);
		free(path);
	}
	free(root);
}

static void release_templates(struct templates *t)
{
	for (int i = 0; i < 8; i++) {
		json_decref(t->by_status[i]);
		json_decref(t->problem[i]);
	}
}

/* A verdict for ref with this status and speedup (NAN: not timed), from the fixture of that status. */
static json_t *verdict(const struct templates *t, const char *ref, const char *status, double speedup, const char *key)
{
	int s = 0;
	while (statuses[s] && strcmp(statuses[s], status))
		s++;
	assert_non_null(statuses[s]);
	json_t *v = json_deep_copy(t->by_status[s]);
	for (size_t i = 0; i < t->nproblem; i++)
		if (!strcmp(ref, json_string_value(json_object_get(t->problem[i], "ref"))))
			json_object_set(v, "problem", t->problem[i]);
	char sha[65];
	sha256_hex(key, strlen(key), sha);
	json_object_set_new(json_object_get(v, "candidate"), "sha256", json_string(sha));
	if (!strcmp(status, "pass"))
		json_object_set_new(v, "speedup", isnan(speedup) ? json_null()
				    : json_pack("{s:f, s:[f, f], s:n, s:n, s:f}", "vs_eager", speedup, "vs_eager_ci95",
						speedup * 0.98, speedup * 1.02, "vs_compiled", "vs_compiled_ci95",
						"vs_eager_mean_method", speedup));
	return v;
}

struct cand {
	const char *agent, *ref;
	int sample, attempt;
	const char *stage, *status; /* status NULL: no verdict (a sample a run left unfinished), only its call */
	double speedup;
	long tokens;               /* an LLM call for this attempt when > 0; < 0: one without token counts */
};

#define STITCH "stitchcuda"
/* The hand-computed values below (attempt curves, tokens) follow from this list. */
static const struct cand rich[] = {
	/* iterative: L1/1 repaired then optimised; L1/2 correct at the third; L1/3 right away; L2/1 never */
	{ STITCH, "L1/1", 0, 0, "draft", "compile_error", NAN, 3000 },
	{ STITCH, "L1/1", 0, 1, "repair_compile", "pass", 1.2, 1000 },
	{ STITCH, "L1/1", 0, 2, "optimize_performance", "pass", 1.8, 1000 },
	{ STITCH, "L1/2", 0, 0, "draft", "incorrect", NAN, 3000 },
	{ STITCH, "L1/2", 0, 1, "repair_correctness", "incorrect", NAN, 1000 },
	{ STITCH, "L1/2", 0, 2, "repair_correctness", "pass", 0.9, 1000 },
	{ STITCH, "L1/3", 0, 0, "draft", "pass", 2.0, 3000 },
	{ STITCH, "L2/1", 0, 0, "draft", "rejected", NAN, 3000 },
	{ STITCH, "L2/1", 0, 1, "repair_correctness", "runtime_error", NAN, 1000 },
	/* single-shot with an LLM */
	{ "oneshot", "L1/1", 0, 0, NULL, "pass", 1.1, 2000 },
	{ "oneshot", "L1/2", 0, 0, NULL, "incorrect", NAN, 2000 },
	{ "oneshot", "L1/3", 0, 0, NULL, "compile_error", NAN, 2000 },
	{ "oneshot", "L2/1", 0, 0, NULL, "pass", 0.7, 2000 },
	/* samples under a hostile name, without LLM calls */
	{ EVIL_AGENT, "L1/1", 0, 0, NULL, "pass", 1.5, 0 },
	{ EVIL_AGENT, "L2/1", 0, 0, NULL, "rejected", NAN, 0 },
};

/* A run `name` in dir holding these candidates; an agent's kind is stitchcuda when its candidates have
 * stages, oneshot when they made LLM calls, else samples. */
static int make_store(const char *dir, const char *name, const struct cand *cands, size_t n, struct sb_error *err)
{
	struct templates t;
	struct config cfg;
	struct store_run run;
	struct store *s = NULL;
	load_templates(&t);
	config_init(&cfg);
	json_t *first = verdict(&t, "L1/1", "pass", 1, "first");
	int rc = store_run_from_verdict(&run, name, first, &cfg, err);
	json_decref(first);
	if (!rc)
		rc = rundir_open(&s, dir, &cfg, &run, err);
	for (size_t i = 0; i < n && !rc; i++) {
		size_t j = 0;
		while (j < i && strcmp(cands[j].agent, cands[i].agent))
			j++;
		if (j == i)
			rc = store_add_agent(s, cands[i].agent, cands[i].stage ? "stitchcuda" : cands[i].tokens ? "oneshot" : "samples",
					     cands[i].stage || cands[i].tokens ? "qwen3" : NULL, err);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		const struct cand *c = &cands[i];
		char key[256];
		snprintf(key, sizeof(key), "%s %s %d %d", c->agent, c->ref, c->sample, c->attempt);
		json_t *v = verdict(&t, c->ref, c->status ? c->status : "incorrect", c->speedup, key);
		if (c->status && !strcmp(c->status, "rejected")) /* the H10 finding of the fixture, with a hostile message */
			json_object_set_new(json_array_get(json_object_get(v, "findings"), 0), "message",
					    json_string(EVIL_MESSAGE));
		struct store_put put = { .agent = c->agent, .sample = c->sample, .attempt = c->attempt, .stage = c->stage };
		rc = store_add_problem(s, c->ref, NULL, json_string_value(json_object_get(json_object_get(v, "problem"),
											 "sha256")), err);
		if (!rc && c->status)
			rc = store_put_verdict(s, &put, v, err);
		json_decref(v);
		if (!rc && c->tokens) {
			long tok = c->tokens > 0 ? c->tokens : 0;
			struct store_llm_call call = { .agent = c->agent, .problem = c->ref, .sample = c->sample,
						       .attempt = c->attempt, .call = c->attempt, .model = "qwen3",
						       .prompt_tokens = tok * 3 / 4, .completion_tokens = tok / 4,
						       .latency_s = 1.5, .cost_usd = (double)tok * 2e-6 };
			rc = store_put_llm_call(s, &call, err);
		}
	}
	store_close(s);
	store_run_release(&run);
	config_release(&cfg);
	release_templates(&t);
	return rc;
}

static int make_rich_store(const char *dir, struct sb_error *err)
{
	return make_store(dir, "rich", rich, sizeof(rich) / sizeof(rich[0]), err);
}

static char *rich_store(void)
{
	struct sb_error err = { 0 };
	char *dir = tmpdir_make();
	char *run = xstrfmt("%s/rich", dir);
	if (make_rich_store(run, &err))
		fail_msg("building the store: %s", err.msg);
	free(run);
	return dir;
}

/* ---------- escaping ---------- */

static void escaping(void **state)
{
	(void)state;
	struct strbuf h = STRBUF_INIT, m = STRBUF_INIT;
	html_escape(&h, "<a href=\"x\" onclick='y'>&amp;\x01");
	assert_string_equal(h.buf, "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;\xef\xbf\xbd");
	md_escape(&m, "# [link](http://x) *b* _i_ `c` <b>&amp; |\nnext");
	assert_string_equal(m.buf, "\\# \\[link\\](http://x) \\*b\\* \\_i\\_ \\`c\\` &lt;b&gt;&amp;amp; \\| next");
	strbuf_reset(&m);
	md_escape(&m, "1. not a list");
	assert_string_equal(m.buf, "1\\. not a list");
	strbuf_release(&h);
	strbuf_release(&m);
}

static void tables(void **state)
{
	(void)state;
	struct table t;
	struct strbuf md = STRBUF_INIT, html = STRBUF_INIT;
	table_init(&t, 2);
	table_cell(&t, "agent");
	table_cell(&t, "fast_1 %");
	table_text(&t, "a|b<i>");
	table_cellf(&t, "%.1f", 12.34);
	table_markdown(&t, &md);
	/* trusted labels stay as written; untrusted text cannot add a column or markup */
	assert_string_equal(md.buf, "| agent | fast_1 % |\n|---|---|\n| a\\|b&lt;i&gt; | 12.3 |\n");
	table_html(&t, "t1", NULL, &html);
	assert_non_null(strstr(html.buf, "<table id=\"t1\">"));
	assert_non_null(strstr(html.buf, "<td>a|b&lt;i&gt;</td><td>12.3</td>"));
	assert_null(strstr(html.buf, "<i>"));
	table_release(&t);
	strbuf_release(&md);
	strbuf_release(&html);
}

static void gnuplot_strings(void **state)
{
	(void)state;
	struct strbuf b = STRBUF_INIT;
	gp_quote(&b, "it's `rm -rf` @macro\n\"x\"");
	/* single quotes: no backquote or macro substitution; the quote doubled; a line break cannot end the command */
	assert_string_equal(b.buf, "'it''s `rm -rf` @macro \"x\"'");
	strbuf_release(&b);
}

/* ---------- SVG ---------- */

static void svg_ids_prefixed(void **state)
{
	(void)state;
	struct sb_error err = { 0 };
	char *out = NULL;
	const char *in = "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"no\"?>\n"
			 "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
			 "<svg viewBox=\"0 0 10 10\"\n xmlns=\"http://www.w3.org/2000/svg\"\n"
			 " xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
			 "<defs><path id='gpPt0' d='M0,0'/><clipPath id=\"c1\"><rect x='0'/></clipPath></defs>\n"
			 "<g clip-path=\"url(#c1)\"><use xlink:href='#gpPt0' x = '1'/></g>\n"
			 "<text>a &lt;b> &amp; http://not-a-link</text></svg>\n";
	assert_int_equal(svg_inline(in, "fast_p", &out, &err), 0);
	assert_null(strstr(out, "<?xml"));
	assert_null(strstr(out, "DOCTYPE"));
	assert_null(strstr(out, "xmlns"));
	assert_non_null(strstr(out, "id='fast_p-gpPt0'"));
	assert_non_null(strstr(out, "id=\"fast_p-c1\""));
	assert_non_null(strstr(out, "url(#fast_p-c1)"));
	assert_non_null(strstr(out, "xlink:href='#fast_p-gpPt0'"));
	assert_non_null(strstr(out, "x='1'"));
	assert_non_null(strstr(out, "<text>a &lt;b> &amp; http://not-a-link</text>")); /* text is left as it is */
	free(out);
}

static void svg_refusals(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"<svg><script>alert(1)</script></svg>",
		"<svg><image href='x.png'/></svg>",
		"<svg><use xlink:href='http://evil/x.svg#a'/></svg>",
		"<svg><rect fill='url(http://evil/p)'/></svg>",
		"<svg><rect onload='alert(1)'/></svg>",
		"<svg><foreignObject><p>x</p></foreignObject></svg>",
		"<svg><a href='#x'><rect/></a></svg>",
		"<svg><rect style='background:url(data:image/png,xx)'/></svg>",
		"<svg><rect fill=red/></svg>",
		"<p>no svg</p>",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sb_error err = { 0 };
		char *out = NULL;
		if (svg_inline(bad[i], "p", &out, &err) != SB_EINPUT)
			fail_msg("accepted: %s -> %s", bad[i], out ? out : "(null)");
		assert_null(out);
	}
}

/* ---------- series ---------- */

static void fastp_steps(void **state)
{
	(void)state;
	/* 5 problems: correct 0.5, 1.0, 1.0, 3.0, one correct untimed; one wrong (6 problems) */
	struct metric_row rows[6] = {
		{ "a", "L1/1", 1, 0, 0, 1, 1, 0, 0.5, NAN, 0, 0, NULL, 0, 0, 0, 0 }, { "a", "L1/2", 1, 0, 0, 1, 1, 0, 1.0, NAN, 0, 0, NULL, 0, 0, 0, 0 },
		{ "a", "L1/3", 1, 0, 0, 1, 1, 0, 1.0, NAN, 0, 0, NULL, 0, 0, 0, 0 }, { "a", "L1/4", 1, 0, 0, 1, 1, 0, 3.0, NAN, 0, 0, NULL, 0, 0, 0, 0 },
		{ "a", "L1/5", 1, 0, 0, 1, 1, 0, NAN, NAN, 0, 0, NULL, 0, 0, 0, 0 }, { "a", "L1/6", 1, 0, 0, 1, 0, 0, NAN, NAN, 0, 0, NULL, 0, 0, 0, 0 },
	};
	struct metric_problem probs[6];
	for (int i = 0; i < 6; i++)
		probs[i] = (struct metric_problem){ &rows[i], 0, NAN, NAN };
	struct metric_agent a = { .name = "a", .problems = probs, .nproblems = 6 };
	double xs[16], ys[16];
	size_t n = report_fastp_steps(&a, 2.5, xs, ys);
	/* (0, 5/6) correct; (0, 4/6) timed; at 0.5 -> 3/6; at 1.0 (a tie) -> 1/6; 3.0 is beyond the axis; (2.5, 1/6) */
	const double wx[] = { 0, 0, 0.5, 1.0, 2.5 }, wy[] = { 500.0 / 6, 400.0 / 6, 300.0 / 6, 100.0 / 6, 100.0 / 6 };
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		if (fabs(xs[i] - wx[i]) > 1e-12 || fabs(ys[i] - wy[i]) > 1e-9)
			fail_msg("point %zu is (%g, %g), expected (%g, %g)", i, xs[i], ys[i], wx[i], wy[i]);
}

static void attempt_curves(void **state)
{
	(void)state;
	struct sb_error err = { 0 };
	char *dir = rich_store();
	char *run = xstrfmt("%s/rich", dir);
	char *runs[] = { run };
	struct report_data d;
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	int a = report_agent_index(&d, STITCH);
	assert_true(a >= 0);
	assert_true(report_agent_iterative(&d, (size_t)a));
	assert_false(report_agent_iterative(&d, (size_t)report_agent_index(&d, "oneshot")));
	double corr[3], fast[3], geo[3];
	size_t ngeo[3];
	report_attempt_curve(&d, (size_t)a, 3, corr, fast, geo, ngeo);
	/* 4 trajectories. k=1: L1/3 (2.0). k=2: + L1/1 (1.2). k=3: L1/1 best 1.8, + L1/2 (0.9). */
	assert_true(fabs(corr[0] - 25) < 1e-9 && fabs(corr[1] - 50) < 1e-9 && fabs(corr[2] - 75) < 1e-9);
	assert_true(fabs(fast[0] - 25) < 1e-9 && fabs(fast[1] - 50) < 1e-9 && fabs(fast[2] - 50) < 1e-9);
	assert_true(fabs(geo[0] - 2.0) < 1e-9);
	assert_true(fabs(geo[1] - sqrt(2.0 * 1.2)) < 1e-9);
	assert_true(fabs(geo[2] - cbrt(2.0 * 1.8 * 0.9)) < 1e-9);
	assert_int_equal(ngeo[2], 3);
	/* tokens per trajectory: L1/1 made calls of 3000 + 1000 + 1000 tokens */
	int found = 0;
	for (size_t i = 0; i < d.ntraj; i++)
		if (!strcmp(d.traj[i].attempts[0]->agent, STITCH) && !strcmp(d.traj[i].attempts[0]->problem, "L1/1")) {
			found = 1;
			assert_int_equal(d.traj[i].n, 3);
			assert_true(fabs(d.traj[i].tokens - 5000) < 1e-9);
			assert_true(fabs(d.traj[i].cost_usd - 0.01) < 1e-12);
			assert_true(fabs(report_traj_best(&d.traj[i]) - 1.8) < 1e-12);
		}
	assert_true(found);
	/* findings: the stitchcuda and hostile agents each have one H10 reject */
	size_t r, f;
	report_findings_count(&d, STITCH, "H10", &r, &f);
	assert_int_equal(r, 1);
	assert_int_equal(f, 0);
	assert_int_equal(d.audit_inputs, 0);
	report_data_release(&d);
	free(run);
	tmpdir_remove(dir);
}

/* ---------- the audit hook ---------- */

static void audit_table_when_present(void **state)
{
	(void)state;
	struct sb_error err = { 0 };
	char *dir = rich_store();
	char *db = xstrfmt("%s/rich/results.db", dir);
	char *run = xstrfmt("%s/rich", dir);
	char *runs[] = { run };
	struct report_data d;
	/* what `stitchbench audit` will add: a table with (at least) problem, id and message */
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "CREATE TABLE audit (problem TEXT, id TEXT, message TEXT, extra REAL);"
					  "INSERT INTO audit VALUES ('L1/2', 'H17', 'ReLU of inputs in [0,1) is the identity', 1);",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(d.audit_inputs, 1);
	assert_int_equal(d.naudit, 1);
	assert_string_equal(d.audit[0].problem, "L1/2");
	assert_string_equal(d.audit[0].id, "H17");
	struct doc doc;
	struct strbuf md = STRBUF_INIT;
	doc_init(&doc, "t");
	report_section_audit(&d, &doc);
	doc_markdown(&doc, &md);
	assert_non_null(strstr(md.buf, "| L1/2 |"));
	assert_non_null(strstr(md.buf, "ReLU of inputs in \\[0,1) is the identity"));
	assert_non_null(strstr(md.buf, "can pass these problems without doing the work"));
	/* only the kinds present get their sentence */
	assert_null(strstr(md.buf, "Randomness in forward"));
	assert_null(strstr(md.buf, "Integer inputs"));
	assert_null(strstr(md.buf, "No audit data"));
	doc_release(&doc);
	strbuf_release(&md);
	report_data_release(&d);

	/* the other kinds are not problems a candidate can pass without the work: each says what it means */
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "DELETE FROM audit;"
					  "INSERT INTO audit VALUES ('L1/2', 'nondeterministic', 'forward draws random numbers', 1);"
					  "INSERT INTO audit VALUES ('L1/2', 'integer_inputs', 'input 1 is int64', 1);",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(d.naudit, 2);
	doc_init(&doc, "t");
	report_section_audit(&d, &doc);
	doc_markdown(&doc, &md);
	assert_null(strstr(md.buf, "without doing the work"));
	assert_non_null(strstr(md.buf, "Randomness in forward: the reference draws random numbers"));
	assert_non_null(strstr(md.buf, "same seed before each call"));
	assert_non_null(strstr(md.buf, "| nondeterministic | randomness in forward |"));
	assert_non_null(strstr(md.buf, "Integer inputs: the problem takes integer or boolean tensors"));
	assert_non_null(strstr(md.buf, "| integer\\_inputs | integer inputs |"));
	doc_release(&doc);
	strbuf_release(&md);
	report_data_release(&d);
	/* a table without the columns the report reads is an error, not silence */
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "DROP TABLE audit; CREATE TABLE audit (x TEXT);", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "audit table lacks the column problem"));
	report_data_release(&d);
	free(db);
	free(run);
	tmpdir_remove(dir);
}

/* ---------- whole reports with the real gnuplot ---------- */

static char *read_all(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 64u << 20))
		fail_msg("cannot read %s", path);
	return strbuf_detach(&sb, NULL);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void whole_report(void **state)
{
	(void)state;
	char *gp = proc_which("gnuplot");
	if (!gp) {
		skip(); /* prints the reason as a SKIP; tests/e2e/test_report.sh checks the exit code without it */
		return;
	}
	free(gp);
	struct sb_error err = { 0 };
	char *dir = rich_store();
	char *run = xstrfmt("%s/rich", dir), *out = xstrfmt("%s/report", dir);
	char *runs[] = { run };
	struct report_opts o = { .runs = runs, .nruns = 1, .out_dir = out, .by = METRICS_FIRST };
	struct report_result res;
	if (report_write(&o, &res, &err))
		fail_msg("%s", err.msg);
	/* every plot has data in this store */
	assert_int_equal(res.plots_drawn, 6);
	assert_int_equal(res.plots_omitted, 0);
	char *html = read_all(res.html_path), *md = read_all(res.md_path);
	static const char *const names[] = { "fast_p", "speedups", "per_problem", "attempts", "tokens_cost", "findings" };
	for (size_t i = 0; i < 6; i++) {
		char *svg = xstrfmt("%s/plots/%s.svg", out, names[i]), *png = xstrfmt("%s/plots/%s.png", out, names[i]);
		char *gpf = xstrfmt("%s/plots/%s.gp", out, names[i]), *id = xstrfmt("id=\"%s-gnuplot_canvas\"", names[i]);
		char *pngref = xstrfmt("](plots/%s.png)", names[i]);
		struct stat st;
		assert_int_equal(stat(svg, &st), 0);
		assert_int_equal(stat(png, &st), 0);
		assert_true(st.st_size > 1000);
		assert_int_equal(stat(gpf, &st), 0);
		if (count(html, id) != 1)
			fail_msg("%s: the plot's canvas is inlined %zu times", names[i], count(html, id));
		assert_non_null(strstr(md, pngref));
		free(svg), free(png), free(gpf), free(id), free(pngref);
	}
	assert_int_equal(count(html, "<svg"), 6);
	assert_int_equal(count(html, "<script"), 0);
	/* no reference out of the page: the only "http" is the hostile name, as text */
	assert_int_equal(count(html, "http:"), count(html, "[l](http://x)"));
	assert_int_equal(count(html, "https:"), 0);
	assert_int_equal(count(html, "url("), count(html, "url(#"));
	assert_null(strstr(html, "<img"));
	/* the hostile name and message are text everywhere */
	assert_null(strstr(html, "<img src=x"));
	assert_non_null(strstr(html, "&lt;img src=x onerror=alert(1)&gt;&quot;&amp;&#39;|*_[l](http"));
	assert_null(strstr(md, "<img src=x"));
	assert_null(strstr(md, "<script>"));
	assert_non_null(strstr(md, "&lt;script&gt;alert('m')&lt;/script&gt;"));
	/* stages and tokens made it into the tables */
	assert_non_null(strstr(md, "| stitchcuda | repair\\_correctness | 3 |"));
	assert_non_null(strstr(md, "No audit data"));
	/* the same runs give the same report, byte for byte */
	struct report_result again;
	if (report_write(&o, &again, &err))
		fail_msg("%s", err.msg);
	char *html2 = read_all(again.html_path);
	assert_string_equal(html, html2);
	free(html2);
	report_result_release(&again);
	free(html);
	free(md);
	report_result_release(&res);
	free(run);
	free(out);
	tmpdir_remove(dir);
}

/* A store without iterative agents, LLM calls or findings: those plots are left out with a line each. */
static void plots_without_data(void **state)
{
	(void)state;
	char *gp = proc_which("gnuplot");
	if (!gp) {
		skip();
		return;
	}
	free(gp);
	struct sb_error err = { 0 };
	struct templates t;
	struct config cfg;
	struct store_run r;
	struct store *s;
	char *dir = tmpdir_make(), *run = xstrfmt("%s/plain", dir), *out = xstrfmt("%s/rep", dir);
	load_templates(&t);
	config_init(&cfg);
	json_t *v = verdict(&t, "L1/1", "pass", 1.3, "x");
	if (store_run_from_verdict(&r, "plain", v, &cfg, &err) || rundir_open(&s, run, &cfg, &r, &err) ||
	    store_add_agent(s, "samples", "samples", NULL, &err) ||
	    store_add_problem(s, "L1/1", NULL, json_string_value(json_object_get(json_object_get(v, "problem"), "sha256")),
			      &err) ||
	    store_put_verdict(s, &(struct store_put){ .agent = "samples" }, v, &err))
		fail_msg("%s", err.msg);
	json_decref(v);
	store_close(s);
	store_run_release(&r);
	config_release(&cfg);
	release_templates(&t);
	char *runs[] = { run };
	struct report_opts o = { .runs = runs, .nruns = 1, .out_dir = out };
	struct report_result res;
	if (report_write(&o, &res, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(res.plots_drawn, 3);
	assert_int_equal(res.plots_omitted, 3);
	char *html = read_all(res.html_path), *attempts = xstrfmt("%s/plots/attempts.svg", out);
	assert_int_equal(count(html, "<svg"), 3);
	assert_non_null(strstr(html, "no iterative agent in these runs"));
	assert_non_null(strstr(html, "no LLM calls are stored in these runs"));
	assert_non_null(strstr(html, "no candidate in these runs has a finding"));
	assert_int_equal(access(attempts, F_OK), -1); /* not drawn empty */
	free(attempts);
	free(html);
	report_result_release(&res);
	free(run);
	free(out);
	tmpdir_remove(dir);
}

/* The plot of run `name` made from cands: its commands and data, for checks that need no gnuplot. */
static void plot_of(const struct cand *cands, size_t n, void (*fill)(const struct report_data *, struct plot *),
		    struct plot *p)
{
	struct sb_error err = { 0 };
	char *dir = tmpdir_make(), *run = xstrfmt("%s/r", dir);
	char *runs[] = { run };
	struct report_data d;
	if (make_store(run, "r", cands, n, &err) || report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	plot_init(p, "p", 900, 500);
	fill(&d, p);
	report_data_release(&d);
	free(run);
	tmpdir_remove(dir);
}

/* Three agents with the same trajectories draw the same curves: each is drawn a little apart, with its
 * own point shape, so none hides another (and neither does a correct curve its faster-than-eager twin). */
static void equal_attempt_curves_stay_apart(void **state)
{
	(void)state;
	const struct cand same[] = {
		{ "it1", "L1/1", 0, 0, "draft", "incorrect", NAN, 100 }, { "it1", "L1/1", 0, 1, "repair_correctness", "pass", 1.5, 100 },
		{ "it2", "L1/1", 0, 0, "draft", "incorrect", NAN, 100 }, { "it2", "L1/1", 0, 1, "repair_correctness", "pass", 1.5, 100 },
		{ "it3", "L1/1", 0, 0, "draft", "incorrect", NAN, 100 }, { "it3", "L1/1", 0, 1, "repair_correctness", "pass", 1.5, 100 },
	};
	struct plot p;
	plot_of(same, 6, report_plot_attempts, &p);
	assert_null(p.omitted);
	/* the same data for all three ... */
	const char *block = "1 0 0 ? 0\n2 100 100 1.5 1\n";
	assert_int_equal(count(p.data.buf, block), 3);
	/* ... drawn at six different heights on top (correct and faster for each) and three below */
	char seen[16][24];
	size_t nseen = 0, nbottom = 0;
	int pts[3] = { 0 }, npts = 0;
	for (const char *u = strstr(p.body.buf, "using 1:("); u; u = strstr(u + 1, "using 1:(")) {
		char expr[24];
		assert_int_equal(sscanf(u, "using 1:(%23[^)])", expr), 1);
		for (size_t i = 0; i < nseen; i++)
			if (!strcmp(seen[i], expr))
				fail_msg("two series are drawn with the same offset: %s", expr);
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", expr);
		nbottom += expr[1] == '4';
		const char *pt = strstr(u, " pt ");
		int t = atoi(pt + 4);
		if (expr[1] == '2') {
			for (int i = 0; i < npts; i++)
				assert_int_not_equal(pts[i], t);
			pts[npts++] = t;
		}
	}
	assert_int_equal(nseen, 9);
	assert_int_equal(nbottom, 3);
	assert_int_equal(npts, 3);
	plot_release(&p);
}

/* Counts are whole candidates: integer ticks; an id's bars are centred on its tick whichever agents have it. */
static void findings_bars_are_centred(void **state)
{
	(void)state;
	struct plot p;
	plot_of(rich, sizeof(rich) / sizeof(rich[0]), report_plot_findings, &p);
	assert_non_null(strstr(p.body.buf, "set ytics 0, 1\n"));
	/* H10 (tick 1): two agents at 0.8 and 1.2; H22 (tick 2): stitchcuda alone, at 2 */
	char *data = xstrfmt("\n%s", p.data.buf); /* every data line after a newline */
	assert_non_null(strstr(data, "\n0.800000 1 "));
	assert_non_null(strstr(data, "\n1.200000 1 "));
	assert_non_null(strstr(data, "\n2.000000 1 "));
	free(data);
	plot_release(&p);
}

/* The tokens plot says why it is missing, and says "no LLM calls" only when there are none. */
static void tokens_plot_says_why_it_is_missing(void **state)
{
	(void)state;
	const struct cand no_usage[] = { { "one", "L1/1", 0, 0, NULL, "pass", 1.2, -1 } };
	const struct cand no_verdict[] = { { "one", "L1/1", 0, 0, NULL, "pass", 1.2, 0 },
					   { "one", "L1/2", 0, 0, NULL, NULL, NAN, 500 } };
	struct plot p;
	plot_of(no_usage, 1, report_plot_tokens, &p);
	assert_non_null(p.omitted);
	assert_non_null(strstr(p.omitted, "the 1 LLM calls stored report no token counts"));
	plot_release(&p);
	plot_of(no_verdict, 2, report_plot_tokens, &p);
	assert_non_null(p.omitted);
	assert_non_null(strstr(p.omitted, "the 1 LLM calls stored belong to samples that have no verdict yet"));
	plot_release(&p);
}

/* The cell of agent `name` over all levels in d; fails when the agent is not listed. */
static const struct metric_cell *all_cell(const struct report_data *d, const char *name)
{
	int a = report_agent_index(d, name);
	if (a < 0)
		fail_msg("agent %s is not listed", name);
	return &d->m.agents[a].cells[0];
}

/* Which problems count: run.json's selection (a shard: the pairs it holds), never a problem only the audit
 * added to the store; without run.json the problems some agent has a verdict for. */
static void denominator_is_the_runs_selection(void **state)
{
	(void)state;
	const struct cand two[] = { { "a", "L1/1", 0, 0, NULL, "pass", 1.2, 0 }, { "b", "L1/1", 0, 0, NULL, "pass", 1.1, 0 } };
	struct sb_error err = { 0 };
	char *dir = tmpdir_make(), *run = xstrfmt("%s/r", dir), *db = xstrfmt("%s/results.db", run);
	char *runs[] = { run };
	struct store *s;
	json_t *flags = json_pack("[{s:s, s:s}]", "id", "H16", "message", "tiny");
	if (make_store(run, "r", two, 2, &err) || store_open(&s, db, STORE_WRITE, &err) ||
	    store_put_audit(s, "L1/3", "Sum", "00", flags, &err))
		fail_msg("%s", err.msg);
	json_decref(flags);
	store_close(s);
	struct report_data d;
	/* no run.json: only L1/1 was judged; the audited L1/3 is no problem of the run */
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(all_cell(&d, "a")->problems, 1);
	assert_int_equal(d.m.nmissing, 0);
	report_data_release(&d);
	/* run.json selected L1/1 and L1/2 for both: L1/2 counts as a failure, L1/3 still does not count */
	write_file(run, "run.json", "{\"agents\": [\"a\", \"b\"], \"problems\": [\"L1/1\", \"L1/2\"], "
				    "\"samples\": {\"a\": 1, \"b\": 1}}");
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(all_cell(&d, "a")->problems, 2);
	assert_int_equal(all_cell(&d, "a")->missing, 1);
	assert_int_equal(all_cell(&d, "b")->problems, 2);
	report_data_release(&d);
	/* shard 2/2 of items (L1/1 a, L1/1 b, L1/2 a, L1/2 b) holds b's two: a has only its own verdict */
	write_file(run, "run.json", "{\"agents\": [\"a\", \"b\"], \"problems\": [\"L1/1\", \"L1/2\"], "
				    "\"samples\": {\"a\": 1, \"b\": 1}, \"shard\": \"2/2\"}");
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(all_cell(&d, "a")->problems, 1);
	assert_int_equal(all_cell(&d, "a")->missing, 0);
	assert_int_equal(all_cell(&d, "b")->problems, 2);
	assert_int_equal(all_cell(&d, "b")->missing, 1);
	report_data_release(&d);
	/* a run.json that is not JSON is an error naming it, not a silent guess */
	write_file(run, "run.json", "{\"agents\": [");
	assert_int_equal(report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "run.json:1:"));
	report_data_release(&d);
	free(db);
	free(run);
	tmpdir_remove(dir);
}

/* From a store as a run leaves it: agent a passes L1/1 at 15x with an H21 flag and L1/2 cleanly at 2x, and
 * L1/3's reference failed for it; b passes L1/1 at 1.1x and has no verdict for L1/2 and L1/3. */
static void flagged_and_reference_failed(void **state)
{
	(void)state;
	const struct cand two[] = { { "a", "L1/2", 0, 0, NULL, "pass", 2.0, 0 }, { "b", "L1/1", 0, 0, NULL, "pass", 1.1, 0 } };
	struct sb_error err = { 0 };
	struct templates t;
	char *dir = tmpdir_make(), *run = xstrfmt("%s/r", dir), *db = xstrfmt("%s/results.db", run);
	char *out = xstrfmt("%s/rep", dir);
	char *runs[] = { run };
	struct store *s;
	struct store_run *r = NULL;
	size_t nr = 0;
	load_templates(&t);
	json_t *v = verdict(&t, "L1/1", "pass", 15.0, "a flagged one");
	json_array_append_new(json_object_get(v, "findings"),
			      json_pack("{s:s, s:s, s:s, s:i, s:i}", "id", "H21", "severity", "flag", "message",
					"15.0x eager: more than 10x", "line", 0, "col", 0));
	if (make_store(run, "r", two, 2, &err) || store_open(&s, db, STORE_WRITE, &err) ||
	    store_load_runs(s, &r, &nr, &err) ||
	    store_add_problem(s, "L1/1", NULL, json_string_value(json_object_get(json_object_get(v, "problem"), "sha256")),
			      &err) ||
	    store_put_verdict(s, &(struct store_put){ .agent = "a", .run = r[0].id }, v, &err) ||
	    store_add_problem(s, "L1/3", NULL, "00", &err) ||
	    store_put_reference_failure(s, "a", "L1/3", 0, "the reference raised ZeroDivisionError", &err))
		fail_msg("%s", err.msg);
	json_decref(v);
	release_templates(&t);
	store_runs_free(r, nr);
	store_close(s);
	write_file(run, "run.json", "{\"agents\": [\"a\", \"b\"], \"problems\": [\"L1/1\", \"L1/2\", \"L1/3\"], "
				    "\"samples\": {\"a\": 1, \"b\": 1}}");
	struct report_data d;
	if (report_data_load(&d, runs, 1, METRICS_FIRST, METRICS_ALL, &err))
		fail_msg("%s", err.msg);
	const struct metric_cell *a = all_cell(&d, "a"), *b = all_cell(&d, "b");
	assert_int_equal(a->problems, 2);            /* L1/3 is left out: its reference failed */
	assert_int_equal(a->missing, 0);
	assert_int_equal(a->unjudged, 1);
	assert_true(fabs(a->correct_pct - 100) < 1e-9);
	assert_int_equal(a->flagged, 1);
	assert_true(fabs(a->fast_pct[3] - 50) < 1e-9); /* only the clean 2x is faster than eager */
	assert_true(fabs(a->geomean_eager - 2.0) < 1e-9);
	assert_int_equal(b->problems, 3);            /* b's L1/2 and L1/3 have no verdict and no reference failure */
	assert_int_equal(b->missing, 2);
	double xs[16], ys[16];
	report_fastp_steps(&d.m.agents[report_agent_index(&d, "a")], 2.5, xs, ys);
	assert_true(fabs(ys[0] - 50) < 1e-9);         /* the curve starts at fast_0, the clean passes */
	assert_non_null(strstr(d.coverage.buf, "agent b has verdicts for 1 of the 3 problems"));
	assert_null(strstr(d.coverage.buf, "agent a"));
	report_data_release(&d);

	struct report_opts o = { .runs = runs, .nruns = 1, .out_dir = out, .by = METRICS_FIRST, .no_plots = 1 };
	struct report_result res;
	if (report_write(&o, &res, &err))
		fail_msg("%s", err.msg);
	char *md = read_all(res.md_path);
	assert_non_null(strstr(md, "| a | 100.0 [100.0, 100.0] / 50.0 [0.0, 100.0] / 2.000x [1.964, 2.036] (1 flagged) |"));
	assert_non_null(strstr(md, "\n1 problem could not be judged: its reference failed, or the machine could not run "
				   "the candidate; the harness's, the problem's or the machine's failure, not "
				   "the agent's, so it is left out of the rates of the agents without a verdict for it: "
				   "L1/3 (a: the reference raised ZeroDivisionError).\n"));
	assert_non_null(strstr(md, "| L1/1 |  | pass 15.00x (flagged H21) | pass 1.10x |"));
	assert_non_null(strstr(md, "| L1/3 |  | reference failed | no verdict |"));
	assert_non_null(strstr(md, "## Flagged passes"));
	assert_non_null(strstr(md, "| a | L1/1 | 0 | 0 | 15.00x | yes | H21 impossible speed (flag): 15.0x eager: more "
				   "than 10x |"));
	free(md);
	report_result_release(&res);
	free(out);
	free(db);
	free(run);
	tmpdir_remove(dir);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--make-store")) {
		struct sb_error err = { 0 };
		if (make_rich_store(argv[2], &err)) {
			fprintf(stderr, "test_report --make-store: %s\n", err.msg);
			return 1;
		}
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escaping),
		cmocka_unit_test(tables),
		cmocka_unit_test(gnuplot_strings),
		cmocka_unit_test(svg_ids_prefixed),
		cmocka_unit_test(svg_refusals),
		cmocka_unit_test(fastp_steps),
		cmocka_unit_test(attempt_curves),
		cmocka_unit_test(audit_table_when_present),
		cmocka_unit_test(whole_report),
		cmocka_unit_test(plots_without_data),
		cmocka_unit_test(equal_attempt_curves_stay_apart),
		cmocka_unit_test(findings_bars_are_centred),
		cmocka_unit_test(tokens_plot_says_why_it_is_missing),
		cmocka_unit_test(denominator_is_the_runs_selection),
		cmocka_unit_test(flagged_and_reference_failed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
