/* sweep.h - what an evaluating process claims in the cache when it starts: the work folders it makes
 * (named with its pid, and swept by a later process once it is gone, as after a kill -9) and the GPUs
 * it times on (a warning when another process times on one of them). */
#ifndef SB_SWEEP_H
#define SB_SWEEP_H

#include <stddef.h>

#include "../core/error.h"
#include "../core/lockfile.h"
#include "../core/strbuf.h"

struct eval_claim {
	struct lockfile owner;        /* <cache>/locks/owner-PID-HOST.lock, held while this process lives */
	struct lockfile *devices;     /* the GPUs it times on */
	size_t ndevices;
	size_t swept;                 /* entries of ended processes removed when it began */
};
#define EVAL_CLAIM_INIT { LOCKFILE_INIT, NULL, 0, 0 }

/* Once per evaluating process, before its first evaluation: takes its owner lock, then removes the work
 * folders (work/, refw/) and temporary cache entries (*.tmp-PID) of processes whose owner lock is free:
 * they ended without cleaning up. An entry whose pid no owner lock names is left alone (an older
 * build's, or one this cannot judge), as is every entry of a pid whose lock some process holds. */
int eval_claim_begin(struct eval_claim *c, const char *cache_root, struct sb_error *err);
/* Locks the device (lockfile_device); a GPU another process times on adds a line to warnings. */
int eval_claim_device(struct eval_claim *c, const char *cache_root, const char *device, struct strbuf *warnings,
		      struct sb_error *err);
void eval_claim_release(struct eval_claim *c);

#endif
