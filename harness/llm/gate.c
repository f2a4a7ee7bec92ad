/* gate.c - concurrency slots and the request-rate token bucket of one client.
 * The rate token is taken before the slot: sleeping for a token while holding a slot would idle
 * the slot and let the endpoint see fewer parallel requests than configured. */
#include "gate.h"

#include "retry.h"

void gate_init(struct gate *g, int max_concurrent, int requests_per_minute, int burst)
{
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->freed, NULL);
	g->in_flight = 0;
	g->max_in_flight = max_concurrent > 0 ? max_concurrent : 1;
	g->rate_per_s = requests_per_minute > 0 ? requests_per_minute / 60.0 : 0;
	g->burst = burst > 0 ? burst : 1;
	g->tokens = g->burst;
	g->refilled_at = retry_now();
}

void gate_destroy(struct gate *g)
{
	pthread_cond_destroy(&g->freed);
	pthread_mutex_destroy(&g->mu);
}

double gate_enter(struct gate *g)
{
	double t0 = retry_now(), wait = 0;
	pthread_mutex_lock(&g->mu);
	if (g->rate_per_s > 0) {
		g->tokens += (t0 - g->refilled_at) * g->rate_per_s;
		if (g->tokens > g->burst)
			g->tokens = g->burst;
		g->refilled_at = t0;
		g->tokens -= 1;
		if (g->tokens < 0)
			wait = -g->tokens / g->rate_per_s;
	}
	pthread_mutex_unlock(&g->mu);
	retry_sleep(wait);
	pthread_mutex_lock(&g->mu);
	while (g->in_flight >= g->max_in_flight)
		pthread_cond_wait(&g->freed, &g->mu);
	g->in_flight++;
	pthread_mutex_unlock(&g->mu);
	return retry_now() - t0;
}

void gate_leave(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->in_flight--;
	pthread_cond_signal(&g->freed);
	pthread_mutex_unlock(&g->mu);
}
