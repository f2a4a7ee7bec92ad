/* rubric.h - the optional rubric judge (checks.rubric, docs/checks.md "Rubric judge"): a YAML file of
 * weighted criteria, and a judge model that scores a candidate 0-1 on each with a one-line reason. */
#ifndef SB_RUBRIC_H
#define SB_RUBRIC_H

#include <jansson.h>
#include <stddef.h>

#include "../core/error.h"
#include "../llm/llm.h"

struct rubric_criterion {
	char *name;                 /* [a-z0-9_]+, unique */
	double weight;              /* > 0 */
	char *description;          /* what a score of 1 means, for the judge */
};

struct rubric {
	char *path;
	struct rubric_criterion *v;
	size_t n;
};

/* Reads a rubric file: {criteria: [{name, weight, description}, ...]}; errors name file:line:column. */
int rubric_load(const char *path, struct rubric *r, struct sb_error *err);
void rubric_release(struct rubric *r);

struct rubric_score {
	char name[64];
	double weight, score;       /* score in [0, 1] */
	char *reason;               /* one line */
};

struct rubric_result {
	char model[128];
	struct rubric_score *v;     /* in the rubric's order */
	size_t n;
	double total;               /* sum(weight * score) / sum(weight) */
	char *error;                /* the judge could not score: why (no scores then) */
};
void rubric_result_release(struct rubric_result *r);
/* {"model", "total", "criteria": [{"name", "weight", "score", "reason"}], "error"} */
json_t *rubric_result_json(const struct rubric_result *r);

/* StitchCUDA's reward for a judged candidate (docs/verdict.md, "reward"): the rule part, min(speedup,
 * RUBRIC_SPEEDUP_CAP) + RUBRIC_REWARD_BASE from the measured speedup vs eager, scaled by 1 + lambda x
 * (r->total - 0.5) from the rubric. 0 when the candidate does not pass or is a major hack: major_hack (a
 * rejected status or a finding with severity reject, which the caller knows), or a criterion named
 * anti_hacking scored 0. NAN when r has no scores, and for a pass without a speedup (not timed): no
 * number stands for what was not measured. */
#define RUBRIC_SPEEDUP_CAP 5.0
#define RUBRIC_REWARD_BASE 0.3
#define RUBRIC_ANTI_HACKING "anti_hacking"
double rubric_reward(const struct rubric_result *r, int pass, int major_hack, double speedup, double lambda);

/* The judge's messages: the rubric, the problem and the candidate, and the answer format asked for. */
char *rubric_prompt(const struct rubric *r, const char *problem_src, const char *candidate_src);
/* Reads the judge's answer: a JSON object (alone, or in a ```json fence) {"scores": [{"criterion",
 * "score", "reason"}]} with one entry per criterion. Returns 0, or SB_EINPUT with err saying what is wrong
 * (missing criterion, a score outside [0, 1], not JSON). */
int rubric_parse_answer(const struct rubric *r, const char *text, struct rubric_result *out, struct sb_error *err);
/* Asks the judge and parses its answer. The call's key is (agent, problem_ref, sample, call): `eval`
 * uses agent "judge" and call 0, `run` "judge.<agent>" and the attempt (harness/agents/judge.h). A
 * failed call or an unusable answer is out->error, not an error return: the verdict stands without a score. */
void rubric_judge(struct llm_client *c, const char *model, const struct rubric *r, const char *agent,
		  const char *problem_ref, int sample, int call, const char *problem_src, const char *candidate_src,
		  struct rubric_result *out);

#endif
