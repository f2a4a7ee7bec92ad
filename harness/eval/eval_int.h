/* eval_int.h - what evaluate.c shares with the other files of the evaluation (rtchecks.c, evalctx.c,
 * candidate.c, ...) and nothing else needs: the evaluation's context, and its folders, environments and
 * reference worker (evalctx.c). The candidate's worker is candidate.h's. */
#ifndef SB_EVAL_INT_H
#define SB_EVAL_INT_H

#include <jansson.h>

#include <stdint.h>

#include "../core/config.h"
#include "candidate.h"
#include "evaluate.h"
#include "check/check.h"
#include "rtchecks.h"
#include "seeds.h"
#include "verdict.h"
#include "proc/proc.h"

#define LOG_CAP (64u << 10)

struct eval_ctx {
	const struct eval_env *e;
	const struct config *cfg;
	const struct problem *p;
	struct verdict *v;
	const struct candidate_source *src; /* the candidate as read once, before any worker started */
	char *workdir, *ref_dir, *cand_dir, *ext_dir, *hidden_ref, *hidden_refw, *hidden_ext;
	char *pool_key;              /* the reference worker is kept for the next evaluation (ref/ref.h) */
	int own_ref;                 /* a reference worker of this evaluation's own: none kept, none taken */
	struct strvec cand_env, ref_env;
	struct sandbox_opts sb;
	const char *hidden[4];
	const char *writable[2];
	struct worker ref, cand;
	int ref_loaded;
	int ref_load_pending;        /* its `load` was sent and is not answered yet (load_ref_begin) */
	int ref_compiled;            /* the reference worker also holds torch.compile(Model) */
	int ref_compile_pending;     /* its `compile` was sent and is not answered yet (eval_ref_compile_begin) */
	json_t *ref_timing_inputs;   /* its timing inputs' fingerprints, drawn during its early load */
	const char *ref_entry;       /* the reference cache entry (folder) of this evaluation, or NULL */
	int launch_heavy_recorded;   /* what that entry recorded when the evaluation began: 1, 0, -1 nothing */
	struct eval_seeds secret;    /* every input seed of this evaluation derives from it (seeds.h) */
	uint32_t *seeds;             /* the correctness trials' seeds, then the rotation's two */
	uint32_t rot_seeds[2];       /* the rotation check's two input sets */
	long long out_bytes;
	long long io_bytes;          /* the problem's inputs and outputs, bytes (its facts; 0: unknown) */
	struct rt_session rt;
	struct eval_ctx *adopted;    /* the prestarted worker's context (its folders), released with this one */
	int hello_pending;           /* a prestarted worker: its `hello` is not answered yet */
	long long spawn_file_bytes;  /* a prestarted worker: the file-size limit it starts with (0: its own) */
	struct strvec held;          /* eval.exchange = shared: the keys the reference worker keeps (exchange.c) */
};

#define REF_TIMEOUT_S 3600 /* the reference is trusted; its limit only guards against a hung GPU */

/* Creates the work folder (and with with_ref the reference worker's, taking a kept worker when there is
 * one), and the lists of trees the candidate may write and may not read. */
int evalctx_dirs(struct eval_ctx *c, int with_ref, struct sb_error *err);
/* The allow-listed environments of the two workers; `ahead`: the candidate's worker starts ahead of its
 * evaluation (a spare), and so makes no CUDA context before its `load`. */
void evalctx_env(struct eval_ctx *c, int ahead);
/* Starts the reference worker in c->ref_dir unless it runs already (a kept or spare one). */
int evalctx_start_ref(struct eval_ctx *c, struct sb_error *err);
/* Whether the reference worker also compiles Model with torch.compile (timed on a GPU only). */
int evalctx_ref_compiles(const struct eval_ctx *c);
/* Stops the candidate, keeps or stops the reference (ref/ref.h), removes the folders. */
void evalctx_release(struct eval_ctx *c);
/* The reference worker alone: back to the pool while it is alive, or stopped with its folder. */
void evalctx_release_ref(struct eval_ctx *c);
/* When one of the next EVAL_AHEAD evaluations of the batch is of another problem and the device keeps
 * no spare yet, starts a reference worker for it now (Python and torch imported, nothing loaded) and
 * keeps it as the device's spare (ref/ref.h), so that evaluation does not wait for them. With
 * eval.keep_reference_worker only. */
void evalctx_prestart_ref(const struct eval_ctx *c);

/* evaluate.c: the `load` request of either worker (candidate NULL: the problem's Model); the reference
 * worker's `load` answered (started or read; also reads a pending `compile`'s answer); its torch.compile
 * sent after the process factor, answered by the next eval_load_ref; the timing loop's plan. */
json_t *eval_load_request(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			  const char *candidate, const char *ext_dir, int compile, int build_only);
int eval_load_ref(struct eval_ctx *c, struct sb_error *err);
void eval_ref_compile_begin(struct eval_ctx *c);
struct timing_plan;
int eval_timing_sets(const struct eval_ctx *c);
void eval_timing_plan(const struct eval_ctx *c, struct timing_plan *plan);

/* procfactor.c: what a reference cache entry recorded (1 launch-heavy, 0 not, -1 nothing); whether this
 * evaluation measures the process factor (timing on; eval.process_factor on,
 * or auto on a GPU unless an earlier evaluation found the reference not launch-heavy); measures it into
 * v->timing.factor before the candidate's `load` (0, or -1 when the reference worker fails: a harness
 * error); divides the speedup vs eager by it after the timing where it applies; and records after the
 * timing whether the reference is launch-heavy (procfactor.c), in the reference cache entry. */
int eval_recorded_launch_heavy(const char *ref_entry);
int eval_process_factor_planned(const struct eval_ctx *c);
int eval_process_factor(struct eval_ctx *c, double deadline, struct sb_error *err);
void eval_apply_process_factor(struct timing_result *t, int forced);
/* Folds a between-process spread (sd, percent; eval.process_spread_pct resolved by eval_process_spread)
 * into the speedups' intervals, in quadrature on a log scale. */
double eval_process_spread(const struct config *cfg, int gpu);
void eval_widen_for_processes(struct timing_result *t, double spread_pct);
void eval_record_launch_heavy(const struct eval_ctx *c);

/* The seeds of the correctness trials and of the rotation's two sets (cfg->eval.trials + 2; to free). */
uint32_t *eval_trial_seeds(const struct config *cfg, const struct eval_seeds *secret);
/* The reference cache entry (folder) of this problem under these settings (ref/ref.h; to free). */
char *eval_refcache_entry(const struct eval_env *e, const struct config *cfg, const struct problem *p);


/* build.c: the folder the trusted builder publishes the candidate's build in, under the key of its exact
 * bytes as read and the build settings (NULL when the file could not be read; to free); whether it is there. */
char *eval_build_dir(const struct eval_env *e, const struct config *cfg, const struct candidate_source *src);
int eval_build_published(const char *build_dir);
/* Builds the candidate unless its build is published: eval_prebuild without the static checks, and with
 * the builder's account of its builds (*builds, NULL when nothing was built now). */
int eval_build(const struct eval_env *e, const struct config *cfg, const struct problem *p,
	       const struct candidate_source *src, int *ok, enum verdict_status *status, char **msg, char **detail,
	       json_t **builds, struct sb_error *err);

/* trials.c: the correctness trials (0; 1: the verdict is decided; -1: a harness error), their
 * judgement (the first failing trial names the verdict), the robust trials after them, and the runtime
 * checks' means of calling. */
int eval_run_trials(struct eval_ctx *c, double deadline, struct sb_error *err);
/* Compares a call's outputs (candpath) with the reference's (refpath) into t: 0, 1 (the candidate's are
 * unreadable: v says why) or -1 (ours are: a harness error); *keep, if not NULL, gets the comparison for
 * the runtime checks (the caller releases it). */
int eval_compare_trial(struct eval_ctx *c, struct verdict *v, const char *refpath, const char *candpath,
		       struct trial_result *t, struct outputs_cmp *keep, struct sb_error *err);
void eval_judge_trials(struct eval_ctx *c);
/* eval.robust_trials on shifted inputs (docs/verdict.md, "Robust correctness"), for a candidate that has
 * passed so far, into v->robust; a failure is the finding H17 under checks.policy, never the status by
 * itself. 0; 1: the candidate's worker failed on them and is not asked anything more; -1: a harness error. */
int eval_run_robust(struct eval_ctx *c, double deadline, struct sb_error *err);
struct rt_io eval_runtime_io(struct eval_ctx *c, double deadline);

/* timedcheck.c: every timed call checked, call by call, against the reference's (timing/timing.h). */
struct timed_check;
void eval_timed_check(struct eval_ctx *c, struct timed_check *chk);


/* Sends req (stolen) to the trusted reference worker and reads its reply; a failure is the problem's or
 * the machine's (err), never the candidate's. eval_ref_reply reads the reply of a request sent before. */
int eval_ref_ask(struct worker *w, json_t *req, json_t **reply, const char *stage, struct sb_error *err);
int eval_ref_reply(struct worker *w, json_t **reply, const char *stage, struct sb_error *err);
/* o's string member key, or dflt. */
const char *jstr_or(json_t *o, const char *key, const char *dflt);


#endif
