/* retry.c - backoff and retry decisions, kept free of I/O so the policy can be read in one place.
 * Full jitter (sleep uniform in [0, ceiling]) spreads the retries of many agent threads that hit
 * the same overloaded endpoint at once, instead of sending them back in lockstep. */
#include "retry.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

int retry_status_is_transient(long status)
{
	return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

enum llm_errkind retry_classify_curl(int curl_code, int too_large, int *retryable)
{
	*retryable = 0;
	if (too_large)
		return LLM_ERR_TOO_LARGE;
	switch ((CURLcode)curl_code) {
	case CURLE_OPERATION_TIMEDOUT:
		*retryable = 1;
		return LLM_ERR_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
		return LLM_ERR_CONNECT; /* nothing listening: the call fails now, retry_note_call counts it */
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		*retryable = 1;
		return LLM_ERR_CONNECT;
	default:
		/* a malformed URL, an unsupported protocol, a bad certificate: the same next time */
		return LLM_ERR_CONNECT;
	}
}

int retry_curl_unreachable(int curl_code)
{
	return curl_code == CURLE_COULDNT_CONNECT || curl_code == CURLE_COULDNT_RESOLVE_HOST ||
	       curl_code == CURLE_COULDNT_RESOLVE_PROXY;
}

int retry_note_call(struct endpoint_health *h, int unreachable, int down_after)
{
	h->unreachable_in_a_row = unreachable ? h->unreachable_in_a_row + 1 : 0;
	return down_after > 0 && h->unreachable_in_a_row >= down_after;
}

static double uniform01(uint64_t *s)
{
	/* xorshift64*: the state is the caller's, so there is no hidden global generator */
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

double retry_backoff_s(const struct retry_policy *p, int attempt, double retry_after_s, uint64_t *rng)
{
	double ceiling = p->base_s * ldexp(1.0, attempt > 1 ? (attempt > 60 ? 60 : attempt - 1) : 0);
	if (ceiling > p->cap_s)
		ceiling = p->cap_s;
	double wait = ceiling * uniform01(rng);
	if (retry_after_s >= 0) {
		/* the server knows when it will take requests again: never sooner, but not forever */
		double ra = retry_after_s < p->retry_after_cap_s ? retry_after_s : p->retry_after_cap_s;
		if (wait < ra)
			wait = ra;
	}
	return wait;
}

double retry_after_parse(const char *value, time_t now)
{
	while (*value == ' ' || *value == '\t')
		value++;
	if (isdigit((unsigned char)*value)) {
		char *end;
		errno = 0;
		double s = strtod(value, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		return errno || *end || s < 0 ? -1 : s;
	}
	time_t t = curl_getdate(value, &now);
	if (t < 0)
		return -1;
	return t > now ? (double)(t - now) : 0;
}

void retry_sleep(double seconds)
{
	if (seconds <= 0)
		return;
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

double retry_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
