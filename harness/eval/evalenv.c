/* evalenv.c - what an `eval` invocation finds once and every evaluation shares: the device (auto picks the
 * first GPU torch sees), the workers' Python, the GPU's name, SM and L2, and the cache folder. */
#include "evaluate.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/log.h"
#include "../core/python.h"
#include "proc/proc.h"

struct eval_forks {
	pthread_mutex_t mu;
	int tried;
	struct forkserver *fs;
	char *dir; /* its folder (its HOME and working directory) */
};

static char *default_cache_root(void)
{
	const char *c = getenv("STITCHBENCH_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (c && *c)
		return xstrdup(c);
	if (x && *x)
		return xstrfmt("%s/stitchbench", x);
	return xstrfmt("%s/.cache/stitchbench", h && *h ? h : "/tmp");
}

/* eval.timing_cpu must be a CPU this process may run on: the workers inherit its affinity, and a pin
 * the kernel refuses would only show up as timing.pinned = false. */
static int check_timing_cpu(int cpu, struct sb_error *err)
{
	cpu_set_t s;
	if (cpu < 0 || sched_getaffinity(0, sizeof(s), &s) != 0)
		return 0;
	if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &s))
		return 0;
	struct strbuf ok = STRBUF_INIT;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &s))
			strbuf_addf(&ok, "%s%d", ok.len ? "," : "", i);
	int rc = sb_error_set(err, SB_EINPUT, "eval.timing_cpu: CPU %d is not one stitchbench may run on here (it may use %s)",
			      cpu, ok.buf);
	strbuf_release(&ok);
	return rc;
}

int eval_env_init(struct eval_env *e, const struct config *cfg, const char *home, struct sb_error *err)
{
	struct python_info py;
	int rc0 = check_timing_cpu(cfg->eval.timing_cpu, err);
	if (rc0)
		return rc0;
	char *probe = xstrfmt("%s/harness/worker/probe.py", home);
	memset(e, 0, sizeof(*e));
	e->cache_root = default_cache_root();
	/* the probe (Python, torch, the GPUs) is seconds of every invocation's start: kept in the cache */
	char *probe_dir = xstrfmt("%s/probe", e->cache_root);
	int rc = python_discover(cfg->python, probe, probe_dir, &py, NULL, err);
	free(probe);
	free(probe_dir);
	if (rc) {
		eval_env_release(e);
		return rc;
	}
	const char *dev = cfg->eval.device;
	int index = -1;
	if (!strcmp(dev, "auto"))
		index = py.cuda_available && py.ndevices ? 0 : -1;
	else if (!strcmp(dev, "cuda"))
		index = 0;
	else if (starts_with(dev, "cuda:"))
		index = atoi(dev + 5);
	if (index >= 0 && (!py.cuda_available || (size_t)index >= py.ndevices)) {
		rc = sb_error_set(err, SB_EENV, "eval.device %s: %s", dev,
				  py.cuda_available ? "no such GPU" : "torch sees no GPU here (use --device cpu)");
		python_info_release(&py);
		eval_env_release(e);
		return rc;
	}
	e->python = xstrdup(py.path);
	e->worker_script = xstrfmt("%s/harness/worker/worker.py", home);
	const char *lib = getenv("STITCHBENCH_PROF_LIB");
	e->prof_lib = lib && *lib ? xstrdup(lib) : xstrfmt("%s/lib/libstitchprof.so", home);
	snprintf(e->torch, sizeof(e->torch), "%s", py.torch_version ? py.torch_version : "?");
	snprintf(e->torch_cuda, sizeof(e->torch_cuda), "%s", py.torch_cuda ? py.torch_cuda : "");
	snprintf(e->python_version, sizeof(e->python_version), "%s", py.version ? py.version : "?");
	e->compile_available = python_torch_compile(&py, e->compile_missing, sizeof(e->compile_missing));
	if (index >= 0) {
		snprintf(e->device, sizeof(e->device), "cuda:%d", index);
		snprintf(e->gpu, sizeof(e->gpu), "%s", py.devices[index].name ? py.devices[index].name : "?");
		snprintf(e->sm, sizeof(e->sm), "%s", py.devices[index].sm);
		e->l2_bytes = py.devices[index].l2_bytes;
		snprintf(e->gpu_uuid, sizeof(e->gpu_uuid), "%s", py.devices[index].uuid);
	} else {
		snprintf(e->device, sizeof(e->device), "cpu");
	}
	python_info_release(&py);
	e->hash_seed = cfg->eval.hash_seed;
	e->home = xstrdup(home);
	if (!strcmp(e->device, "cpu"))
		e->oprec_lib = eval_oprec_lib(e);
	if (cfg->eval.fork_server) {
		e->forks = xcalloc(1, sizeof(*e->forks));
		pthread_mutex_init(&e->forks->mu, NULL);
	}
	if ((rc = fs_mkdirs(e->cache_root, 0700)) != 0)
		return sb_error_set(err, SB_EENV, "cannot create the cache %s: %s (set STITCHBENCH_CACHE)", e->cache_root,
				    strerror(-rc));
	return 0;
}

void eval_python_env(struct strvec *env, const struct eval_env *e)
{
	strvec_push(env, "PYTHONDONTWRITEBYTECODE=1");
	strvec_push(env, "PYTHONUNBUFFERED=1");
	strvec_push(env, "LANG=C.UTF-8");
	/* one hash seed for both workers: Python's per-process random seed gives each process its own dict and
	 * string-hash layout, and with it, for a host-bound model, its own speed of attribute lookups */
	if (e->hash_seed >= 0)
		strvec_pushf(env, "PYTHONHASHSEED=%d", e->hash_seed);
}

struct forkserver *eval_fork_server(const struct eval_env *e)
{
	if (!e->forks)
		return NULL;
	struct eval_forks *f = e->forks;
	pthread_mutex_lock(&f->mu);
	if (!f->tried) {
		f->tried = 1;
		char why[512] = "";
		char *work = xstrfmt("%s/work", e->cache_root);
		fs_mkdirs(work, 0700);
		f->dir = xstrfmt("%s/forkserver-%d-XXXXXX", work, (int)getpid());
		free(work);
		if (!mkdtemp(f->dir)) {
			snprintf(why, sizeof(why), "%s: %s", f->dir, strerror(errno));
			free(f->dir);
			f->dir = NULL;
		} else {
			char *spawn_lib = forkserver_lib(e->home);
			char *script = xstrfmt("%s/harness/worker/template.py", e->home);
			/* what every forked worker shares, read once at the interpreter's start */
			struct strvec env = STRVEC_INIT;
			strvec_pushf(&env, "HOME=%s", f->dir);
			strvec_pushf(&env, "TMPDIR=%s", f->dir);
			eval_python_env(&env, e);
			f->fs = forkserver_start(e->python, script, spawn_lib, f->dir, env.v, why, sizeof(why));
			strvec_clear(&env);
			free(script);
			free(spawn_lib);
		}
		if (!f->fs)
			sb_warn(NULL, "no fork server (%s): each candidate worker starts Python and imports torch itself", why);
		else
			sb_trace("fork server: started, %s", f->dir);
	}
	struct forkserver *fs = forkserver_alive(f->fs) ? f->fs : NULL;
	pthread_mutex_unlock(&f->mu);
	return fs;
}

int eval_lead_us(const struct eval_env *e, const struct config *cfg)
{
	return strcmp(e->device, "cpu") ? cfg->eval.timing_lead_us : 0;
}

int eval_timing_cpu(const struct eval_env *e, const struct config *cfg)
{
	int want = cfg->eval.timing_cpu;
	if (want >= 0)
		return want;
	if (want < -1 || !strcmp(e->device, "cpu"))
		return -1;
	cpu_set_t s;
	int cpus[CPU_SETSIZE], n = 0;
	if (sched_getaffinity(0, sizeof(s), &s) != 0)
		return -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &s))
			cpus[n++] = i;
	const char *colon = strchr(e->device, ':');
	int gpu = colon ? atoi(colon + 1) : 0;
	return n > 1 ? cpus[n - 1 - gpu % n] : -1;
}

long long eval_flush_bytes(const struct eval_env *e)
{
	if (!strcmp(e->device, "cpu"))
		return 0;
	long long l2 = e->l2_bytes ? e->l2_bytes : (64LL << 20); /* unknown L2: assume a large one */
	return 2 * l2 < (32LL << 20) ? (32LL << 20) : 2 * l2;
}

void eval_env_release(struct eval_env *e)
{
	if (e->forks) {
		forkserver_stop(e->forks->fs);
		if (e->forks->dir)
			fs_remove_tree(e->forks->dir);
		free(e->forks->dir);
		pthread_mutex_destroy(&e->forks->mu);
		free(e->forks);
	}
	free(e->home);
	free(e->python);
	free(e->worker_script);
	free(e->prof_lib);
	free(e->cache_root);
	free(e->oprec_lib);
	memset(e, 0, sizeof(*e));
}

