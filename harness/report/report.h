/* report.h - `stitchbench report`: one or more runs as a Markdown file and one self-contained HTML page with
 * the results tables and gnuplot plots (docs/report.md); report_write() is also for `run` when output.report is on. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stddef.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "metrics.h"

struct report_opts {
	char *const *runs;            /* run directories or results.db files */
	size_t nruns;
	const char *out_dir;          /* NAME: gets report.md, report.html and plots/ */
	enum metrics_by by;           /* which candidate represents a problem (docs/metrics.md) */
	enum metrics_denominator denominator; /* which problems the rates are over; METRICS_ALL (0) by default */
	enum metrics_protocol protocol; /* StitchCUDA's table too; METRICS_PROTOCOL_AUTO (0): by the runs' preset */
	int no_plots;                 /* tables only; gnuplot is not needed */
	const char *gnuplot;          /* the program; NULL = gnuplot on PATH */
	/* Progress: called before each plot is drawn (i of n) and once with i == n at the end. */
	void (*progress)(void *arg, const char *what, size_t i, size_t n);
	void *progress_arg;
};

struct report_result {
	char *md_path, *html_path;
	size_t plots_drawn, plots_omitted;
	char png_terminal[16];        /* the gnuplot terminal the PNGs came from (pngcairo, or png) */
	struct strbuf warnings;       /* lines a person should see: settings that differ, agents that lack problems */
};
void report_result_release(struct report_result *r);

/* Reads the runs, computes the metrics, draws the plots (unless no_plots) and writes out_dir/report.md and
 * out_dir/report.html (each written whole, then renamed into place). SB_EINPUT for a RUN that is not a
 * store, SB_EENV when gnuplot is missing, SB_EIO when writing or gnuplot fails. */
int report_write(const struct report_opts *o, struct report_result *res, struct sb_error *err);

#endif
