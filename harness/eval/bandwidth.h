/* bandwidth.h - a GPU's peak memory bandwidth for the physical floor (H21): measured once per GPU with a
 * large device-to-device copy in the trusted reference worker, then cached under $STITCHBENCH_CACHE. */
#ifndef SB_BANDWIDTH_H
#define SB_BANDWIDTH_H

#include "proc/proc.h"

/* Bytes copied by the measurement (read once and written once). */
#define BANDWIDTH_COPY_BYTES (1LL << 30)

/* Fills *bytes_per_s from <cache_root>/bandwidth/<key>.json, or measures it with `ref` (a loaded
 * reference worker on `device`) and writes that file. Returns 0, or -1 with `why` saying what failed
 * (the floor is then skipped with that reason, never passed). `cached` says whether it was read. */
int bandwidth_get(struct worker *ref, const char *device, const char *cache_root, double deadline,
		  double *bytes_per_s, int *cached, char *why, size_t why_len);

#endif
