/* oneshot.c - the KernelBench-style baseline: one prompt (problem, hardware, constraints), one answer,
 * one attempt. No feedback ever reaches the model. */
#include "../harness/agents/session.h"

static int oneshot_run(struct agent_session *s, struct sb_error *err)
{
	struct llm_response r;
	const struct attempt *a;
	int rc = session_ask(s, "system", "oneshot", NULL, &r, NULL, err);
	if (!rc)
		rc = session_submit_answer(s, STAGE_ONESHOT, r.text, &a, err);
	llm_response_release(&r);
	return rc ? rc : session_finish(s, "attempts", err);
}

const struct agent_kind agent_oneshot = { "oneshot", 1, oneshot_run, 0 };
