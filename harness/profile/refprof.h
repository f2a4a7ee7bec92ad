/* refprof.h - the reference profile: the kernel breakdown of a problem's Model.forward on this GPU
 * (what the StitchCUDA Planner starts from), measured once in a trusted worker and cached on disk. */
#ifndef SB_REFPROF_H
#define SB_REFPROF_H

#include "../core/types.h"
#include "../eval/evaluate.h"
#include "report.h"

/* Fills `out` (initialised by the caller) with the profile of p's reference on e->device, from the cache
 * ($STITCHBENCH_CACHE/refprof/<key>/, keyed by problem hash, GPU, torch, seed and call count) or
 * measured now (`refresh` forces that). *cached says which. Returns 0, or SB_EENV (no GPU, no library,
 * the worker failed) / SB_EINPUT (the reference itself failed). A profile CUPTI could not record is
 * an SB_EENV error here: there is nothing to cache. */
/* The cached profile only, measuring nothing (no GPU needed): 0 and `out` filled, or -1. */
int refprof_lookup(const struct eval_env *e, const struct config *cfg, const struct problem *p,
		   struct prof_report *out);
int refprof_get(const struct eval_env *e, const struct config *cfg, const struct problem *p, int refresh,
		struct prof_report *out, int *cached, struct sb_error *err);

#endif
