/* http.h - serve's HTTP front end on libmicrohttpd: routes, bearer tokens, body limits and status codes
 * around the queue (docs/serve.md). One thread per connection, so a synchronous request simply waits. */
#ifndef SB_SERVE_HTTP_H
#define SB_SERVE_HTTP_H

#include <stddef.h>

#include "../core/context.h"
#include "../core/error.h"
#include "api.h"
#include "clients.h"
#include "queue.h"

struct http_opts {
	const char *host;            /* an IPv4 address to listen on: 127.0.0.1, 0.0.0.0 */
	unsigned port;               /* 0: any free port (http_port says which) */
	size_t max_body;             /* bytes; a larger body is 413 */
	unsigned connections;        /* at once; each synchronous request holds one while it waits */
	unsigned idle_timeout_s;     /* a connection that sends nothing this long is closed (slow clients) */
	const struct sb_ctx *ctx;
	struct serve_queue *queue;
	const struct serve_clients *clients;
	const struct api_limits *limits;
};

struct http_server;

int http_start(struct http_server **out, const struct http_opts *o, struct sb_error *err);
unsigned http_port(const struct http_server *s);
/* Closes every connection and joins their threads: stop the queue first, so that waiting ones answer. */
void http_stop(struct http_server *s);

#endif
