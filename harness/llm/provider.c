/* provider.c - the parts of a chat request that every API flavour shares: URL, headers, token limit,
 * and the JSON and finish checks, so that openai.c and anthropic.c hold only what differs. */
#include "provider.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct llm_provider *provider_find(const char *name)
{
	if (name && !strcmp(name, "openai"))
		return &provider_openai;
	if (name && !strcmp(name, "anthropic"))
		return &provider_anthropic;
	return NULL;
}

static int names(const struct header_kv *v, size_t n, const char *line)
{
	size_t len = strcspn(line, ":");
	for (size_t i = 0; i < n; i++)
		if (strlen(v[i].name) == len && !strncasecmp(v[i].name, line, len))
			return 1;
	return 0;
}

static int config_sets(const struct model_cfg *m, const char *line)
{
	return names(m->headers, m->nheaders, line) || names(m->headers_env, m->nheaders_env, line);
}

void provider_headers(const struct model_cfg *m, const struct llm_provider *p, const struct secrets *s,
		      struct strvec *h)
{
	struct strvec auth = STRVEC_INIT;
	strvec_push(h, "Content-Type: application/json");
	strvec_push(h, "Accept: application/json");
	strvec_push(h, "Expect:"); /* no 100-continue round trip before large prompts */
	for (size_t i = 0; i < m->nheaders; i++)
		if (!secrets_env_header(s, m->headers[i].name))
			strvec_pushf(h, "%s: %s", m->headers[i].name, m->headers[i].value ? m->headers[i].value : "");
	for (size_t i = 0; i < s->nenv; i++)
		strvec_pushf(h, "%s: %s", s->env[i].name, s->env[i].value);
	if (p)
		p->auth(s->key, &auth);
	for (size_t i = 0; i < auth.nr; i++)
		if (!config_sets(m, auth.v[i]))
			strvec_push(h, auth.v[i]);
	strvec_clear(&auth);
}

char *provider_url(const struct model_cfg *m, const char *path)
{
	const char *base = m->api_base ? m->api_base : "";
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	return xstrfmt("%.*s%s", (int)n, base, path);
}

int provider_max_tokens(const struct model_cfg *m, const struct llm_request *req, int *completion_key)
{
	*completion_key = m->max_completion_tokens > 0;
	if (req->max_tokens > 0)
		return req->max_tokens;
	return *completion_key ? m->max_completion_tokens : m->max_tokens;
}

json_t *provider_load(const char *body, size_t len, const char *prompt_key, const char *completion_key,
		      struct llm_response *out, enum llm_errkind *kind, struct strbuf *why)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr);
	if (!root) {
		*kind = LLM_ERR_BAD_JSON;
		strbuf_addf(why, "the response is not valid JSON (%s at byte %d)", jerr.text, jerr.position);
		return NULL;
	}
	if (!json_is_object(root)) {
		*kind = LLM_ERR_MISSING_FIELD;
		strbuf_addstr(why, "the response is JSON but not an object");
		json_decref(root);
		return NULL;
	}
	/* usage is optional: some servers omit it, and an answer without token counts is still an answer */
	json_t *usage = json_object_get(root, "usage");
	out->prompt_tokens = (long)json_integer_value(json_object_get(usage, prompt_key));
	out->completion_tokens = (long)json_integer_value(json_object_get(usage, completion_key));
	return root;
}

enum llm_errkind provider_finish(struct llm_response *out, const char *text, size_t len,
				 const char *finish_reason, struct strbuf *why)
{
	if (text) {
		out->text = xstrndup(text, len);
		out->text_len = len;
	}
	if (finish_reason)
		out->finish_reason = xstrdup(finish_reason);
	/* truncation first: a reasoning model cut at the limit often has no visible text at all, and
	 * the agent's remedy (a larger limit) differs from the one for an empty answer */
	if (finish_reason && !strcmp(finish_reason, "length")) {
		strbuf_addf(why, "the answer was cut at the token limit (finish_reason=length, %ld completion tokens)",
			    out->completion_tokens);
		return LLM_ERR_TRUNCATED;
	}
	if (!text || !len) {
		strbuf_addf(why, "the model returned no text (finish_reason=%s)",
			    finish_reason ? finish_reason : "none");
		return LLM_ERR_EMPTY;
	}
	return LLM_OK;
}
