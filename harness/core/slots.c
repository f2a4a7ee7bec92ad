/* slots.c - the exclusive slot pool: a mutex, a condition variable and one busy flag per slot; a waiter
 * is woken when any slot is given back. */
#include "slots.h"

#include <stdlib.h>

#include "strbuf.h"

void slot_pool_init(struct slot_pool *p, int n)
{
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->n = n < 1 ? 1 : n;
	p->busy = xcalloc((size_t)p->n, sizeof(*p->busy));
	p->taken = xcalloc((size_t)p->n, sizeof(*p->taken));
}

void slot_pool_destroy(struct slot_pool *p)
{
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->busy);
	free(p->taken);
	p->busy = NULL;
	p->taken = NULL;
	p->n = 0;
}

int slot_take(struct slot_pool *p)
{
	pthread_mutex_lock(&p->mu);
	for (;;) {
		for (int k = 0; k < p->n; k++)
			if (!p->busy[k]) {
				p->busy[k] = 1;
				p->taken[k]++;
				pthread_mutex_unlock(&p->mu);
				return k;
			}
		pthread_cond_wait(&p->cv, &p->mu);
	}
}

void slot_put(struct slot_pool *p, int k)
{
	pthread_mutex_lock(&p->mu);
	if (k >= 0 && k < p->n)
		p->busy[k] = 0;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int slot_busy(struct slot_pool *p)
{
	pthread_mutex_lock(&p->mu);
	int n = 0;
	for (int k = 0; k < p->n; k++)
		n += p->busy[k];
	pthread_mutex_unlock(&p->mu);
	return n;
}
