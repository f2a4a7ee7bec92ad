/* secret.h - a model's secrets (the API key, headers read from environment variables, secret-looking
 * literal headers): read once, then scrubbed from every text that could reach a file, a log line or an
 * error message (curl errors, echoed request bodies). */
#ifndef SB_LLM_SECRET_H
#define SB_LLM_SECRET_H

#include <stddef.h>

#include "../core/config.h"
#include "../core/error.h"
#include "../core/strbuf.h"

#define SECRET_MASK "[REDACTED]"

/* The key in env_name, copied; NULL when env_name is NULL or empty, or the variable is unset or empty. */
char *secret_read(const char *env_name);
/* Overwrites the key before freeing it, so it does not linger in freed heap memory. */
void secret_free(char *key);
/* Replaces every occurrence of key in sb with SECRET_MASK; no-op when key is NULL. */
void secret_scrub(struct strbuf *sb, const char *key);
/* The same for a NUL-terminated fixed buffer (an sb_error message); the result is truncated to cap. */
void secret_scrub_buf(char *buf, size_t cap, const char *key);

/* Everything one model sends that must never be written: read once, when its client starts. */
struct secrets {
	char *key;                /* from api_key_env; NULL when none */
	struct header_kv *env;    /* headers_env with each value read from its variable */
	size_t nenv;
	const struct model_cfg *m; /* its literal headers whose names look secret are scrubbed too */
};
/* Reads m's key and headers_env. SB_EINPUT when a headers_env variable is unset or empty, or when a
 * literal header holds CONFIG_REDACTED (a run's stored config.yaml keeps no secret) and headers_env does not
 * give that header; both messages say what to set. */
int secrets_read(const struct model_cfg *m, struct secrets *s, struct sb_error *err);
void secrets_release(struct secrets *s);
/* Replaces every secret of s in sb (or buf) with SECRET_MASK. */
void secrets_scrub(const struct secrets *s, struct strbuf *sb);
void secrets_scrub_buf(const struct secrets *s, char *buf, size_t cap);
/* The value headers_env gives the header `name` (any case); NULL when it gives none. */
const char *secrets_env_header(const struct secrets *s, const char *name);

#endif
