/* refworker.h - a trusted reference worker of its own, outside any evaluation (baseline timings, the
 * audit): a fresh work folder under the cache, the reference's environment, requests that fail loudly. */
#ifndef SB_REFWORKER_H
#define SB_REFWORKER_H

#include "evaluate.h"
#include "proc/proc.h"

struct refworker {
	struct worker w;
	char *dir;                 /* <cache>/work/<tag>-<pid>-XXXXXX, removed by refworker_stop */
	struct strvec env;
};

/* Starts the worker in a fresh folder; SB_EENV when the folder or the process cannot be made. */
int refworker_start(struct refworker *r, const struct eval_env *e, const char *tag, struct sb_error *err);
/* Sends req (stolen); on success *reply is set. A dead worker is SB_EENV, an error reply SB_EINPUT
 * ("the reference failed while <stage>: <message>"). */
int refworker_ask(struct refworker *r, json_t *req, json_t **reply, const char *stage, struct sb_error *err);
/* Stops the worker, removes its folder; safe after a failed start. */
void refworker_stop(struct refworker *r);

#endif
