/* taskpool.h - threads that take tasks from their owner's queue, one at a time each, until the owner says
 * stop: the one loop behind the builds `eval --samples` and `serve` run ahead of their evaluations. The
 * owner keeps its queue under its own lock and decides what runs next (its order, what may overlap what);
 * the pool only runs it outside the lock and says when it ended. */
#ifndef SB_TASKPOOL_H
#define SB_TASKPOOL_H

#include <pthread.h>

struct taskpool {
	pthread_mutex_t *lock;   /* the owner's: held while next() and done() run */
	pthread_cond_t *wake;    /* the owner's: waited on while next() has nothing, broadcast after done() */
	void *owner;
	/* With the lock held: the next task, or NULL with *stop 0 to wait for a broadcast on wake, or NULL
	 * with *stop 1 to end the thread. */
	void *(*next)(void *owner, int *stop);
	void (*run)(void *owner, void *task);   /* without the lock */
	void (*done)(void *owner, void *task);  /* with the lock held, after run() */
	pthread_t *threads;
	int n;
};

/* Starts up to n >= 1 threads; returns how many started (0: none could). */
int taskpool_start(struct taskpool *tp, int n);
/* Waits for every thread to end (the owner's next() must say stop to each) and frees them. */
void taskpool_join(struct taskpool *tp);

#endif
