/* auditcache.h - the cache `stitchbench audit` writes (one file per problem file's sha256) and every
 * verdict reads: the problem's own flaws go into the verdict whoever judged it. Read here, in the
 * evaluator, so that judging a candidate needs nothing of the audit's runner. */
#ifndef SB_AUDITCACHE_H
#define SB_AUDITCACHE_H

#include <jansson.h>

#include "verdict.h"

#define AUDIT_FORMAT 1         /* of the cache files under $STITCHBENCH_CACHE/audit */

/* $cache_root/audit/<sha256>.json */
char *audit_cache_path(const char *cache_root, const char *sha256);
/* The cache entry of a problem file: {"format", "problem", "sha256", "device", "torch", "findings", ...}, or
 * NULL when it was never audited (or by another format). */
json_t *audit_cache_read(const char *cache_root, const char *sha256);
/* Marks a verdict whose problem file (v->problem_sha256) `stitchbench audit` has looked at: its flaws go
 * into v->audit ({findings, device, torch}); a file never audited leaves it NULL. */
void audit_attach(const char *cache_root, struct verdict *v);

#endif
