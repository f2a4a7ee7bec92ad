/* eval_int.h - what evaluate.c shares with the other files of the evaluation (rtchecks.c) and nothing
 * else needs: asking the candidate's worker, with every failure turned into the verdict's status. */
#ifndef SB_EVAL_INT_H
#define SB_EVAL_INT_H

#include <jansson.h>

#include "verdict.h"
#include "worker_client.h"

/* Sends req (stolen) to the candidate; on a fault, a timeout or an error reply fills the verdict (status,
 * message, detail) and returns -1; else 0 with *reply. `stage` says what was going on ("running trial 2"). */
int eval_cand_ask(struct worker *w, json_t *req, json_t **reply, double deadline, struct verdict *v, const char *stage,
		  int timeout_s);

#endif
