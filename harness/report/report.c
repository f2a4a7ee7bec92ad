/* report.c - `stitchbench report` end to end: reads the runs, draws each plot with gnuplot (or says why a plot
 * has no data), and writes report.md and one self-contained report.html, each whole before it replaces the last. */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fs.h"
#include "report_int.h"

/* SB_VERSION and SB_GIT come from the Makefile, as for main.c */

void report_result_release(struct report_result *r)
{
	free(r->md_path);
	free(r->html_path);
	strbuf_release(&r->warnings);
	memset(r, 0, sizeof(*r));
}

/* The plots in the order the page shows them. */
static const struct {
	const char *name, *heading, *id;
	void (*fill)(const struct report_data *d, struct plot *p);
} plots[] = {
	{ "fast_p", "fast_p curves", "fast-p", report_plot_fastp },
	{ "speedups", "Speedup distributions", "speedups", report_plot_speedups },
	{ "per_problem", "Speedup per problem", "per-problem", report_plot_problems },
	{ "attempts", "Iterative agents: best speedup by attempt", "attempts", report_plot_attempts },
	{ "tokens_cost", "Tokens and cost against speedup", "tokens-cost", report_plot_tokens },
	{ "findings", "Hack findings by id", "findings", report_plot_findings },
};
#define NPLOTS (int)(sizeof(plots) / sizeof(plots[0]))

/* A plot with no data leaves no files of an earlier report behind. */
static void remove_plot_files(const char *dir, const char *name)
{
	static const char *const ext[] = { "dat", "gp", "svg", "png" };
	for (size_t i = 0; i < 4; i++) {
		char *path = xstrfmt("%s/%s.%s", dir, name, ext[i]);
		remove(path);
		free(path);
	}
}

struct draw_ctx {
	const struct report_opts *o;
	const struct report_data *d;
	const struct gnuplot *g;
	char *plot_dir;
	struct report_result *res;
};

static int add_plot(struct draw_ctx *c, struct doc *doc, int which, struct sb_error *err)
{
	struct plot p;
	char *svg = NULL;
	int rc = 0;
	plot_init(&p, plots[which].name, 900, 500);
	plots[which].fill(c->d, &p);
	if (p.omitted) {
		doc_note(doc, "%s", p.omitted);
		c->res->plots_omitted++;
		if (c->plot_dir)
			remove_plot_files(c->plot_dir, p.name);
	} else if (c->g) {
		if (c->o->progress)
			c->o->progress(c->o->progress_arg, p.name, (size_t)which, NPLOTS);
		rc = gnuplot_draw(c->g, c->plot_dir, &p, &svg, err);
		if (!rc) {
			char *png = xstrfmt("plots/%s.png", p.name), *svg_file = xstrfmt("plots/%s.svg", p.name);
			char *id = xstrfmt("plot-%s", plots[which].id);
			doc_plot(doc, id, p.caption, svg, png, svg_file, p.width);
			free(png);
			free(svg_file);
			free(id);
			c->res->plots_drawn++;
		}
	}
	plot_release(&p);
	return rc;
}

/* The short results table first (and StitchCUDA's when asked), then the plots, then the long tables (per agent, per problem, flagged
 * passes, by stage, findings) and the runs: a reader reaches the first plot without scrolling past pages of tables. */
static int build(struct draw_ctx *c, struct doc *doc, struct sb_error *err)
{
	const struct report_data *d = c->d;
	int rc = 0;
	if (c->g)
		doc_para(doc, "Made by stitchbench %s (%s); plots drawn by %s (SVG inline here; PNG from the %s terminal, "
			      "used by report.md). docs/report.md says what each table and plot shows.",
			 SB_VERSION, SB_GIT, c->g->version, c->g->png_terminal);
	else
		doc_para(doc, "Made by stitchbench %s (%s) with --no-plots: tables only. docs/report.md says what each "
			      "table shows.", SB_VERSION, SB_GIT);
	report_section_summary(d, doc);
	report_section_stitchcuda(d, doc);
	for (int i = 0; c->g && i < NPLOTS && !rc; i++) {
		doc_heading(doc, 2, plots[i].id, plots[i].heading);
		rc = add_plot(c, doc, i, err);
	}
	if (rc)
		return rc;
	report_section_runs(d, doc);
	report_section_details(d, doc);
	report_section_problems(d, doc);
	report_section_flagged(d, doc);
	report_section_stages(d, doc);
	report_section_findings(d, doc);
	report_section_audit(d, doc);
	return 0;
}

static int write_whole(const char *path, const struct strbuf *text, struct sb_error *err)
{
	int e = fs_write_atomic(path, text->buf, text->len);
	return e ? sb_error_set(err, SB_EIO, "cannot write %s: %s", path, strerror(-e)) : 0;
}

static char *title_of(const struct report_data *d)
{
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, "stitchbench report: ");
	for (size_t i = 0; i < d->nin; i++)
		for (size_t j = 0; j < d->in[i].nruns; j++)
			strbuf_addf(&t, "%s%s", t.len > 20 ? ", " : "", d->in[i].runs[j].run_id);
	return strbuf_detach(&t, NULL);
}

int report_write(const struct report_opts *o, struct report_result *res, struct sb_error *err)
{
	struct gnuplot g = { 0 };
	struct report_data d;
	struct draw_ctx c = { o, &d, NULL, NULL, res };
	struct doc doc = { 0 };
	struct strbuf md = STRBUF_INIT, html = STRBUF_INIT;
	int rc = 0;
	memset(res, 0, sizeof(*res));
	strbuf_init(&res->warnings, 0);
	if (!o->no_plots) {
		if ((rc = gnuplot_find(&g, o->gnuplot, err)))
			return rc;
		c.g = &g;
		snprintf(res->png_terminal, sizeof(res->png_terminal), "%s", g.png_terminal);
	}
	if ((rc = report_data_load(&d, o->runs, o->nruns, o->by, o->denominator, err))) {
		report_data_release(&d);
		gnuplot_release(&g);
		return rc;
	}
	d.m.protocol = run_inputs_protocol(d.in, d.nin, o->protocol);
	if (d.settings_diff.len)
		strbuf_addf(&res->warnings, "these runs were made with settings that change the numbers:\n%s",
			    d.settings_diff.buf);
	strbuf_addstr(&res->warnings, d.coverage.buf);
	c.plot_dir = xstrfmt("%s/plots", o->out_dir);
	int e = fs_mkdirs(c.g ? c.plot_dir : o->out_dir, 0755);
	if (e)
		rc = sb_error_set(err, SB_EIO, "cannot create %s: %s", c.g ? c.plot_dir : o->out_dir, strerror(-e));
	char *title = title_of(&d);
	doc_init(&doc, title);
	free(title);
	if (!rc)
		rc = build(&c, &doc, err);
	if (!rc) {
		doc_markdown(&doc, &md);
		doc_html(&doc, &html);
		res->md_path = xstrfmt("%s/report.md", o->out_dir);
		res->html_path = xstrfmt("%s/report.html", o->out_dir);
		rc = write_whole(res->md_path, &md, err);
		if (!rc)
			rc = write_whole(res->html_path, &html, err);
		if (!rc && o->progress)
			o->progress(o->progress_arg, "done", NPLOTS, NPLOTS);
	}
	doc_release(&doc);
	strbuf_release(&md);
	strbuf_release(&html);
	free(c.plot_dir);
	report_data_release(&d);
	gnuplot_release(&g);
	return rc;
}
