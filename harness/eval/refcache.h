/* refcache.h - what a problem's reference is, cached on disk and keyed by everything that decides it
 * (problem hash, init seed, device, torch version, TF32): the bytes of its outputs and of a call's
 * inputs and outputs, whether it repeats itself under a seed, whether it is launch-heavy. Expected
 * outputs are not cached: an evaluation's input seeds are its own secret (seeds.h), so the reference
 * computes them anew in every evaluation. */
#ifndef SB_REFCACHE_H
#define SB_REFCACHE_H

#include <jansson.h>
#include <stdint.h>

#include "../core/error.h"

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

#endif
