/* static_verdict.h - step 1 of an evaluation (DESIGN §5.1): the static findings go into the verdict
 * with their policy's severity, and a `reject` finding ends the evaluation before any worker starts. */
#ifndef SB_STATIC_VERDICT_H
#define SB_STATIC_VERDICT_H

#include "../checks/static.h"
#include "../core/config.h"
#include "verdict.h"

/* Adds the static findings on the candidate to v. Returns 1 when one of them rejects it (v's status
 * and message are set then), 0 to go on. Never fails: a file the tokenizer cannot read is left to
 * the worker, whose syntax error says more. With checks.static off it does nothing. */
int static_judge(const struct config *cfg, const char *problem_path, const struct candidate_source *cand,
		 struct verdict *v);

/* The same for the build the trusted builder published in build_dir: the imports of its shared objects
 * (checks/imports.h), which no spelling in the source can hide. Returns 1 when one rejects the candidate,
 * 0 to go on, -1 when the build cannot be read (err). With checks.static off it does nothing. */
int static_judge_build(const struct config *cfg, const char *build_dir, struct verdict *v, struct sb_error *err);

#endif
