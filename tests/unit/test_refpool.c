/* test_refpool.c - kept reference workers (harness/eval/ref/refpool.c) with real worker processes speaking
 * the protocol (tests/fixtures/fake_timing_worker.py): the same key gets the same live process back,
 * another problem on the device stops it and removes its folder, devices are kept apart, a worker that
 * died is never handed out, and drain leaves nothing running. */
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "eval/ref/ref.h"

static const char *python(void)
{
	const char *p = getenv("STITCHBENCH_PYTHON");
	return p && *p ? p : "python3";
}

/* A worker running the fake script in a folder of its own, as evaluate.c makes them. */
static struct refpool_item start_item(void)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	char *rel = xstrfmt("%s/tests/fixtures/fake_timing_worker.py", root ? root : "."), *script = realpath(rel, NULL);
	assert_non_null(script);
	struct refpool_item it = { .dir = tmpdir_make(), .loaded = 1 };
	/* the fake takes its base time as argv[1]: a wrapper passes it */
	char *wrapper = xstrfmt("%s/w.py", it.dir);
	FILE *f = fopen(wrapper, "w");
	fprintf(f, "import sys, runpy\nsys.argv = ['fake', '10']\nrunpy.run_path('%s', run_name='__main__')\n", script);
	fclose(f);
	struct worker_spec spec = { python(), wrapper, it.dir, NULL, NULL, 0, 1, NULL };
	struct sb_error err = { 0 };
	assert_int_equal(worker_start(&it.w, &spec, &err), 0);
	free(rel);
	free(script);
	free(wrapper);
	return it;
}

/* The worker replies to a request. */
static int answers(struct worker *w)
{
	json_t *req = json_pack("{s:s}", "cmd", "warmup"), *reply = NULL;
	struct worker_fault f;
	int rc = worker_call(w, req, &reply, proc_now() + 10, &f);
	json_decref(req);
	json_decref(reply);
	return rc == 0;
}

static int alive(pid_t pid)
{
	return kill(pid, 0) == 0;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void the_same_problem_gets_the_same_process_back(void **state)
{
	(void)state;
	struct refpool_item a = start_item(), got;
	pid_t pid = a.w.h.pid;
	char *dir = xstrdup(a.dir);
	refpool_put("L1/2", "cuda:0", &a);
	assert_int_equal(refpool_size(), 1);
	assert_int_equal(refpool_take("L1/2", "cuda:0", &got), 0);
	assert_int_equal(got.w.h.pid, pid);
	assert_string_equal(got.dir, dir);
	assert_int_equal(got.loaded, 1);
	assert_int_equal(refpool_size(), 0);
	assert_true(answers(&got.w)); /* it still answers */

	/* another problem on the same device: the kept worker stops and its folder goes */
	refpool_put("L1/2", "cuda:0", &got);
	assert_int_equal(refpool_take("L1/3", "cuda:0", &got), -1);
	assert_int_equal(refpool_size(), 0);
	assert_false(exists(dir));
	for (int i = 0; i < 50 && alive(pid); i++)
		usleep(100 * 1000);
	assert_false(alive(pid));
	free(dir);
}

static void devices_are_kept_apart_and_drain_stops_all(void **state)
{
	(void)state;
	struct refpool_item a = start_item(), b = start_item(), c = start_item();
	pid_t pa = a.w.h.pid, pb = b.w.h.pid, pc = c.w.h.pid;
	refpool_put("L1/2", "cuda:0", &a);
	refpool_put("L1/2", "cuda:1", &b);
	assert_int_equal(refpool_size(), 2);
	/* a newer worker for cuda:0 replaces the one kept there */
	refpool_put("L2/1", "cuda:0", &c);
	assert_int_equal(refpool_size(), 2);
	for (int i = 0; i < 50 && alive(pa); i++)
		usleep(100 * 1000);
	assert_false(alive(pa));
	assert_true(alive(pb) && alive(pc));
	refpool_drain();
	assert_int_equal(refpool_size(), 0);
	for (int i = 0; i < 50 && (alive(pb) || alive(pc)); i++)
		usleep(100 * 1000);
	assert_false(alive(pb));
	assert_false(alive(pc));
}

static void a_dead_worker_is_never_handed_out(void **state)
{
	(void)state;
	struct refpool_item a = start_item(), got;
	char *dir = xstrdup(a.dir);
	kill(a.w.h.pid, SIGKILL);
	refpool_put("L1/2", "cuda:0", &a); /* nobody has noticed yet: it is kept */
	assert_int_equal(refpool_take("L1/2", "cuda:0", &got), -1);
	assert_int_equal(refpool_size(), 0);
	assert_false(exists(dir));
	free(dir);
}

/* A spare (started for the next problem of a batch, nothing loaded) serves a problem that has no kept
 * worker; the other problem's worker is stopped then, but a take of that problem leaves the spare. */
static void a_spare_serves_the_next_problem(void **state)
{
	(void)state;
	struct refpool_item a = start_item(), spare = start_item(), other = start_item(), got;
	pid_t pa = a.w.h.pid, ps = spare.w.h.pid, po = other.w.h.pid;
	spare.loaded = 0;
	refpool_put("L1/2", "cuda:0", &a);
	refpool_put_spare("cuda:0", &spare);
	refpool_put_spare("cuda:1", &other); /* another device's spare is not this device's */
	assert_int_equal(refpool_size(), 3);
	/* the same problem: its own worker, the spare stays */
	assert_int_equal(refpool_take("L1/2", "cuda:0", &got), 0);
	assert_int_equal(got.w.h.pid, pa);
	assert_int_equal(refpool_size(), 2);
	refpool_put("L1/2", "cuda:0", &got);
	/* the next problem: the spare, unloaded; L1/2's worker stops */
	assert_int_equal(refpool_take("L1/3", "cuda:0", &got), 0);
	assert_int_equal(got.w.h.pid, ps);
	assert_int_equal(got.loaded, 0);
	assert_true(answers(&got.w));
	for (int i = 0; i < 50 && alive(pa); i++)
		usleep(100 * 1000);
	assert_false(alive(pa));
	assert_int_equal(refpool_size(), 1);
	/* no spare left on cuda:0: a third problem starts its own */
	refpool_put("L1/3", "cuda:0", &got);
	assert_int_equal(refpool_take("L1/4", "cuda:0", &got), -1);
	assert_int_equal(refpool_size(), 1);
	assert_true(alive(po));
	refpool_drain();
	for (int i = 0; i < 50 && (alive(ps) || alive(po)); i++)
		usleep(100 * 1000);
	assert_false(alive(ps) || alive(po));
}

static void *start_and_keep(void *arg)
{
	(void)arg;
	struct refpool_item it = start_item();
	refpool_put("L1/2", "cpu", &it);
	return NULL; /* this thread ends here, as a finished sample's session thread does in `run` */
}

/* `run` starts a reference worker in one session's thread and times another session's candidate
 * against it after that thread has ended: the worker must not die with the thread that started it.
 * PR_SET_PDEATHSIG would tie it to that thread, which tests/e2e/test_run.sh shows as "the reference
 * during timing: the worker was killed by SIGKILL"; whether this simpler case shows it depends on the
 * kernel, so the e2e test is the one that catches it. */
static void a_kept_worker_outlives_the_thread_that_started_it(void **state)
{
	(void)state;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, start_and_keep, NULL), 0);
	pthread_join(t, NULL);
	usleep(300 * 1000);
	struct refpool_item got;
	assert_int_equal(refpool_take("L1/2", "cpu", &got), 0);
	assert_true(answers(&got.w));
	refpool_put("L1/2", "cpu", &got);
	refpool_drain();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_same_problem_gets_the_same_process_back),
		cmocka_unit_test(devices_are_kept_apart_and_drain_stops_all),
		cmocka_unit_test(a_dead_worker_is_never_handed_out),
		cmocka_unit_test(a_spare_serves_the_next_problem),
		cmocka_unit_test(a_kept_worker_outlives_the_thread_that_started_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
