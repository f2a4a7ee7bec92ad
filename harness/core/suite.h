/* suite.h - loading a problem suite (the bundled one or an upstream KernelBench checkout)
 * and selecting problems from it with selectors such as L1/1-10 or L3/ *. */
#ifndef SB_SUITE_H
#define SB_SUITE_H

#include <stddef.h>

#include "error.h"
#include "types.h"

/* A file that looked like a problem but could not be used, and why. */
struct suite_skip {
	char *path;
	char *reason;
};

struct suite {
	char *root;                 /* the folder holding level1/ ... level4/ */
	struct problem *problems;   /* sorted by level, then id */
	size_t nproblems;
	struct suite_skip *skipped;
	size_t nskipped;
};

/* `root` NULL loads the bundled suite under `home`. A root may be a suite folder (holding level1/)
 * or a KernelBench checkout (holding KernelBench/level1/). Malformed files are skipped, not fatal. */
int suite_load(struct suite *s, const char *home, const char *root, struct sb_error *err);
void suite_release(struct suite *s);

/* Resolves selectors ("L1/3", "L1/1-10", "L3/" "*", "L2") against the levels enabled in levels[4].
 * No selectors: every problem of those levels. Fills a malloc'd array of pointers into the suite. */
int suite_select(const struct suite *s, const int levels[4], char *const *selectors, size_t nselectors,
		 const struct problem ***out, size_t *nout, struct sb_error *err);

const struct problem *suite_find(const struct suite *s, int level, int id);
/* Parses "L1/19" (also "l1/19", "1/19"); returns 0 or SB_EINPUT. */
int problem_ref_parse(const char *ref, int *level, int *id, struct sb_error *err);

/* KernelBench's name for a generated candidate, the file of (level, id, sample) in a generations
 * folder: level_1_problem_19_sample_0_kernel.py. */
char *suite_sample_name(int level, int id, int sample);
/* Returns 1 and fills the numbers when name (a base name, no folder) is such a file's, 0 otherwise. */
int suite_sample_name_parse(const char *name, int *level, int *id, int *sample);

#endif
