/* http.h - one HTTP request over libcurl, with a timeout, a size cap on the body and the
 * Retry-After header picked out. No retries here: retry.c decides, client.c loops. */
#ifndef SB_LLM_HTTP_H
#define SB_LLM_HTTP_H

#include <stddef.h>

#include "../core/strbuf.h"

struct http_req {
	const char *method;            /* "GET" or "POST" */
	const char *url;
	const char *body;              /* POST only */
	size_t body_len;
	const char *const *headers;    /* "Name: value", NULL-terminated; may be NULL */
	long timeout_ms;
	size_t max_bytes;              /* body cap; 0 = unlimited */
};

struct http_res {
	long status;                   /* 0 when no HTTP response arrived */
	int curl_code;                 /* CURLE_OK (0) or the transfer's error */
	int too_large;                 /* the body passed max_bytes and the transfer was stopped */
	char curl_msg[256];            /* libcurl's words for curl_code; may quote the URL */
	double retry_after_s;          /* -1 when the response had no usable Retry-After */
	double latency_s;
	struct strbuf body;
};

void http_res_init(struct http_res *r);
void http_res_release(struct http_res *r);
/* Performs the request; the outcome is in r (status or curl_code). Safe from several threads. */
void http_perform(const struct http_req *q, struct http_res *r);

#endif
