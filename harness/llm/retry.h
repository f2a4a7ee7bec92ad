/* retry.h - the retry policy: which failures are worth another attempt, how long to wait before it
 * (exponential backoff with full jitter, Retry-After as a floor), and Retry-After parsing. */
#ifndef SB_LLM_RETRY_H
#define SB_LLM_RETRY_H

#include <stdint.h>
#include <time.h>

#include "llm.h"

struct retry_policy {
	double base_s, cap_s;      /* backoff ceiling: min(cap, base * 2^(attempt-1)) */
	double retry_after_cap_s;  /* the longest Retry-After honoured */
	int max_attempts;
};

/* 408, 429 and every 5xx: the server may answer differently next time. */
int retry_status_is_transient(long status);
/* Maps a libcurl result to an error kind and says whether another attempt could help. Nothing listening
 * (connection refused, host unknown) is not retried: the next attempt seconds later finds the same, and a
 * run would spend minutes per call waiting for it. */
enum llm_errkind retry_classify_curl(int curl_code, int too_large, int *retryable);
/* 1 for the libcurl results that mean nothing answers at the address now (refused, unresolvable). */
int retry_curl_unreachable(int curl_code);

/* Whether an endpoint is down: how many calls in a row found nothing listening. */
struct endpoint_health {
	int unreachable_in_a_row;
};
/* Records how one call ended (unreachable: every attempt found nothing listening; else it got an answer or
 * another failure, which resets the count). Returns 1 when the endpoint counts as down: down_after calls in
 * a row were unreachable (down_after <= 0: never). */
int retry_note_call(struct endpoint_health *h, int unreachable, int down_after);
/* Seconds to sleep after failed attempt number `attempt` (1-based). retry_after_s < 0: none given.
 * rng is the caller's xorshift state. */
double retry_backoff_s(const struct retry_policy *p, int attempt, double retry_after_s, uint64_t *rng);
/* A Retry-After value in seconds: delta-seconds or an HTTP-date relative to now; -1 if unparsable. */
double retry_after_parse(const char *value, time_t now);
/* Sleeps, resuming after signals. */
void retry_sleep(double seconds);
/* Monotonic seconds, for latencies. */
double retry_now(void);

#endif
