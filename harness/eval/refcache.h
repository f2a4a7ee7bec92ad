/* refcache.h - reference outputs on disk, keyed by everything that determines them (problem hash,
 * seeds, device, torch version), so a second candidate on the same problem skips the reference run. */
#ifndef SB_REFCACHE_H
#define SB_REFCACHE_H

#include <jansson.h>
#include <stdint.h>

#include "../core/error.h"

struct refcache_key {
	const char *problem_sha256;
	const uint32_t *seeds;
	int nseeds;
	int init_seed;
	const char *device_name;  /* "cpu" or the GPU's name */
	const char *torch_version;
	int tf32;                 /* eval.tf32: expected outputs computed with TF32 allowed */
	int shared;               /* eval.exchange = shared: meta only, no output files (exchange.h) */
};

/* The entry's folder: <cache_root>/ref/<hex key>; holds trial_<k>.safetensors (not when shared) and meta.json. */
char *refcache_dir(const char *cache_root, const struct refcache_key *k);
/* meta.json of a complete entry, or NULL when there is none (a partial entry never counts). */
json_t *refcache_lookup(const char *dir);
/* Publishes a filled temporary folder as the entry, atomically (rename). */
int refcache_publish(const char *tmpdir, const char *dir, json_t *meta, struct sb_error *err);

#endif
