/* test_gpu_slots.c - the evaluation scheduler of `run --gpus` without a GPU: the slot pool
 * (harness/core/slots.c) under many threads with fake device ids, and the --gpus list parser
 * (harness/run/gpus.c) against a pretended device count. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "core/slots.h"
#include "sched/gpus.h"

static void slots_are_assigned_lowest_free_first(void **state)
{
	(void)state;
	struct slot_pool p;
	slot_pool_init(&p, 3);
	assert_int_equal(slot_take(&p), 0);
	assert_int_equal(slot_take(&p), 1);
	assert_int_equal(slot_take(&p), 2);
	assert_int_equal(slot_busy(&p), 3);
	slot_put(&p, 1);
	assert_int_equal(slot_busy(&p), 2);
	assert_int_equal(slot_take(&p), 1);
	slot_put(&p, 0);
	slot_put(&p, 1);
	slot_put(&p, 2);
	assert_int_equal(slot_busy(&p), 0);
	assert_int_equal(p.taken[0], 1);
	assert_int_equal(p.taken[1], 2);
	slot_pool_destroy(&p);
}

/* Fake GPUs: each slot stands for a device id; an "evaluation" marks the device busy for a moment. */
#define NSLOTS 4
#define NTHREADS 12
#define ROUNDS 40
struct farm {
	struct slot_pool pool;
	int device_id[NSLOTS];
	atomic_int on_device[NSLOTS]; /* evaluations on each device right now */
	atomic_int running, peak, clashes;
	atomic_int per_device_total[NSLOTS];
};

static void *evaluator(void *arg)
{
	struct farm *f = arg;
	for (int r = 0; r < ROUNDS; r++) {
		int k = slot_take(&f->pool);
		if (atomic_fetch_add(&f->on_device[k], 1) != 0)
			atomic_fetch_add(&f->clashes, 1);
		int now = atomic_fetch_add(&f->running, 1) + 1;
		for (int peak = atomic_load(&f->peak); now > peak && !atomic_compare_exchange_weak(&f->peak, &peak, now);)
			;
		atomic_fetch_add(&f->per_device_total[k], 1);
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
		atomic_fetch_sub(&f->running, 1);
		atomic_fetch_sub(&f->on_device[k], 1);
		slot_put(&f->pool, k);
	}
	return NULL;
}

static void never_two_evaluations_on_one_device_and_every_device_used(void **state)
{
	(void)state;
	struct farm *f = calloc(1, sizeof(*f));
	slot_pool_init(&f->pool, NSLOTS);
	const int ids[NSLOTS] = { 0, 2, 5, 7 }; /* what --gpus 0,2,5,7 would give */
	memcpy(f->device_id, ids, sizeof(ids));
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, evaluator, f);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&f->clashes), 0);
	assert_true(atomic_load(&f->peak) <= NSLOTS);
	assert_true(atomic_load(&f->peak) >= 2); /* the slots do run side by side */
	int total = 0;
	for (int k = 0; k < NSLOTS; k++) {
		assert_true(atomic_load(&f->per_device_total[k]) > 0);
		assert_int_equal((size_t)atomic_load(&f->per_device_total[k]), f->pool.taken[k]);
		total += atomic_load(&f->per_device_total[k]);
	}
	assert_int_equal(total, NTHREADS * ROUNDS);
	assert_int_equal(slot_busy(&f->pool), 0);
	slot_pool_destroy(&f->pool);
	free(f);
}

struct waiter {
	struct slot_pool *pool;
	atomic_int got;
};

static void *wait_for_slot(void *arg)
{
	struct waiter *w = arg;
	int k = slot_take(w->pool);
	atomic_store(&w->got, k + 1);
	return NULL;
}

static void a_full_pool_waits_until_a_slot_is_given_back(void **state)
{
	(void)state;
	struct slot_pool p;
	slot_pool_init(&p, 2);
	slot_take(&p);
	slot_take(&p);
	struct waiter w = { &p, 0 };
	pthread_t t;
	pthread_create(&t, NULL, wait_for_slot, &w);
	struct timespec ts = { 0, 50 * 1000000L };
	nanosleep(&ts, NULL);
	assert_int_equal(atomic_load(&w.got), 0); /* still waiting */
	slot_put(&p, 1);
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&w.got), 2); /* it got slot 1, the one given back */
	slot_pool_destroy(&p);
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
		cmocka_unit_test(slots_are_assigned_lowest_free_first),
		cmocka_unit_test(never_two_evaluations_on_one_device_and_every_device_used),
		cmocka_unit_test(a_full_pool_waits_until_a_slot_is_given_back),
		cmocka_unit_test(gpu_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
