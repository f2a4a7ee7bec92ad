/* inputs.h - the RUN arguments of metrics, report and compare: each results store opened read-only with its
 * runs, agents and problems; agents of the same name in two RUNs are told apart by a "@RUN_ID" suffix. */
#ifndef SB_INPUTS_H
#define SB_INPUTS_H

#include <stddef.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "../store/store.h"
#include "metrics.h"

struct run_input {
	const char *arg;              /* as the user gave it: a run directory or a results.db file */
	struct store *s;
	struct store_run *runs;
	size_t nruns;
	struct store_agent *agents;
	size_t nagents;
	struct store_problem *problems;
	size_t nproblems;
	char *suffix;                 /* "@RUN_ID" when one of its agent names is in another input too, else NULL */
};

/* Opens every arg; on failure the ones opened are closed and *out is NULL. */
int run_inputs_open(struct run_input **out, char *const *args, size_t n, struct sb_error *err);
void run_inputs_close(struct run_input *v, size_t n);
/* Appends every input's verdicts, LLM calls and unavailable agents to in, agent names with their input's
 * suffix, and the problems each input's run selected for each agent (in->expect): run.json's selection
 * beside the store (a shard's own pairs of it), else the problems with a verdict there. SB_EINPUT when a
 * run.json is not a run's. */
int run_inputs_load(struct run_input *v, size_t n, struct metric_input *in, struct sb_error *err);
/* The preset a run was made under (eval.preset: stitchbench, kernelbench or stitchcuda), from its settings
 * ("eval" there is a verdict's "settings" for imported verdicts); "stitchbench" when they name none. */
void run_preset(const struct store_run *r, char out[24]);
/* asked, unless it is METRICS_PROTOCOL_AUTO: then StitchCUDA's when any input's run has its preset, else
 * stitchbench's alone. */
enum metrics_protocol run_inputs_protocol(const struct run_input *v, size_t n, enum metrics_protocol asked);
/* One line per setting that changes the numbers and differs between the inputs' runs (see
 * store_compare_runs); nothing when they agree. */
void run_inputs_settings_diff(const struct run_input *v, size_t n, int mask, struct strbuf *out);
/* One line per agent that has verdicts for fewer problems than its run holds, saying whether the others
 * count as failures or are left out (m->denominator); nothing when every agent covers its runs. */
void run_inputs_coverage(const struct metrics *m, const struct run_input *v, size_t n, struct strbuf *out);

#endif
