/* taskpool.c - see taskpool.h. */
#include "taskpool.h"

#include <stdlib.h>

#include "strbuf.h"

static void *pool_thread(void *arg)
{
	struct taskpool *tp = arg;
	pthread_mutex_lock(tp->lock);
	for (;;) {
		int stop = 0;
		void *task;
		while (!(task = tp->next(tp->owner, &stop)) && !stop)
			pthread_cond_wait(tp->wake, tp->lock);
		if (!task)
			break;
		pthread_mutex_unlock(tp->lock);
		tp->run(tp->owner, task);
		pthread_mutex_lock(tp->lock);
		tp->done(tp->owner, task);
		pthread_cond_broadcast(tp->wake);
	}
	pthread_mutex_unlock(tp->lock);
	return NULL;
}

int taskpool_start(struct taskpool *tp, int n)
{
	tp->threads = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*tp->threads));
	tp->n = 0;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&tp->threads[tp->n], NULL, pool_thread, tp))
			break;
		tp->n++;
	}
	return tp->n;
}

void taskpool_join(struct taskpool *tp)
{
	for (int i = 0; i < tp->n; i++)
		pthread_join(tp->threads[i], NULL);
	free(tp->threads);
	tp->threads = NULL;
	tp->n = 0;
}
