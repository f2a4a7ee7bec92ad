/* gate.h - what stands between a client's callers and its endpoint: a semaphore for
 * max_concurrent requests in flight and a token bucket for requests_per_minute. */
#ifndef SB_LLM_GATE_H
#define SB_LLM_GATE_H

#include <pthread.h>

struct gate {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	int in_flight, max_in_flight;
	double rate_per_s;   /* 0 = no rate limit */
	double burst;        /* bucket size: requests allowed back to back */
	double tokens;       /* may go negative: each caller reserves its token and sleeps its own debt */
	double refilled_at;  /* monotonic seconds */
};

void gate_init(struct gate *g, int max_concurrent, int requests_per_minute, int burst);
void gate_destroy(struct gate *g);
/* Waits for a rate token, then for a free slot. Returns the seconds spent waiting. */
double gate_enter(struct gate *g);
void gate_leave(struct gate *g);

#endif
