/* export.h - the formats of `stitchbench export` written by files of their own. */
#ifndef SB_EXPORT_H
#define SB_EXPORT_H

#include <stdio.h>

#include "../core/error.h"

struct store;

/* One agent's verdicts on one level as KernelBench's eval_results.json (export_kernelbench.c). agent NULL
 * and level 0 mean the run's only one; a run with several is an SB_EINPUT naming the choices. */
int export_kernelbench(struct store *s, const char *agent, int level, FILE *f, struct sb_error *err);

#endif
