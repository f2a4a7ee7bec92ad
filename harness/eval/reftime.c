/* reftime.c - measures and caches the reference's own timings. The cache key holds everything that
 * decides the numbers (problem hash, device, torch, trial count, compile), so a stale entry is never read. */
#include "reftime.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "worker_client.h"

#define REFTIME_FORMAT 2 /* 2: one block of back-to-back calls after priming */

static char *cache_path(const struct eval_env *e, const struct config *cfg, const struct problem *p, int compile)
{
	char hex[65];
	char *key = xstrfmt("format=%d\nproblem=%s\ndevice=%s\ntorch=%s\ntrials=%d\nwarmup=%d,%d,%d\ncompile=%d\nseed=%d",
			    REFTIME_FORMAT, p->sha256, e->gpu[0] ? e->gpu : "cpu", e->torch, cfg->eval.perf_trials,
			    cfg->eval.warmup_ms, cfg->eval.warmup_calls, cfg->eval.timing_prime_ms, compile, cfg->eval.seed);
	sha256_hex(key, strlen(key), hex);
	free(key);
	return xstrfmt("%s/reftime/%.32s.json", e->cache_root, hex);
}

static void stats_from_json(json_t *a, struct sample_stats *s)
{
	size_t n = json_array_size(a), i;
	double *x = xcalloc(n ? n : 1, sizeof(double));
	json_t *v;
	json_array_foreach(a, i, v)
		x[i] = json_number_value(v);
	stats_compute(x, n, s);
	free(x);
}

/* Asks for one thing; any failure of the trusted reference is the problem's or the machine's. */
static int ask(struct worker *w, json_t *req, json_t **reply, struct sb_error *err)
{
	struct worker_fault f;
	int rc = worker_call(w, req, reply, proc_now() + 3600, &f);
	json_decref(req);
	if (rc)
		return sb_error_set(err, SB_EENV, "the reference worker failed: %s", f.what);
	if (!json_is_true(json_object_get(*reply, "ok"))) {
		rc = sb_error_set(err, SB_EINPUT, "the reference failed: %.400s",
				  json_string_value(json_object_get(*reply, "message")) ?: "?");
		json_decref(*reply);
		return rc;
	}
	return 0;
}

/* Times `which` perf_trials times in one block of back-to-back calls, as KernelBench's baseline
 * does in-process (no other worker competes here); appends the microseconds to `out`. */
static int time_side(struct worker *w, const char *which, const struct config *cfg, int gpu, json_t *out,
		     struct sb_error *err)
{
	json_t *reply, *sets = json_array();
	if (ask(w, json_pack("{s:s, s:s, s:i, s:i}", "cmd", "warmup", "which", which, "min_ms", cfg->eval.warmup_ms,
			     "min_calls", cfg->eval.warmup_calls), &reply, err)) {
		json_decref(sets);
		return -1;
	}
	json_decref(reply);
	for (int i = 0; i < cfg->eval.perf_trials; i++)
		json_array_append_new(sets, json_integer(i));
	if (ask(w, json_pack("{s:s, s:s, s:o, s:i}", "cmd", "time", "which", which, "sets", sets, "prime_ms",
			     gpu ? cfg->eval.timing_prime_ms : 0), &reply, err))
		return -1;
	json_t *us = json_object_get(reply, "us");
	size_t i;
	json_t *v;
	json_array_foreach(us, i, v)
		json_array_append_new(out, json_real(json_number_value(v)));
	json_decref(reply);
	if ((int)json_array_size(out) != cfg->eval.perf_trials)
		return sb_error_set(err, SB_EENV, "the reference worker returned %zu times for %d calls",
				    json_array_size(out), cfg->eval.perf_trials);
	return 0;
}

static int measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, int compile,
		   json_t *entry, struct sb_error *err)
{
	char *dir = xstrfmt("%s/work/reftime-XXXXXX", e->cache_root);
	char *parent = xstrfmt("%s/work", e->cache_root);
	struct worker w;
	struct strvec env = STRVEC_INIT;
	json_t *reply, *eager = json_array(), *compiled = json_array();
	int rc = -1;
	fs_mkdirs(parent, 0700);
	free(parent);
	if (!mkdtemp(dir)) {
		free(dir);
		return sb_error_set(err, SB_EENV, "cannot create a work folder under %s/work", e->cache_root);
	}
	strvec_pushf(&env, "HOME=%s", dir);
	strvec_pushf(&env, "TMPDIR=%s", dir);
	strvec_pushf(&env, "TORCHINDUCTOR_CACHE_DIR=%s/inductor", e->cache_root);
	strvec_pushf(&env, "TRITON_CACHE_DIR=%s/triton", e->cache_root);
	struct worker_spec spec = { e->python, e->worker_script, dir, env.v, NULL, 64 << 10 };
	if (worker_start(&w, &spec, err))
		goto out;
	long long flush = eval_flush_bytes(e);
	json_t *seeds = json_pack("[I,I,I]", (json_int_t)trial_seed((uint32_t)cfg->eval.seed, 1000),
				  (json_int_t)trial_seed((uint32_t)cfg->eval.seed, 1001),
				  (json_int_t)trial_seed((uint32_t)cfg->eval.seed, 1002));
	if (ask(&w, json_pack("{s:s, s:s, s:s, s:i, s:b}", "cmd", "load", "problem", p->path, "device", e->device, "seed",
			      cfg->eval.seed, "compile", compile), &reply, err)) {
		json_decref(seeds);
		goto stop;
	}
	compile = json_is_true(json_object_get(reply, "compile_available"));
	json_decref(reply);
	if (ask(&w, json_pack("{s:s, s:o, s:I}", "cmd", "timing_setup", "seeds", seeds, "flush_bytes", (json_int_t)flush),
		&reply, err))
		goto stop;
	json_decref(reply);
	int gpu = strcmp(e->device, "cpu") != 0;
	if (time_side(&w, "model", cfg, gpu, eager, err) ||
	    (compile && time_side(&w, "compiled", cfg, gpu, compiled, err)))
		goto stop;
	json_object_set_new(entry, "format", json_integer(REFTIME_FORMAT));
	json_object_set(entry, "eager_us", eager);
	json_object_set(entry, "compiled_us", compile ? compiled : json_null());
	rc = 0;
stop:
	worker_stop(&w, 5);
	proc_result_release(&w.log);
out:
	json_decref(eager);
	json_decref(compiled);
	strvec_clear(&env);
	fs_remove_tree(dir);
	free(dir);
	return rc;
}

int reftime_measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, struct reftime *out,
		    struct sb_error *err)
{
	int compile = strcmp(e->device, "cpu") && cfg->eval.compile;
	char *path = cache_path(e, cfg, p, compile);
	json_t *entry = json_load_file(path, 0, NULL);
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (entry && json_integer_value(json_object_get(entry, "format")) == REFTIME_FORMAT) {
		out->cached = 1;
	} else {
		json_decref(entry);
		entry = json_object();
		if ((rc = measure(e, cfg, p, compile, entry, err)) == 0) {
			char *dir = xstrfmt("%s/reftime", e->cache_root), *tmp = xstrfmt("%s.tmp-%d", path, (int)getpid());
			fs_mkdirs(dir, 0700);
			/* written aside and renamed: a reader never sees half an entry */
			if (json_dump_file(entry, tmp, JSON_COMPACT) == 0)
				rename(tmp, path);
			free(dir);
			free(tmp);
		}
	}
	if (rc == 0) {
		stats_from_json(json_object_get(entry, "eager_us"), &out->eager);
		out->compiled_available = json_is_array(json_object_get(entry, "compiled_us"));
		if (out->compiled_available)
			stats_from_json(json_object_get(entry, "compiled_us"), &out->compiled);
	}
	json_decref(entry);
	free(path);
	return rc;
}
