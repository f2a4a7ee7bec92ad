/* slots.h - a pool of N exclusive slots (one per GPU in `run --gpus`, one per core for the builds a GPU run
 * makes ahead of its evaluations): a thread takes the lowest free slot, waiting while all are busy, and
 * gives it back; no slot is ever held by two threads at once. */
#ifndef SB_SLOTS_H
#define SB_SLOTS_H

#include <pthread.h>
#include <stddef.h>

struct slot_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n;
	unsigned char *busy;   /* busy[k]: slot k is held */
	size_t *taken;         /* how often each slot was taken (progress, tests) */
};

/* n >= 1 slots, all free. */
void slot_pool_init(struct slot_pool *p, int n);
void slot_pool_destroy(struct slot_pool *p);
/* Waits for a free slot, marks it held and returns its index (the lowest free one, so that with one
 * evaluation at a time the first device does the work and the rest stay idle). */
int slot_take(struct slot_pool *p);
/* Gives slot k back and wakes one waiter. */
void slot_put(struct slot_pool *p, int k);
/* How many slots are held now. */
int slot_busy(struct slot_pool *p);

#endif
