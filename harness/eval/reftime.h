/* reftime.h - reference timings for baseline tables (`stitchbench baseline`): the reference alone,
 * eager and torch.compile, timed in one trusted worker and cached on disk like reference outputs. */
#ifndef SB_REFTIME_H
#define SB_REFTIME_H

#include "../core/types.h"
#include "evaluate.h"
#include "timing/timing.h"

struct reftime {
	struct sample_stats eager;      /* microseconds per call */
	struct sample_stats compiled;
	int compiled_available;
	int cached;                     /* read from the cache, not measured now */
};

/* Times `p`'s Model on e->device for cfg->eval.perf_trials calls after warm-up (KernelBench's block
 * method: these numbers fill baseline tables only; candidate speedups always come from paired timing). */
int reftime_measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, struct reftime *out,
		    struct sb_error *err);

#endif
