/* refprofile.h - the Planner's {{profile}}: the reference's kernel breakdown on the run's GPU. */
#ifndef SB_AGENTS_REFPROFILE_H
#define SB_AGENTS_REFPROFILE_H

#include "../core/strbuf.h"
#include "../profile/report.h"
#include "boundhints.h"
#include "session.h"

/* At most this many kernels are listed; the rest are counted. */
#define REFPROFILE_MAX_KERNELS 6

/* Appends the text the Planner (and the Replanner) get for {{profile}}: on a GPU the reference profile
 * (harness/profile/refprof.c: measured once per problem and GPU, then read from the cache; the
 * measurement takes a device slot like an evaluation); on a CPU run, or when it cannot be had, one
 * sentence that says so and why. Never fails: a missing profile must not stop a run. hints: as for
 * refprofile_text. */
void refprofile_for_planner(const struct run_shared *sh, const struct problem *p, const struct bound_hints *hints,
			    struct strbuf *out);

/* The text for a profile already in hand (what refprofile_for_planner writes on success). Kernels with
 * hardware metrics (row->hw.measured) carry their bound class, roofline, limiter and throughputs, and
 * the text ends with one hint per bound class listed (none when hints is NULL). */
void refprofile_text(const struct prof_report *r, const char *gpu, const struct bound_hints *hints,
		     struct strbuf *out);

#endif
