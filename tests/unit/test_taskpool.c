/* test_taskpool.c - the builders' loop (harness/core/taskpool.c) under many threads: every task runs once
 * and ends once, next() and done() run under the owner's lock, run()s overlap, a task that next() holds
 * back until others end waits for the broadcast after done(), and stop ends threads that wait. The
 * callbacks count what they see; the assertions run on the test's own thread. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "core/taskpool.h"

#define NTASK 400

struct owner {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	size_t next, ended;
	int locked;                /* set while a callback that must hold the lock runs */
	int ran[NTASK], done[NTASK];
	atomic_int in_run, most_in_run, unlocked;  /* unlocked: next() or done() called without the lock */
	int gate;                  /* tasks at or past this wait until `ended` reaches it */
	int stop;
};

static void *take(void *arg, int *stop)
{
	struct owner *o = arg;
	if (pthread_mutex_trylock(&o->lock) == 0) {
		pthread_mutex_unlock(&o->lock);
		atomic_fetch_add(&o->unlocked, 1);
	}
	if (o->stop || o->next >= NTASK) {
		*stop = 1;
		return NULL;
	}
	if ((int)o->next >= o->gate && (int)o->ended < o->gate)
		return NULL; /* held back: wait for the broadcast after a done() */
	return &o->ran[o->next++];
}

static void run(void *arg, void *task)
{
	struct owner *o = arg;
	int now = atomic_fetch_add(&o->in_run, 1) + 1, most = atomic_load(&o->most_in_run);
	while (now > most && !atomic_compare_exchange_weak(&o->most_in_run, &most, now))
		;
	struct timespec ts = { 0, 200000 };
	nanosleep(&ts, NULL);
	__atomic_fetch_add((int *)task, 1, __ATOMIC_SEQ_CST);
	atomic_fetch_sub(&o->in_run, 1);
}

static void done(void *arg, void *task)
{
	struct owner *o = arg;
	if (pthread_mutex_trylock(&o->lock) == 0) {
		pthread_mutex_unlock(&o->lock);
		atomic_fetch_add(&o->unlocked, 1);
	}
	o->done[(int *)task - o->ran]++;
	o->ended++;
}

static void every_task_runs_once_and_ends_once(void **state)
{
	(void)state;
	struct owner o = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .gate = NTASK / 2 };
	struct taskpool tp = { &o.lock, &o.wake, &o, take, run, done, NULL, 0 };
	assert_int_equal(taskpool_start(&tp, 8), 8);
	taskpool_join(&tp);
	assert_int_equal(o.next, NTASK);
	assert_int_equal(o.ended, NTASK);
	for (int i = 0; i < NTASK; i++) {
		assert_int_equal(o.ran[i], 1);
		assert_int_equal(o.done[i], 1);
	}
	assert_true(atomic_load(&o.most_in_run) > 1); /* run() does run side by side */
	assert_int_equal(atomic_load(&o.unlocked), 0);
	assert_null(tp.threads);
	assert_int_equal(tp.n, 0);
}

static void stop_ends_threads_that_wait(void **state)
{
	(void)state;
	/* a gate nothing opens: every thread waits in next(); stop, broadcast, and all of them end */
	struct owner o = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .gate = 1, .next = 1 };
	struct taskpool tp = { &o.lock, &o.wake, &o, take, run, done, NULL, 0 };
	assert_int_equal(taskpool_start(&tp, 4), 4);
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&o.lock);
	o.stop = 1;
	pthread_cond_broadcast(&o.wake);
	pthread_mutex_unlock(&o.lock);
	taskpool_join(&tp);
	assert_int_equal(o.ended, 0);
	assert_int_equal(atomic_load(&o.unlocked), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_task_runs_once_and_ends_once),
		cmocka_unit_test(stop_ends_threads_that_wait),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
