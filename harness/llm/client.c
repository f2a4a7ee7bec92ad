/* client.c - llm_chat: validate, ask the endpoint (through the gate, with retries) or the recording,
 * persist the transcript, account, and only then hand the answer to the agent. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "http.h"
#include "provider.h"
#include "replay.h"
#include "retry.h"
#include "secret.h"
#include "transcript.h"

struct llm_client {
	const struct model_cfg *m;
	const struct llm_provider *p;  /* NULL for replay */
	struct replay *replay;
	struct secrets secrets;        /* the API key and secret headers; scrubbed from everything that leaves */
	char *transcripts;             /* run_dir/transcripts, or NULL */
	char *url;                     /* chat endpoint */
	char *url_shown;               /* the same, key-scrubbed, for messages and transcripts */
	struct llm_opts o;
	struct retry_policy policy;
	long timeout_ms;
	struct gate gate;
	pthread_mutex_t mu;            /* guards rng and health */
	uint64_t rng;                  /* backoff jitter; per client, so there is no global generator */
	struct endpoint_health health; /* shared by every caller: the endpoint is down for all of them */
};

static const char *const kind_names[] = {
	[LLM_OK] = "ok",
	[LLM_ERR_HTTP] = "http",
	[LLM_ERR_TIMEOUT] = "timeout",
	[LLM_ERR_CONNECT] = "connect",
	[LLM_ERR_TOO_LARGE] = "too_large",
	[LLM_ERR_BAD_JSON] = "bad_json",
	[LLM_ERR_MISSING_FIELD] = "missing_field",
	[LLM_ERR_EMPTY] = "empty",
	[LLM_ERR_TRUNCATED] = "truncated",
	[LLM_ERR_REPLAY_MISS] = "replay_miss",
	[LLM_ERR_REPLAY_MISMATCH] = "replay_mismatch",
	[LLM_ERR_TRANSCRIPT] = "transcript",
	[LLM_ERR_INVALID] = "invalid_request",
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

const char *llm_errkind_name(enum llm_errkind k)
{
	return (size_t)k < NKINDS ? kind_names[k] : "unknown";
}

int llm_errkind_parse(const char *name)
{
	for (size_t i = 0; name && i < NKINDS; i++)
		if (!strcmp(name, kind_names[i]))
			return (int)i;
	return -1;
}

void llm_response_release(struct llm_response *r)
{
	free(r->text);
	free(r->finish_reason);
	free(r->transcript_path);
	memset(r, 0, sizeof(*r));
}

int llm_client_new(const struct model_cfg *m, const char *run_dir, const struct llm_opts *opts,
		   struct llm_client **out, struct sb_error *err)
{
	static const struct llm_opts defaults = LLM_OPTS_INIT;
	int replay = m->provider && !strcmp(m->provider, "replay");
	const struct llm_provider *p = provider_find(m->provider);
	*out = NULL;
	if (!p && !replay)
		return sb_error_set(err, SB_EINPUT, "model %s: unknown provider '%s' (openai, anthropic or replay)",
				    m->name ? m->name : "?", m->provider ? m->provider : "null");
	if (p && (!m->api_base || !m->model))
		return sb_error_set(err, SB_EINPUT, "model %s: api_base and model are required for provider %s",
				    m->name ? m->name : "?", m->provider);
	struct llm_client *c = xcalloc(1, sizeof(*c));
	c->m = m;
	c->p = p;
	c->o = opts ? *opts : defaults;
	if (replay) {
		int rc = replay_open(m->cassette, &c->replay, err);
		if (rc) {
			sb_error_prefix(err, "model %s", m->name ? m->name : "?");
			free(c);
			return rc;
		}
	} else {
		/* a key variable the config names but the environment lacks is found here, before a run does any
		 * work, not as a 401 on each of its calls */
		int rc = llm_check_key(m, err);
		if (!rc)
			rc = secrets_read(m, &c->secrets, err);
		if (rc) {
			free(c);
			return rc;
		}
		c->url = provider_url(m, p->chat_path);
		struct strbuf shown = STRBUF_INIT;
		strbuf_addstr(&shown, c->url);
		secrets_scrub(&c->secrets, &shown);
		c->url_shown = strbuf_detach(&shown, NULL);
	}
	c->transcripts = run_dir ? xstrfmt("%s/transcripts", run_dir) : NULL;
	c->policy = (struct retry_policy){ c->o.backoff_base_s, c->o.backoff_cap_s, c->o.retry_after_cap_s,
					   c->o.max_attempts > 0 ? c->o.max_attempts : 1 };
	c->timeout_ms = c->o.timeout_ms > 0 ? c->o.timeout_ms : (long)m->timeout_s * 1000;
	gate_init(&c->gate, m->max_concurrent, m->requests_per_minute, c->o.rpm_burst);
	pthread_mutex_init(&c->mu, NULL);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->rng = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)c;
	*out = c;
	return 0;
}

void llm_client_free(struct llm_client *c)
{
	if (!c)
		return;
	replay_close(c->replay);
	secrets_release(&c->secrets);
	free(c->transcripts);
	free(c->url);
	free(c->url_shown);
	gate_destroy(&c->gate);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* jansson refuses invalid UTF-8, and a message it dropped would silently change the prompt. */
static int utf8_ok(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	json_decref(j);
	return j != NULL;
}

static int request_invalid(const struct llm_request *req, struct strbuf *why)
{
	if (!req->agent || !req->problem || !utf8_ok(req->agent) || !utf8_ok(req->problem))
		strbuf_addstr(why, "the request needs an agent and a problem (UTF-8): they key its transcript");
	else if (req->sample < 0 || req->call < 0)
		strbuf_addstr(why, "sample and call must be >= 0");
	else if (!req->nmessages || !req->messages)
		strbuf_addstr(why, "the request has no messages");
	for (size_t i = 0; !why->len && i < req->nmessages; i++)
		if (!utf8_ok(req->messages[i].role) || !utf8_ok(req->messages[i].content))
			strbuf_addf(why, "message %zu has no role or content, or is not valid UTF-8", i);
	return why->len > 0;
}

/* What one attempt came to: its kind, whether to try again, and words for the log. */
static enum llm_errkind judge_attempt(struct llm_client *c, struct http_res *res, struct llm_response *out,
				      int *retry, struct strbuf *detail)
{
	*retry = 0;
	if (res->curl_code) {
		enum llm_errkind k = retry_classify_curl(res->curl_code, res->too_large, retry);
		if (k == LLM_ERR_TOO_LARGE)
			strbuf_addf(detail, "the response passed the %zu-byte limit", c->o.max_response_bytes);
		else if (k == LLM_ERR_TIMEOUT)
			strbuf_addf(detail, "no complete response within %ld ms", c->timeout_ms);
		else
			strbuf_addstr(detail, res->curl_msg);
		return k;
	}
	if (res->status >= 200 && res->status < 300) {
		enum llm_errkind k = c->p->parse(res->body.buf, res->body.len, out, detail);
		if (k == LLM_ERR_BAD_JSON || k == LLM_ERR_MISSING_FIELD) {
			strbuf_addstr(detail, "; the body starts: ");
			transcript_add_snippet(detail, res->body.buf, res->body.len, 300);
		}
		return k;
	}
	*retry = retry_status_is_transient(res->status);
	strbuf_addf(detail, "HTTP %ld: ", res->status);
	transcript_add_snippet(detail, res->body.buf, res->body.len, 300);
	if ((res->status == 401 || res->status == 403) && c->m->api_key_env && *c->m->api_key_env)
		strbuf_addf(detail, " (check the key in $%s)", c->m->api_key_env);
	return LLM_ERR_HTTP;
}

struct call {
	json_t *request;          /* the body as sent */
	struct strbuf raw;        /* the final attempt's body */
	json_t *attempt_log;
	struct strbuf why;        /* the final error message */
};

static enum llm_errkind ask_endpoint(struct llm_client *c, const struct llm_request *req, struct llm_response *out,
				     struct call *st)
{
	struct strvec headers = STRVEC_INIT;
	enum llm_errkind kind = LLM_OK;
	st->request = c->p->render(c->m, req);
	char *body = st->request ? json_dumps(st->request, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	if (!body) {
		strbuf_addf(&st->why, "model %s: the request body could not be built", c->m->name);
		return LLM_ERR_INVALID;
	}
	provider_headers(c->m, c->p, &c->secrets, &headers);
	struct http_req q = { "POST", c->url, body, strlen(body), headers.v, c->timeout_ms, c->o.max_response_bytes };
	struct strbuf detail = STRBUF_INIT;
	for (int attempt = 1;; attempt++) {
		struct http_res res;
		int retry;
		http_res_init(&res);
		double queued = gate_enter(&c->gate);
		http_perform(&q, &res);
		gate_leave(&c->gate);
		secrets_scrub(&c->secrets, &res.body);
		secrets_scrub_buf(&c->secrets, res.curl_msg, sizeof(res.curl_msg));
		out->attempts = attempt;
		out->latency_s = res.latency_s;
		out->http_status = res.status;
		strbuf_reset(&detail);
		kind = judge_attempt(c, &res, out, &retry, &detail);
		double wait = 0;
		if (retry && attempt < c->policy.max_attempts) {
			pthread_mutex_lock(&c->mu);
			wait = retry_backoff_s(&c->policy, attempt, res.retry_after_s, &c->rng);
			pthread_mutex_unlock(&c->mu);
		}
		struct strbuf brief = STRBUF_INIT;
		transcript_add_utf8(&brief, detail.buf, detail.len < 500 ? detail.len : 500);
		json_array_append_new(st->attempt_log,
				      json_pack("{s:i, s:I, s:s, s:f, s:f, s:o, s:f, s:s}", "attempt", attempt,
						"status", (json_int_t)res.status, "kind", llm_errkind_name(kind),
						"latency_s", res.latency_s, "queued_s", queued, "retry_after_s",
						res.retry_after_s >= 0 ? json_real(res.retry_after_s) : json_null(),
						"backoff_s", wait, "detail", brief.buf));
		strbuf_release(&brief);
		strbuf_release(&st->raw);
		st->raw = res.body; /* moved, not copied: it may be megabytes */
		strbuf_init(&res.body, 0);
		int unreachable = retry_curl_unreachable(res.curl_code);
		http_res_release(&res);
		if (!retry || attempt >= c->policy.max_attempts) {
			pthread_mutex_lock(&c->mu);
			out->endpoint_down = retry_note_call(&c->health, unreachable, c->o.down_after);
			int in_a_row = c->health.unreachable_in_a_row;
			pthread_mutex_unlock(&c->mu);
			if (out->endpoint_down)
				strbuf_addf(&detail, "; nothing answered %d calls in a row there: the endpoint is down", in_a_row);
			break;
		}
		retry_sleep(wait);
	}
	if (kind != LLM_OK) {
		strbuf_addf(&st->why, "POST %s (model %s): %s", c->url_shown, c->m->model, detail.buf);
		if (out->attempts > 1)
			strbuf_addf(&st->why, " (after %d attempts)", out->attempts);
	}
	strbuf_release(&detail);
	strvec_clear(&headers);
	free(body);
	return kind;
}

static int code_for(enum llm_errkind k)
{
	switch (k) {
	case LLM_OK:
		return 0;
	case LLM_ERR_REPLAY_MISS:
	case LLM_ERR_REPLAY_MISMATCH:
	case LLM_ERR_INVALID:
		return SB_EINPUT;
	case LLM_ERR_TRANSCRIPT:
		return SB_EIO;
	default:
		return SB_EENV;
	}
}

/* Writes the call's transcript; on failure the answer is withheld, since an answer an agent acts on
 * that is not on disk would make the run unreproducible. */
static int persist(struct llm_client *c, const struct llm_request *req, const char *hash, const char *started,
		   struct llm_response *out, struct call *st, json_t *replayed, struct sb_error *err)
{
	if (!c->transcripts)
		return 0;
	char *path = transcript_path(c->transcripts, req->agent, req->problem, req->sample, req->call);
	json_t *rec = replayed ? json_incref(replayed) : NULL;
	if (!rec) {
		struct transcript_call t = { c->m, req, hash, c->url_shown, st->request, &st->raw, out,
					     out->kind == LLM_OK ? NULL : st->why.buf, st->attempt_log, started };
		rec = transcript_record(&t);
	}
	int rc = transcript_write(path, rec, &c->secrets, err);
	json_decref(rec);
	if (rc) {
		free(path);
		free(out->text);
		out->text = NULL;
		out->text_len = 0;
		out->kind = LLM_ERR_TRANSCRIPT;
		return rc;
	}
	out->transcript_path = path;
	return 0;
}

int llm_chat(struct llm_client *c, const struct llm_request *req, struct llm_response *out, struct sb_error *err)
{
	double t0 = retry_now();
	char started[32], hash[65];
	struct call st = { NULL, STRBUF_INIT, json_array(), STRBUF_INIT };
	json_t *replayed = NULL;
	memset(out, 0, sizeof(*out));
	transcript_timestamp(started);
	if (request_invalid(req, &st.why)) {
		out->kind = LLM_ERR_INVALID;
		int rc = sb_error_set(err, SB_EINPUT, "model %s: %s", c->m->name ? c->m->name : "?", st.why.buf);
		strbuf_release(&st.why);
		json_decref(st.attempt_log);
		return rc;
	}
	llm_request_hash(req, hash);
	if (c->replay) {
		out->kind = replay_serve(c->replay, c->m->strict, req, hash, out, &replayed, &st.why);
		if (!replayed)
			st.request = transcript_canonical_request(req);
	} else {
		out->kind = ask_endpoint(c, req, out, &st);
		out->cost_usd = llm_cost_usd(out->prompt_tokens, out->completion_tokens, c->m->price_prompt_per_mtok,
					     c->m->price_completion_per_mtok);
	}
	out->wall_s = retry_now() - t0;
	int rc = persist(c, req, hash, started, out, &st, replayed, err);
	if (!rc && out->kind != LLM_OK)
		rc = sb_error_set(err, code_for(out->kind), "%s", st.why.buf);
	if (err && rc)
		secrets_scrub_buf(&c->secrets, err->msg, sizeof(err->msg));
	if (c->o.accounts)
		llm_accounts_add(c->o.accounts, req->agent, req->problem, out);
	json_decref(replayed);
	json_decref(st.request);
	json_decref(st.attempt_log);
	strbuf_release(&st.raw);
	strbuf_release(&st.why);
	return rc;
}
