/* judge.h - what `eval --samples` and `run` share around the evaluator: KernelBench generations-folder
 * names, and judging a candidate whose build may already have been tried (DESIGN §6: builds on all
 * cores first, then one evaluation at a time per device). */
#ifndef SB_JUDGE_H
#define SB_JUDGE_H

#include "../core/config.h"
#include "../core/error.h"
#include "../core/types.h"
#include "../eval/evaluate.h"

/* level_1_problem_19_sample_0_kernel.py: returns 1 and fills the numbers when name is such a file. */
int gen_name_parse(const char *name, int *level, int *id, int *sample);
/* The file name of (level, id, sample) in a generations folder. */
char *gen_name(int level, int id, int sample);

/* The outcome of building a candidate's extensions ahead of its evaluation. */
struct prebuild {
	int done;          /* the build was tried */
	int ok;            /* ... and succeeded (a later build in the evaluation is a cache hit) */
	char *msg;         /* a failed build: one line */
	char *detail;      /* a failed build: the trimmed compiler errors */
};
void prebuild_release(struct prebuild *b);
/* Tries the build (eval_prebuild). A harness failure (no Python) leaves b->done 0 and returns non-zero. */
int prebuild_run(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		 struct prebuild *b, struct sb_error *err);

/* Judges a candidate: with a failed prebuild the verdict is its compile_error (the build is not paid
 * twice; b->detail moves into the verdict), otherwise evaluate(). b may be NULL. */
int judge_candidate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		    struct prebuild *b, struct verdict *v, struct sb_error *err);

#endif
