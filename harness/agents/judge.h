/* judge.h - the optional rubric judge (checks.rubric): a judge model scores a verdict's candidate beside
 * the rule findings. Judging the candidate itself is the evaluator's (eval/evaluate.h, eval_candidate). */
#ifndef SB_JUDGE_H
#define SB_JUDGE_H

#include "../checks/rubric.h"
#include "../core/config.h"
#include "../core/error.h"
#include "../core/types.h"
#include "../eval/evaluate.h"
#include "../llm/llm.h"

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
