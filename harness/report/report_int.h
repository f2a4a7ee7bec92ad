/* report_int.h - what the files of the report share and nothing else needs: the runs read once into rows,
 * trajectories, findings and audit flags, and the series each plot draws from them. */
#ifndef SB_REPORT_INT_H
#define SB_REPORT_INT_H

#include <stddef.h>

#include "doc.h"
#include "gnuplot.h"
#include "inputs.h"
#include "metrics.h"
#include "report.h"

/* What a verdict row carries beyond the metrics (parallel to metric_input.rows). */
struct report_extra {
	const char *status;           /* pass, incorrect, ... */
	const char *stage;            /* the agent's stage of the attempt; NULL for samples */
};

/* One trajectory: an agent's attempts at one sample of one problem, in attempt order. */
struct report_traj {
	const struct metric_row *const *attempts; /* a run of report_data.sorted */
	size_t n;
	size_t calls;                 /* LLM calls made for it */
	double tokens;                /* prompt + completion tokens of those calls */
	double cost_usd;              /* NAN when no call has a cost */
};

struct report_finding {
	const char *agent, *problem;  /* agent with its input's suffix */
	int sample, attempt;
	const char *id, *severity, *message;
};

struct report_audit {
	const char *input, *problem, *id, *message;
};

struct report_data {
	struct run_input *in;
	size_t nin;
	struct metric_input mi;
	struct report_extra *extra;   /* one per mi.rows */
	size_t nextra;
	struct metrics m;
	const struct metric_row **sorted; /* mi.rows by agent, level, problem, sample, attempt */
	struct report_traj *traj;     /* in the same order */
	size_t ntraj;
	struct report_finding *findings;
	size_t nfindings;
	struct report_audit *audit;
	size_t naudit;
	size_t audit_inputs;          /* inputs whose store has an audit table */
	struct strvec strings;        /* owns the strings of extra, findings and audit */
	struct strbuf settings_diff, coverage;
};

int report_data_load(struct report_data *d, char *const *runs, size_t n, enum metrics_by by,
		     enum metrics_denominator denominator, struct sb_error *err);
void report_data_release(struct report_data *d);
const struct report_extra *report_extra_of(const struct report_data *d, const struct metric_row *r);
/* The agent index in d->m (the order of colours and rows everywhere) of an agent name; -1 when unknown. */
int report_agent_index(const struct report_data *d, const char *agent);
/* The problem's name from the first input that knows it, or "" */
const char *report_problem_name(const struct report_data *d, const char *ref);
/* Every problem of any agent's cells (with --denominator all, those without a verdict too) and every problem
 * whose reference failed, in level and problem order (the array is allocated). */
size_t report_problems(const struct report_data *d, const char ***out);
/* 1 when the agent has a trajectory of more than one attempt. */
int report_agent_iterative(const struct report_data *d, size_t agent);

/* Series the plots draw, computed apart from gnuplot so that they can be tested. */

/* fast_p as a step function of p: points (p, %) where the curve changes, from p = 0 to p = xmax, for
 * gnuplot's "with steps". Returns how many points were written to xs/ys (at most 2 * nproblems + 3). */
size_t report_fastp_steps(const struct metric_agent *a, double xmax, double *xs, double *ys);
/* For attempt budgets k = 1..kmax: the % of the agent's trajectories with a correct candidate among their
 * first k attempts, the % with a clean pass faster than eager, and the geometric mean of the best speedup
 * so far over those with a clean timed pass by k (NAN when none; n_geo[k-1] says how many). A trajectory
 * shorter than k keeps its last state. Arrays have kmax entries. */
void report_attempt_curve(const struct report_data *d, size_t agent, int kmax, double *correct_pct,
			  double *fast1_pct, double *geomean, size_t *n_geo);
/* The best speedup vs eager among a trajectory's clean passes; NAN when none is a clean pass and timed. */
double report_traj_best(const struct report_traj *t);

/* The finding ids present, sorted (the array is allocated, the strings are d's). */
size_t report_findings_ids(const struct report_data *d, const char ***ids);
/* How many of the agent's candidates have a finding with this id: rejected by one, or flagged only. */
void report_findings_count(const struct report_data *d, const char *agent, const char *id, size_t *reject,
			   size_t *flag);

/* The plots, each filled from the data or marked omitted with the reason. */
void report_plot_fastp(const struct report_data *d, struct plot *p);
void report_plot_speedups(const struct report_data *d, struct plot *p);
void report_plot_problems(const struct report_data *d, struct plot *p);
void report_plot_attempts(const struct report_data *d, struct plot *p);
void report_plot_tokens(const struct report_data *d, struct plot *p);
void report_plot_findings(const struct report_data *d, struct plot *p);

/* The document's sections that are tables and text (report_sections.c). */
void report_section_runs(const struct report_data *d, struct doc *doc);
void report_section_summary(const struct report_data *d, struct doc *doc);
/* StitchCUDA's protocol's table, when d->m.protocol asks for it; nothing otherwise. */
void report_section_stitchcuda(const struct report_data *d, struct doc *doc);
void report_section_details(const struct report_data *d, struct doc *doc);
void report_section_problems(const struct report_data *d, struct doc *doc);
void report_section_stages(const struct report_data *d, struct doc *doc);
void report_section_findings(const struct report_data *d, struct doc *doc);
void report_section_flagged(const struct report_data *d, struct doc *doc);
void report_section_audit(const struct report_data *d, struct doc *doc);

#endif
