/* session.h - one sample's trajectory (agent x problem x sample) and the run services behind it: LLM
 * calls that are persisted before use and served from the run's own transcripts on resume, candidates
 * judged one at a time per device and stored once, budgets, the best solution (docs/agents.md). */
#ifndef SB_SESSION_H
#define SB_SESSION_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "../core/config.h"
#include "../core/types.h"
#include "../eval/evaluate.h"
#include "../sched/sched.h"
#include "../llm/llm.h"
#include "agent.h"
#include "prompt.h"
#include "stage.h"

struct store;
struct judge;
struct bound_hints;

/* The bits of run_shared.stop: why the run stops (any bit: end at the next call or attempt). */
#define RUN_STOP_SIGNAL 1   /* Ctrl-C or SIGTERM */
#define RUN_STOP_ENDPOINT 2 /* an LLM endpoint has nothing listening (llm_response.endpoint_down) */
#define RUN_STOP_FATAL 4    /* the harness failed in a way every other sample would too (run.c) */

/* What every session of a run shares; filled by the run (harness/run/run.c). */
struct run_shared {
	const char *run_dir;
	const char *home;
	const struct config *cfg;          /* the run's configuration */
	const struct config *cfg_reference; /* torch-eager/torch-compile: static checks off, every id "flag" */
	const struct eval_env *env;
	const struct hw_context *hw;
	const struct judge *judge;         /* the rubric judge (checks.rubric); its client is NULL when off */
	struct store *store;               /* guarded by store_mu */
	pthread_mutex_t store_mu;
	struct sched *sched;               /* the evaluation queue: builds ahead, one evaluation at a time per device
	                                      slot (run --gpus: one per GPU); guarded by sched_mu */
	pthread_mutex_t sched_mu;
	atomic_int *stop;                  /* RUN_STOP_* bits, set by the signal thread and by a session that
	                                      finds its endpoint down: end at the next call or attempt */
	atomic_int llm_in_flight;
	/* Called after each attempt (stored or read back) and each finished sample; may be NULL. */
	void (*on_attempt)(void *arg, const struct agent_session *s, size_t attempt);
	void *on_arg;
};

/* One attempt of the sample, as the session keeps it. */
struct attempt {
	int index;
	enum agent_stage stage;
	char status[24];
	struct attempt_summary sum;
	json_t *verdict;                   /* docs/verdict.md */
	char *code;                        /* the candidate's text; NULL for a format_error without code */
	char *path;                        /* the candidate file (or the raw answer of a format_error) */
	char *feedback;                    /* feedback_from_verdict() for the Coder */
	int resumed;                       /* read back from the store, not evaluated in this process */
};

struct agent_task {
	const struct agent_cfg *agent;
	const struct agent_kind *kind;
	struct llm_client *llm;            /* NULL for agents without an LLM */
	const char *model;                 /* the agent's model name (NULL without one) */
	const struct problem *problem;
	char ref[16];                      /* "L1/19" */
	int sample;
};

struct agent_session;

struct agent_session *session_new(struct run_shared *sh, const struct agent_task *t);
void session_free(struct agent_session *s);

const struct agent_task *session_task(const struct agent_session *s);
const struct run_shared *session_shared(const struct agent_session *s);
/* The agent's budget and replan settings as the stage machine takes them. */
struct stage_policy session_policy(const struct agent_session *s);
/* The history and spending so far (since and replans as the agent passes them). */
struct stage_input session_input(const struct agent_session *s, size_t since, int replans);
const struct attempt *session_attempts(const struct agent_session *s, size_t *n);
const struct attempt *session_last_with_code(const struct agent_session *s);
int session_calls(const struct agent_session *s);
long session_tokens(const struct agent_session *s);

/* Renders template `name` with the session's own placeholders (problem_source, problem, hardware,
 * constraints, the hw_context_vars, target_speedup, ...) plus `extra`, which wins on a name clash. */
int session_render(struct agent_session *s, const char *name, const struct tvars *extra, struct strbuf *out,
		   struct sb_error *err);

/* The hints by bound class (template bound-hints, the agent's prompts_dir first) that the Verifier's
 * feedback and the reference profile end with; loaded once per sample. SB_EINPUT for a template that is
 * missing or malformed. */
int session_bound_hints(struct agent_session *s, const struct bound_hints **out, struct sb_error *err);

/* One LLM call, numbered in order within the sample. The rendered messages are stored first
 * (prompts/...). A call whose transcript this run already holds is served from it and not sent again,
 * unless it recorded no answer (http, timeout, connect, bad_json, missing_field, transcript errors),
 * which is asked again. Returns 0 with an answer to read (its kind may be empty or truncated),
 * AGENT_ESTOPPED, or the LLM's error code with out->kind saying which. */
int session_chat(struct agent_session *s, const struct llm_message *msgs, size_t n, struct llm_response *out,
		 struct sb_error *err);
/* The kind of the LLM failure that made session_chat fail last; LLM_OK when none did. */
enum llm_errkind session_llm_failure(const struct agent_session *s);
/* The code of the evaluation that could not be carried out last (0 when none): SB_EINPUT when the
 * problem's reference failed (evaluate() fails with it only then: the reference worker answered that
 * the reference raised or cannot repeat its outputs), anything else when the machine did. */
int session_eval_failure(const struct agent_session *s);
/* The common call: system template `system` and user template `name` (with extra) rendered, asked with
 * session_chat. user, when not NULL, receives the rendered user prompt (for follow-up turns). */
int session_ask(struct agent_session *s, const char *system, const char *name, const struct tvars *extra,
		struct llm_response *out, struct strbuf *user, struct sb_error *err);
/* "attempt 0 (draft): compile_error - message" per attempt, one line each; "none yet" without any. */
void session_history_text(const struct agent_session *s, struct strbuf *out);
/* Whether an LLM outcome leaves a sample unfinished (asked again on resume) rather than ended. */
int session_llm_kind_retryable(enum llm_errkind k);

/* Submits an answer as the next attempt: the candidate is extracted (extract_code); none is a
 * format_error attempt, whose message says to raise the token limit when the session's last call was cut
 * there (finish_reason=length). The verdict is read back when the store holds this attempt already, else the
 * candidate is judged (prebuilt outside the device lock on a GPU) and stored with its stage. */
int session_submit_answer(struct agent_session *s, enum agent_stage stage, const char *answer,
			  const struct attempt **out, struct sb_error *err);
/* The same for code written by the harness (torch-eager, torch-compile) or a file (samples). */
int session_submit_code(struct agent_session *s, enum agent_stage stage, const char *code,
			const struct attempt **out, struct sb_error *err);
/* A format_error attempt without code: message says why, text (may be NULL) is kept as the evidence. */
int session_submit_failure(struct agent_session *s, enum agent_stage stage, const char *message, const char *text,
			   const struct attempt **out, struct sb_error *err);

/* Documentation retrieval (agents[].docs, docs/agents.md): opens the agent's index, building it when the
 * cache has none for the folder's content; 0 at once without docs. Called when the sample starts, so a
 * missing folder stops the run before any call is paid for. */
int session_docs_open(struct agent_session *s, struct sb_error *err);
/* Sets the placeholder "docs": for a repair stage of an agent with docs, the passages that best match
 * the last attempt's failure within agents[].docs_tokens, recorded in samples/.../docs-call-NNNN.json
 * (NNNN: the call the prompt goes to) and in a note; "" otherwise. */
int session_docs_var(struct agent_session *s, enum agent_stage stage, struct tvars *v, struct sb_error *err);

/* Notes for summary.json and the log ("replan 1 (wrong_results)"); plans are kept as plan-N.json. */
__attribute__((format(printf, 2, 3)))
void session_note(struct agent_session *s, const char *fmt, ...);
void session_keep_plan(struct agent_session *s, json_t *plan);
/* Ends the sample: writes samples/.../summary.json with the stop reason. */
int session_finish(struct agent_session *s, const char *stop_reason, struct sb_error *err);
/* The stop reason session_finish recorded; "" before. */
const char *session_stop_reason(const struct agent_session *s);
/* Where a file of this sample goes: <run>/<area>/<agent>/<problem>/s<sample>/<file>. */
char *session_path(const struct agent_session *s, const char *area, const char *file);

#endif
