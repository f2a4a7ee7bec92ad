/* clients.c - the clients of `serve` and their bearer tokens (clients.h). A token never leaves this file:
 * it is read from the environment, compared, and never logged or answered. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "clients.h"

static int name_ok(const char *s, size_t len)
{
	if (!len || len >= 64)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

static struct serve_client *grow(struct serve_clients *c)
{
	c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
	struct serve_client *x = &c->v[c->n++];
	memset(x, 0, sizeof(*x));
	return x;
}

int clients_add(struct serve_clients *c, const char *spec, struct sb_error *err)
{
	const char *colon = strchr(spec, ':');
	if (!colon || !name_ok(spec, (size_t)(colon - spec)))
		return sb_error_set(err, SB_EINPUT, "--client %s: expected NAME:ENV[:PRIORITY[:BUDGET_S]], NAME of letters, "
				    "digits, '.', '_' or '-' (e.g. --client trainer:SB_TRAINER_TOKEN:10:36000)", spec);
	char *rest = xstrdup(colon + 1);
	char *env = rest, *prio = NULL, *budget = NULL, *p;
	if ((p = strchr(env, ':'))) {
		*p = '\0';
		prio = p + 1;
		if ((p = strchr(prio, ':'))) {
			*p = '\0';
			budget = p + 1;
		}
	}
	int rc = 0;
	long priority = 0;
	double budget_s = 0;
	char *end;
	if (!*env || strlen(env) >= sizeof(c->v->env)) {
		rc = sb_error_set(err, SB_EINPUT, "--client %s: no environment variable named for the token", spec);
	} else if (prio && *prio && (errno = 0, priority = strtol(prio, &end, 10), *end || errno || priority < -1000 ||
				     priority > 1000)) {
		rc = sb_error_set(err, SB_EINPUT, "--client %s: priority '%s' is not an integer from -1000 to 1000", spec, prio);
	} else if (budget && *budget && (budget_s = strtod(budget, &end), *end || !(budget_s >= 0))) {
		rc = sb_error_set(err, SB_EINPUT, "--client %s: budget '%s' is not a number of seconds >= 0 (0: no limit)",
				  spec, budget);
	}
	char name[64];
	snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
	if (!rc && clients_find(c, name))
		rc = sb_error_set(err, SB_EINPUT, "--client %s: a client named %s is already given", spec, name);
	const char *token = rc ? NULL : getenv(env);
	if (!rc && (!token || !*token))
		rc = sb_error_set(err, SB_EENV, "--client %s: $%s is %s; export the client's token in it before starting the "
				  "server (a server that would accept anyone by mistake is refused)", spec, env,
				  token ? "empty" : "not set");
	for (size_t i = 0; !rc && i < c->n; i++)
		if (c->v[i].token && !strcmp(c->v[i].token, token))
			rc = sb_error_set(err, SB_EINPUT, "--client %s: $%s holds the same token as client %s's; each client "
					  "needs its own", spec, env, c->v[i].name);
	if (!rc) {
		struct serve_client *x = grow(c);
		snprintf(x->name, sizeof(x->name), "%s", name);
		snprintf(x->env, sizeof(x->env), "%s", env);
		x->token = xstrdup(token);
		x->priority = (int)priority;
		x->budget_s = budget_s;
	}
	free(rest);
	return rc;
}

void clients_add_open(struct serve_clients *c, int priority, double budget_s)
{
	struct serve_client *x = grow(c);
	snprintf(x->name, sizeof(x->name), "anonymous");
	x->priority = priority;
	x->budget_s = budget_s;
}

void clients_release(struct serve_clients *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].token);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

int clients_need_token(const struct serve_clients *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].token)
			return 1;
	return 0;
}

/* Equal strings in time that depends on their lengths only, not on where they first differ. */
static int same_secret(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	unsigned char diff = alen != blen;
	for (size_t i = 0; i < alen; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (blen ? blen : 1)];
	return !diff;
}

const struct serve_client *clients_auth(const struct serve_clients *c, const char *authorization)
{
	if (!clients_need_token(c))
		return c->n ? &c->v[0] : NULL;
	if (!authorization || strncasecmp(authorization, "Bearer ", 7))
		return NULL;
	const char *tok = authorization + 7;
	while (*tok == ' ')
		tok++;
	size_t len = strlen(tok);
	while (len && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
		len--;
	const struct serve_client *found = NULL;
	/* every client is compared, so the time does not say which one matched */
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].token && len && same_secret(tok, len, c->v[i].token) && !found)
			found = &c->v[i];
	return found;
}

const struct serve_client *clients_find(const struct serve_clients *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}
