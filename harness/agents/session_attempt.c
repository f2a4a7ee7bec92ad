/* session_attempt.c - attempts: the candidate file written, its verdict read back from the store when
 * the run already holds it (resume) or judged and stored with its stage, the feedback, the best kept,
 * and the sample's summary when it ends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "../store/store.h"
#include "extract.h"
#include "feedback.h"
#include "judge.h"
#include "session_int.h"

static double num_or_nan(json_t *j)
{
	return json_is_number(j) ? json_number_value(j) : NAN;
}

/* Scores the candidate of attempt idx against the rubric when one is configured, after the device slot
 * is given back (the judge model is an LLM call, not device work). The call's key is ("judge.<agent>",
 * problem, sample, idx): its transcript lies in the run beside the agent's own calls, which keep their
 * numbering, so a run with a rubric replays the agents' cassettes of one without. */
static void score_rubric(struct agent_session *s, int idx, struct verdict *v)
{
	struct run_shared *sh = s->sh;
	if (!sh->judge || !sh->judge->client)
		return;
	char *agent = xstrfmt("judge.%s", s->t.agent->name);
	atomic_fetch_add(&sh->llm_in_flight, 1);
	judge_rubric(sh->judge, s->t.problem, agent, s->t.sample, idx, v);
	atomic_fetch_sub(&sh->llm_in_flight, 1);
	free(agent);
}

/* Judges the file on the run's evaluation queue (sched.h): it is built ahead on the cores while other
 * samples' candidates are judged, then judged on the next free device slot (run --gpus gives each GPU
 * one). An answer without code is a format_error with nothing to build, run or show the rubric judge; the
 * harness's own torch-eager and torch-compile code is not shown to the judge either (it is the same in
 * every run and would only cost calls). */
static int judge_attempt(struct agent_session *s, int idx, const char *rel, int has_code, const char *message,
			 json_t **out, struct sb_error *err)
{
	struct run_shared *sh = s->sh;
	int reference = s->t.kind == &agent_torch_eager || s->t.kind == &agent_torch_compile;
	const struct config *cfg = reference ? sh->cfg_reference : sh->cfg;
	struct verdict v;
	int rc = 0;
	char *abs = realpath(rel, NULL); /* the workers run elsewhere: they need the absolute path */
	const char *path = abs ? abs : rel;
	if (!has_code) {
		eval_failure(sh->env, cfg, s->t.problem, path, V_FORMAT_ERROR, message, &v);
	} else {
		*err = (struct sb_error){ 0 }; /* what a failure sets, below, is this evaluation's alone */
		pthread_mutex_lock(&sh->sched_mu);
		rc = sched_judge(sh->sched, cfg, s->t.problem, path, &v, err);
		pthread_mutex_unlock(&sh->sched_mu);
		/* a stop that came while this evaluation waited for its build or its device: it does not start,
		 * and the attempt is judged on --resume. Ctrl-C kills the processes of the evaluations in flight
		 * (harness/run/run.c), so what one ended with then says nothing about the candidate: it is not
		 * stored, and --resume judges it again */
		if (rc == SCHED_STOPPED) {
			free(abs);
			return AGENT_ESTOPPED;
		}
		if (atomic_load(sh->stop) & RUN_STOP_SIGNAL) {
			verdict_release(&v);
			free(abs);
			return AGENT_ESTOPPED;
		}
		/* an attempt this machine cannot run (CUDA without a GPU) is not the agent's: no verdict is stored,
		 * and the sample is left for a machine that can judge it (run.c) */
		if (!rc && v.status == V_CANNOT_JUDGE)
			rc = sb_error_set(err, SB_EENV, "%s", v.message ? v.message : "cannot_judge");
		if (!rc && !reference)
			score_rubric(s, idx, &v);
	}
	if (!rc)
		*out = verdict_to_json(&v);
	else /* the code the failure was set with: some paths return -1 for it */
		s->eval_failed = err->code ? err->code : rc;
	verdict_release(&v);
	free(abs);
	return rc;
}

static void keep_best(struct agent_session *s, const struct attempt *a)
{
	if (a->sum.cls != CLASS_CORRECT)
		return;
	if (s->best >= 0) {
		double b = s->att[s->best].sum.speedup;
		if (!(isfinite(a->sum.speedup) && (!isfinite(b) || a->sum.speedup > b)))
			return;
	}
	s->best = a->index;
	char name[32];
	snprintf(name, sizeof(name), "s%d.py", s->t.sample);
	char *py = session_path(s, "best", "x"), *slash = strrchr(py, '/');
	/* best/<agent>/<problem>/s<k>.py: one file per sample, beside its JSON */
	*slash = '\0';
	slash = strrchr(py, '/');
	*slash = '\0';
	char *file = xstrfmt("%s/%s", py, name), *meta = xstrfmt("%s/s%d.json", py, s->t.sample);
	int rc = fs_write_atomic(file, a->code, strlen(a->code));
	json_t *j = json_pack("{s:i, s:s, s:s, s:o, s:o, s:s}", "attempt", a->index, "stage", stage_name(a->stage),
			      "status", a->status, "speedup_eager",
			      isfinite(a->sum.speedup) ? json_real(a->sum.speedup) : json_null(), "speedup_compiled",
			      json_deep_copy(json_object_get(json_object_get(a->verdict, "speedup"), "vs_compiled"))
				      ?: json_null(), "candidate", a->path);
	struct sb_error err;
	if (rc || session_write_json(meta, j, &err))
		session_note(s, "cannot write the best solution %s", file);
	json_decref(j);
	free(file);
	free(meta);
	free(py);
}

static int submit(struct agent_session *s, enum agent_stage stage, const char *code, const char *raw,
		  const char *message, const struct attempt **out, struct sb_error *err)
{
	int idx = (int)s->natt, rc;
	const struct bound_hints *hints;
	/* before judging: a broken hints template stops the run without spending an evaluation */
	if ((rc = session_bound_hints(s, &hints, err)))
		return rc;
	char name[32];
	snprintf(name, sizeof(name), "attempt-%02d.%s", idx, code ? "py" : "txt");
	char *path = session_path(s, "candidates", name);
	const char *body = code ? code : raw ? raw : message;
	if ((rc = fs_write_atomic(path, body, strlen(body)))) {
		sb_error_set(err, SB_EIO, "cannot write the candidate %s: %s", path, strerror(-rc));
		free(path);
		return SB_EIO;
	}
	struct store_key key = { s->t.agent->name, s->t.ref, s->t.sample, idx };
	json_t *vj = NULL;
	pthread_mutex_lock(&s->sh->store_mu);
	rc = store_load_verdict(s->sh->store, &key, &vj, NULL, err);
	pthread_mutex_unlock(&s->sh->store_mu);
	int resumed = rc == 1;
	if (rc < 0) {
		free(path);
		return rc;
	}
	if (resumed) {
		char sha[65];
		sha256_hex(body, strlen(body), sha);
		const char *stored = json_string_value(json_object_get(json_object_get(vj, "candidate"), "sha256"));
		if (stored && strcmp(stored, sha))
			session_note(s, "attempt %d: the stored verdict judged another candidate (%.12s, now %.12s); it is kept, "
				     "since a key is written once", idx, stored, sha);
	} else if (atomic_load(s->sh->stop)) {
		free(path);
		return AGENT_ESTOPPED;
	} else {
		if ((rc = judge_attempt(s, idx, path, code != NULL, message, &vj, err))) {
			free(path);
			return rc;
		}
		struct store_put put = { .agent = s->t.agent->name, .sample = s->t.sample, .attempt = idx,
					 .stage = stage_name(stage) };
		pthread_mutex_lock(&s->sh->store_mu);
		rc = store_put_verdict(s->sh->store, &put, vj, err);
		pthread_mutex_unlock(&s->sh->store_mu);
		if (rc && rc != SB_EEXIST) {
			json_decref(vj);
			free(path);
			return rc;
		}
	}
	s->att = xrealloc(s->att, (s->natt + 1) * sizeof(*s->att));
	s->sums = xrealloc(s->sums, (s->natt + 1) * sizeof(*s->sums));
	struct attempt *a = &s->att[s->natt];
	memset(a, 0, sizeof(*a));
	a->index = idx;
	a->stage = stage;
	a->verdict = vj;
	a->code = code ? xstrdup(code) : NULL;
	a->path = path;
	a->resumed = resumed;
	snprintf(a->status, sizeof(a->status), "%s", json_string_value(json_object_get(vj, "status")) ?: "unknown");
	a->sum.cls = attempt_class_of(a->status);
	a->sum.speedup = num_or_nan(json_object_get(json_object_get(vj, "speedup"), "vs_eager"));
	a->sum.speedup_lo = num_or_nan(json_array_get(json_object_get(json_object_get(vj, "speedup"), "vs_eager_ci95"), 0));
	struct strbuf fb = STRBUF_INIT;
	feedback_from_verdict(vj, s->t.agent->target_speedup, hints, &fb);
	a->feedback = strbuf_detach(&fb, NULL);
	s->sums[s->natt] = a->sum;
	s->natt++;
	double secs = num_or_nan(json_object_get(json_object_get(vj, "seconds"), "total"));
	if (isfinite(secs))
		s->seconds += secs;
	keep_best(s, a);
	if (s->sh->on_attempt)
		s->sh->on_attempt(s->sh->on_arg, s, (size_t)idx);
	*out = a;
	return 0;
}

/* What to say about an answer cut at the token limit: it names the limit to raise. */
static void truncation_text(const struct agent_session *s, struct strbuf *out)
{
	const struct model_cfg *m = s->t.model ? config_find_model(s->sh->cfg, s->t.model) : NULL;
	strbuf_addf(out, "the answer was cut at the token limit (finish_reason=length, %ld completion tokens)",
		    s->last_completion_tokens);
	if (m && m->max_completion_tokens > 0)
		strbuf_addf(out, "; raise models.%s.max_completion_tokens (now %d)", m->name, m->max_completion_tokens);
	else if (m)
		strbuf_addf(out, "; raise models.%s.max_tokens (now %d)", m->name, m->max_tokens);
	else
		strbuf_addstr(out, "; raise the model's max_tokens");
}

int session_submit_answer(struct agent_session *s, enum agent_stage stage, const char *answer,
			  const struct attempt **out, struct sb_error *err)
{
	struct strbuf code = STRBUF_INIT;
	enum extract_how how = extract_code(answer ? answer : "", &code);
	int rc;
	struct strbuf cut = STRBUF_INIT;
	if (s->last_kind == LLM_ERR_TRUNCATED)
		truncation_text(s, &cut);
	if (how == EXTRACT_NONE && cut.len) {
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "the answer holds no code defining class ModelNew: %s; answer with one ```python block "
			    "holding the whole file and little else", cut.buf);
		session_note(s, "attempt %zu: %s", s->natt, cut.buf);
		rc = submit(s, stage, NULL, answer ? answer : "", msg.buf, out, err);
		strbuf_release(&msg);
	} else if (how == EXTRACT_NONE) {
		rc = submit(s, stage, NULL, answer ? answer : "",
			    "the answer holds no code defining class ModelNew (looked for a ```python block, any fenced "
			    "block, then the raw text); answer with one ```python block holding the whole file", out, err);
	} else {
		if (cut.len) /* the code may stop mid-way: its build or trials will say how */
			session_note(s, "attempt %zu: %s; its code may be incomplete", s->natt, cut.buf);
		if (how != EXTRACT_PYTHON_FENCE)
			session_note(s, "attempt %zu: code taken from %s", s->natt, extract_how_name(how));
		rc = submit(s, stage, code.buf, NULL, NULL, out, err);
	}
	strbuf_release(&cut);
	strbuf_release(&code);
	return rc;
}

int session_submit_code(struct agent_session *s, enum agent_stage stage, const char *code,
			const struct attempt **out, struct sb_error *err)
{
	return submit(s, stage, code, NULL, NULL, out, err);
}

int session_submit_failure(struct agent_session *s, enum agent_stage stage, const char *message, const char *text,
			   const struct attempt **out, struct sb_error *err)
{
	return submit(s, stage, NULL, text, message, out, err);
}

const char *session_stop_reason(const struct agent_session *s)
{
	return s->stop_reason;
}

int session_finish(struct agent_session *s, const char *stop_reason, struct sb_error *err)
{
	snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", stop_reason);
	json_t *hist = json_array(), *notes = json_array();
	for (size_t i = 0; i < s->natt; i++) {
		const struct attempt *a = &s->att[i];
		json_array_append_new(hist, json_pack("{s:i, s:s, s:s, s:o, s:s, s:b}", "attempt", a->index, "stage",
						      stage_name(a->stage), "status", a->status, "speedup_eager",
						      isfinite(a->sum.speedup) ? json_real(a->sum.speedup) : json_null(),
						      "candidate", a->path, "resumed", a->resumed));
	}
	for (size_t i = 0; i < s->notes.nr; i++)
		json_array_append_new(notes, json_string(s->notes.v[i]));
	json_t *best = json_null();
	if (s->best >= 0) {
		const struct attempt *b = &s->att[s->best];
		best = json_pack("{s:i, s:s, s:o}", "attempt", b->index, "candidate", b->path, "speedup_eager",
				 isfinite(b->sum.speedup) ? json_real(b->sum.speedup) : json_null());
	}
	json_t *j = json_pack("{s:s, s:s, s:s?, s:s, s:i, s:s, s:i, s:i, s:I, s:f, s:i, s:o, s:o, s:o}", "agent",
			      s->t.agent->name, "kind", s->t.kind->name, "model", s->t.model, "problem", s->t.ref,
			      "sample", s->t.sample, "stop_reason", stop_reason, "attempts", (int)s->natt, "calls",
			      s->ncalls, "tokens", (json_int_t)s->tokens, "seconds", s->seconds, "plans", s->nplans,
			      "best", best, "history", hist, "notes", notes);
	char *path = session_path(s, "samples", "summary.json");
	int rc = session_write_json(path, j, err);
	free(path);
	json_decref(j);
	return rc;
}
