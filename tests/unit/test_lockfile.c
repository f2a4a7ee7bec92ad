/* test_lockfile.c - the locks of harness/core/lockfile.c: a held lock names its holder to the next
 * process (flock conflicts between two open files of one process too, so one process can play both),
 * the GPU lock is one per physical device whatever CUDA_VISIBLE_DEVICES calls it, and the CPU takes none. */
#include "testutil.h"

#include "core/lockfile.h"

static void a_held_lock_names_its_holder(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), held[512];
	char *path = xstrfmt("%s/sub/run.lock", dir);
	struct lockfile a = LOCKFILE_INIT, b = LOCKFILE_INIT;
	struct sb_error err = { 0 };
	assert_int_equal(lockfile_take(&a, path, 0, "stitchbench run", NULL, 0, &err), 0);
	assert_int_equal(lockfile_take(&b, path, 0, "stitchbench run --resume", held, sizeof(held), &err), 1);
	char *want = xstrfmt("pid %d on ", (int)getpid());
	assert_non_null(strstr(held, want));
	assert_non_null(strstr(held, ": stitchbench run, since "));
	assert_int_equal(b.fd, -1);
	lockfile_release(&a);
	assert_int_equal(lockfile_take(&b, path, 0, "stitchbench run --resume", held, sizeof(held), &err), 0);
	lockfile_release(&b);
	free(want);
	free(path);
	tmpdir_remove(dir);
}

static void one_gpu_lock_per_physical_device(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), warning[1024];
	struct lockfile a = LOCKFILE_INIT, b = LOCKFILE_INIT, c = LOCKFILE_INIT;
	struct sb_error err = { 0 };
	/* physical GPU 5 is cuda:1 for the first process and cuda:0 for the second */
	setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
	assert_int_equal(lockfile_device(&a, dir, "cuda:1", warning, sizeof(warning), &err), 0);
	assert_string_equal(warning, "");
	setenv("CUDA_VISIBLE_DEVICES", "5", 1);
	assert_int_equal(lockfile_device(&b, dir, "cuda:0", warning, sizeof(warning), &err), 1);
	assert_non_null(strstr(warning, "cuda:0 (GPU 5 of "));
	assert_non_null(strstr(warning, "the timings of both will interfere"));
	assert_non_null(strstr(warning, "timing on cuda:1"));
	/* GPU 3 is free */
	setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
	assert_int_equal(lockfile_device(&c, dir, "cuda:0", warning, sizeof(warning), &err), 0);
	unsetenv("CUDA_VISIBLE_DEVICES");
	lockfile_release(&a);
	lockfile_release(&c);
	tmpdir_remove(dir);
}

static void the_cpu_takes_no_lock(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), warning[64] = "x";
	struct lockfile a = LOCKFILE_INIT, b = LOCKFILE_INIT;
	struct sb_error err = { 0 };
	assert_int_equal(lockfile_device(&a, dir, "cpu", warning, sizeof(warning), &err), 0);
	assert_int_equal(lockfile_device(&b, dir, "cpu", warning, sizeof(warning), &err), 0);
	assert_string_equal(warning, "");
	assert_int_equal(a.fd, -1);
	char *locks = xstrfmt("%s/locks", dir);
	struct stat st;
	assert_int_not_equal(stat(locks, &st), 0);
	free(locks);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_held_lock_names_its_holder),
		cmocka_unit_test(one_gpu_lock_per_physical_device),
		cmocka_unit_test(the_cpu_takes_no_lock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
