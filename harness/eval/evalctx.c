/* evalctx.c - an evaluation's folders and environments, the reference worker's life (kept, started
 * ahead for the next problem) and the release of both workers. The candidate's worker itself is
 * candidate.c's: the trust boundary. */
#include "eval_int.h"

#include "../core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "ref/ref.h"

/* ---------- environments ---------- */

/* The GPU a worker will use, for worker.py to create its CUDA context while torch imports (0.3 s off
 * every worker's start on a GPU node, scripts/bench/cuda_start.py); nothing on the CPU. Only for the
 * workers an evaluation starts for itself: one started ahead makes no CUDA context before its own
 * evaluation, since the one before may be timing on the same GPU. */
static void device_env(struct strvec *env, const struct eval_env *e)
{
	if (!strncmp(e->device, "cuda:", 5)) /* resolved: always with its index */
		strvec_pushf(env, "STITCHBENCH_WORKER_DEVICE=%s", e->device);
}

/* The reference worker's environment, for a worker in `dir` (its home); `ahead`: started ahead of its
 * evaluation. */
static void ref_env(struct strvec *env, const struct eval_env *e, const char *dir, int ahead)
{
	strvec_pushf(env, "HOME=%s", dir);
	strvec_pushf(env, "TMPDIR=%s", dir);
	strvec_pushf(env, "TORCHINDUCTOR_CACHE_DIR=%s/inductor", e->cache_root);
	strvec_pushf(env, "TRITON_CACHE_DIR=%s/triton", e->cache_root);
	eval_python_env(env, e);
	if (!ahead)
		device_env(env, e);
}

void evalctx_env(struct eval_ctx *c, int ahead)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	strvec_pushf(&c->cand_env, "HOME=%s", c->cand_dir);
	strvec_pushf(&c->cand_env, "TMPDIR=%s/tmp", c->cand_dir);
	strvec_pushf(&c->cand_env, "XDG_CACHE_HOME=%s/.cache", c->cand_dir);
	strvec_pushf(&c->cand_env, "CUDA_CACHE_PATH=%s/.nv", c->cand_dir);
	strvec_pushf(&c->cand_env, "TRITON_CACHE_DIR=%s/.triton", c->cand_dir);
	strvec_pushf(&c->cand_env, "TORCHINDUCTOR_CACHE_DIR=%s/.inductor", c->cand_dir);
	strvec_pushf(&c->cand_env, "TORCH_EXTENSIONS_DIR=%s", c->ext_dir);
	strvec_pushf(&c->cand_env, "MAX_JOBS=%ld", cores > 0 ? cores : 1);
	/* build for the device's architecture only (DESIGN §5.3) */
	if (c->e->sm[0])
		strvec_pushf(&c->cand_env, "TORCH_CUDA_ARCH_LIST=%c.%s", c->e->sm[0], c->e->sm + 1);
	eval_python_env(&c->cand_env, c->e);
	if (!ahead)
		device_env(&c->cand_env, c->e);
	ref_env(&c->ref_env, c->e, c->ref_dir, 0); /* its reference worker starts with its evaluation */
}

/* ---------- the reference worker's folder, and all the folders ---------- */

int evalctx_ref_compiles(const struct eval_ctx *c)
{
	return strcmp(c->e->device, "cpu") && c->cfg->eval.perf_trials > 0 && c->cfg->eval.compile;
}

/* A new reference worker's folder under refw/ (NULL with errno when it cannot be made). */
static char *new_ref_dir(const char *refw)
{
	char *dir = xstrfmt("%s/ref-%d-XXXXXX", refw, (int)getpid());
	if (mkdtemp(dir))
		return dir;
	int saved = errno;
	free(dir);
	errno = saved;
	return NULL;
}

/* Starts a reference worker (trusted: no sandbox) in dir. A kept one serves evaluations of later run
 * threads; it exits when stitchbench's end closes its channel. */
static int ref_worker_start(const struct eval_env *e, struct worker *w, const char *dir, const struct strvec *env,
			    int kept, struct sb_error *err)
{
	/* forked too when the server is up: otherwise a batch's first evaluation of each problem waits 2-3 s
	 * for its reference worker's `import torch` */
	struct worker_spec spec = { e->python, e->worker_script, dir, env->v, NULL, LOG_CAP, kept, eval_fork_server(e) };
	return worker_start(w, &spec, err);
}

int evalctx_start_ref(struct eval_ctx *c, struct sb_error *err)
{
	return c->ref.started ? 0 : ref_worker_start(c->e, &c->ref, c->ref_dir, &c->ref_env, c->pool_key != NULL, err);
}

/* The reference worker's folder: with eval.keep_reference_worker, the kept worker of this problem and
 * device (alive, maybe loaded) with its folder, or else a new folder. New folders are always under
 * refw/, which every candidate worker has hidden from its start, a prestarted one included: one made
 * later anywhere else would be in plain sight of a worker started before it. */
static int ref_worker_dir(struct eval_ctx *c, struct sb_error *err)
{
	struct refpool_item it;
	if (c->cfg->eval.keep_reference_worker && !c->own_ref) {
		c->pool_key = refpool_key(c->p->sha256, c->p->path, c->e->device, c->cfg->eval.seed,
					  evalctx_ref_compiles(c), c->e->python);
		if (refpool_take(c->pool_key, c->e->device, &it) == 0) {
			c->ref = it.w;
			c->ref_dir = it.dir;
			c->ref_loaded = it.loaded;
			c->ref_compiled = it.compiled; /* any `compile` it was sent is answered (refpool_take) */
			c->v->reference_worker_reused = it.loaded;
			c->v->reference_worker_prestarted = !it.loaded; /* the spare, started for this problem */
			return 0;
		}
	}
	if (!(c->ref_dir = new_ref_dir(c->hidden_refw)))
		return sb_error_set(err, SB_EENV, "cannot create a folder under %s: %s", c->hidden_refw, strerror(errno));
	return 0;
}

int evalctx_dirs(struct eval_ctx *c, int with_ref, struct sb_error *err)
{
	/* mkdtemp: evaluations run concurrently (parallel builds), each needs a folder of its own */
	char *parent = xstrfmt("%s/work", c->e->cache_root);
	fs_mkdirs(parent, 0700);
	c->workdir = xstrfmt("%s/eval-%d-XXXXXX", parent, (int)getpid());
	free(parent);
	if (!mkdtemp(c->workdir))
		return sb_error_set(err, SB_EENV, "cannot create a work folder under %s/work: %s", c->e->cache_root,
				    strerror(errno));
	c->cand_dir = xstrfmt("%s/cand", c->workdir);
	/* its own build folder: the builder's (published from there, build.c) or a private copy of the
	 * published build; the cache of builds is hidden from every candidate worker */
	c->ext_dir = xstrfmt("%s/ext", c->cand_dir);
	c->hidden_ext = xstrfmt("%s/ext", c->e->cache_root);
	c->hidden_ref = xstrfmt("%s/ref", c->e->cache_root);
	/* kept reference workers live in folders of their own under refw/, hidden from every candidate */
	c->hidden_refw = xstrfmt("%s/refw", c->e->cache_root);
	char *tmp = xstrfmt("%s/tmp", c->cand_dir);
	int rc = fs_mkdirs(tmp, 0700) || fs_mkdirs(c->ext_dir, 0700) || fs_mkdirs(c->hidden_ext, 0700) ||
		 fs_mkdirs(c->hidden_ref, 0700) || fs_mkdirs(c->hidden_refw, 0700);
	free(tmp);
	if (rc)
		return sb_error_set(err, SB_EENV, "cannot create work folders under %s: %s", c->e->cache_root, strerror(errno));
	if (with_ref && (rc = ref_worker_dir(c, err)))
		return rc;
	/* every reference worker's folder is under refw/ (ref_worker_dir): hiding refw/ hides them all, also
	 * those made after a prestarted candidate worker started */
	c->hidden[0] = c->hidden_ref;
	c->hidden[1] = c->hidden_refw;
	c->hidden[2] = c->hidden_ext;
	c->hidden[3] = NULL;
	c->writable[0] = NULL; /* its folder (the sandbox's workdir) holds everything it may write */
	return 0;
}

/* ---------- release ---------- */

/* The reference worker goes back to the pool while it is alive; otherwise it stops and its folder
 * (outside the evaluation's, when pooling) goes with it. */
void evalctx_release_ref(struct eval_ctx *c)
{
	/* one still loading has a reply in flight: kept, it would answer the next request with it */
	if (c->pool_key && c->ref.started && !c->ref.finished && !c->ref_load_pending) {
		struct refpool_item it = { c->ref, c->ref_dir, c->ref_loaded, c->ref_compiled, c->ref_compile_pending };
		refpool_put(c->pool_key, c->e->device, &it);
		memset(&c->ref, 0, sizeof(c->ref));
		c->ref_dir = NULL;
		return;
	}
	worker_stop(&c->ref, 5);
	proc_result_release(&c->ref.log);
	/* a kept worker's folder goes with it; an unpooled one's stays for inspection like the rest */
	if (c->ref_dir && (c->pool_key || !c->e->keep_workdirs))
		fs_remove_tree(c->ref_dir);
	free(c->ref_dir);
	c->ref_dir = NULL;
}

void evalctx_release(struct eval_ctx *c)
{
	json_decref(c->ref_timing_inputs);
	c->ref_timing_inputs = NULL;
	worker_stop(&c->cand, 2);
	evalctx_release_ref(c);
	proc_result_release(&c->cand.log);
	if (c->workdir && !c->e->keep_workdirs)
		fs_remove_tree(c->workdir);
	if (c->adopted) { /* the prestarted worker's folders: its candidate is done with them */
		evalctx_release(c->adopted);
		free(c->adopted);
	}
	free(c->workdir);
	free(c->cand_dir);
	free(c->ext_dir);
	free(c->hidden_ref);
	free(c->hidden_refw);
	free(c->hidden_ext);
	free(c->pool_key);
	free(c->seeds);
	rt_session_release(&c->rt);
	strvec_clear(&c->cand_env);
	strvec_clear(&c->ref_env);
}

/* ---------- the reference worker started ahead ---------- */

/* The first of the next evaluations that is of another problem (1-based), or 0 when none is. */
static int next_other_problem(const struct eval_ctx *c)
{
	for (int k = 0; k < EVAL_AHEAD && c->e->next_problems[k]; k++)
		if (c->e->next_problems[k] != c->p)
			return k + 1;
	return 0;
}

void evalctx_prestart_ref(const struct eval_ctx *c)
{
	const struct eval_env *e = c->e;
	/* as far ahead as the candidates' workers: importing torch takes longer than one evaluation (3-6 s
	 * while the candidates' workers import theirs, against ~1.5-3 s for a level-1 evaluation), so one
	 * started only by the evaluation just before would still be importing when taken */
	int ahead = next_other_problem(c);
	if (!c->cfg->eval.keep_reference_worker || !ahead || refpool_has_spare(e->device))
		return;
	struct refpool_item it = { .dir = new_ref_dir(c->hidden_refw) };
	struct strvec env = STRVEC_INIT;
	struct sb_error err = { 0 };
	if (!it.dir)
		return;
	ref_env(&env, e, it.dir, 1);
	if (ref_worker_start(e, &it.w, it.dir, &env, 1, &err) == 0) {
		sb_trace("eval: started reference worker %d ahead for evaluation +%d", (int)it.w.h.pid, ahead);
		refpool_put_spare(e->device, &it); /* takes it */
	} else {
		fs_remove_tree(it.dir);
		free(it.dir);
	}
	strvec_clear(&env);
}
