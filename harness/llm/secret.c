/* secret.c - reading and scrubbing a model's secrets: the API key and the header values that come from the
 * environment or look secret. Every one is scrubbed, however short: a secret must never reach a file, even
 * at the price of masking a word of a response that happens to equal it. */
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

const char *secrets_env_header(const struct secrets *s, const char *name)
{
	for (size_t i = 0; i < s->nenv; i++)
		if (!strcasecmp(s->env[i].name, name))
			return s->env[i].value;
	return NULL;
}

int secrets_read(const struct model_cfg *m, struct secrets *s, struct sb_error *err)
{
	const char *model = m->name ? m->name : "?";
	memset(s, 0, sizeof(*s));
	s->m = m;
	s->key = secret_read(m->api_key_env);
	s->env = xcalloc(m->nheaders_env ? m->nheaders_env : 1, sizeof(*s->env));
	for (size_t i = 0; i < m->nheaders_env; i++) {
		const struct header_kv *h = &m->headers_env[i];
		char *v = secret_read(h->value);
		if (!v) {
			secrets_release(s);
			return sb_error_set(err, SB_EINPUT, "model %s: headers_env.%s names $%s, which is not set; export it "
					    "(or drop the header)", model, h->name, h->value ? h->value : "");
		}
		s->env[s->nenv++] = (struct header_kv){ xstrdup(h->name), v };
	}
	for (size_t i = 0; i < m->nheaders; i++)
		if (m->headers[i].value && !strcmp(m->headers[i].value, CONFIG_REDACTED) &&
		    !secrets_env_header(s, m->headers[i].name)) {
			int rc = sb_error_set(err, SB_EINPUT, "model %s: header %s is \"%s\": a run's config.yaml never stores a "
					      "secret-looking header; give its value from the environment with --set "
					      "models.%s.headers_env=%s:VARIABLE", model, m->headers[i].name, CONFIG_REDACTED,
					      model, m->headers[i].name);
			secrets_release(s);
			return rc;
		}
	return 0;
}

void secrets_release(struct secrets *s)
{
	secret_free(s->key);
	for (size_t i = 0; s->env && i < s->nenv; i++) {
		free(s->env[i].name);
		secret_free(s->env[i].value);
	}
	free(s->env);
	memset(s, 0, sizeof(*s));
}

void secrets_scrub(const struct secrets *s, struct strbuf *sb)
{
	secret_scrub(sb, s->key);
	for (size_t i = 0; i < s->nenv; i++)
		secret_scrub(sb, s->env[i].value);
	for (size_t i = 0; s->m && i < s->m->nheaders; i++)
		if (config_header_secret(s->m->headers[i].name))
			secret_scrub(sb, s->m->headers[i].value);
}

void secrets_scrub_buf(const struct secrets *s, char *buf, size_t cap)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, buf);
	secrets_scrub(s, &sb);
	snprintf(buf, cap, "%s", sb.buf);
	strbuf_release(&sb);
}
