/* parallel.c - par_for: threads started for one call and joined before it returns. Starting eight threads
 * costs tens of microseconds, nothing beside the milliseconds of the passes that use them, and no pool
 * stays behind to complicate the fork() of every worker. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define PAR_MAX_THREADS 8

struct par_job {
	void (*fn)(void *arg, size_t block);
	void *arg;
	size_t nblocks;
	atomic_size_t next; /* the next block nobody has taken */
};

static void *par_worker(void *p)
{
	struct par_job *job = p;
	for (;;) {
		size_t b = atomic_fetch_add(&job->next, 1);
		if (b >= job->nblocks)
			return NULL;
		job->fn(job->arg, b);
	}
}

int par_threads(void)
{
	const char *env = getenv("STITCHBENCH_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)n;
}

void par_for(size_t nblocks, void (*fn)(void *arg, size_t block), void *arg)
{
	struct par_job job = { .fn = fn, .arg = arg, .nblocks = nblocks };
	pthread_t tid[PAR_MAX_THREADS];
	int want = par_threads(), started = 0;
	atomic_init(&job.next, 0);
	if ((size_t)want > nblocks)
		want = (int)nblocks;
	/* a thread that cannot be started leaves its share to the others: the blocks are taken, not dealt */
	for (int i = 1; i < want; i++)
		if (pthread_create(&tid[started], NULL, par_worker, &job) == 0)
			started++;
	par_worker(&job);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
