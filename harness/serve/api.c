/* api.c - serve's request and answer JSON (api.h). A request is read strictly: an unknown key is an error
 * that names it, since a misspelt option silently ignored would judge with settings nobody asked for. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/sha256.h"
#include "api.h"

#define REQUEST_ID_MAX 128

static int fail(struct api_error *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct api_error *e, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	e->status = status;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int known_keys(json_t *obj, const char *const *keys, const char *where, struct api_error *e)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		int ok = 0;
		for (size_t i = 0; keys[i] && !ok; i++)
			ok = !strcmp(k, keys[i]);
		if (!ok) {
			struct strbuf list = STRBUF_INIT;
			for (size_t i = 0; keys[i]; i++)
				strbuf_addf(&list, "%s%s", i ? ", " : "", keys[i]);
			fail(e, 400, "%s: unknown key '%.64s' (known: %s)", where, k, list.buf);
			strbuf_release(&list);
			return -1;
		}
	}
	return 0;
}

static int request_id(json_t *v, const char *where, const char **out, struct api_error *e)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	const char *s = json_string_value(v);
	size_t len = s ? json_string_length(v) : 0;
	if (!s || !len || len > REQUEST_ID_MAX)
		return fail(e, 400, "%s.request_id: a string of 1 to %d printable characters", where, REQUEST_ID_MAX);
	for (size_t i = 0; i < len; i++)
		if (!isprint((unsigned char)s[i]))
			return fail(e, 400, "%s.request_id: a string of 1 to %d printable characters", where, REQUEST_ID_MAX);
	*out = s;
	return 0;
}

static int reward_opts(json_t *obj, const char *where, enum reward_kind *kind, double *lambda, struct api_error *e)
{
	json_t *r = json_object_get(obj, "reward"), *l = json_object_get(obj, "lambda");
	if (r && reward_kind_parse(json_string_value(r), kind))
		return fail(e, 400, "%s.reward: one of \"stitchcuda\", \"speedup\", \"pass\"", where);
	if (l) {
		if (!json_is_number(l) || !(json_number_value(l) >= 0 && json_number_value(l) <= 10))
			return fail(e, 400, "%s.lambda: a number from 0 to 10", where);
		*lambda = json_number_value(l);
	}
	return 0;
}

int api_parse_request(const char *body, size_t len, const struct api_limits *lim, struct serve_request *out,
		      struct api_error *e)
{
	static const char *const top_keys[] = { "candidates", "request_id", "priority", "reward", "lambda", "preset",
						"verdicts", "wait", NULL };
	static const char *const cand_keys[] = { "problem", "source", "request_id", "reward", "lambda", NULL };
	json_error_t jerr;
	memset(out, 0, sizeof(*out));
	out->priority = SERVE_PRIORITY_CLIENT;
	out->full = 1;
	out->wait_s = -1;
	if (!len)
		return fail(e, 400, "empty body: send a JSON object {\"candidates\": [{\"problem\": \"L1/19\", \"source\": \"...\"}]}");
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return fail(e, 400, "the body is not JSON: line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
	out->json = j;
	if (!json_is_object(j))
		return fail(e, 400, "the body must be a JSON object with a \"candidates\" array");
	if (known_keys(j, top_keys, "the request", e))
		return -1;

	json_t *v;
	if ((v = json_object_get(j, "preset")) && (!json_string_value(v) || strcmp(json_string_value(v), lim->preset)))
		return fail(e, 422, "preset: this server judges with preset '%s' (its eval.preset); start a server with "
			    "--set eval.preset=%.32s for another", lim->preset, json_string_value(v) ? json_string_value(v) : "?");
	if (request_id(json_object_get(j, "request_id"), "the request", &out->request_id, e))
		return -1;
	if ((v = json_object_get(j, "priority"))) {
		if (!json_is_integer(v) || json_integer_value(v) < -1000 || json_integer_value(v) > 1000)
			return fail(e, 400, "priority: an integer from -1000 to 1000 (at most the client's own)");
		out->priority = (int)json_integer_value(v);
	}
	if ((v = json_object_get(j, "verdicts"))) {
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, "full") && strcmp(s, "summary")))
			return fail(e, 400, "verdicts: \"full\" (each whole verdict) or \"summary\"");
		out->full = !strcmp(s, "full");
	}
	if ((v = json_object_get(j, "wait"))) {
		if (!json_is_number(v) || !(json_number_value(v) >= 0))
			return fail(e, 400, "wait: seconds >= 0 to wait for the verdicts before answering with the job");
		out->wait_s = json_number_value(v);
		out->has_wait = 1;
	}
	enum reward_kind kind = lim->reward;
	double lambda = lim->lambda;
	if (reward_opts(j, "the request", &kind, &lambda, e))
		return -1;

	json_t *cands = json_object_get(j, "candidates");
	if (!json_is_array(cands) || !json_array_size(cands))
		return fail(e, 400, "candidates: a non-empty array of {\"problem\": \"L1/19\", \"source\": \"...\"}");
	if (json_array_size(cands) > lim->max_batch)
		return fail(e, 400, "candidates: %zu in one request, this server takes at most %zu (--max-batch); split it",
			    json_array_size(cands), lim->max_batch);
	out->n = json_array_size(cands);
	out->v = xcalloc(out->n, sizeof(*out->v));
	for (size_t i = 0; i < out->n; i++) {
		json_t *c = json_array_get(cands, i);
		struct serve_candidate *x = &out->v[i];
		char where[32];
		snprintf(where, sizeof(where), "candidates[%zu]", i);
		if (!json_is_object(c))
			return fail(e, 400, "%s: an object {\"problem\": \"L1/19\", \"source\": \"...\"}", where);
		if (known_keys(c, cand_keys, where, e))
			return -1;
		const char *ref = json_string_value(json_object_get(c, "problem"));
		int level, id;
		struct sb_error perr = { 0 };
		if (!ref)
			return fail(e, 400, "%s.problem: a problem id such as \"L1/19\"", where);
		if (problem_ref_parse(ref, &level, &id, &perr))
			return fail(e, 400, "%s.problem: '%.32s' is not a problem id such as \"L1/19\"", where, ref);
		if (!(x->problem = suite_find(lim->suite, level, id)))
			return fail(e, 422, "%s.problem: no problem %.32s in this server's suite (`stitchbench problems` lists "
				    "them)", where, ref);
		snprintf(x->ref, sizeof(x->ref), "L%d/%d", level, id);
		json_t *src = json_object_get(c, "source");
		if (!json_is_string(src))
			return fail(e, 400, "%s.source: the candidate's Python file as a string", where);
		x->source = json_string_value(src);
		x->len = json_string_length(src);
		if (x->len > lim->max_source)
			return fail(e, 413, "%s.source: %zu bytes, this server takes at most %zu per candidate", where, x->len,
				    lim->max_source);
		if (memchr(x->source, '\0', x->len))
			return fail(e, 400, "%s.source: contains a NUL character; a Python file has none", where);
		sha256_hex(x->source, x->len, x->sha256);
		if (request_id(json_object_get(c, "request_id"), where, &x->request_id, e))
			return -1;
		x->reward = kind;
		x->lambda = lambda;
		if (reward_opts(c, where, &x->reward, &x->lambda, e))
			return -1;
	}
	return 0;
}

/* ---------- answers ---------- */

static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static const char *state_name(const struct job_view *v, size_t i)
{
	const struct journal_item *it = &v->items[i];
	if (it->fail_status[0])
		return "failed";
	if (it->cand.state == CAND_DONE)
		return "done";
	return v->running[i] ? "running" : "queued";
}

static json_t *item_json(const struct job_view *v, size_t i, int full)
{
	const struct journal_item *it = &v->items[i];
	json_t *verdict = v->verdicts[i];
	json_t *o = json_pack("{s:i, s:o, s:s, s:s, s:s, s:b}", "index", it->idx, "request_id",
			      it->request_id ? json_string(it->request_id) : json_null(), "problem", it->cand.problem,
			      "candidate_sha256", it->cand.sha256, "state", state_name(v, i), "reused", it->reused);
	json_object_set_new(o, "reward_kind", json_string(it->reward));
	json_object_set_new(o, "lambda", json_real(it->lambda));
	if (it->fail_status[0]) {
		json_object_set_new(o, "status", json_string(it->fail_status));
		json_object_set_new(o, "message", json_string(it->fail_message ? it->fail_message : ""));
		json_object_set_new(o, "reward", json_null());
		json_object_set_new(o, "reward_note",
				    json_string(!strcmp(it->fail_status, "cannot_judge")
							? "cannot_judge: this server cannot run the candidate (e.g. CUDA without a GPU); "
							  "it has no reward"
							: "harness_error: the server failed, not the candidate; it has no reward, and "
							  "a new request (another request_id) judges it again"));
		return o;
	}
	if (!verdict) {
		json_object_set_new(o, "status", json_null());
		json_object_set_new(o, "reward", json_null());
		return o;
	}
	struct reward_facts f;
	enum reward_kind kind = REWARD_STITCHCUDA;
	char note[200] = "";
	double r = NAN;
	reward_kind_parse(it->reward, &kind);
	if (reward_facts_from_verdict(verdict, &f) == 0)
		r = reward_compute(kind, &f, it->lambda, note, sizeof(note));
	json_object_set(o, "status", json_object_get(verdict, "status"));
	json_object_set(o, "message", json_object_get(verdict, "message"));
	json_object_set_new(o, "reward", num_or_null(r));
	json_object_set_new(o, "reward_note", json_string(note));
	json_object_set_new(o, "speedup", num_or_null(f.speedup));
	json_t *findings = json_array(), *x;
	size_t k;
	json_array_foreach(json_object_get(verdict, "findings"), k, x)
		json_array_append_new(findings, json_pack("{s:O?, s:O?}", "id", json_object_get(x, "id"), "severity",
							  json_object_get(x, "severity")));
	json_object_set_new(o, "findings", findings);
	if (full)
		json_object_set(o, "verdict", verdict);
	return o;
}

json_t *api_job_json(const struct job_view *v, int full)
{
	json_t *items = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(items, item_json(v, i, full));
	return json_pack("{s:s, s:s, s:I, s:I, s:s, s:o}", "job_id", v->id, "state", v->pending ? "pending" : "done",
			 "done", (json_int_t)(v->n - v->pending), "total", (json_int_t)v->n, "created", v->created,
			 "candidates", items);
}

json_t *api_error_json(int status, const char *msg)
{
	return json_pack("{s:s, s:i}", "error", msg, "status", status);
}
