/* judge.h - what `eval` and `run` share around the evaluator: judging a candidate whose build may
 * already have been tried (DESIGN §6: builds on all cores first, then one evaluation at a time per
 * device) into a verdict that carries the problem's audit, and the optional rubric judge (checks.rubric). */
#ifndef SB_JUDGE_H
#define SB_JUDGE_H

#include "../checks/rubric.h"
#include "../core/config.h"
#include "../core/error.h"
#include "../core/types.h"
#include "../eval/evaluate.h"
#include "../llm/llm.h"

/* The outcome of building a candidate's extensions ahead of its evaluation. */
struct prebuild {
	int done;          /* the build was tried */
	int ok;            /* ... and succeeded (a later build in the evaluation is a cache hit) */
	enum verdict_status status; /* a failed build: compile_error or format_error */
	char *msg;         /* a failed build: one line */
	char *detail;      /* a failed build: the trimmed compiler errors */
};
void prebuild_release(struct prebuild *b);
/* Tries the build (eval_prebuild). A harness failure (no Python) leaves b->done 0 and returns non-zero. */
int prebuild_run(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		 struct prebuild *b, struct sb_error *err);

/* Judges a candidate: with a failed prebuild the verdict is its failure (the build is not paid
 * twice; b->detail moves into the verdict), otherwise evaluate(); either carries the problem's audit
 * (audit_attach). b may be NULL. */
int judge_candidate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		    struct prebuild *b, struct verdict *v, struct sb_error *err);
/* A verdict decided without evaluating (no code in the answer, a harness failure): the header and the
 * audit a judged candidate's verdict has, then `status` with `message`. */
void judge_failure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		   enum verdict_status status, const char *message, struct verdict *v);

/* The rubric judge (checks.rubric and checks.judge_model; off by default; docs/checks.md "Rubric
 * judge"): a judge model scores a verdict's candidate against the rubric, into the verdict's field
 * `rubric`, beside the rule findings. Safe to use from several threads once open (the client is). */
struct judge {
	struct rubric rubric;
	struct llm_client *client;  /* NULL: no rubric configured, judge_rubric does nothing */
	const char *model;          /* checks.judge_model */
	double reward_lambda;       /* checks.reward_lambda */
};

/* Loads the rubric and starts the judge model's client; nothing (j->client NULL) when checks.rubric is
 * unset, except under eval.preset=stitchcuda with checks.judge_model set, where the rubric is the bundled
 * <home>/configs/rubrics/stitchcuda.yaml (StitchCUDA's four criteria). A rubric without
 * checks.judge_model is SB_EINPUT. Calls are persisted as transcripts under
 * run_dir when there is one (a run), as every LLM call of a run is; NULL persists nothing. */
int judge_open(struct judge *j, const struct config *cfg, const char *home, const char *run_dir, struct sb_error *err);
void judge_close(struct judge *j);

/* Scores v's candidate (v->candidate_path against p's file) unless the judge is off or the candidate
 * never loaded (compile_error, format_error: nothing to judge), and sets v->reward from the scores, the
 * status, the findings and the speedup vs eager (rubric_reward). The call's key is (agent, v->problem,
 * sample, call): `eval` uses ("judge", sample, 0), `run` ("judge.<agent>", sample, attempt), so a run's
 * judge calls never share a transcript with each other or with its agents' calls. A failed call or an
 * unusable answer is rubric.error in the verdict, never a failure of the evaluation. */
void judge_rubric(const struct judge *j, const struct problem *p, const char *agent, int sample, int call,
		  struct verdict *v);

#endif
