/* openai.c - the OpenAI chat-completions flavour, which vLLM, SGLang, llama.cpp server, Ollama and
 * OpenAI itself all speak: POST {api_base}/chat/completions. */
#include "provider.h"
#include "transcript.h"

#include <string.h>

static json_t *render(const struct model_cfg *m, const struct llm_request *req)
{
	json_t *body = json_pack("{s:s, s:o, s:f}", "model", m->model ? m->model : "", "messages",
				 transcript_messages(req), "temperature", m->temperature);
	int completion_key;
	int n = provider_max_tokens(m, req, &completion_key);
	/* reasoning models reject max_tokens and count hidden reasoning in max_completion_tokens */
	json_object_set_new(body, completion_key ? "max_completion_tokens" : "max_tokens", json_integer(n));
	if (m->reasoning_effort)
		json_object_set_new(body, "reasoning_effort", json_string(m->reasoning_effort));
	return body;
}

static void auth(const char *key, struct strvec *h)
{
	if (key)
		strvec_pushf(h, "Authorization: Bearer %s", key);
}

static enum llm_errkind parse(const char *body, size_t len, struct llm_response *out, struct strbuf *why)
{
	enum llm_errkind kind;
	json_t *root = provider_load(body, len, "prompt_tokens", "completion_tokens", out, &kind, why);
	if (!root)
		return kind;
	json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
	json_t *msg = json_object_get(choice, "message");
	json_t *content = json_object_get(msg, "content");
	const char *finish = json_string_value(json_object_get(choice, "finish_reason"));
	if (!json_is_object(msg) || (!content && !finish)) {
		json_t *e = json_object_get(root, "error");
		const char *em = json_string_value(json_is_object(e) ? json_object_get(e, "message") : e);
		strbuf_addf(why, "the response has no %s%s%s", !choice ? "choices[0]" : "choices[0].message.content",
			    em ? "; it says: " : "", em ? em : "");
		json_decref(root);
		return LLM_ERR_MISSING_FIELD;
	}
	kind = provider_finish(out, json_string_value(content), json_string_length(content), finish, why);
	json_decref(root);
	return kind;
}

const struct llm_provider provider_openai = { "openai", "/chat/completions", render, auth, parse };
