/* stitchcuda.c - the StitchCUDA agent (DESIGN §8): a Planner writes a JSON plan, a Coder drafts and
 * revises in stages with the Verifier's feedback, a Replanner replaces the plan when the attempts stall.
 * Every decision comes from stage_decide() over the history, so a resumed sample retraces its path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "refprofile.h"
#include "session.h"

/* Asks for a plan with template `tmpl`; an answer that is not a valid plan gets one re-ask quoting the
 * parse error. *plan is NULL (and why says why) when the second answer is not one either. */
static int ask_plan(struct agent_session *s, const char *tmpl, const struct tvars *vars, json_t **plan,
		    struct strbuf *why, struct strbuf *answer, struct sb_error *err)
{
	struct llm_response r;
	struct strbuf user = STRBUF_INIT, sys = STRBUF_INIT, reask = STRBUF_INIT;
	*plan = NULL;
	int rc = session_ask(s, "planner-system", tmpl, vars, &r, &user, err);
	if (!rc) {
		*plan = extract_plan(r.text, why);
		strbuf_addstr(answer, r.text ? r.text : "");
	}
	if (!rc && !*plan) {
		session_note(s, "plan (call %d): not a valid plan: %s; asked again", session_calls(s) - 1, why->buf);
		struct tvars v = TVARS_INIT;
		tvars_set(&v, "error", why->buf);
		rc = session_render(s, "planner-system", vars, &sys, err);
		if (!rc)
			rc = session_render(s, "plan-reask", &v, &reask, err);
		tvars_release(&v);
		if (!rc) {
			const char *prev = r.text ? r.text : "";
			struct llm_message msgs[] = { { "system", sys.buf }, { "user", user.buf }, { "assistant", prev },
						      { "user", reask.buf } };
			struct llm_response r2;
			rc = session_chat(s, msgs, 4, &r2, err);
			if (!rc) {
				strbuf_reset(why);
				strbuf_reset(answer);
				strbuf_addstr(answer, r2.text ? r2.text : "");
				*plan = extract_plan(r2.text, why);
			}
			llm_response_release(&r2);
		}
	}
	llm_response_release(&r);
	strbuf_release(&user);
	strbuf_release(&sys);
	strbuf_release(&reask);
	return rc;
}

static void last_feedback(struct agent_session *s, struct strbuf *out)
{
	size_t n;
	const struct attempt *a = session_attempts(s, &n);
	strbuf_addstr(out, n ? a[n - 1].feedback : "No attempt has been judged yet.\n");
}

/* The placeholders every Coder and Replanner template may use. */
static void coder_vars(struct agent_session *s, json_t *plan, const char *profile, struct tvars *v)
{
	struct strbuf b = STRBUF_INIT;
	plan_render(plan, &b);
	tvars_set(v, "plan", b.buf);
	strbuf_reset(&b);
	const struct attempt *prev = session_last_with_code(s);
	tvars_set(v, "previous_code", prev ? prev->code : "(no code yet)");
	last_feedback(s, &b);
	tvars_set(v, "feedback", b.buf);
	strbuf_reset(&b);
	session_history_text(s, &b);
	tvars_set(v, "history", b.buf);
	tvars_set(v, "profile", profile);
	strbuf_release(&b);
}

static int replan(struct agent_session *s, json_t **plan, const char *profile, enum replan_reason why_replan, int n,
		  size_t after, struct sb_error *err)
{
	static const char *const reasons[] = {
		[REPLAN_COMPILE] = "the last attempts did not compile",
		[REPLAN_WRONG] = "the last attempts compiled but gave wrong results, crashed or were rejected",
		[REPLAN_STAGNANT] = "the last correct attempts are within a few percent of each other, below the target",
	};
	struct tvars v = TVARS_INIT;
	struct strbuf why = STRBUF_INIT, answer = STRBUF_INIT;
	json_t *fresh;
	coder_vars(s, *plan, profile, &v);
	tvars_set(&v, "reason", reasons[why_replan]);
	int rc = ask_plan(s, "replanner", &v, &fresh, &why, &answer, err);
	if (!rc && fresh) {
		json_decref(*plan);
		*plan = fresh;
		session_keep_plan(s, fresh);
		session_note(s, "replan %d (%s) after %zu attempts", n, replan_reason_name(why_replan), after);
	} else if (!rc) {
		session_note(s, "replan %d (%s) failed: %s; the previous plan stays", n, replan_reason_name(why_replan),
			     why.buf);
	}
	tvars_release(&v);
	strbuf_release(&why);
	strbuf_release(&answer);
	return rc;
}

static int stitchcuda_run(struct agent_session *s, struct sb_error *err)
{
	struct stage_policy pol = session_policy(s);
	struct tvars v = TVARS_INIT;
	struct strbuf why = STRBUF_INIT, answer = STRBUF_INIT, profile = STRBUF_INIT;
	json_t *plan = NULL;
	const struct attempt *a;
	pol.replan = 1;
	/* a documentation folder that cannot be indexed stops the run before the Planner is paid for */
	int rc = session_docs_open(s, err);
	if (rc)
		return rc;
	/* the reference's kernels on this GPU, for the Planner and any Replanner (cached per problem) */
	const struct bound_hints *hints;
	if ((rc = session_bound_hints(s, &hints, err)))
		return rc;
	refprofile_for_planner(session_shared(s), session_task(s)->problem, hints, &profile);
	tvars_set(&v, "profile", profile.buf);
	rc = ask_plan(s, "planner", &v, &plan, &why, &answer, err);
	tvars_release(&v);
	if (!rc && !plan) {
		/* a recorded failure: an attempt, so the sample counts (as not compiled) in every metric */
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "the planner's answer was not a valid JSON plan after one re-ask: %s", why.buf);
		rc = session_submit_failure(s, STAGE_PLAN, msg.buf, answer.buf, &a, err);
		strbuf_release(&msg);
		if (!rc)
			rc = session_finish(s, "plan_failed", err);
	}
	strbuf_release(&why);
	strbuf_release(&answer);
	if (rc || !plan) {
		strbuf_release(&profile);
		return rc;
	}
	session_keep_plan(s, plan);

	size_t since = 0;
	int replans = 0;
	const char *stop = "attempts";
	for (;;) {
		struct stage_input in = session_input(s, since, replans);
		struct stage_decision d = stage_decide(&pol, &in);
		if (d.action == ACT_STOP) {
			stop = stop_reason_name(d.stop);
			break;
		}
		if (d.action == ACT_REPLAN) {
			replans++;
			if ((rc = replan(s, &plan, profile.buf, d.replan, replans, in.n, err)))
				break;
			since = in.n;
			continue;
		}
		char tmpl[48];
		snprintf(tmpl, sizeof(tmpl), "coder-%s", stage_name(d.stage));
		struct llm_response r;
		coder_vars(s, plan, profile.buf, &v);
		rc = session_docs_var(s, d.stage, &v, err);
		if (!rc)
			rc = session_ask(s, "system", tmpl, &v, &r, NULL, err);
		else
			memset(&r, 0, sizeof(r));
		tvars_release(&v);
		if (!rc)
			rc = session_submit_answer(s, d.stage, r.text, &a, err);
		llm_response_release(&r);
		if (rc)
			break;
	}
	json_decref(plan);
	strbuf_release(&profile);
	return rc ? rc : session_finish(s, stop, err);
}

const struct agent_kind agent_stitchcuda = { "stitchcuda", 1, stitchcuda_run, 0 };
