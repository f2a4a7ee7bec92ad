/* gpus.h - `--gpus 0,1,... | all` (run, eval --samples, serve): which GPUs get an evaluation slot, and
 * the evaluation environment of each slot (the command's environment with that GPU's device, name, SM
 * and L2). */
#ifndef SB_GPUS_H
#define SB_GPUS_H

#include "../core/error.h"
#include "../eval/evaluate.h"

/* Parses "all" (every one of ndevices) or a comma list of distinct indices below ndevices into a new
 * array *idx of *n entries, in the order given. */
int gpus_parse(const char *spec, int ndevices, int **idx, int *n, struct sb_error *err);

/* One environment per slot for `spec`, probing the run's Python for its GPUs: shallow copies of base (they
 * share its strings; free only the array). Refused: no GPU, an index torch does not see, GPUs of
 * different models (their timings could not be compared or merged). */
int gpus_resolve(const char *spec, const struct eval_env *base, const char *home, struct eval_env **envs, int *n,
		 struct sb_error *err);

/* Makes `base` (the command's own environment: its store's machine, hardware.json, its builds) describe
 * the first slot's GPU. */
void gpus_use_first(struct eval_env *base, const struct eval_env *first);

#endif
