/* session.c - the services of one sample: prompts rendered and stored, LLM calls persisted before use
 * (and on resume served from this run's transcripts), attempts judged once and stored, the best kept.
 * Everything an agent decides is a function of what passes through here, so a resumed sample retraces
 * its path exactly and continues where the interrupted one stopped. */
#include "session.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "../llm/transcript.h"
#include "../store/store.h"
#include "extract.h"
#include "feedback.h"
#include "judge.h"
#include "session_int.h"


struct agent_session *session_new(struct run_shared *sh, const struct agent_task *t)
{
	struct agent_session *s = xcalloc(1, sizeof(*s));
	s->sh = sh;
	s->t = *t;
	s->best = -1;
	s->harness_prompts = xstrfmt("%s/harness/prompts", sh->home);
	s->baseline_prompts = xstrfmt("%s/baselines/prompts", sh->home);
	prompt_dirs_init(&s->dirs, t->agent->prompts_dir, s->harness_prompts, s->baseline_prompts);
	return s;
}

void session_free(struct agent_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->natt; i++) {
		json_decref(s->att[i].verdict);
		free(s->att[i].code);
		free(s->att[i].path);
		free(s->att[i].feedback);
	}
	free(s->att);
	free(s->sums);
	tvars_release(&s->base);
	bound_hints_release(&s->hints);
	strvec_clear(&s->notes);
	free(s->harness_prompts);
	free(s->baseline_prompts);
	free(s);
}

const struct agent_task *session_task(const struct agent_session *s) { return &s->t; }
const struct run_shared *session_shared(const struct agent_session *s) { return s->sh; }
int session_calls(const struct agent_session *s) { return s->ncalls; }
long session_tokens(const struct agent_session *s) { return s->tokens; }

const struct attempt *session_attempts(const struct agent_session *s, size_t *n)
{
	*n = s->natt;
	return s->att;
}

const struct attempt *session_last_with_code(const struct agent_session *s)
{
	for (size_t i = s->natt; i-- > 0;)
		if (s->att[i].code)
			return &s->att[i];
	return NULL;
}

struct stage_policy session_policy(const struct agent_session *s)
{
	const struct agent_cfg *a = s->t.agent;
	struct stage_policy p = {
		.max_attempts = a->max_attempts, .target_speedup = a->target_speedup, .max_tokens = a->max_tokens_total,
		.max_wall_s = a->max_wall_s, .replan = 0, .max_replans = a->max_replans,
		.replan_compile_failures = a->replan_compile_failures, .replan_wrong_results = a->replan_wrong_results,
		.replan_stagnant = a->replan_stagnant_attempts, .stagnation_pct = a->stagnation_pct,
	};
	return p;
}

struct stage_input session_input(const struct agent_session *s, size_t since, int replans)
{
	struct stage_input in = { s->sums, s->natt, since, replans, s->tokens, s->seconds };
	return in;
}

char *session_path(const struct agent_session *s, const char *area, const char *file)
{
	/* transcript_path reduces agent and problem names to safe folder names; every area shares them */
	char *root = xstrfmt("%s/%s", s->sh->run_dir, area);
	char *p = transcript_path(root, s->t.agent->name, s->t.ref, s->t.sample, 0);
	char *dir = dirname(p);
	char *out = xstrfmt("%s/%s", dir, file);
	free(p);
	free(root);
	return out;
}

void session_note(struct agent_session *s, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push(&s->notes, sb.buf);
	strbuf_release(&sb);
}

int session_write_json(const char *path, json_t *j, struct sb_error *err)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	int rc = text ? fs_write_atomic(path, text, strlen(text)) : -EINVAL;
	free(text);
	if (rc)
		return sb_error_set(err, SB_EIO, "cannot write %s: %s", path, strerror(-rc));
	return 0;
}

void session_keep_plan(struct agent_session *s, json_t *plan)
{
	char name[32];
	snprintf(name, sizeof(name), "plan-%d.json", s->nplans++);
	char *path = session_path(s, "samples", name);
	struct sb_error err;
	if (session_write_json(path, plan, &err))
		session_note(s, "%s", err.msg);
	free(path);
}

/* ---------- prompts ---------- */

static int base_vars(struct agent_session *s, struct sb_error *err)
{
	if (s->have_base)
		return 0;
	const struct hw_context *hw = s->sh->hw;
	struct strbuf src = STRBUF_INIT, block = STRBUF_INIT;
	int rc = strbuf_read_file(&src, s->t.problem->path, 0);
	if (rc) {
		strbuf_release(&src);
		return sb_error_set(err, SB_EIO, "%s: %s", s->t.problem->path, strerror(-rc));
	}
	tvars_set(&s->base, "problem_source", src.buf);
	tvars_setf(&s->base, "problem", "%s (%s)", s->t.ref, s->t.problem->name);
	tvars_setf(&s->base, "target_speedup", "%.2f", s->t.agent->target_speedup);
	hw_context_vars(hw, &s->base);
	rc = prompt_render_file(&s->dirs, hw->gpu ? "hardware-cuda" : "hardware-cpu", &s->base, &block, err);
	if (!rc) {
		tvars_set(&s->base, "hardware", block.buf);
		strbuf_reset(&block);
		rc = prompt_render_file(&s->dirs, hw->gpu ? "constraints-cuda" : "constraints-cpu", &s->base, &block, err);
	}
	if (!rc)
		tvars_set(&s->base, "constraints", block.buf);
	strbuf_release(&src);
	strbuf_release(&block);
	s->have_base = !rc;
	return rc;
}

int session_render(struct agent_session *s, const char *name, const struct tvars *extra, struct strbuf *out,
		   struct sb_error *err)
{
	int rc = base_vars(s, err);
	if (rc)
		return rc;
	struct tvars all = TVARS_INIT;
	for (size_t i = 0; i < s->base.names.nr; i++)
		tvars_set(&all, s->base.names.v[i], s->base.values.v[i]);
	for (size_t i = 0; extra && i < extra->names.nr; i++)
		tvars_set(&all, extra->names.v[i], extra->values.v[i]);
	rc = prompt_render_file(&s->dirs, name, &all, out, err);
	tvars_release(&all);
	return rc;
}

int session_bound_hints(struct agent_session *s, const struct bound_hints **out, struct sb_error *err)
{
	if (!s->have_hints) {
		int rc = bound_hints_load(&s->hints, &s->dirs, err);
		if (rc)
			return rc;
		s->have_hints = 1;
	}
	*out = &s->hints;
	return 0;
}

/* ---------- LLM calls ---------- */

enum llm_errkind session_llm_failure(const struct agent_session *s)
{
	return s->llm_failed;
}

int session_eval_failure(const struct agent_session *s)
{
	return s->eval_failed;
}

int session_llm_kind_retryable(enum llm_errkind k)
{
	return k == LLM_ERR_HTTP || k == LLM_ERR_TIMEOUT || k == LLM_ERR_CONNECT || k == LLM_ERR_BAD_JSON ||
	       k == LLM_ERR_MISSING_FIELD || k == LLM_ERR_TRANSCRIPT;
}

static void store_prompt(struct agent_session *s, int call, const struct llm_message *msgs, size_t n)
{
	char name[32];
	struct strbuf md = STRBUF_INIT;
	snprintf(name, sizeof(name), "call-%04d.md", call);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&md, "%s<!-- %s -->\n%s\n", i ? "\n" : "", msgs[i].role, msgs[i].content);
	char *path = session_path(s, "prompts", name);
	int rc = fs_write_atomic(path, md.buf, md.len);
	if (rc)
		session_note(s, "cannot store the prompt %s: %s", path, strerror(-rc));
	free(path);
	strbuf_release(&md);
}

/* The call's transcript in this run, when it recorded an answer: 1 and out filled, else 0. */
static int served_from_run(struct agent_session *s, const struct llm_request *req, struct llm_response *out,
			   struct strbuf *msg)
{
	char *root = xstrfmt("%s/transcripts", s->sh->run_dir);
	char *path = transcript_path(root, req->agent, req->problem, req->sample, req->call);
	json_t *rec = json_load_file(path, 0, NULL);
	free(root);
	json_t *key = json_object_get(rec, "key");
	const char *kind = json_string_value(json_object_get(json_object_get(rec, "error"), "kind"));
	int ok = rec && !strcmp(json_string_value(json_object_get(key, "agent")) ?: "", req->agent) &&
		 !strcmp(json_string_value(json_object_get(key, "problem")) ?: "", req->problem) &&
		 json_integer_value(json_object_get(key, "call")) == req->call &&
		 !(kind && session_llm_kind_retryable((enum llm_errkind)llm_errkind_parse(kind)));
	char recmsg[SB_ERR_MAX];
	if (ok && transcript_to_response(rec, out, recmsg, sizeof(recmsg)) >= 0) {
		char hash[65];
		llm_request_hash(req, hash);
		const char *recorded = json_string_value(json_object_get(rec, "request_hash"));
		if (!recorded || strcmp(recorded, hash))
			session_note(s, "call %d served from its transcript although its prompt differs from the recorded one",
				     req->call);
		out->replayed = 1;
		out->wall_s = json_number_value(json_object_get(json_object_get(rec, "timing"), "wall_s"));
		out->transcript_path = path;
		strbuf_addstr(msg, recmsg);
		path = NULL;
	} else {
		llm_response_release(out);
		ok = 0;
	}
	free(path);
	json_decref(rec);
	return ok;
}

int session_chat(struct agent_session *s, const struct llm_message *msgs, size_t n, struct llm_response *out,
		 struct sb_error *err)
{
	int call = s->ncalls++, rc = 0;
	struct llm_request req = { msgs, n, s->t.agent->name, s->t.ref, s->t.sample, call, 0 };
	struct strbuf msg = STRBUF_INIT;
	memset(out, 0, sizeof(*out));
	store_prompt(s, call, msgs, n);
	if (served_from_run(s, &req, out, &msg)) {
		if (out->kind != LLM_OK)
			rc = sb_error_set(err, SB_EENV, "%s", msg.buf);
	} else if (atomic_load(s->sh->stop)) {
		strbuf_release(&msg);
		return AGENT_ESTOPPED;
	} else {
		atomic_fetch_add(&s->sh->llm_in_flight, 1);
		rc = llm_chat(s->t.llm, &req, out, err);
		atomic_fetch_sub(&s->sh->llm_in_flight, 1);
	}
	strbuf_release(&msg);
	if (out->transcript_path) {
		/* the transcript is on disk; the row that accounts for it follows (EEXIST: a resumed call) */
		struct store_llm_call c = { s->t.agent->name, s->t.ref, s->t.sample, (int)s->natt, call, s->t.model,
					    out->prompt_tokens, out->completion_tokens, out->latency_s, out->cost_usd,
					    NULL, 0 };
		struct sb_error serr;
		pthread_mutex_lock(&s->sh->store_mu);
		int src = store_put_llm_call(s->sh->store, &c, &serr);
		pthread_mutex_unlock(&s->sh->store_mu);
		if (src && src != SB_EEXIST) {
			*err = serr;
			return src;
		}
	}
	s->tokens += out->prompt_tokens + out->completion_tokens;
	s->seconds += out->wall_s;
	s->last_kind = out->kind;
	s->last_completion_tokens = out->completion_tokens;
	if (out->endpoint_down) /* every other sample would find it down too: the run stops, --resume asks again */
		atomic_fetch_or(s->sh->stop, RUN_STOP_ENDPOINT);
	if (out->kind == LLM_OK || out->kind == LLM_ERR_EMPTY || out->kind == LLM_ERR_TRUNCATED)
		return 0;
	s->llm_failed = out->kind;
	return rc ? rc : sb_error_set(err, SB_EENV, "LLM call failed (%s)", llm_errkind_name(out->kind));
}

int session_ask(struct agent_session *s, const char *system, const char *name, const struct tvars *extra,
		struct llm_response *out, struct strbuf *user, struct sb_error *err)
{
	struct strbuf sys = STRBUF_INIT, usr = STRBUF_INIT;
	int rc = session_render(s, system, extra, &sys, err);
	if (!rc)
		rc = session_render(s, name, extra, &usr, err);
	if (!rc) {
		struct llm_message msgs[] = { { "system", sys.buf }, { "user", usr.buf } };
		rc = session_chat(s, msgs, 2, out, err);
	} else {
		memset(out, 0, sizeof(*out));
	}
	if (user)
		strbuf_add(user, usr.buf, usr.len);
	strbuf_release(&sys);
	strbuf_release(&usr);
	return rc;
}

void session_history_text(const struct agent_session *s, struct strbuf *out)
{
	if (!s->natt)
		strbuf_addstr(out, "none yet\n");
	for (size_t i = 0; i < s->natt; i++) {
		const struct attempt *a = &s->att[i];
		strbuf_addf(out, "attempt %d (%s): %s", a->index, stage_name(a->stage), a->status);
		if (isfinite(a->sum.speedup))
			strbuf_addf(out, ", %.3fx vs eager", a->sum.speedup);
		const char *msg = json_string_value(json_object_get(a->verdict, "message"));
		if (msg && a->sum.cls != CLASS_CORRECT)
			strbuf_addf(out, " - %.160s", msg);
		strbuf_addch(out, '\n');
	}
}
