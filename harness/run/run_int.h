/* run_int.h - the state of one `run` process, shared by its setup (run_setup.c) and its threads
 * (run.c); nothing outside harness/run/ sees it. */
#ifndef SB_RUN_INT_H
#define SB_RUN_INT_H

#include <pthread.h>
#include <stdio.h>

#include "../agents/agent.h"
#include "../agents/judge.h"
#include "../agents/session.h"
#include "../core/lockfile.h"
#include "../eval/evaluate.h"
#include "../eval/sweep.h"
#include "progress.h"
#include "run.h"

struct run_agent {
	const struct agent_cfg *cfg;
	const struct agent_kind *kind;
	struct llm_client *llm;            /* shared with other agents of the same model */
	int samples;
	const char *unavailable;           /* why this environment cannot run it (env.compile_missing), or NULL */
};

struct run_state {
	const struct run_request *rq;
	char run_id[128];
	char *run_dir;
	struct shard shard;                /* the request's, or on resume the run's own (run.json) */
	struct eval_env env;
	int env_ready;
	struct lockfile lock;              /* RUN/run.lock: one process at a time on a run */
	struct eval_claim claim;           /* the cache's owner lock and the slots' GPU locks (eval/sweep.h) */
	struct strbuf notes;               /* what setup found to say once the progress exists (a shared GPU) */
	struct eval_env *gpu_envs;         /* --gpus: one per slot (shallow copies of env) */
	int nslots;
	struct hw_context hw;
	struct config refcfg;              /* shallow copy of the configuration for torch-eager/compile */
	struct run_shared sh;
	struct run_agent *agents;
	size_t nagents;
	const struct problem **problems;
	size_t nproblems;
	struct llm_client **clients;
	const struct model_cfg **client_models;
	size_t nclients;
	struct judge judge;                /* the rubric judge (checks.rubric); off: judge.client NULL */
	struct agent_task *tasks;          /* samples still to run */
	size_t ntasks, next;
	struct agent_task *skipped;        /* samples of unavailable agents, ended as "unavailable" unrun */
	size_t nskipped;
	size_t nsamples, finished_before;
	size_t rerun;                      /* samples whose summary.json says ended but whose attempts the store
	                                      lacks: they run again (resume) */
	size_t outside;                    /* samples of the run (run.json) outside this process's selection that
	                                      have not ended: the run is not complete while they wait */
	int store_new;                     /* resume: results.db was missing or empty and is made anew */
	struct { size_t agent; double best; } *seed_best;
	size_t nseed;
	pthread_mutex_t mu;                /* next, running, the counts below, fatal, badref */
	const struct agent_task **running; /* per sample thread, the sample it works on (NULL: none), for
	                                      the line that says what a stopping run waits for */
	size_t nrunning;
	size_t finished, unfinished, llm_failed;
	size_t ref_failed;                 /* samples left unfinished because their problem's reference failed */
	size_t cannot_judge;               /* samples left unfinished: an attempt this machine cannot run */
	struct run_badref { const struct problem *problem; char *why; } *badref; /* problems whose reference
	                                      failed in this process: their other samples are not run */
	size_t nbadref;
	int fatal_rc;
	struct sb_error fatal;
	struct progress *prog;
	FILE *logfile;
};

/* Selection, run directory, store, hardware.json, run.json, LLM clients (the rubric judge's too) and the
 * task list. */
int run_setup(struct run_state *st, struct sb_error *err);
/* Ends every skipped sample with the stop reason "unavailable" and no attempts; returns how many. */
int run_end_skipped(struct run_state *st, size_t *ended, struct sb_error *err);

#endif
