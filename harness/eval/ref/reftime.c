/* reftime.c - measures and caches the reference's own timings. The cache key holds everything that
 * decides the numbers (problem hash, device, torch, trial count, compile), so a stale entry is never read. */
#include "ref.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/fs.h"
#include "../../core/sha256.h"

#define REFTIME_FORMAT 5 /* 2: one block of back-to-back calls after priming; 3: eval.tf32 in the key;
			   * 4: eval.timing_lead_us in the key; 5: eval.timing_gc and eval.hash_seed */

static char *cache_path(const struct eval_env *e, const struct config *cfg, const struct problem *p, int compile)
{
	char hex[65];
	char *key = xstrfmt("format=%d\nproblem=%s\ndevice=%s\ntorch=%s\ntrials=%d\nwarmup=%d,%d,%d,%d\ncompile=%d\nseed=%d\ntf32=%d\ngc=%d\nhash_seed=%d",
			    REFTIME_FORMAT, p->sha256, e->gpu[0] ? e->gpu : "cpu", e->torch, cfg->eval.perf_trials,
			    cfg->eval.warmup_ms, cfg->eval.warmup_calls, cfg->eval.timing_prime_ms, eval_lead_us(e, cfg), compile, cfg->eval.seed,
			    cfg->eval.tf32, cfg->eval.timing_gc, cfg->eval.hash_seed);
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

/* Times `which` perf_trials times in one block of back-to-back calls, as KernelBench's baseline
 * does in-process (no other worker competes here); appends the microseconds to `out`. */
static int time_side(struct refworker *w, const char *which, const struct config *cfg, int gpu, json_t *out,
		     struct sb_error *err)
{
	json_t *reply, *sets = json_array();
	if (refworker_ask(w, json_pack("{s:s, s:s, s:i, s:i}", "cmd", "warmup", "which", which, "min_ms",
				       cfg->eval.warmup_ms, "min_calls", cfg->eval.warmup_calls), &reply, "warming up", err)) {
		json_decref(sets);
		return -1;
	}
	json_decref(reply);
	for (int i = 0; i < cfg->eval.perf_trials; i++)
		json_array_append_new(sets, json_integer(i));
	if (gpu && cfg->eval.timing_prime_ms > 0) {
		/* the set before the block's first: the last one */
		if (refworker_ask(w, json_pack("{s:s, s:s, s:i, s:i}", "cmd", "prime", "which", which, "set", -1, "ms",
					       cfg->eval.timing_prime_ms), &reply, "priming", err)) {
			json_decref(sets);
			return -1;
		}
		json_decref(reply);
	}
	if (refworker_ask(w, json_pack("{s:s, s:s, s:o, s:i, s:b}", "cmd", "time", "which", which, "sets", sets,
				       "lead_us", gpu ? cfg->eval.timing_lead_us : 0, "gc", cfg->eval.timing_gc),
			  &reply, "timing", err))
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
	struct refworker w;
	json_t *reply, *eager = json_array(), *compiled = json_array();
	int rc = -1;
	if (refworker_start(&w, e, "reftime", err))
		goto stop;
	long long flush = eval_flush_bytes(e);
	json_t *seeds = json_pack("[I,I,I]", (json_int_t)trial_seed((uint32_t)cfg->eval.seed, 1000),
				  (json_int_t)trial_seed((uint32_t)cfg->eval.seed, 1001),
				  (json_int_t)trial_seed((uint32_t)cfg->eval.seed, 1002));
	if (refworker_ask(&w, json_pack("{s:s, s:s, s:s, s:i, s:b}", "cmd", "load", "problem", p->path, "device", e->device,
					"seed", cfg->eval.seed, "compile", compile), &reply, "loading the problem", err)) {
		json_decref(seeds);
		goto stop;
	}
	compile = json_is_true(json_object_get(reply, "compile_available"));
	json_decref(reply);
	if (refworker_ask(&w, json_pack("{s:s, s:o, s:I}", "cmd", "timing_setup", "seeds", seeds, "flush_bytes",
					(json_int_t)flush), &reply, "drawing inputs", err))
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
	refworker_stop(&w);
	json_decref(eager);
	json_decref(compiled);
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
