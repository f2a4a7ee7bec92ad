/* ref.h - the reference: the problem's own Model, run by trusted workers, that a candidate is judged against.
 *   refcache.c: what a problem's reference is (its outputs, its facts), cached on disk under all that decides it.
 *   refworker.c: a trusted reference worker of its own, outside any evaluation (baseline timings, the audit).
 *   refpool.c: reference workers kept alive between evaluations of the same problem, and a spare per device.
 *   reftime.c: the reference's own timings for baseline tables (`stitchbench baseline`), cached like its outputs.
 *   bandwidth.c: a GPU's peak memory bandwidth for the physical floor (H21), measured in the reference worker. */
#ifndef SB_EVAL_REF_H
#define SB_EVAL_REF_H

#include <jansson.h>
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/types.h"
#include "../evaluate.h"
#include "../proc/proc.h"
#include "../timing/timing.h"

/* refcache.c - what a problem's reference is, cached on disk and keyed by everything that decides it
 * (problem hash, init seed, device, torch version, TF32): the bytes of its outputs and of a call's
 * inputs and outputs, whether it repeats itself under a seed, whether it is launch-heavy. Expected
 * outputs are not cached: an evaluation's input seeds are its own secret (seeds.h), so the reference
 * computes them anew in every evaluation. */

struct refcache_key {
	const char *problem_sha256;
	int init_seed;
	const char *device_name;  /* "cpu" or the GPU's name */
	const char *torch_version;
	int tf32;                 /* eval.tf32: outputs computed with TF32 allowed */
};

/* The entry's folder: <cache_root>/ref/<hex key>; holds meta.json. */
char *refcache_dir(const char *cache_root, const struct refcache_key *k);
/* meta.json of a complete entry, or NULL when there is none (a partial entry never counts). */
json_t *refcache_lookup(const char *dir);
/* Publishes a filled temporary folder as the entry, atomically (rename). */
int refcache_publish(const char *tmpdir, const char *dir, json_t *meta, struct sb_error *err);

/* refworker.c - a trusted reference worker of its own, outside any evaluation (baseline timings, the
 * audit): a fresh work folder under the cache, the reference's environment, requests that fail loudly. */

struct refworker {
	struct worker w;
	char *dir;                 /* <cache>/work/<tag>-<pid>-XXXXXX, removed by refworker_stop */
	struct strvec env;
};

/* Starts the worker in a fresh folder; SB_EENV when the folder or the process cannot be made. */
int refworker_start(struct refworker *r, const struct eval_env *e, const char *tag, struct sb_error *err);
/* Sends req (stolen); on success *reply is set. A dead worker is SB_EENV, an error reply SB_EINPUT
 * ("the reference failed while <stage>: <message>"). */
int refworker_ask(struct refworker *r, json_t *req, json_t **reply, const char *stage, struct sb_error *err);
/* Stops the worker, removes its folder; safe after a failed start. */
void refworker_stop(struct refworker *r);

/* refpool.c - reference workers kept alive between evaluations of the same problem. The reference
 * worker is trusted (it never runs candidate code), so the next candidate of the problem can be timed
 * against the same process: its Python, torch, CUDA context, model and torch.compile'd model are
 * ready. One worker per device at a time: another problem's evaluation stops it first, so a GPU never
 * holds two problems' tensors for the reference. Beside it, a device may keep one spare: a worker
 * started ahead (up to EVAL_AHEAD evaluations) for the next problem of a batch, with torch imported and
 * nothing loaded (no CUDA context), which the next problem's evaluation takes.
 * `eval.keep_reference_worker` turns this off. */

struct refpool_item {
	struct worker w;
	char *dir;          /* the worker's private folder (it lives as long as the worker) */
	int loaded;         /* the problem is loaded (its `load` was answered) */
	int compiled;       /* it also holds torch.compile(Model) */
	int compile_pending; /* its `compile` was sent and is not answered yet (refpool_take reads the answer) */
};

/* The key of a reference worker: everything its `load` depended on. The caller frees it. */
char *refpool_key(const char *problem_sha256, const char *problem_path, const char *device, int seed,
		  int compile, const char *python);

/* Takes the kept worker for key on this device, else the device's spare (out->loaded is 0), checked
 * alive with a `hello` first: 0 with *out filled (the caller owns it), -1 when there is none. Without
 * a worker for key, one kept for the device under another key is stopped and its folder removed. */
int refpool_take(const char *key, const char *device, struct refpool_item *out);
/* Keeps a worker for the next evaluation of key, replacing (stopping) what the device kept before;
 * takes ownership of *it. A worker that has died is stopped instead. */
void refpool_put(const char *key, const char *device, struct refpool_item *it);
/* Keeps a started, unloaded worker as the device's spare, replacing (stopping) an earlier spare. */
void refpool_put_spare(const char *device, struct refpool_item *it);
/* Whether the device keeps a spare now. */
int refpool_has_spare(const char *device);
/* Stops every kept worker and removes its folder (also registered with atexit on the first put). */
void refpool_drain(void);
/* How many workers are kept now (for tests). */
size_t refpool_size(void);

/* reftime.c - reference timings for baseline tables (`stitchbench baseline`): the reference alone,
 * eager and torch.compile, timed in one trusted worker and cached on disk like reference outputs. */

struct reftime {
	struct sample_stats eager;      /* microseconds per call */
	struct sample_stats compiled;
	int compiled_available;
	int cached;                     /* read from the cache, not measured now */
};

/* Times `p`'s Model on e->device for cfg->eval.perf_trials calls after warm-up (KernelBench's block
 * method: these numbers fill baseline tables only; candidate speedups always come from paired timing). */
int reftime_measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, struct reftime *out,
		    struct sb_error *err);

/* bandwidth.c - a GPU's peak memory bandwidth for the physical floor (H21): measured once per GPU with a
 * large device-to-device copy in the trusted reference worker, then cached under $STITCHBENCH_CACHE. */

/* Bytes copied by the measurement (read once and written once). */
#define BANDWIDTH_COPY_BYTES (1LL << 30)

/* Fills *bytes_per_s from <cache_root>/bandwidth/<key>.json, or measures it with `ref` (a loaded
 * reference worker on `device`) and writes that file. Returns 0, or -1 with `why` saying what failed
 * (the floor is then skipped with that reason, never passed). `cached` says whether it was read. */
int bandwidth_get(struct worker *ref, const char *device, const char *cache_root, double deadline,
		  double *bytes_per_s, int *cached, char *why, size_t why_len);

#endif
