/* anthropic.c - Anthropic's Messages API: POST {api_base}/messages with x-api-key, system prompt
 * as a top-level field, and stop reasons mapped onto the OpenAI vocabulary agents see. */
#include "provider.h"

#include <string.h>

#define ANTHROPIC_VERSION "2023-06-01"

static json_t *render(const struct model_cfg *m, const struct llm_request *req)
{
	json_t *msgs = json_array();
	struct strbuf system = STRBUF_INIT;
	for (size_t i = 0; i < req->nmessages; i++) {
		const struct llm_message *x = &req->messages[i];
		if (!strcmp(x->role, "system")) {
			/* the API has one system field, not system turns */
			strbuf_addf(&system, "%s%s", system.len ? "\n\n" : "", x->content);
			continue;
		}
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", x->role, "content", x->content));
	}
	int completion_key;
	int n = provider_max_tokens(m, req, &completion_key);
	json_t *body = json_pack("{s:s, s:i, s:o, s:f}", "model", m->model ? m->model : "", "max_tokens", n,
				 "messages", msgs, "temperature", m->temperature);
	if (system.len)
		json_object_set_new(body, "system", json_stringn(system.buf, system.len));
	strbuf_release(&system);
	return body;
}

static void auth(const char *key, struct strvec *h)
{
	if (key)
		strvec_pushf(h, "x-api-key: %s", key);
	strvec_push(h, "anthropic-version: " ANTHROPIC_VERSION);
}

static const char *normalise_stop(const char *s)
{
	if (!s)
		return NULL;
	if (!strcmp(s, "max_tokens"))
		return "length";
	if (!strcmp(s, "end_turn") || !strcmp(s, "stop_sequence"))
		return "stop";
	return s;
}

static enum llm_errkind parse(const char *body, size_t len, struct llm_response *out, struct strbuf *why)
{
	enum llm_errkind kind;
	json_t *root = provider_load(body, len, "input_tokens", "output_tokens", out, &kind, why);
	if (!root)
		return kind;
	json_t *content = json_object_get(root, "content");
	if (!json_is_array(content)) {
		strbuf_addstr(why, "the response has no content array");
		json_decref(root);
		return LLM_ERR_MISSING_FIELD;
	}
	/* thinking and tool blocks are not the answer; text blocks are joined in order */
	struct strbuf text = STRBUF_INIT;
	size_t i;
	json_t *block;
	json_array_foreach(content, i, block) {
		const char *type = json_string_value(json_object_get(block, "type"));
		json_t *t = json_object_get(block, "text");
		if (type && !strcmp(type, "text") && json_is_string(t))
			strbuf_add(&text, json_string_value(t), json_string_length(t));
	}
	const char *stop = normalise_stop(json_string_value(json_object_get(root, "stop_reason")));
	kind = provider_finish(out, text.len ? text.buf : NULL, text.len, stop, why);
	strbuf_release(&text);
	json_decref(root);
	return kind;
}

const struct llm_provider provider_anthropic = { "anthropic", "/messages", render, auth, parse };
