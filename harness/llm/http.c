/* http.c - the libcurl transfer: one easy handle per request, headers from the caller, body into a
 * strbuf. Nothing here logs: headers carry the API key, and libcurl's verbose mode would print it. */
#include "http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "retry.h"

#ifndef SB_VERSION
#define SB_VERSION "0.0.0"
#endif

/* curl_global_init must run once before any thread uses libcurl and is not itself thread-safe on
 * every libcurl build. Doing it here, once, keeps every user of the LLM client (the CLI, the unit
 * tests, future worker threads) correct without an init call to remember. The once-flag is the
 * only static state and is never written after that. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
}

void http_res_init(struct http_res *r)
{
	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	strbuf_init(&r->body, 0);
}

void http_res_release(struct http_res *r)
{
	strbuf_release(&r->body);
}

struct sink {
	struct http_res *r;
	size_t max;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	if (s->max && s->r->body.len + len > s->max) {
		s->r->too_large = 1;
		return 0; /* makes libcurl stop with CURLE_WRITE_ERROR */
	}
	strbuf_add(&s->r->body, data, len);
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	if (len > 5 && !strncmp(data, "HTTP/", 5)) {
		s->r->retry_after_s = -1; /* a new response (after a redirect or 100-continue) */
	} else if (len > sizeof(name) - 1 && !strncasecmp(data, name, sizeof(name) - 1)) {
		char v[128];
		size_t vl = len - (sizeof(name) - 1);
		snprintf(v, sizeof(v), "%.*s", (int)(vl < sizeof(v) - 1 ? vl : sizeof(v) - 1), data + sizeof(name) - 1);
		v[strcspn(v, "\r\n")] = '\0';
		s->r->retry_after_s = retry_after_parse(v, time(NULL));
	}
	return len;
}

/* With CURLOPT_NOSIGNAL (required when threads share the process) libcurl no longer ignores SIGPIPE
 * for us. Blocking it in this thread during the transfer, and discarding one raised by a write to a
 * closed connection, keeps the process alive without changing its signal dispositions, which
 * every child process would inherit. */
static void perform_without_sigpipe(CURL *h, struct http_res *r)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	r->curl_code = curl_easy_perform(h);
	if (!sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void http_perform(const struct http_req *q, struct http_res *r)
{
	pthread_once(&curl_once, curl_init_once);
	struct sink sink = { r, q->max_bytes };
	struct curl_slist *hl = NULL;
	CURL *h = curl_easy_init();
	if (!h) {
		r->curl_code = CURLE_FAILED_INIT;
		snprintf(r->curl_msg, sizeof(r->curl_msg), "libcurl could not create a handle");
		return;
	}
	for (const char *const *p = q->headers; p && *p; p++)
		hl = curl_slist_append(hl, *p);
	long connect_ms = q->timeout_ms < 30000 ? q->timeout_ms : 30000;
	curl_easy_setopt(h, CURLOPT_URL, q->url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, q->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "stitchbench/" SB_VERSION);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->curl_msg);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
	if (!strcmp(q->method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body ? q->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(q->body ? q->body_len : 0));
	}
	r->curl_msg[0] = '\0';
	double t0 = retry_now();
	perform_without_sigpipe(h, r);
	r->latency_s = retry_now() - t0;
	if (r->curl_code != CURLE_OK && !r->curl_msg[0])
		snprintf(r->curl_msg, sizeof(r->curl_msg), "%s", curl_easy_strerror(r->curl_code));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hl);
	curl_easy_cleanup(h);
}
