/* parallel.h - one function over numbered blocks on several threads, for the parent's passes over large
 * outputs (reading, hashing, comparing): bound by one core's speed otherwise, and they sit on the
 * critical path of every evaluation (a 64 MiB output takes 110 ms to compare on one core). */
#ifndef SB_PARALLEL_H
#define SB_PARALLEL_H

#include <stddef.h>

/* Calls fn(arg, b) once for every b in [0, nblocks), on up to par_threads() threads, the caller's among
 * them; returns when every call has returned. Which thread runs a block is not fixed, so fn writes only to
 * block b's own state and results are combined by block number afterwards (they are then the same
 * whatever the number of threads). No thread outlives the call, so a later fork() sees one thread. */
void par_for(size_t nblocks, void (*fn)(void *arg, size_t block), void *arg);

/* The threads par_for uses: the CPUs online, at most 8 (the passes are bound by memory bandwidth beyond
 * that), or STITCHBENCH_THREADS when set (1: everything on the calling thread). */
int par_threads(void);

/* How many blocks of `block` bytes cover n bytes (at least 1, so an empty range still gets its call). */
static inline size_t par_blocks(size_t n, size_t block)
{
	return n ? (n + block - 1) / block : 1;
}

#endif
