/* report_plots.c - the data and gnuplot commands of each plot of a report (what each shows: docs/report.md).
 * Untrusted names reach gnuplot only as single-quoted strings, in noenhanced mode, never as commands. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hacks.h"

#define W 900
#define H 500
#define FASTP_MAX 2.0   /* fast_p's x axis ends here: p = 0 to 2 are the thresholds results are quoted at */
#define NEUTRAL "#444444" /* axes, reference lines and key entries that stand for no agent */
#define FONT_PX 12      /* the SVG terminal's font (gnuplot.c): label widths are estimated from it */
#define LINE_PX 16      /* a line of text at that size, with room to spare: the least distance between labels */

/* An agent's colour, by its index in the results table, the same in every plot of a report. The
 * colour-blind-safe colours of Okabe and Ito without yellow (too faint on white) and black, then darker
 * ones from Paul Tol's palettes: no agent is drawn in grey, the colour of axes, grids and reference lines.
 * Beyond ten agents the colours repeat; each plot's key still names every series. */
static const char *colour(size_t i)
{
	static const char *const c[] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255",
					 "#332288", "#999933", "#661100" };
	return c[i % (sizeof(c) / sizeof(c[0]))];
}

/* About how wide a label of n characters is at FONT_PX: gnuplot does not say, and a generous guess only
 * costs some white space. */
static double text_px(size_t n)
{
	return 0.7 * FONT_PX * (double)n;
}

/* The longest agent name, in bytes, of the agents `only` marks (NULL: all). */
static size_t longest_name(const struct metrics *m, const int *only)
{
	size_t n = 0;
	for (size_t a = 0; a < m->nagents; a++)
		if (!only || only[a])
			n = n > strlen(m->agents[a].name) ? n : strlen(m->agents[a].name);
	return n;
}

/* The room a key outside right takes: its sample, the gaps and the longest entry, an agent's name and
 * `extra` characters more. */
static double key_px(const struct metrics *m, const int *only, size_t extra)
{
	return 110 + text_px(longest_name(m, only) + extra);
}

static void header(struct plot *p, const char *title)
{
	struct strbuf *b = &p->body;
	strbuf_addstr(b, "reset\nset datafile missing '?'\nset grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n"
			 "set key outside right top vertical Left reverse noautotitle\nset title ");
	gp_quote(b, title);
	strbuf_addch(b, '\n');
}

static void agent_title(struct strbuf *b, const char *name)
{
	strbuf_addstr(b, " title ");
	gp_quote(b, name);
}

/* Data blocks are separated by two blank lines, so that "index N" picks block N. gnuplot reads more blank
 * lines as one separator, so an empty block gets a line of missing values to keep the count. */
static void end_block(struct plot *p)
{
	if (!p->data.len || ends_with(p->data.buf, "\n\n"))
		strbuf_addstr(&p->data, "?\n");
	strbuf_addstr(&p->data, "\n\n");
}

static int timed(double s)
{
	return isfinite(s) && s > 0;
}

static size_t tics_in(const double *steps, size_t n, int e0, int e1, double lo, double hi, struct strbuf *b,
		      const char *unit)
{
	size_t count = 0;
	for (int e = e0; e <= e1; e++)
		for (size_t k = 0; k < n; k++) {
			double v = steps[k] * pow(10, e);
			if (v < lo || v > hi)
				continue;
			if (b)
				strbuf_addf(b, "%s'%.4g%s' %.10g", count ? ", " : "", v, unit, v);
			count++;
		}
	return count;
}

/* Tics a person can read on a log axis that may span less than a decade: 1-2-5 per decade; finer steps
 * when that gives fewer than four; only the decades when it gives more than fourteen. */
static void log_tics(struct strbuf *b, const char *axis, double lo, double hi, const char *unit)
{
	static const double coarse[] = { 1, 2, 5 }, fine[] = { 1, 1.5, 2, 3, 5, 7 }, decade[] = { 1 };
	int e0 = (int)floor(log10(lo)), e1 = (int)ceil(log10(hi));
	size_t n = tics_in(coarse, 3, e0, e1, lo, hi, NULL, unit);
	const double *steps = n < 4 ? fine : n > 14 ? decade : coarse;
	size_t nsteps = n < 4 ? 6 : n > 14 ? 1 : 3;
	strbuf_addf(b, "set %stics (", axis);
	tics_in(steps, nsteps, e0, e1, lo, hi, b, unit);
	strbuf_addstr(b, ")\n");
}

/* A log axis from lo to hi with room around, always including 1 (the line where candidate and eager tie). */
static void log_range(struct strbuf *b, const char *axis, double lo, double hi)
{
	lo = fmin(lo, 1) / 1.3;
	hi = fmax(hi, 1) * 1.3;
	strbuf_addf(b, "set logscale %s\nset %srange [%.6g:%.6g]\n", axis, axis, lo, hi);
	log_tics(b, axis, lo, hi, "x");
}

/* ---------- fast_p ---------- */

void report_plot_fastp(const struct report_data *d, struct plot *p)
{
	const struct metrics *m = &d->m;
	const double xmax = FASTP_MAX;
	size_t beyond = 0, timed_n = 0;
	for (size_t a = 0; a < m->nagents; a++)
		for (size_t i = 0; i < m->agents[a].nproblems; i++) {
			const struct metric_row *r = m->agents[a].problems[i].rep;
			if (metrics_clean(r) && timed(r->speedup_eager)) {
				timed_n++;
				beyond += r->speedup_eager > xmax;
			}
		}
	if (!m->nagents) {
		plot_omit(p, "fast_p curves: no verdicts in these runs.");
		return;
	}
	p->width = (int)fmax(W, 620 + key_px(m, NULL, 0));
	header(p, "fast_p: % of problems passed cleanly and faster than p x eager");
	/* the ticks are the thresholds results are quoted at, and the axis says so */
	strbuf_addf(&p->body, "set xlabel 'threshold p (speedup vs eager), from fast_0 to fast_2'\n"
			      "set ylabel '%% of problems'\nset xrange [0:%.6g]\n"
			      "set xtics ('0' 0, '0.5' 0.5, '1' 1, '1.5' 1.5, '2' 2)\n"
			      "set yrange [0:105]\nset arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb '#888888'\n",
		    xmax);
	double *xs = NULL, *ys = NULL;
	strbuf_addstr(&p->body, "plot");
	for (size_t a = 0; a < m->nagents; a++) {
		const struct metric_agent *ag = &m->agents[a];
		xs = xrealloc(xs, (2 * ag->nproblems + 3) * sizeof(double));
		ys = xrealloc(ys, (2 * ag->nproblems + 3) * sizeof(double));
		size_t k = report_fastp_steps(ag, xmax, xs, ys);
		for (size_t i = 0; i < k; i++)
			strbuf_addf(&p->data, "%.10g %.10g\n", xs[i], ys[i]);
		end_block(p);
		strbuf_addf(&p->body, "%s '%s.dat' index %zu using 1:2 with steps lw 2 lc rgb '%s'", a ? ", \\\n    " : " ",
			    p->name, a, colour(a));
		agent_title(&p->body, ag->name);
	}
	/* the p values of the tables, as dots on each curve */
	for (size_t a = 0; a < m->nagents; a++) {
		for (int k = 0; k < METRICS_NP; k++)
			if (metrics_p[k] <= xmax)
				strbuf_addf(&p->data, "%g %.10g\n", metrics_p[k], m->agents[a].cells[0].fast_pct[k]);
		end_block(p);
		strbuf_addf(&p->body, ", \\\n    '%s.dat' index %zu using 1:2 with points pt 7 ps 0.7 lc rgb '%s'", p->name,
			    m->nagents + a, colour(a));
	}
	strbuf_addch(&p->body, '\n');
	free(xs);
	free(ys);
	p->caption = xstrfmt("fast_p curves, all levels: for each threshold p, the percentage of an agent's problems whose "
			     "representative candidate is correct with no hack finding and more than p times as fast as eager "
			     "PyTorch (docs/metrics.md). The axis spans p = 0 to 2, the thresholds results are quoted at: a "
			     "curve starts at fast_0 (correct %% less the flagged passes) and ends at fast_2, the problems more "
			     "than twice as fast as eager (%zu of the %zu clean timed passes of all agents); dots mark the p "
			     "values of the tables; the dashed line is p = 1.", beyond, timed_n);
}

/* ---------- speedup distributions ---------- */

/* A fixed spread of points around their column, so that equal speedups do not hide each other and the
 * same runs always draw the same picture. */
static double jitter(size_t i)
{
	return ((double)((i * 7919u) % 101u) / 100.0 - 0.5) * 0.16;
}

void report_plot_speedups(const struct report_data *d, struct plot *p)
{
	const struct metrics *m = &d->m;
	double lo = INFINITY, hi = 0;
	size_t n_eager = 0, n_comp = 0;
	for (size_t a = 0; a < m->nagents; a++)
		for (size_t i = 0; i < m->agents[a].nproblems; i++) {
			const struct metric_row *r = m->agents[a].problems[i].rep;
			for (int side = 0; side < 2 && metrics_clean(r); side++) {
				double s = side ? r->speedup_compiled : r->speedup_eager;
				if (timed(s)) {
					lo = fmin(lo, s);
					hi = fmax(hi, s);
					*(side ? &n_comp : &n_eager) += 1;
				}
			}
		}
	if (!n_eager) {
		plot_omit(p, "Speedup distributions: no clean pass (correct with no hack finding) has a speedup.");
		return;
	}
	/* Tick labels turned 20 degrees whose anchors are s apart lie s sin 20 apart across, however long they
	 * are: columns of 140 px keep them 48 px apart, three lines. The key outside right gets room for the
	 * longest name. */
	p->width = (int)fmax(W, 110 + key_px(m, NULL, 0) + 140 * (double)m->nagents);
	header(p, "Speedups of clean passes (log scale)");
	log_range(&p->body, "y", lo, hi);
	strbuf_addf(&p->body, "set ylabel 'speedup (x, log scale)'\nset xrange [0.4:%zu.6]\nset xtics (", m->nagents);
	for (size_t a = 0; a < m->nagents; a++) {
		struct strbuf label = STRBUF_INIT;
		strbuf_addf(&label, "%s (n=%zu)", m->agents[a].name, m->agents[a].cells[0].geomean_eager_n);
		strbuf_addstr(&p->body, a ? ", " : "");
		gp_quote(&p->body, label.buf);
		strbuf_addf(&p->body, " %zu", a + 1);
		strbuf_release(&label);
	}
	strbuf_addstr(&p->body, ") rotate by -20\nset grid noxtics\nset style boxplot fraction 1.0\nset boxwidth 0.25\n"
				"set style fill transparent solid 0.15\n"
				"set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#888888'\nplot");
	int first = 1;
	for (size_t a = 0; a < m->nagents; a++) {
		int titled = 0;
		for (int side = 0; side < 2; side++) {
			size_t k = 0;
			double x = (double)(a + 1) + (n_comp ? (side ? 0.18 : -0.18) : 0);
			for (size_t i = 0; i < m->agents[a].nproblems; i++) {
				const struct metric_row *r = m->agents[a].problems[i].rep;
				double s = side ? r->speedup_compiled : r->speedup_eager;
				if (metrics_clean(r) && timed(s))
					strbuf_addf(&p->data, "%.6f %.10g\n", x + jitter(k++), s);
			}
			end_block(p);
			if (!k)
				continue;
			/* the agent's colour on both sides, as in every other plot; the side is the point's shape */
			size_t block = 2 * a + (size_t)side;
			const char *c = colour(a);
			strbuf_addstr(&p->body, first ? " " : ", \\\n    ");
			if (k >= 4) /* gnuplot draws a box from four points on */
				strbuf_addf(&p->body, "'%s.dat' index %zu using (%.2f):2 with boxplot lc rgb '%s' notitle, \\\n    ",
					    p->name, block, x, c);
			strbuf_addf(&p->body, "'%s.dat' index %zu using 1:2 with points pt %d ps 0.6 lc rgb '%s'", p->name,
				    block, side ? 6 : 7, c);
			if (!titled++)
				agent_title(&p->body, m->agents[a].name);
			else
				strbuf_addstr(&p->body, " notitle");
			first = 0;
		}
	}
	if (n_comp) /* key entries for the two shapes, in no agent's colour */
		strbuf_addf(&p->body, ", \\\n    NaN with points pt 7 ps 0.6 lc rgb '%s' title 'filled, left: vs eager', "
				      "\\\n    NaN with points pt 6 ps 0.6 lc rgb '%s' title 'open, right: vs torch.compile'",
			    NEUTRAL, NEUTRAL);
	strbuf_addch(&p->body, '\n');
	p->caption = xstrfmt("Speedup distributions, all levels, log scale: one dot per problem whose representative "
			     "candidate is correct with no hack finding and timed (n per agent; flagged passes are left out), "
			     "and from four dots on a box (quartiles and median) with whiskers to the smallest and largest, in "
			     "the agent's colour; %s. The dashed line is 1x: below it the candidate is slower.",
			     n_comp ? "filled dots (left): speedup vs eager PyTorch, open dots (right): vs torch.compile"
				    : "speedup vs eager PyTorch (torch.compile was not timed)");
}

/* ---------- per-problem bars ---------- */

static size_t problem_slot(const char *const *probs, size_t n, const char *ref)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(probs[i], ref))
			return i;
	return n;
}

void report_plot_problems(const struct report_data *d, struct plot *p)
{
	const struct metrics *m = &d->m;
	const char **probs;
	size_t np = report_problems(d, &probs), na = m->nagents;
	double lo = INFINITY, hi = 0;
	size_t judged = 0; /* an agent whose every problem was left out (not judged) has none */
	for (size_t a = 0; a < na; a++)
		judged += m->agents[a].nproblems;
	if (!np || !judged) {
		free(probs);
		plot_omit(p, "Per-problem speedups: no verdicts in these runs.");
		return;
	}
	for (size_t a = 0; a < na; a++)
		for (size_t i = 0; i < m->agents[a].nproblems; i++) {
			const struct metric_row *r = m->agents[a].problems[i].rep;
			if (metrics_clean(r) && timed(r->speedup_eager)) {
				lo = fmin(lo, r->speedup_eager);
				hi = fmax(hi, r->speedup_eager);
			}
		}
	/* A problem's labels are rotated upright, so a slot of a line's height keeps them apart; past the
	 * widest plot a page should scroll, every k-th problem is labelled instead. The key's room is taken
	 * from the longest agent name. */
	double slot = fmax(LINE_PX, 10 * (double)na + 8), frame = 110 + key_px(m, NULL, 0);
	p->width = (int)fmin(12000, fmax(700, frame + (double)np * slot));
	double per = ((double)p->width - frame) / (double)np;
	size_t every = per >= LINE_PX ? 1 : (size_t)ceil(LINE_PX / per);
	header(p, "Speedup vs eager per problem (log scale)");
	log_range(&p->body, "y", isfinite(lo) ? lo : 1, hi > 0 ? hi : 1);
	strbuf_addf(&p->body, "set ylabel 'speedup vs eager (x, log scale)'\nset xrange [0.4:%zu.6]\nset grid noxtics\n"
			      "set xtics rotate by 90 right (", np);
	for (size_t i = 0, n = 0; i < np; i++)
		if (i % every == 0) /* refs are L<n>/<n> */
			strbuf_addf(&p->body, "%s'%s' %zu", n++ ? ", " : "", probs[i], i + 1);
	strbuf_addstr(&p->body, ")\nset style fill solid 0.85 noborder\n"
				"set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#444444'\nplot");
	double w = 0.8 / (double)na;
	int first = 1;
	for (size_t a = 0; a < na; a++) {
		size_t count[3] = { 0, 0, 0 };
		struct strbuf blocks[3] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
		for (size_t i = 0; i < m->agents[a].nproblems; i++) {
			const struct metric_row *r = m->agents[a].problems[i].rep;
			double x = (double)problem_slot(probs, np, r->problem) + 1 - 0.4 + w * ((double)a + 0.5);
			if (metrics_clean(r) && timed(r->speedup_eager)) {
				double s = r->speedup_eager;
				strbuf_addf(&blocks[0], "%.6f %.10g %.6f %.6f %.10g %.10g\n", x, s, x - 0.45 * w, x + 0.45 * w,
					    fmin(s, 1), fmax(s, 1));
				count[0]++;
			} else {
				strbuf_addf(&blocks[r->correct ? 2 : 1], "%.6f 1\n", x);
				count[r->correct ? 2 : 1]++;
			}
		}
		static const char *const style[3] = { "using 1:2:3:4:5:6 with boxxyerror",
						      "using 1:2 with points pt 2 ps 0.9", "using 1:2 with points pt 6 ps 0.9" };
		int titled = 0;
		for (int b = 0; b < 3; b++) {
			strbuf_add(&p->data, blocks[b].buf, blocks[b].len);
			strbuf_release(&blocks[b]);
			end_block(p);
			if (!count[b])
				continue;
			strbuf_addf(&p->body, "%s '%s.dat' index %zu %s lc rgb '%s'", first ? " " : ", \\\n    ", p->name,
				    3 * a + (size_t)b, style[b], colour(a));
			if (!titled++)
				agent_title(&p->body, m->agents[a].name);
			else
				strbuf_addstr(&p->body, " notitle");
			if (b == 0) /* a dot at the end of each bar, so that a speedup of exactly 1 shows too */
				strbuf_addf(&p->body, ", \\\n    '%s.dat' index %zu using 1:2 with points pt 7 ps 0.4 lc rgb '%s' "
						      "notitle", p->name, 3 * a, colour(a));
			first = 0;
		}
	}
	strbuf_addch(&p->body, '\n');
	free(probs);
	p->caption = xstrdup("Per-problem speedup vs eager of each agent's representative candidate, log scale: a bar "
			     "up from the 1x line is faster than eager, down is slower, a dot ends each bar. x on the 1x line: not correct "
			     "(did not compile, wrong, crashed, a hack, or no verdict); o: correct but not timed, or a pass with a "
			     "hack finding (flagged: its speedup is not counted, see \"Flagged passes\").");
	if (every > 1) {
		char *c = xstrfmt("%s With %zu problems, one in %zu is labelled on the x axis, so that labels do not "
				  "overlap; \"Outcome per problem\" lists them all.", p->caption, np, every);
		free(p->caption);
		p->caption = c;
	}
}

/* ---------- best speedup by attempt (iterative agents) ---------- */

static void write_num(struct strbuf *b, double x)
{
	if (isfinite(x))
		strbuf_addf(b, " %.10g", x);
	else
		strbuf_addstr(b, " ?");
}

/* Series j of n is drawn this far above its values, `unit` apart and `spread` apart at most in all: equal
 * series (two agents with the same results, or correct and faster than eager alike) lie one above the
 * other instead of on top of each other. Only a vertical shift keeps sloped segments apart too. */
static double dodge(size_t j, size_t n, double unit, double spread)
{
	double step = n > 1 ? fmin(unit, spread / (double)(n - 1)) : 0;
	return ((double)(n - 1) / 2 - (double)j) * step;
}
#define DODGE_PCT(j, n) dodge(j, n, 2, 8)       /* percentage points */
#define DODGE_LOG(j, n) dodge(j, n, 0.02, 0.08) /* ln units of a log axis */

/* A filled point type per agent (circle, square, triangle, diamond, ...) and its open twin: series that
 * still touch differ in shape as well as colour. */
static int point_type(size_t agent, int open)
{
	static const int filled[] = { 7, 5, 9, 13, 11, 15 };
	return filled[agent % (sizeof(filled) / sizeof(*filled))] - open;
}

static int counted_in_row(const struct metric_agent *ag, const char *problem)
{
	for (size_t i = 0; i < ag->nproblems; i++)
		if (!strcmp(ag->problems[i].rep->problem, problem))
			return 1;
	return 0;
}

static int has_traj(const struct report_data *d, const char *agent, const char *problem)
{
	for (size_t t = 0; t < d->ntraj; t++)
		if (!strcmp(d->traj[t].attempts[0]->agent, agent) && !strcmp(d->traj[t].attempts[0]->problem, problem))
			return 1;
	return 0;
}

/* The trajectories the plot counts for the iterative agents, over the problems of each one's row of the
 * results table: its trajectories of those problems, and for each of them it has no verdict for (a failure
 * in the table) the row's stand-in, one attempt that never passes. A trajectory of a problem the row
 * leaves out is left out too; `out` says, per agent, what the plot is over and what it left out. */
static size_t attempt_trajectories(const struct report_data *d, const int *iterative, struct report_traj **sel,
				   struct strbuf *out)
{
	const struct metrics *m = &d->m;
	size_t cap = d->ntraj, n = 0;
	for (size_t a = 0; a < m->nagents; a++)
		cap += iterative[a] ? m->agents[a].nproblems : 0;
	*sel = xcalloc(cap ? cap : 1, sizeof(**sel));
	for (size_t a = 0; a < m->nagents; a++) {
		const struct metric_agent *ag = &m->agents[a];
		if (!iterative[a])
			continue;
		size_t first = n, stand_ins = 0, dropped = 0, named = 0;
		const char *last = NULL; /* d->traj is sorted by agent and problem: a problem's are adjacent */
		struct strbuf names = STRBUF_INIT;
		for (size_t t = 0; t < d->ntraj; t++) {
			const struct report_traj *tr = &d->traj[t];
			if (strcmp(tr->attempts[0]->agent, ag->name))
				continue;
			if (counted_in_row(ag, tr->attempts[0]->problem)) {
				(*sel)[n++] = *tr;
			} else {
				dropped++;
				if ((!last || strcmp(last, tr->attempts[0]->problem)) && named++ < 10) /* a caption, not a list */
					strbuf_addf(&names, "%s%s", names.len ? ", " : "", tr->attempts[0]->problem);
				last = tr->attempts[0]->problem;
			}
		}
		for (size_t i = 0; i < ag->nproblems; i++)
			if (!has_traj(d, ag->name, ag->problems[i].rep->problem)) {
				(*sel)[n++] = (struct report_traj){ &ag->problems[i].rep, 1, 0, 0, NAN };
				stand_ins++;
			}
		strbuf_addf(out, " %s: the same %zu problems as the results table, %zu trajectories", ag->name,
			    ag->nproblems, n - first - stand_ins);
		if (stand_ins)
			strbuf_addf(out, " and %zu problems without a verdict, drawn as trajectories that never pass since the "
				    "table counts them as failures", stand_ins);
		if (dropped)
			strbuf_addf(out, "; left out, as the table leaves them out (docs/metrics.md, \"Which problems "
				    "count\"): %zu trajectories of %s%s", dropped, names.buf, named > 10 ? " and more" : "");
		strbuf_addch(out, '.');
		strbuf_release(&names);
	}
	return n;
}

void report_plot_attempts(const struct report_data *d, struct plot *p)
{
	const struct metrics *m = &d->m;
	int kmax = 0;
	size_t nit = 0;
	double lo = INFINITY, hi = 0;
	int *iterative = xcalloc(m->nagents ? m->nagents : 1, sizeof(int));
	for (size_t a = 0; a < m->nagents; a++)
		nit += (size_t)(iterative[a] = report_agent_iterative(d, a));
	if (!nit) {
		free(iterative);
		plot_omit(p, "Best speedup by attempt: no iterative agent in these runs (every sample has a single attempt).");
		return;
	}
	/* The curves are those of report_attempt_curve over the selected trajectories: a copy of d that holds
	 * them in place of all. */
	struct strbuf over = STRBUF_INIT;
	struct report_data sub = *d;
	struct report_traj *sel;
	sub.ntraj = attempt_trajectories(d, iterative, &sel, &over);
	sub.traj = sel;
	for (size_t t = 0; t < sub.ntraj; t++)
		if ((int)sel[t].n > kmax)
			kmax = (int)sel[t].n;
	kmax = kmax ? kmax : 1;
	double *corr = xcalloc((size_t)kmax, sizeof(double)), *fast = xcalloc((size_t)kmax, sizeof(double));
	double *geo = xcalloc((size_t)kmax, sizeof(double));
	size_t *ngeo = xcalloc((size_t)kmax, sizeof(size_t));
	struct strbuf top = STRBUF_INIT, bottom = STRBUF_INIT;
	size_t block = 0;
	for (size_t a = 0; a < m->nagents; a++) {
		if (!iterative[a])
			continue;
		report_attempt_curve(&sub, a, kmax, corr, fast, geo, ngeo);
		int any_geo = 0;
		for (int k = 0; k < kmax; k++) {
			strbuf_addf(&p->data, "%d", k + 1);
			write_num(&p->data, corr[k]);
			write_num(&p->data, fast[k]);
			write_num(&p->data, geo[k]);
			strbuf_addf(&p->data, " %zu\n", ngeo[k]);
			if (isfinite(geo[k])) {
				any_geo = 1;
				lo = fmin(lo, geo[k]);
				hi = fmax(hi, geo[k]);
			}
		}
		end_block(p);
		struct strbuf t1 = STRBUF_INIT, t2 = STRBUF_INIT;
		strbuf_addf(&t1, "%s: correct", m->agents[a].name);
		strbuf_addf(&t2, "%s: faster than eager", m->agents[a].name);
		for (int fast = 0; fast < 2; fast++) {
			size_t j = 2 * block + (size_t)fast;
			strbuf_addf(&top, "%s '%s.dat' index %zu using 1:($%d%+.2f) with linespoints lw 2 %spt %d ps 0.7 "
					  "lc rgb '%s' title ", top.len ? ", \\\n   " : "plot", p->name, block, 2 + fast,
				    DODGE_PCT(j, 2 * nit), fast ? "dt 2 " : "", point_type(a, fast), colour(a));
			gp_quote(&top, fast ? t2.buf : t1.buf);
		}
		if (any_geo) {
			strbuf_addf(&bottom, "%s '%s.dat' index %zu using 1:($4*%.4f) with linespoints lw 2 pt %d ps 0.7 "
					     "lc rgb '%s'", bottom.len ? ", \\\n   " : "plot", p->name, block,
				    exp(DODGE_LOG(block, nit)), point_type(a, 0), colour(a));
			agent_title(&bottom, m->agents[a].name);
		}
		strbuf_release(&t1);
		strbuf_release(&t2);
		block++;
	}
	/* Fixed margins, so that the panels' x axes line up whatever their keys' widths, and a key placed
	 * right of them, in room made for the longest entry: left to gnuplot, a key outside fixed margins
	 * lies on the curves. */
	double key = key_px(m, iterative, strlen(": faster than eager")) + 10;
	p->width = (int)fmax(W, 620 + key);
	p->height = bottom.len ? 720 : 420;
	header(p, "Iterative agents: the best candidate within k attempts");
	strbuf_addf(&p->body, "set xrange [0.5:%d.5]\nset xlabel 'attempts made (k)'\n%s", kmax,
		    kmax <= 25 ? "set xtics 1\n" : "");
	strbuf_addf(&p->body, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
			      "set key at screen %.4f, graph 1 left top vertical Left reverse\n",
		    90.0 / p->width, (p->width - key) / p->width, (p->width - key + 20) / p->width);
	if (bottom.len)
		strbuf_addstr(&p->body, "set multiplot layout 2,1\n");
	strbuf_addf(&p->body, "set ylabel '%% of trajectories'\nset yrange [0:105]\n%s\n", top.buf);
	if (bottom.len) {
		strbuf_addstr(&p->body, "unset title\nset ylabel 'geomean best speedup so far'\n");
		log_range(&p->body, "y", lo, hi);
		strbuf_addf(&p->body, "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#888888'\n%s\n"
				      "unset multiplot\n", bottom.buf);
	}
	strbuf_release(&top);
	strbuf_release(&bottom);
	free(corr);
	free(fast);
	free(geo);
	free(ngeo);
	free(iterative);
	free(sel);
	p->caption = xstrfmt("Iterative agents, all levels: a trajectory is one sample of one problem, its attempts in "
			     "order; the curves are over the problems of the results table.%s "
			     "Top: %% of trajectories with a correct candidate (solid) and with a clean pass (no hack "
			     "finding) faster than eager (dashed) among their first k attempts; a trajectory that stopped "
			     "earlier keeps its last state. "
			     "So that equal series stay visible, each is drawn a little above or below its values (4 points "
			     "of %% at most on top, 4%% below) and each agent has its own point shape; plots/attempts.dat "
			     "holds the exact values. %s",
			     over.buf, lo <= hi ? "Bottom: geometric mean, over the trajectories that have a clean timed pass by "
					"attempt k, of the best speedup vs eager so far (log scale); the set grows with k, "
					"so a newly solved slow problem can lower it."
				      : "No trajectory has a clean timed pass, so there is no speedup panel.");
	strbuf_release(&over);
}

/* ---------- tokens and cost against speedup ---------- */

void report_plot_tokens(const struct report_data *d, struct plot *p)
{
	const struct metrics *m = &d->m;
	double lo = INFINITY, hi = 0, tlo = INFINITY, thi = 0, clo = INFINITY, chi = 0;
	size_t with_calls = 0;
	for (size_t t = 0; t < d->ntraj; t++) {
		const struct report_traj *tr = &d->traj[t];
		if (!tr->calls)
			continue;
		with_calls++;
		double b = report_traj_best(tr);
		if (!isnan(b)) {
			lo = fmin(lo, b);
			hi = fmax(hi, b);
		}
		if (tr->tokens > 0) {
			tlo = fmin(tlo, tr->tokens);
			thi = fmax(thi, tr->tokens);
		}
		if (tr->cost_usd > 0) {
			clo = fmin(clo, tr->cost_usd);
			chi = fmax(chi, tr->cost_usd);
		}
	}
	if (!d->mi.ncalls) {
		plot_omit(p, "Tokens and cost against speedup: no LLM calls are stored in these runs (samples and baselines "
			     "without an LLM make none).");
		return;
	}
	if (!with_calls) {
		plot_omit(p, "Tokens and cost against speedup: the %zu LLM calls stored belong to samples that have no "
			     "verdict yet (a run stopped or still going).", d->mi.ncalls);
		return;
	}
	if (!(thi > 0)) {
		plot_omit(p, "Tokens and cost against speedup: the %zu LLM calls stored report no token counts (the "
			     "endpoint sent no usage), so there is nothing to plot.", d->mi.ncalls);
		return;
	}
	int cost_panel = chi > 0;
	double floor_y = (isfinite(lo) ? fmin(lo, 1) : 1) / 2;
	size_t (*n)[2] = xcalloc(m->nagents ? m->nagents : 1, sizeof(*n));
	/* blocks 2a (solved) and 2a + 1 (not solved): tokens, cost (? when none), best speedup or the floor */
	for (size_t a = 0; a < m->nagents; a++)
		for (int unsolved = 0; unsolved < 2; unsolved++) {
			for (size_t t = 0; t < d->ntraj; t++) {
				const struct report_traj *tr = &d->traj[t];
				double b = report_traj_best(tr);
				if (!tr->calls || strcmp(tr->attempts[0]->agent, m->agents[a].name) || (isnan(b) != 0) != unsolved)
					continue;
				strbuf_addf(&p->data, "%.10g", tr->tokens);
				write_num(&p->data, tr->cost_usd > 0 ? tr->cost_usd : NAN);
				strbuf_addf(&p->data, " %.10g\n", unsolved ? floor_y : b);
				n[a][unsolved]++;
			}
			end_block(p);
		}
	int *keyed = xcalloc(m->nagents ? m->nagents : 1, sizeof(int)); /* each panel's key names these */
	for (size_t a = 0; a < m->nagents; a++)
		keyed[a] = n[a][0] + n[a][1] > 0;
	p->width = (int)fmax(cost_panel ? 1100 : W, (1 + cost_panel) * (420 + key_px(m, keyed, 0)));
	free(keyed);
	header(p, "LLM tokens and cost against the best speedup of each trajectory");
	log_range(&p->body, "y", floor_y, isfinite(hi) ? hi : 1);
	strbuf_addf(&p->body, "set ylabel 'best speedup vs eager (x, log scale)'\nset ytics add ('not correct' %.10g)\n"
			      "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#888888'\n", floor_y);
	if (cost_panel)
		strbuf_addstr(&p->body, "set multiplot layout 1,2\n");
	for (int panel = 0; panel < 1 + cost_panel; panel++) {
		double xl = panel ? clo : tlo, xh = panel ? chi : thi;
		strbuf_addf(&p->body, "set logscale x\nset xrange [%.6g:%.6g]\nset xlabel '%s'\n%s", xl / 1.5, xh * 1.5,
			    panel ? "LLM cost (USD, log scale)" : "LLM tokens, prompt + completion (log scale)",
			    panel ? "unset title\n" : "");
		log_tics(&p->body, "x", xl / 1.5, xh * 1.5, "");
		int first = 1;
		for (size_t a = 0; a < m->nagents; a++)
			for (int unsolved = 0; unsolved < 2; unsolved++) {
				if (!n[a][unsolved])
					continue;
				strbuf_addf(&p->body, "%s '%s.dat' index %zu using %d:3 with points pt %d ps 0.8 lc rgb '%s'",
					    first ? "plot" : ", \\\n    ", p->name, 2 * a + (size_t)unsolved, panel + 1,
					    unsolved ? 2 : 7, colour(a));
				if (!unsolved || !n[a][0])
					agent_title(&p->body, m->agents[a].name);
				else
					strbuf_addstr(&p->body, " notitle");
				first = 0;
			}
		strbuf_addch(&p->body, '\n');
	}
	if (cost_panel)
		strbuf_addstr(&p->body, "unset multiplot\n");
	free(n);
	p->caption = xstrfmt("One dot per trajectory (an agent's sample of a problem) that made LLM calls: its tokens "
			     "(prompt + completion, all calls)%s against its best speedup vs eager among its clean passes "
			     "(correct, no hack finding); x at the bottom: no clean timed pass.",
			     cost_panel ? " and, right, its cost in USD (trajectories without a cost are left out there)"
					: " (no call has a cost, so there is no cost panel)");
}

/* ---------- findings by id ---------- */

/* 1 when an earlier finding of the same verdict has the same id (a candidate counts once per id). */
static int repeated(const struct report_data *d, size_t i)
{
	const struct report_finding *f = &d->findings[i];
	for (size_t j = i; j-- > 0;) {
		const struct report_finding *g = &d->findings[j];
		if (strcmp(g->agent, f->agent) || strcmp(g->problem, f->problem) || g->sample != f->sample ||
		    g->attempt != f->attempt)
			return 0;
		if (!strcmp(g->id, f->id))
			return 1;
	}
	return 0;
}

size_t report_findings_ids(const struct report_data *d, const char ***ids)
{
	const char **v = xcalloc(d->nfindings ? d->nfindings : 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < d->nfindings; i++) {
		size_t j = 0;
		while (j < n && strcmp(v[j], d->findings[i].id) < 0)
			j++;
		if (j < n && !strcmp(v[j], d->findings[i].id))
			continue;
		memmove(v + j + 1, v + j, (n - j) * sizeof(*v));
		v[j] = d->findings[i].id;
		n++;
	}
	*ids = v;
	return n;
}

void report_findings_count(const struct report_data *d, const char *agent, const char *id, size_t *reject,
			   size_t *flag)
{
	*reject = *flag = 0;
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct report_finding *f = &d->findings[i];
		if (strcmp(f->agent, agent) || strcmp(f->id, id) || repeated(d, i))
			continue;
		/* a candidate with this id both rejected and flagged counts as rejected */
		int rejected = 0;
		for (size_t j = i; j < d->nfindings && !strcmp(d->findings[j].agent, f->agent) &&
				   !strcmp(d->findings[j].problem, f->problem) && d->findings[j].sample == f->sample &&
				   d->findings[j].attempt == f->attempt; j++)
			rejected |= !strcmp(d->findings[j].id, id) && !strcmp(d->findings[j].severity, "reject");
		*(rejected ? reject : flag) += 1;
	}
}

/* A tick every 1, 2, 5, 10, 20, ... candidates, at most ten of them up to top: counts are whole. */
static size_t count_tick_step(size_t top)
{
	for (size_t decade = 1;; decade *= 10)
		for (size_t m = 1; m <= 5; m += m == 1 ? 1 : 3)
			if (top / (decade * m) <= 10)
				return decade * m;
}

void report_plot_findings(const struct report_data *d, struct plot *p)
{
	const struct metrics *m = &d->m;
	const char **ids;
	size_t nid = report_findings_ids(d, &ids), na = m->nagents;
	if (!nid) {
		free(ids);
		plot_omit(p, "Hack findings by id: no candidate in these runs has a finding.");
		return;
	}
	size_t top = 0;
	int first = 1;
	struct strbuf cmd = STRBUF_INIT;
	/* each id's bars share its slot among the agents that have that finding, so they sit centred on its tick */
	size_t *with = xcalloc(nid, sizeof(*with)), *rank = xcalloc(nid * (na ? na : 1), sizeof(*rank));
	for (size_t i = 0; i < nid; i++)
		for (size_t a = 0; a < na; a++) {
			size_t r, f;
			report_findings_count(d, m->agents[a].name, ids[i], &r, &f);
			rank[i * na + a] = with[i];
			with[i] += r + f > 0;
		}
	for (size_t a = 0; a < na; a++) {
		size_t nr = 0, nf = 0;
		for (int sev = 0; sev < 2; sev++) {
			for (size_t i = 0; i < nid; i++) {
				size_t r, f;
				report_findings_count(d, m->agents[a].name, ids[i], &r, &f);
				double w = 0.8 / (double)(with[i] ? with[i] : 1);
				double x = (double)i + 1 - 0.4 + w * ((double)rank[i * na + a] + 0.5);
				if (r + f > top)
					top = r + f;
				if (sev == 0 && r)
					strbuf_addf(&p->data, "%.6f %zu %.6f %.6f 0 %zu\n", x, r, x - 0.45 * w, x + 0.45 * w, r);
				if (sev == 1 && f)
					strbuf_addf(&p->data, "%.6f %zu %.6f %.6f %zu %zu\n", x, r + f, x - 0.45 * w, x + 0.45 * w, r,
						    r + f);
				*(sev ? &nf : &nr) += sev ? f : r;
			}
			end_block(p);
		}
		for (int sev = 0; sev < 2; sev++) {
			if (!(sev ? nf : nr))
				continue;
			/* fc as well as lc: the SVG terminal draws a pattern in the fill colour, by default the
			 * first line type's (purple), not the line's */
			strbuf_addf(&cmd, "%s '%s.dat' index %zu using 1:2:3:4:5:6 with boxxyerror %s lc rgb '%s' fc rgb '%s'",
				    first ? "plot" : ", \\\n    ", p->name, 2 * a + (size_t)sev,
				    sev ? "fs pattern 4 border" : "fs solid 0.85 noborder", colour(a), colour(a));
			if (sev == 0 || !nr)
				agent_title(&cmd, m->agents[a].name);
			else
				strbuf_addstr(&cmd, " notitle");
			first = 0;
		}
	}
	free(with);
	free(rank);
	p->width = (int)fmax(W, 110 + key_px(m, NULL, 0) + (double)nid * fmax(40, 14 * (double)na + 10));
	header(p, "Candidates with a hack finding, by id");
	size_t step = count_tick_step(top);
	strbuf_addf(&p->body, "set ylabel 'candidates'\nset yrange [0:%zu]\nset ytics 0, %zu\nset mytics 1\n"
			      "set xrange [0.4:%zu.6]\nset grid noxtics\nset xtics (", top + 1 + top / 10, step, nid);
	for (size_t i = 0; i < nid; i++) {
		strbuf_addstr(&p->body, i ? ", " : "");
		gp_quote(&p->body, ids[i]);
		strbuf_addf(&p->body, " %zu", i + 1);
	}
	strbuf_addf(&p->body, ")\n%s\n", cmd.buf);
	strbuf_release(&cmd);
	free(ids);
	p->caption = xstrdup("Candidates (every attempt of every sample) with a finding of each hack id (DESIGN §7; names "
			     "in the table below): solid, the finding rejected the candidate; hatched, flagged only. A "
			     "candidate counts once per id.");
}
