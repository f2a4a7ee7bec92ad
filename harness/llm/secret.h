/* secret.h - the API key: read once from its environment variable, then scrubbed from every text
 * that could reach a file, a log line or an error message (curl errors, echoed request bodies). */
#ifndef SB_LLM_SECRET_H
#define SB_LLM_SECRET_H

#include <stddef.h>

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

#endif
