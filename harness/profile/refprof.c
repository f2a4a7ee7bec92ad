/* refprof.c - measures and caches reference profiles. An entry is the kept trace and its calls
 * (docs/trace.md), written in a temporary folder and renamed into place, so readers never see half. */
#include "refprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "session.h"

#define REFPROF_FORMAT 2

static char *entry_dir(const struct eval_env *e, const struct config *cfg, const struct problem *p)
{
	char hex[65];
	char *key = xstrfmt("format=%d\ntrace=%d\nproblem=%s\ndevice=%s\ntorch=%s\ncalls=%d\nwarmup=%d,%d\nseed=%d\nmetrics=%d",
			    REFPROF_FORMAT, TRACE_FORMAT, p->sha256, e->gpu, e->torch, cfg->eval.profile_trials,
			    cfg->eval.warmup_ms, cfg->eval.warmup_calls, cfg->eval.seed, (int)cfg->eval.profile_metrics);
	sha256_hex(key, strlen(key), hex);
	free(key);
	return xstrfmt("%s/refprof/%.32s", e->cache_root, hex);
}

/* Profiles the reference in a trusted worker; the kept trace lands in `keep_dir`/trace. */
static int measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *keep_dir,
		   struct prof_report *out, struct sb_error *err)
{
	char *dir = xstrfmt("%s/work/refprof-%d-XXXXXX", e->cache_root, (int)getpid()), *parent = xstrfmt("%s/work", e->cache_root);
	struct strvec env = STRVEC_INIT;
	struct worker w;
	int rc = -1;
	fs_mkdirs(parent, 0700);
	free(parent);
	if (!mkdtemp(dir)) {
		rc = sb_error_set(err, SB_EENV, "cannot create a work folder under %s/work: %s", e->cache_root, strerror(errno));
		free(dir);
		return rc;
	}
	strvec_pushf(&env, "HOME=%s", dir);
	strvec_pushf(&env, "TMPDIR=%s", dir);
	struct worker_spec spec = { e->python, e->worker_script, dir, env.v, NULL, 64 << 10, 0, NULL };
	char *trace = xstrfmt("%s/trace", dir), *keep = xstrfmt("%s/trace", keep_dir), *msg = NULL;
	char *metrics = cfg->eval.profile_metrics == PM_CUPTI ? xstrfmt("%s/metrics", dir) : NULL;
	if ((rc = worker_start(&w, &spec, err)))
		goto out;
	json_t *reply;
	struct worker_fault f;
	json_t *req = json_pack("{s:s, s:s, s:s, s:i, s:b}", "cmd", "load", "problem", p->path, "device", e->device, "seed",
				cfg->eval.seed, "compile", 0);
	rc = worker_call(&w, req, &reply, proc_now() + 3600, &f);
	json_decref(req);
	if (rc || !json_is_true(json_object_get(reply, "ok"))) {
		rc = sb_error_set(err, rc ? SB_EENV : SB_EINPUT, "the reference failed to load: %s",
				  rc ? f.what : json_string_value(json_object_get(reply, "message")) ?: "?");
		json_decref(reply);
		goto stop;
	}
	json_decref(reply);
	struct prof_plan plan = {
		.lib = e->prof_lib, .trace = trace, .which = "model", .calls = cfg->eval.profile_trials, .setup = 1,
		.nsets = 3, .base_seed = (uint32_t)cfg->eval.seed, .flush_bytes = eval_flush_bytes(e),
		.warmup_ms = cfg->eval.warmup_ms, .warmup_calls = cfg->eval.warmup_calls, .keep = keep,
		.metrics = metrics,
	};
	if (prof_session_run(&w, &plan, proc_now() + 3600, out, &f, &msg))
		rc = sb_error_set(err, SB_EINPUT, "profiling the reference failed: %s", msg);
	else if (!out->available)
		rc = sb_error_set(err, SB_EENV, "CUPTI recorded no profile: %s", out->reason);
	else
		rc = 0;
stop:
	worker_stop(&w, 5);
	proc_result_release(&w.log);
out:
	free(msg);
	free(trace);
	free(metrics);
	free(keep);
	strvec_clear(&env);
	fs_remove_tree(dir);
	free(dir);
	return rc;
}

int refprof_lookup(const struct eval_env *e, const struct config *cfg, const struct problem *p,
		   struct prof_report *out)
{
	char *dir = entry_dir(e, cfg, p), *trace = xstrfmt("%s/trace", dir);
	struct sb_error ignored = { 0 };
	int rc = prof_report_from_kept(trace, out, &ignored);
	if (rc)
		prof_report_release(out);
	free(trace);
	free(dir);
	return rc ? -1 : 0;
}

int refprof_get(const struct eval_env *e, const struct config *cfg, const struct problem *p, int refresh,
		struct prof_report *out, int *cached, struct sb_error *err)
{
	*cached = 0;
	if (!strcmp(e->device, "cpu"))
		return sb_error_set(err, SB_EENV, "profiling needs a CUDA GPU; torch sees none here (eval.device=cpu)");
	if (access(e->prof_lib, R_OK) != 0)
		return sb_error_set(err, SB_EENV, "%s is missing: build it with make where the CUDA toolkit's CUPTI headers "
				    "are (or set STITCHBENCH_PROF_LIB)", e->prof_lib);
	if (!refresh && refprof_lookup(e, cfg, p, out) == 0) {
		*cached = 1;
		return 0;
	}
	char *dir = entry_dir(e, cfg, p);
	int rc;
	char *tmp = xstrfmt("%s.tmp-%d", dir, (int)getpid());
	fs_mkdirs(tmp, 0700);
	rc = measure(e, cfg, p, tmp, out, err);
	if (rc == 0) {
		fs_remove_tree(dir); /* refresh: the old entry goes */
		if (rename(tmp, dir) != 0 && errno != ENOTEMPTY && errno != EEXIST)
			rc = sb_error_set(err, SB_EIO, "cannot publish the reference profile %s: %s", dir, strerror(errno));
	}
	fs_remove_tree(tmp); /* still there only when another process published first */
	free(tmp);
	free(dir);
	return rc;
}
