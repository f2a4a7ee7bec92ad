/* audit.h - `stitchbench audit` (DESIGN §7, rows marked D; docs/audit.md): flaws of a problem itself,
 * found by running its reference on several seeds and on signed inputs. A flawed problem lets a candidate
 * pass without doing the work, so verdicts and reports mark it. */
#ifndef SB_AUDIT_H
#define SB_AUDIT_H

#include <jansson.h>

#include "../checks/finding.h"
#include "../checks/rules_audit.h"
#include "../core/config.h"
#include "../core/types.h"
#include "../eval/auditcache.h"
#include "../eval/check/check.h"
#include "../eval/evaluate.h"

#define AUDIT_SEEDS 3          /* seeds the reference runs on, besides the signed inputs */

struct audit_report {
	char problem[16];           /* "L1/2" */
	char name[128];
	char sha256[65];
	char device[24], torch[32];
	struct findings findings;   /* ids "H15", "H16", "H17", AUDIT_NONDETERMINISTIC, AUDIT_INTEGER_INPUTS */
	char *failed;               /* the reference could not be audited: why (then no findings) */
	int cached;                 /* read from the cache, not run now */
};
void audit_report_release(struct audit_report *r);
/* {"problem", "name", "sha256", "device", "torch", "findings": [{"id", "message"}], "failed"} */
json_t *audit_report_json(const struct audit_report *r);

/* Audits `p` with a trusted reference worker on e->device (or reads the cache when `use_cache` and it
 * has an entry for this file); writes the cache. Returns 0 (see r->failed) or non-zero on a harness error. */
int audit_problem(const struct eval_env *e, const struct config *cfg, const struct problem *p, int use_cache,
		  struct audit_report *r, struct sb_error *err);

/* ---------- the measures (audit_rules.c) on the workers' output files, for checks/rules_audit.c ---------- */

/* H15: one constant tensor (the elementwise midrange of the seeds' outputs) is within tolerance of every
 * seed's output. outs[k] is the same output of seed k. */
int audit_rule_constant(const struct st_tensor *const *outs, size_t n, struct tolerance tol);
/* H16: an all-zero tensor is within tolerance of every seed's output. */
int audit_rule_zero(const struct st_tensor *const *outs, size_t n, struct tolerance tol);
/* H17 and the nondeterminism checks: same shape and dtype, and every element within tolerance (tol zero
 * for "identical"). NaN never matches. */
int audit_rule_same(const struct st_tensor *a, const struct st_tensor *b, struct tolerance tol);

#endif
