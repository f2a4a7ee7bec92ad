/* clients.h - who may call `serve`: clients known by a bearer token read from an environment variable,
 * each with a priority and a budget of evaluation seconds. Without any, the server is open to one
 * anonymous client. */
#ifndef SB_SERVE_CLIENTS_H
#define SB_SERVE_CLIENTS_H

#include <stddef.h>

#include "../core/error.h"

struct serve_client {
	char name[64];
	char env[128];     /* the variable its token was read from */
	char *token;       /* NULL for the anonymous client of an open server */
	int priority;      /* higher is judged first; a request may ask for less, never more */
	double budget_s;   /* seconds of evaluation it may be charged; 0: no limit */
};

struct serve_clients {
	struct serve_client *v;
	size_t n;
};

/* Adds a client from "NAME:ENV[:PRIORITY[:BUDGET_S]]", reading its token from $ENV now: an unset or
 * empty variable is SB_EENV, as a server that would accept anyone by mistake is worse than none. */
int clients_add(struct serve_clients *c, const char *spec, struct sb_error *err);
/* The anonymous client of an open server (no token), with that priority and budget. */
void clients_add_open(struct serve_clients *c, int priority, double budget_s);
void clients_release(struct serve_clients *c);
/* Whether requests must carry a token. */
int clients_need_token(const struct serve_clients *c);

/* The client an Authorization header names ("Bearer TOKEN"); the anonymous one on an open server; NULL
 * when the header is missing or its token is no client's. Tokens are compared in constant time. */
const struct serve_client *clients_auth(const struct serve_clients *c, const char *authorization);
const struct serve_client *clients_find(const struct serve_clients *c, const char *name);

#endif
