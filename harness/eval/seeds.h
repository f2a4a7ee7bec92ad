/* seeds.h - the seeds of one evaluation's input draws. They come from a 128-bit secret the parent draws
 * from the kernel's CSPRNG for every evaluation (or takes from an earlier verdict, to replay it), so no
 * candidate can compute them ahead: a worker learns a seed only in the request that makes it draw. */
#ifndef SB_SEEDS_H
#define SB_SEEDS_H

#include <stdint.h>

#include "../core/error.h"

/* What a seed is for; each use is its own stream under the secret, so no two draws share a seed. */
enum seed_use {
	SEED_TRIAL,        /* correctness trial k */
	SEED_ROTATION,     /* the rotation check's two input sets */
	SEED_TIMING_SET,   /* the timing slots' first draw */
	SEED_TIMING_CALL,  /* timed call k: its fresh inputs and forward's own random draws */
	SEED_SHAPES,       /* H18's call at other shapes */
	SEED_PROFILE,      /* the profiled calls */
	SEED_FACTOR,       /* the process factor's timed calls */
	SEED_ROBUST,       /* robust trial k: shifted inputs, after the correctness trials passed */
};

struct eval_seeds {
	uint8_t secret[16];
	int replayed;      /* taken from an earlier verdict (eval --seeds), not drawn */
};

/* A fresh secret from getrandom(2). */
int eval_seeds_draw(struct eval_seeds *s, struct sb_error *err);
/* The secret written as 32 hex digits; 0, or SB_EINPUT when text is not that. */
int eval_seeds_parse(struct eval_seeds *s, const char *text, struct sb_error *err);
void eval_seeds_hex(const struct eval_seeds *s, char out[33]);
/* Seed k of a use: the first 31 bits of SHA-256(secret, use, k). Knowing any number of them tells
 * nothing about the others. */
uint32_t eval_seed(const struct eval_seeds *s, enum seed_use use, uint32_t k);

#endif
