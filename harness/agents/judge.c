/* judge.c - generations-folder names and judging with an optional prebuild, shared by `eval --samples`
 * and the agents of `run`, so a failed build yields the same compile_error verdict in both. */
#include "judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gen_name_parse(const char *name, int *level, int *id, int *sample)
{
	int used = 0;
	return sscanf(name, "level_%d_problem_%d_sample_%d_kernel.py%n", level, id, sample, &used) == 3 &&
	       (size_t)used == strlen(name);
}

char *gen_name(int level, int id, int sample)
{
	return xstrfmt("level_%d_problem_%d_sample_%d_kernel.py", level, id, sample);
}

void prebuild_release(struct prebuild *b)
{
	free(b->msg);
	free(b->detail);
	memset(b, 0, sizeof(*b));
}

int prebuild_run(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		 struct prebuild *b, struct sb_error *err)
{
	int ok = 0;
	memset(b, 0, sizeof(*b));
	int rc = eval_prebuild(e, cfg, p, path, &ok, &b->msg, &b->detail, err);
	if (rc == 0) {
		b->done = 1;
		b->ok = ok;
	}
	return rc;
}

int judge_candidate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		    struct prebuild *b, struct verdict *v, struct sb_error *err)
{
	if (!b || !b->done || b->ok)
		return evaluate(e, cfg, p, path, v, err);
	verdict_init(v);
	eval_verdict_header(e, cfg, p, path, v);
	verdict_fail(v, V_COMPILE_ERROR, "%s", b->msg ? b->msg : "build failed");
	v->detail = b->detail;
	b->detail = NULL;
	return 0;
}
