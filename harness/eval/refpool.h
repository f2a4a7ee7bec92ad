/* refpool.h - reference workers kept alive between evaluations of the same problem. The reference
 * worker is trusted (it never runs candidate code), so the next candidate of the problem can be timed
 * against the same process: its Python, torch, CUDA context, model and torch.compile'd model are
 * ready. One worker per device at a time: another problem's evaluation stops it first, so a GPU never
 * holds two problems' tensors for the reference. Beside it, a device may keep one spare: a worker
 * started ahead (up to EVAL_AHEAD evaluations) for the next problem of a batch, with torch imported and
 * nothing loaded (no CUDA context), which the next problem's evaluation takes.
 * `eval.keep_reference_worker` turns this off. */
#ifndef SB_REFPOOL_H
#define SB_REFPOOL_H

#include "proc/proc.h"

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

#endif
