/* provider.h - what differs between API flavours: the request body, the authentication headers and
 * how a 2xx response is read. client.c drives any of them the same way. */
#ifndef SB_LLM_PROVIDER_H
#define SB_LLM_PROVIDER_H

#include <jansson.h>

#include "llm.h"
#include "secret.h"

struct llm_provider {
	const char *name;
	const char *chat_path;   /* appended to api_base: "/chat/completions", "/messages" */
	/* The request body for this model and call (a new reference). */
	json_t *(*render)(const struct model_cfg *m, const struct llm_request *req);
	/* Authentication and version headers ("Name: value"); key may be NULL (a local server). */
	void (*auth)(const char *key, struct strvec *h);
	/* Reads a 2xx body into out's text, finish_reason and tokens. Returns LLM_OK or the kind of
	 * defect, with why saying what exactly. finish_reason "length" is LLM_ERR_TRUNCATED. */
	enum llm_errkind (*parse)(const char *body, size_t len, struct llm_response *out, struct strbuf *why);
};

extern const struct llm_provider provider_openai, provider_anthropic;

/* The provider for a config's provider name; NULL for replay and unknown names. */
const struct llm_provider *provider_find(const char *name);
/* Every header of a request: JSON content type, the config's extra headers (a header headers_env gives
 * takes its value from there), then the provider's authentication headers with s->key except those the
 * config already sets. */
void provider_headers(const struct model_cfg *m, const struct llm_provider *p, const struct secrets *s,
		      struct strvec *h);
/* {api_base}{path}, without a doubled slash. */
char *provider_url(const struct model_cfg *m, const char *path);
/* The token limit of this call and whether it goes out as max_completion_tokens. */
int provider_max_tokens(const struct model_cfg *m, const struct llm_request *req, int *completion_key);
/* Parses a 2xx body as a JSON object and reads its usage.{prompt_key, completion_key} token counts;
 * NULL with kind and why set when it is not an object. */
json_t *provider_load(const char *body, size_t len, const char *prompt_key, const char *completion_key,
		      struct llm_response *out, enum llm_errkind *kind, struct strbuf *why);
/* Finishes a parse: copies text and finish_reason into out and decides the kind (truncated, empty). */
enum llm_errkind provider_finish(struct llm_response *out, const char *text, size_t len,
				 const char *finish_reason, struct strbuf *why);

#endif
