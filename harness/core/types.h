/* types.h - the concepts every stage shares, each defined once (DESIGN §2).
 * Stages add their own structs (verdicts, trials, findings) beside the code that owns them. */
#ifndef SB_TYPES_H
#define SB_TYPES_H

#include <stddef.h>

/* One KernelBench-format problem file: level{L}/{ID}_{Name}.py. */
struct problem {
	int level;          /* 1..4 */
	int id;             /* the number before the first underscore */
	char *name;         /* the rest of the file name, without .py */
	char *path;         /* absolute path of the file */
	char sha256[65];    /* hex digest of the file's bytes; caches and results are keyed by it */
};

#endif
