/* entry.c - the evaluator's one door for everything that judges candidates (`eval`, `eval --samples`,
 * `run`'s agents and repeats, `serve`, `profile`): an optional build tried ahead, the evaluation, and the
 * problem's audit, so a failed build yields the same compile_error verdict everywhere and every verdict
 * carries its problem's flaws. */
#include <stdlib.h>
#include <string.h>

#include "auditcache.h"
#include "evaluate.h"

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
	int rc = eval_prebuild(e, cfg, p, path, &ok, &b->status, &b->msg, &b->detail, err);
	if (rc == 0) {
		b->done = 1;
		b->ok = ok;
	}
	return rc;
}

int eval_candidate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		   struct prebuild *b, struct verdict *v, struct sb_error *err)
{
	if (!b || !b->done || b->ok) {
		int rc = evaluate(e, cfg, p, path, v, err);
		audit_attach(e->cache_root, v);
		return rc;
	}
	eval_failure(e, cfg, p, path, b->status, b->msg ? b->msg : "build failed", v);
	v->detail = b->detail;
	b->detail = NULL;
	return 0;
}

void eval_failure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		  enum verdict_status status, const char *message, struct verdict *v)
{
	verdict_init(v);
	eval_verdict_header(e, cfg, p, path, v);
	audit_attach(e->cache_root, v);
	verdict_fail(v, status, "%s", message);
}
