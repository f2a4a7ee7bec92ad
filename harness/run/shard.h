/* shard.h - `run --shard I/N`: which (agent, problem, sample) items a shard runs, and the shard's run id.
 * Round-robin over the run's canonical item order (docs/scaleout.md says why). */
#ifndef SB_SHARD_H
#define SB_SHARD_H

#include <stddef.h>

#include "../core/error.h"

struct shard {
	int index;   /* 1..count */
	int count;   /* 0: not sharded (every item) */
};

/* Parses "I/N" (1 <= I <= N <= 100000). */
int shard_parse(const char *text, struct shard *out, struct sb_error *err);
/* Whether the item at position `item` of the canonical order (problem by problem, then agent, then
 * sample, as the run lists them) belongs to the shard: item mod N == I - 1. Every item is in exactly one
 * shard, each shard holds floor or ceil of items/N, and the answer depends on nothing but the position. */
int shard_holds(const struct shard *s, size_t item);
/* "BASE-shardIofN" into out (cap bytes); BASE unchanged when not sharded. */
void shard_run_id(const struct shard *s, const char *base, char *out, size_t cap);
/* "I/N" into out, "" when not sharded. */
void shard_text(const struct shard *s, char *out, size_t cap);

#endif
