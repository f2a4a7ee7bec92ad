/* session_int.h - what the session's files share and agents never see: the session struct and the
 * helpers that write its files. */
#ifndef SB_SESSION_INT_H
#define SB_SESSION_INT_H

#include "boundhints.h"
#include "session.h"

struct agent_session {
	struct run_shared *sh;
	struct agent_task t;
	struct prompt_dirs dirs;
	char *harness_prompts, *baseline_prompts;
	struct tvars base;               /* the session's own placeholders */
	int have_base;
	struct bound_hints hints;        /* bound-hints.md, loaded by the first attempt or profile */
	int have_hints;
	struct attempt *att;
	struct attempt_summary *sums;    /* att[i].sum, contiguous, as the stage machine takes them */
	size_t natt;
	int ncalls;
	long tokens;
	double seconds;
	int best;                        /* index of the best attempt, -1 = none */
	struct strvec notes;
	int nplans;
	enum llm_errkind llm_failed;     /* the kind of the last failed call */
	int eval_failed;                 /* the code of the last evaluation that could not be carried out */
	enum llm_errkind last_kind;      /* how the last call ended (LLM_ERR_TRUNCATED: cut at the limit) */
	long last_completion_tokens;
	char stop_reason[32];            /* set by session_finish */
};

/* Writes j to path atomically (fs_write_atomic), pretty-printed in key order. */
int session_write_json(const char *path, json_t *j, struct sb_error *err);

#endif
