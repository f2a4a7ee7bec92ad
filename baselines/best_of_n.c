/* best_of_n.c - n independent draws of the oneshot prompt per sample, each judged; the sample stands
 * for its best draw. The target speedup does not stop it early (the n draws are the method); the token
 * and wall-time budgets do. */
#include <math.h>

#include "../harness/agents/session.h"

static int best_of_n_run(struct agent_session *s, struct sb_error *err)
{
	struct stage_policy pol = session_policy(s);
	enum stop_reason stop = STOP_NONE;
	int rc = 0;
	pol.max_attempts = session_task(s)->agent->n;
	pol.target_speedup = INFINITY;
	for (;;) {
		struct stage_input in = session_input(s, 0, 0);
		if ((stop = stage_should_stop(&pol, &in)) != STOP_NONE)
			break;
		struct llm_response r;
		const struct attempt *a;
		rc = session_ask(s, "system", "oneshot", NULL, &r, NULL, err);
		if (!rc)
			rc = session_submit_answer(s, STAGE_ONESHOT, r.text, &a, err);
		llm_response_release(&r);
		if (rc)
			return rc;
	}
	return session_finish(s, stop_reason_name(stop), err);
}

const struct agent_kind agent_best_of_n = { "best-of-n", 1, best_of_n_run, 0 };
