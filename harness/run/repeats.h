/* repeats.h - judging stored candidates again, so that the spread between evaluations of one candidate is
 * measured, not assumed (run.repeats, metrics and report --repeats; docs/metrics.md, "Repeated
 * evaluations"). Each problem's representative clean timed pass of each agent is judged until the store
 * holds K repeats of it; what is stored already is reused, so asking twice judges nothing the second time. */
#ifndef SB_REPEATS_H
#define SB_REPEATS_H

#include <stdatomic.h>
#include <stddef.h>

#include "../core/error.h"

struct repeats_opts {
	int k;                        /* repeats each representative should have in the store */
	int by_first, by_best;        /* whose representatives: those of --by first, of --by best (both: the
	                                 union, what a run does, not knowing how its metrics will be read) */
	const char *home;             /* the checkout: worker scripts, the bundled suite */
	/* a progress line (warn 0) or a warning (warn 1); NULL: silent */
	void (*say)(void *arg, int warn, const char *line);
	void *say_arg;
	const atomic_int *stop;       /* set: no further evaluation starts (NULL: none) */
};

struct repeats_result {
	size_t candidates;            /* representatives that are clean timed passes */
	size_t stored;                /* their repeats the store held before (up to k each) */
	size_t judged;                /* evaluations made now, stored as repeats */
	size_t skipped;               /* candidates not repeated: the file is gone or changed, the problem file
	                                 changed, this machine cannot judge it; each said as a warning */
};

/* Judges what is missing for run (a run directory, or its results.db beside its config.yaml): the run's own
 * configuration (config.yaml) on this machine, whose device, GPU and torch must be the run's (the store
 * refuses a repeat judged otherwise). Takes the run's lock while it judges. A store that holds every
 * repeat asked for is only read. Returns 0, or an error: no config.yaml (a merged store), the run in use by
 * another process, a store that cannot be written, a harness failure. */
int repeats_fill(const char *run, const struct repeats_opts *o, struct repeats_result *res, struct sb_error *err);

#endif
