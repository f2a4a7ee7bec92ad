/* check.c - the endpoint probe behind `stitchbench doctor`: is each configured model reachable,
 * how fast, and does it serve the configured model, before a run spends hours finding out; and the
 * API key check that doctor and every client make. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "provider.h"
#include "replay.h"
#include "retry.h"
#include "secret.h"
#include "transcript.h"

#define PROBE_TIMEOUT_MS 10000L

const char *llm_missing_key_env(const struct model_cfg *m)
{
	if (!m->provider || !strcmp(m->provider, "replay") || !m->api_key_env || !*m->api_key_env)
		return NULL;
	const char *v = getenv(m->api_key_env);
	return v && *v ? NULL : m->api_key_env;
}

int llm_check_key(const struct model_cfg *m, struct sb_error *err)
{
	const char *var = llm_missing_key_env(m);
	if (!var)
		return 0;
	const char *name = m->name ? m->name : "?";
	return sb_error_set(err, SB_EENV, "model %s: $%s (its api_key_env) is not set or empty: export the API key in it, "
			    "or set models.%s.api_key_env to null if %s takes no key", name, var, name,
			    m->api_base ? m->api_base : "the endpoint");
}

/* "N models listed, including M" from an OpenAI or Anthropic /models answer ({"data": [{"id"}]}). */
static void describe_models(const struct model_cfg *m, const struct strbuf *body, struct strbuf *detail)
{
	json_t *root = json_loadb(body->buf, body->len, 0, NULL);
	json_t *data = json_object_get(root, "data");
	if (!json_is_array(data)) {
		strbuf_addstr(detail, "reachable (the /models answer lists no models)");
		json_decref(root);
		return;
	}
	int found = 0;
	size_t i;
	json_t *e;
	json_array_foreach(data, i, e) {
		const char *id = json_string_value(json_object_get(e, "id"));
		if (id && m->model && !strcmp(id, m->model))
			found = 1;
	}
	strbuf_addf(detail, "%zu model%s listed, %s %s", json_array_size(data), json_array_size(data) == 1 ? "" : "s",
		    found ? "including" : "but not", m->model ? m->model : "(no model configured)");
	json_decref(root);
}

static int check_replay(const struct model_cfg *m, struct strbuf *detail, struct sb_error *err)
{
	long n = replay_count(m->cassette, err);
	if (n < 0)
		return (int)n;
	strbuf_addf(detail, "replay from %s: %ld recorded call%s", m->cassette, n, n == 1 ? "" : "s");
	return 0;
}

int llm_check_reach(const struct model_cfg *m, double *latency_s, int *unreachable, struct strbuf *detail,
		    struct sb_error *err)
{
	*latency_s = 0;
	*unreachable = 0;
	if (m->provider && !strcmp(m->provider, "replay"))
		return check_replay(m, detail, err);
	const struct llm_provider *p = provider_find(m->provider);
	if (!p || !m->api_base)
		return sb_error_set(err, SB_EINPUT, "model %s: no endpoint to check (provider %s, api_base %s)",
				    m->name ? m->name : "?", m->provider ? m->provider : "null",
				    m->api_base ? m->api_base : "null");
	struct secrets sec;
	int rc = secrets_read(m, &sec, err);
	if (rc)
		return rc;
	char *url = provider_url(m, "/models");
	struct strvec headers = STRVEC_INIT;
	provider_headers(m, p, &sec, &headers);
	long timeout = m->timeout_s > 0 && m->timeout_s * 1000L < PROBE_TIMEOUT_MS ? m->timeout_s * 1000L
										    : PROBE_TIMEOUT_MS;
	struct http_req q = { "GET", url, NULL, 0, headers.v, timeout, (size_t)16 << 20 };
	struct http_res res;
	http_res_init(&res);
	http_perform(&q, &res);
	secrets_scrub(&sec, &res.body);
	secrets_scrub_buf(&sec, res.curl_msg, sizeof(res.curl_msg));
	*latency_s = res.latency_s;
	if (res.curl_code) {
		*unreachable = !res.too_large && retry_curl_unreachable(res.curl_code);
		rc = sb_error_set(err, SB_EENV, "GET %s: %s", url,
				  res.too_large ? "the answer is too large" : res.curl_msg);
	} else if (res.status != 200) {
		struct strbuf s = STRBUF_INIT;
		transcript_add_snippet(&s, res.body.buf, res.body.len, 200);
		rc = sb_error_set(err, SB_EENV, "GET %s: HTTP %ld after %.0f ms: %s", url, res.status,
				  res.latency_s * 1e3, s.buf);
		strbuf_release(&s);
	} else {
		describe_models(m, &res.body, detail);
	}
	if (rc)
		secrets_scrub_buf(&sec, err->msg, sizeof(err->msg));
	http_res_release(&res);
	strvec_clear(&headers);
	free(url);
	secrets_release(&sec);
	return rc;
}

int llm_check_endpoint(const struct model_cfg *m, double *latency_s, struct strbuf *detail, struct sb_error *err)
{
	int unreachable;
	return llm_check_reach(m, latency_s, &unreachable, detail, err);
}
