/* refine.c - one model in one conversation: the oneshot prompt, then after each verdict a user turn
 * with the Verifier's feedback (the same feedback StitchCUDA's Coder gets), no planner and no stages.
 * It stops at the target speedup or the budget, like stitchcuda. */
#include "../harness/agents/session.h"

static int refine_run(struct agent_session *s, struct sb_error *err)
{
	struct stage_policy pol = session_policy(s);
	struct strvec turns = STRVEC_INIT;    /* system, user, assistant, user, assistant, ... */
	struct strbuf sys = STRBUF_INIT, user = STRBUF_INIT;
	struct llm_message *msgs = NULL;
	enum stop_reason stop = STOP_NONE;
	int rc = session_render(s, "system", NULL, &sys, err);
	if (!rc)
		rc = session_render(s, "oneshot", NULL, &user, err);
	if (!rc) {
		strvec_push(&turns, sys.buf);
		strvec_push(&turns, user.buf);
	}
	while (!rc) {
		struct stage_input in = session_input(s, 0, 0);
		if ((stop = stage_should_stop(&pol, &in)) != STOP_NONE)
			break;
		if (in.n > 0) {
			size_t n;
			const struct attempt *last = &session_attempts(s, &n)[n - 1];
			struct tvars v = TVARS_INIT;
			strbuf_reset(&user);
			tvars_set(&v, "feedback", last->feedback);
			tvars_setf(&v, "attempt", "%d", last->index);
			rc = session_render(s, "refine", &v, &user, err);
			tvars_release(&v);
			if (rc)
				break;
			strvec_push(&turns, user.buf);
		}
		msgs = xrealloc(msgs, turns.nr * sizeof(*msgs));
		for (size_t i = 0; i < turns.nr; i++)
			msgs[i] = (struct llm_message){ i == 0 ? "system" : i % 2 ? "user" : "assistant", turns.v[i] };
		struct llm_response r;
		const struct attempt *a;
		rc = session_chat(s, msgs, turns.nr, &r, err);
		if (!rc) {
			strvec_push(&turns, r.text ? r.text : "");
			rc = session_submit_answer(s, in.n ? STAGE_REFINE : STAGE_ONESHOT, r.text, &a, err);
		}
		llm_response_release(&r);
	}
	free(msgs);
	strvec_clear(&turns);
	strbuf_release(&sys);
	strbuf_release(&user);
	return rc ? rc : session_finish(s, stop_reason_name(stop), err);
}

const struct agent_kind agent_refine = { "refine", 1, refine_run, 0 };
