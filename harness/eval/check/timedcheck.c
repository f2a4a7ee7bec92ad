/* timedcheck.c - every timed call is a checked call (timing/timing.h, struct timed_check): once both sides'
 * blocks of a round are in, call j of the candidate is compared with call j of the reference (the same
 * fresh inputs, the same seed), before the candidate's worker is asked anything again. A candidate that
 * behaves only when it thinks it is checked, or fills its outputs after its call returned, fails here. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../eval_int.h"
#include "check.h"
#include "../timing/timing.h"

#define SEALED (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)

/* The candidate's call was wrong or its outputs unusable: H12 with the policy's severity, and the
 * verdict fails. */
static int timed_wrong(struct eval_ctx *c, long call, const char *why)
{
	char *msg = xstrfmt("timed call %ld returned wrong outputs, although the correctness trials passed: %.300s", call, why);
	int reject = verdict_add_finding(c->v, c->cfg->checks.policy, "H12", "%s", msg)->severity == SEV_REJECT;
	verdict_fail(c->v, reject ? V_REJECTED : V_INCORRECT, "H12: %s", msg);
	free(msg);
	return 1;
}

/* One call's outputs, as sealed memfds from both workers, compared here. */
static int check_memfd(struct eval_ctx *c, long call, struct sb_error *err)
{
	int rfd = worker_take_fd(&c->ref), cfd = worker_take_fd(&c->cand), rc = 0;
	char rpath[64], cpath[64];
	struct outputs_cmp r = { 0 };
	if (rfd < 0) {
		rc = sb_error_set(err, SB_EENV, "the reference worker handed over no outputs for timed call %ld", call);
		goto out;
	}
	if (cfd < 0) {
		rc = timed_wrong(c, call, "its worker handed over no outputs");
		goto out;
	}
	int seals = fcntl(cfd, F_GET_SEALS);
	if (seals < 0 || (seals & SEALED) != SEALED) {
		rc = timed_wrong(c, call, "its outputs came in memory that was not sealed, so they could still change "
			      "after the call returned");
		goto out;
	}
	snprintf(rpath, sizeof(rpath), "/proc/self/fd/%d", rfd);
	snprintf(cpath, sizeof(cpath), "/proc/self/fd/%d", cfd);
	if (outputs_compare(rpath, cpath, c->cfg->eval.tolerance, &r, err)) {
		rc = -1;
		goto out;
	}
	if (!r.readable || !r.pass)
		rc = timed_wrong(c, call, outputs_cmp_detail(&r));
	outputs_cmp_release(&r);
out:
	if (rfd >= 0)
		close(rfd);
	if (cfd >= 0)
		close(cfd);
	return rc;
}

/* One call's outputs, both sides' exported (on a GPU, device memory), taken by the reference worker and
 * compared there. */
static int check_shared(struct eval_ctx *c, long call, int j, json_t *ref_reply, json_t *cand_reply, struct sb_error *err)
{
	char rkey[64], ckey[64], why[400];
	snprintf(rkey, sizeof(rkey), "timed-ref/%d", j);
	snprintf(ckey, sizeof(ckey), "timed-cand/%d", j);
	int rc = xchg_take_from(c, &c->ref, json_array_get(json_object_get(ref_reply, "shared"), (size_t)j), rkey, why,
				sizeof(why), err);
	if (rc > 0) /* the trusted worker's own export: a harness failure */
		rc = sb_error_set(err, SB_EENV, "the reference's timed call %ld: %s", call, why);
	if (rc == 0 && (rc = xchg_take(c, json_array_get(json_object_get(cand_reply, "shared"), (size_t)j), ckey, why,
				       sizeof(why), err)) > 0)
		rc = timed_wrong(c, call, why);
	if (rc == 0) {
		struct outputs_cmp r;
		if ((rc = xchg_compare(c, rkey, ckey, &r, err)) == 0) {
			if (!r.readable || !r.pass)
				rc = timed_wrong(c, call, outputs_cmp_detail(&r));
			outputs_cmp_release(&r);
		}
	}
	xchg_drop(c, rkey);
	xchg_drop(c, ckey);
	return rc;
}

static int check_round(void *arg, long first_call, int m, json_t *ref_reply, json_t *cand_reply, struct sb_error *err)
{
	struct eval_ctx *c = arg;
	int rc = 0;
	for (int j = 0; j < m && rc == 0; j++)
		rc = xchg_shared(c) ? check_shared(c, first_call + j, j, ref_reply, cand_reply, err)
				    : check_memfd(c, first_call + j, err);
	return rc;
}

void eval_timed_check(struct eval_ctx *c, struct timed_check *chk)
{
	*chk = (struct timed_check){ .round = check_round, .arg = c,
				     .keep = xchg_shared(c) ? TIMED_KEEP_SHARE : TIMED_KEEP_MEMFD };
}
