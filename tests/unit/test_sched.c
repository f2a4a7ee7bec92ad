/* test_sched.c - the evaluation queue's device slots (sched/sched.h) and the --gpus lists (sched/gpus.h):
 * work that waits for a device runs on one slot at a time, every slot is used, waiters are served in the
 * order they came, and a stopped owner's waiters are told so. Device tasks stand in for evaluations: the
 * slots are the same either way. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "sched/gpus.h"
#include "sched/sched.h"

#define NSLOTS 4
#define NTHREADS 12
#define ROUNDS 5

static const struct sched_ops no_ops = { NULL, NULL, NULL };

/* A queue over `n` fake GPU slots ("cuda:0", "cuda:2", ... as --gpus 0,2,5,7 gives). */
struct farm {
	struct config cfg;
	struct eval_env envs[NSLOTS];
	pthread_mutex_t lock;
	atomic_int stop;
	struct sched *s;
	atomic_int on_device[NSLOTS]; /* tasks on each slot right now */
	atomic_int running, peak, clashes;
	atomic_int per_device_total[NSLOTS];
};

static void farm_start(struct farm *f, int n)
{
	static const int ids[NSLOTS] = { 0, 2, 5, 7 };
	config_init(&f->cfg);
	f->cfg.eval.build_jobs = 1;
	for (int k = 0; k < n; k++)
		snprintf(f->envs[k].device, sizeof(f->envs[k].device), "cuda:%d", ids[k]);
	pthread_mutex_init(&f->lock, NULL);
	struct sched_opts o = { .cfg = &f->cfg, .envs = f->envs, .nenvs = n, .lock = &f->lock, .ops = &no_ops,
				.owner = f, .stop = &f->stop };
	struct sb_error err = { 0 };
	f->s = sched_start(&o, &err);
	assert_non_null(f->s);
}

static void farm_stop(struct farm *f)
{
	sched_stop(f->s);
	pthread_mutex_destroy(&f->lock);
	config_release(&f->cfg);
}

struct job {
	struct farm *f;
	int slot;
};

static void on_slot(const struct eval_env *env, void *arg)
{
	struct job *j = arg;
	struct farm *f = j->f;
	int k = (int)(env - f->envs);
	j->slot = k;
	if (atomic_fetch_add(&f->on_device[k], 1) != 0)
		atomic_fetch_add(&f->clashes, 1);
	int now = atomic_fetch_add(&f->running, 1) + 1;
	for (int peak = atomic_load(&f->peak); now > peak && !atomic_compare_exchange_weak(&f->peak, &peak, now);)
		;
	atomic_fetch_add(&f->per_device_total[k], 1);
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	atomic_fetch_sub(&f->running, 1);
	atomic_fetch_sub(&f->on_device[k], 1);
}

static void *session(void *arg)
{
	struct farm *f = arg;
	for (int r = 0; r < ROUNDS; r++) {
		struct job j = { f, -1 };
		pthread_mutex_lock(&f->lock);
		int rc = sched_device_task(f->s, on_slot, &j);
		pthread_mutex_unlock(&f->lock);
		assert_int_equal(rc, 0);
		assert_true(j.slot >= 0 && j.slot < NSLOTS);
	}
	return NULL;
}

static void never_two_tasks_on_one_device_and_every_device_used(void **state)
{
	(void)state;
	struct farm *f = calloc(1, sizeof(*f));
	farm_start(f, NSLOTS);
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, session, f);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&f->clashes), 0);
	assert_true(atomic_load(&f->peak) <= NSLOTS);
	assert_true(atomic_load(&f->peak) >= 2); /* the slots do run side by side */
	int total = 0;
	for (int k = 0; k < NSLOTS; k++) {
		assert_true(atomic_load(&f->per_device_total[k]) > 0);
		total += atomic_load(&f->per_device_total[k]);
	}
	assert_int_equal(total, NTHREADS * ROUNDS);
	pthread_mutex_lock(&f->lock);
	struct sched_stats st;
	sched_stats(f->s, &st);
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.running, 0);
	assert_int_equal(st.slots, NSLOTS);
	farm_stop(f);
	free(f);
}

/* One slot held by a task that waits for a go; tasks queued behind it run in the order they came. */
struct gate {
	struct farm *f;
	atomic_int go, order[3], next;
};
struct gated {
	struct gate *g;
	int me;
};

static void hold(const struct eval_env *env, void *arg)
{
	(void)env;
	struct gate *g = arg;
	while (!atomic_load(&g->go)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

static void record(const struct eval_env *env, void *arg)
{
	(void)env;
	struct gated *x = arg;
	atomic_store(&x->g->order[atomic_fetch_add(&x->g->next, 1)], x->me);
}

static void *holder(void *arg)
{
	struct gate *g = arg;
	pthread_mutex_lock(&g->f->lock);
	sched_device_task(g->f->s, hold, g);
	pthread_mutex_unlock(&g->f->lock);
	return NULL;
}

static void *waiter(void *arg)
{
	struct gated *x = arg;
	pthread_mutex_lock(&x->g->f->lock);
	int rc = sched_device_task(x->g->f->s, record, x);
	pthread_mutex_unlock(&x->g->f->lock);
	return (void *)(intptr_t)rc;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void waiters_are_served_in_order_and_a_stop_tells_those_not_started(void **state)
{
	(void)state;
	struct farm *f = calloc(1, sizeof(*f));
	struct gate *g = calloc(1, sizeof(*g));
	g->f = f;
	farm_start(f, 1);
	pthread_t h, w[3];
	struct gated x[3];
	pthread_create(&h, NULL, holder, g);
	sleep_ms(50);
	for (int i = 0; i < 3; i++) {
		x[i] = (struct gated){ g, i + 1 };
		pthread_create(&w[i], NULL, waiter, &x[i]);
		sleep_ms(30); /* so that they come in this order */
	}
	assert_int_equal(atomic_load(&g->next), 0); /* all wait behind the held slot */
	atomic_store(&g->go, 1);
	void *rc;
	for (int i = 0; i < 3; i++) {
		pthread_join(w[i], &rc);
		assert_int_equal((intptr_t)rc, 0);
	}
	pthread_join(h, NULL);
	assert_int_equal(atomic_load(&g->order[0]), 1);
	assert_int_equal(atomic_load(&g->order[1]), 2);
	assert_int_equal(atomic_load(&g->order[2]), 3);

	/* the owner stops while one task holds the slot: the waiter behind it is told, and never runs */
	atomic_store(&g->go, 0);
	atomic_store(&g->next, 0);
	pthread_create(&h, NULL, holder, g);
	sleep_ms(50);
	x[0] = (struct gated){ g, 9 };
	pthread_create(&w[0], NULL, waiter, &x[0]);
	sleep_ms(50);
	atomic_store(&f->stop, 1);
	pthread_join(w[0], &rc);
	assert_int_equal((intptr_t)rc, SCHED_STOPPED);
	atomic_store(&g->go, 1);
	pthread_join(h, NULL);
	assert_int_equal(atomic_load(&g->next), 0);
	farm_stop(f);
	free(g);
	free(f);
}

static void gpu_lists(void **state)
{
	(void)state;
	struct sb_error err = { 0 };
	int *idx, n;
	assert_int_equal(gpus_parse("all", 4, &idx, &n, &err), 0);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(idx[i], i);
	free(idx);
	assert_int_equal(gpus_parse("3,1", 4, &idx, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(idx[0], 3);
	assert_int_equal(idx[1], 1);
	free(idx);
	assert_int_equal(gpus_parse("4", 4, &idx, &n, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "GPU 4 does not exist; torch sees 4 (0-3)"));
	assert_null(idx);
	assert_int_equal(gpus_parse("1,1", 4, &idx, &n, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "listed twice"));
	const char *bad[] = { "", "x", "1,", ",1", "1;2", "-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(gpus_parse(bad[i], 4, &idx, &n, &err), SB_EINPUT);
	assert_int_equal(gpus_parse("all", 0, &idx, &n, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "torch sees no GPU"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(never_two_tasks_on_one_device_and_every_device_used),
		cmocka_unit_test(waiters_are_served_in_order_and_a_stop_tells_those_not_started),
		cmocka_unit_test(gpu_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
