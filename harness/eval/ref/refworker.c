/* refworker.c - the trusted worker that `baseline` and `audit` start for themselves. Trusted: no sandbox,
 * but its own folder, so nothing it writes lands beside the user's files. */
#include "ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/fs.h"

#define REF_TIMEOUT_S 3600 /* trusted code; the limit only guards against a hung device */

int refworker_start(struct refworker *r, const struct eval_env *e, const char *tag, struct sb_error *err)
{
	memset(r, 0, sizeof(*r));
	char *parent = xstrfmt("%s/work", e->cache_root);
	fs_mkdirs(parent, 0700);
	r->dir = xstrfmt("%s/%s-%d-XXXXXX", parent, tag, (int)getpid());
	free(parent);
	if (!mkdtemp(r->dir)) {
		free(r->dir);
		r->dir = NULL;
		return sb_error_set(err, SB_EENV, "cannot create a work folder under %s/work (set STITCHBENCH_CACHE)",
				    e->cache_root);
	}
	strvec_pushf(&r->env, "HOME=%s", r->dir);
	strvec_pushf(&r->env, "TMPDIR=%s", r->dir);
	strvec_pushf(&r->env, "TORCHINDUCTOR_CACHE_DIR=%s/inductor", e->cache_root);
	strvec_pushf(&r->env, "TRITON_CACHE_DIR=%s/triton", e->cache_root);
	eval_python_env(&r->env, e); /* as in the evaluation's workers */
	struct worker_spec spec = { e->python, e->worker_script, r->dir, r->env.v, NULL, 64 << 10, 0, NULL };
	return worker_start(&r->w, &spec, err);
}

int refworker_ask(struct refworker *r, json_t *req, json_t **reply, const char *stage, struct sb_error *err)
{
	struct worker_fault f;
	int rc = worker_call(&r->w, req, reply, proc_now() + REF_TIMEOUT_S, &f);
	json_decref(req);
	if (rc)
		return sb_error_set(err, SB_EENV, "the reference worker failed while %s: %s", stage, f.what);
	if (!json_is_true(json_object_get(*reply, "ok"))) {
		rc = sb_error_set(err, SB_EINPUT, "the reference failed while %s: %.400s", stage,
				  json_string_value(json_object_get(*reply, "message")) ?: "?");
		json_decref(*reply);
		*reply = NULL;
		return rc;
	}
	return 0;
}

void refworker_stop(struct refworker *r)
{
	if (r->w.started || r->w.finished) {
		worker_stop(&r->w, 5);
		proc_result_release(&r->w.log);
	}
	strvec_clear(&r->env);
	if (r->dir)
		fs_remove_tree(r->dir);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}
