/* http.c - serve's routes on libmicrohttpd (http.h). A token is checked and a declared body size judged
 * before the body is read, so a refused client never gets to send megabytes; every refusal is JSON. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../core/log.h"
#include "http.h"

#define LONG_POLL_MAX_S 600

enum route { R_NONE, R_HEALTH, R_METRICS, R_EVALUATE, R_SUBMIT, R_JOB };

struct http_server {
	struct http_opts o;
	struct MHD_Daemon *d;
	unsigned port;
};

/* One request's state across the handler's calls. */
struct http_req {
	enum route route;
	const struct serve_client *client;
	struct strbuf body;
	int too_big;
	char job[33];
};

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *j, const char *hname,
				 const char *hvalue)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text)
		return MHD_NO;
	size_t len = strlen(text);
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return send_json(c, status, api_error_json((int)status, msg), NULL, NULL);
}

static enum MHD_Result send_unauthorized(struct MHD_Connection *c)
{
	return send_json(c, MHD_HTTP_UNAUTHORIZED,
			 api_error_json(401, "missing or wrong bearer token: send 'Authorization: Bearer TOKEN' with a "
					     "token this server was started with"),
			 MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"stitchbench\"");
}

static int is_job_id(const char *s)
{
	if (strlen(s) != 32)
		return 0;
	for (; *s; s++)
		if (!strchr("0123456789abcdef", *s))
			return 0;
	return 1;
}

/* The route of a URL and method; *allow names the methods of a known URL asked with another. */
static enum route route_of(const char *url, const char *method, const char **allow, char job[33])
{
	int get = !strcmp(method, MHD_HTTP_METHOD_GET), post = !strcmp(method, MHD_HTTP_METHOD_POST);
	*allow = NULL;
	if (!strcmp(url, "/v1/health") || !strcmp(url, "/v1/metrics")) {
		*allow = "GET";
		return get ? (url[4] == 'h' ? R_HEALTH : R_METRICS) : R_NONE;
	}
	if (!strcmp(url, "/v1/evaluate") || !strcmp(url, "/v1/jobs")) {
		*allow = "POST";
		return post ? (url[4] == 'e' ? R_EVALUATE : R_SUBMIT) : R_NONE;
	}
	if (!strncmp(url, "/v1/jobs/", 9) && is_job_id(url + 9)) {
		*allow = "GET";
		memcpy(job, url + 9, 33);
		return get ? R_JOB : R_NONE;
	}
	return R_NONE;
}

/* A number from the query string within [lo, hi]; def when absent; -1 when malformed. */
static int query_seconds(struct MHD_Connection *c, const char *name, double lo, double hi, double def, double *out)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	char *end;
	*out = def;
	if (!s)
		return 0;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= lo))
		return -1;
	*out = v > hi ? hi : v;
	return 0;
}

static int query_full(struct MHD_Connection *c, int *full)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "verdicts");
	*full = 1;
	if (!s)
		return 0;
	if (strcmp(s, "full") && strcmp(s, "summary"))
		return -1;
	*full = !strcmp(s, "full");
	return 0;
}

static enum MHD_Result answer_job(struct http_server *s, struct MHD_Connection *c, const struct serve_client *cl,
				  const char *job, int full, unsigned status)
{
	struct job_view v;
	struct sb_error err = { 0 };
	int rc = queue_job(s->o.queue, job, cl, &v, &err);
	if (rc < 0) {
		sb_error(s->o.ctx, "serve: job %s: %s", job, err.msg);
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, err.msg);
	}
	if (!rc)
		return send_error(c, MHD_HTTP_NOT_FOUND, "no such job for this client");
	json_t *j = api_job_json(&v, full);
	job_view_release(&v);
	char *loc = xstrfmt("/v1/jobs/%s", job);
	enum MHD_Result r = send_json(c, status, j, MHD_HTTP_HEADER_LOCATION, loc);
	free(loc);
	return r;
}

static enum MHD_Result handle_job(struct http_server *s, struct MHD_Connection *c, struct http_req *q)
{
	double wait;
	int full;
	if (query_seconds(c, "wait", 0, LONG_POLL_MAX_S, 0, &wait) || query_full(c, &full))
		return send_error(c, MHD_HTTP_BAD_REQUEST, "query: wait=SECONDS (0 to 600, a long poll) and "
					"verdicts=full|summary");
	/* the job as it stands once it ended, the wait ran out or the server is stopping */
	if (wait > 0)
		queue_wait(s->o.queue, q->job, wait);
	return answer_job(s, c, q->client, q->job, full, MHD_HTTP_OK);
}

static enum MHD_Result handle_submit(struct http_server *s, struct MHD_Connection *c, struct http_req *q)
{
	struct serve_request r;
	struct api_error e = { 0 };
	struct submit_answer a;
	struct sb_error err = { 0 };
	char retry[16];
	if (api_parse_request(q->body.buf, q->body.len, s->o.limits, &r, &e)) {
		serve_request_release(&r);
		return send_error(c, (unsigned)e.status, e.msg);
	}
	if (q->route == R_SUBMIT && r.has_wait) {
		serve_request_release(&r);
		return send_error(c, MHD_HTTP_BAD_REQUEST, "wait: POST /v1/jobs answers at once; long-poll GET "
					"/v1/jobs/ID?wait=SECONDS, or POST /v1/evaluate to wait in one request");
	}
	int full = r.full;
	double wait = r.wait_s;
	int rc = queue_submit(s->o.queue, q->client, &r, &a, &err);
	serve_request_release(&r);
	if (rc) {
		sb_error(s->o.ctx, "serve: a submission failed: %s", err.msg);
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, err.msg);
	}
	switch (a.result) {
	case SUBMIT_FULL:
		snprintf(retry, sizeof(retry), "%d", a.retry_after);
		return send_json(c, MHD_HTTP_TOO_MANY_REQUESTS, api_error_json(429, a.why), MHD_HTTP_HEADER_RETRY_AFTER, retry);
	case SUBMIT_BUDGET:
		return send_error(c, MHD_HTTP_FORBIDDEN, a.why);
	case SUBMIT_CONFLICT:
		return send_error(c, MHD_HTTP_CONFLICT, a.why);
	case SUBMIT_STOPPING:
		return send_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, api_error_json(503, a.why), MHD_HTTP_HEADER_RETRY_AFTER, "30");
	case SUBMIT_OK:
	case SUBMIT_EXISTING:
		break;
	}
	sb_debug(s->o.ctx, "serve: job %s for %s: %zu queued", a.job, q->client->name, a.queued);
	if (q->route == R_SUBMIT)
		return answer_job(s, c, q->client, a.job, full, a.result == SUBMIT_OK ? MHD_HTTP_ACCEPTED : MHD_HTTP_OK);
	int done = queue_wait(s->o.queue, a.job, wait);
	if (done < 0) {
		char msg[200];
		snprintf(msg, sizeof(msg), "the server is stopping; job %s is kept and answered after a restart (GET "
			 "/v1/jobs/%s, or send the request again with the same request_id)", a.job, a.job);
		return send_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, api_error_json(503, msg), MHD_HTTP_HEADER_RETRY_AFTER, "30");
	}
	return answer_job(s, c, q->client, a.job, full, done ? MHD_HTTP_OK : MHD_HTTP_ACCEPTED);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct http_req *q = *con_cls;
	(void)version;
	if (!q) {
		const char *allow;
		q = xcalloc(1, sizeof(*q));
		strbuf_init(&q->body, 0);
		*con_cls = q;
		q->route = route_of(url, method, &allow, q->job);
		if (q->route == R_NONE) {
			if (allow)
				return send_json(c, MHD_HTTP_METHOD_NOT_ALLOWED, api_error_json(405, "method not allowed here"),
						 MHD_HTTP_HEADER_ALLOW, allow);
			return send_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint: /v1/evaluate, /v1/jobs, /v1/jobs/ID, "
						 "/v1/health and /v1/metrics are (docs/serve.md)");
		}
		/* health says only that the server is up and what it judges: a load balancer asks it without a token */
		if (q->route == R_HEALTH)
			return send_json(c, MHD_HTTP_OK, queue_health(s->o.queue), NULL, NULL);
		q->client = clients_auth(s->o.clients,
					 MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
		if (!q->client)
			return send_unauthorized(c);
		if (q->route == R_METRICS)
			return send_json(c, MHD_HTTP_OK, queue_metrics(s->o.queue, s->o.clients), NULL, NULL);
		if (q->route == R_JOB)
			return handle_job(s, c, q);
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > s->o.max_body) {
			char msg[160];
			snprintf(msg, sizeof(msg), "the body is %s bytes, this server takes at most %zu (--max-body); split "
				 "the batch", cl, s->o.max_body);
			return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, msg);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		/* a body without a declared length is read to its end, and kept only up to the limit */
		if (!q->too_big && q->body.len + *upload_size <= s->o.max_body)
			strbuf_add(&q->body, upload_data, *upload_size);
		else
			q->too_big = 1;
		*upload_size = 0;
		return MHD_YES;
	}
	if (q->too_big) {
		char msg[120];
		snprintf(msg, sizeof(msg), "the body is over %zu bytes (--max-body); split the batch", s->o.max_body);
		return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, msg);
	}
	return handle_submit(s, c, q);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct http_req *q = *con_cls;
	(void)cls;
	(void)c;
	(void)toe;
	if (!q)
		return;
	strbuf_release(&q->body);
	free(q);
	*con_cls = NULL;
}

int http_start(struct http_server **out, const struct http_opts *o, struct sb_error *err)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)o->port);
	if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1)
		return sb_error_set(err, SB_EINPUT, "--listen %s: not an IPv4 address (127.0.0.1 for this machine only, "
				    "0.0.0.0 for every interface)", o->host);
	struct http_server *s = xcalloc(1, sizeof(*s));
	s->o = *o;
	s->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG,
				(uint16_t)o->port, NULL, NULL, handler, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, o->connections,
				MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_END);
	if (!s->d) {
		free(s);
		return sb_error_set(err, SB_EENV, "cannot listen on %s:%u (in use, or not an address of this machine); "
				    "--port 0 picks a free port", o->host, o->port);
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : o->port;
	*out = s;
	return 0;
}

unsigned http_port(const struct http_server *s)
{
	return s->port;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}
