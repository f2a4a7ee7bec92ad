/* secret.c - reading and scrubbing the API key.
 * Every key is scrubbed, however short: a key must never reach a file, even at the price of masking
 * a word of a response that happens to equal it. */
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *secret_read(const char *env_name)
{
	if (!env_name || !*env_name)
		return NULL;
	const char *v = getenv(env_name);
	return v && *v ? xstrdup(v) : NULL;
}

void secret_free(char *key)
{
	if (!key)
		return;
	/* volatile so the compiler cannot drop the stores as dead before free() */
	for (volatile char *p = key; *p; p++)
		*p = '\0';
	free(key);
}

void secret_scrub(struct strbuf *sb, const char *key)
{
	if (!key || !*key || !sb->len)
		return;
	size_t klen = strlen(key);
	const char *hit = memmem(sb->buf, sb->len, key, klen);
	if (!hit)
		return; /* the common case: no copy at all, which matters for multi-megabyte bodies */
	struct strbuf out = STRBUF_INIT;
	const char *p = sb->buf, *end = sb->buf + sb->len;
	strbuf_grow(&out, sb->len);
	while (hit) {
		strbuf_add(&out, p, (size_t)(hit - p));
		strbuf_addstr(&out, SECRET_MASK);
		p = hit + klen;
		hit = memmem(p, (size_t)(end - p), key, klen);
	}
	strbuf_add(&out, p, (size_t)(end - p));
	strbuf_release(sb);
	*sb = out;
}

void secret_scrub_buf(char *buf, size_t cap, const char *key)
{
	if (!key || !*key || !strstr(buf, key))
		return;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, buf);
	secret_scrub(&sb, key);
	snprintf(buf, cap, "%s", sb.buf);
	strbuf_release(&sb);
}
