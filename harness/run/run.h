/* run.h - `stitchbench run`: agents x problems x samples, with LLM calls in parallel up to each model's
 * max_concurrent, one evaluation at a time on the device, everything persisted under results/RUN_ID/
 * and resumable (docs/agents.md "Runs"). */
#ifndef SB_RUN_H
#define SB_RUN_H

#include <stdatomic.h>
#include <stddef.h>

#include "../core/config.h"
#include "../core/context.h"
#include "../core/error.h"
#include "../core/strbuf.h"
#include "../core/suite.h"
#include "shard.h"

#define RUN_FILE "run.json"
/* Written when a run process ends with every sample of the run ended (of its selection, and of the run's
 * whole selection in run.json when a resume narrowed it); removed when one starts. */
#define RUN_COMPLETE_FILE "complete"

struct run_request {
	const struct sb_ctx *ctx;
	const struct config *cfg;      /* resolved; on resume the run's own config.yaml */
	const struct suite *suite;
	const char *run_id;            /* NULL: output.run_id, else generated */
	int resume;                    /* continue run_id; the selection defaults to the run's own */
	struct strvec agents;          /* agent names; empty = every configured agent */
	struct strvec problems;        /* selectors; empty = problems.select */
	int samples;                   /* > 0: every agent's samples */
	int jobs;                      /* sample threads; 0 = each model's max_concurrent summed, plus one */
	atomic_int *stop;              /* RUN_STOP_* bits (agents/session.h), set to stop: no new call or
	                                  evaluation starts; RUN_STOP_SIGNAL also kills the evaluations in
	                                  flight, whose attempts are left for --resume */
	struct shard shard;            /* count > 0: only this shard's items (docs/scaleout.md); on resume
	                                  the run's own shard from run.json */
	const char *gpus;              /* "0,1,3" or "all": one evaluation slot per GPU; NULL: eval.device */
};

struct run_result {
	char run_id[128];
	char *run_dir;
	size_t samples, finished, unfinished, llm_failed;
	size_t unavailable;            /* samples ended unrun because their agent cannot run here (in finished) */
	size_t attempts, pass;
	size_t outside;                /* samples of the run outside this selection not ended (a narrowed resume) */
	size_t ref_failed;             /* unfinished because their problem's reference failed (in unfinished) */
	char *ref_failed_problems;     /* those problems, "L1/1, L2/7"; NULL when none */
	int stopped;                   /* *stop was set before every sample ended */
};
void run_result_release(struct run_result *r);

/* Runs (or resumes) a run. Returns 0 when the run could be carried out (samples may still be unfinished:
 * see r), or an error: bad selection, an existing run without --resume, no run to resume, settings that
 * differ from the run's, the environment. */
int run_execute(const struct run_request *rq, struct run_result *r, struct sb_error *err);

/* The run directory of RUN: RUN itself when it is a folder holding run.json, else <output_dir>/RUN. */
char *run_dir_for(const char *output_dir, const char *run);

#endif
