/* test_noise.c - the busy-machine judgement of a timing window (harness/eval/timing/noise.c): other processes'
 * share of the CPU time, steal and the reference's own spread, each alone enough to call a window noisy;
 * and a real reading of this machine while this process spins on purpose. */
#include "testutil.h"

#include <math.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval/timing/timing.h"

static struct noise_probe at(unsigned long long busy, unsigned long long total, unsigned long long steal,
			     unsigned long long own)
{
	return (struct noise_probe){ 1, busy, total, steal, own };
}

static void a_quiet_window_is_not_noisy(void **state)
{
	(void)state;
	struct noise_probe a = at(1000, 10000, 0, 500), b = at(1950, 12000, 0, 1400);
	struct machine_noise n;
	noise_judge(&a, &b, 2, 0.02, &n);
	assert_true(n.measured);
	assert_false(n.noisy);
	/* 950 busy jiffies of 2000, 900 of them the workers': others 2.5% */
	assert_true(fabs(n.others_pct - 2.5) < 1e-9);
	assert_string_equal(n.why, "");
}

static void other_processes_make_it_noisy(void **state)
{
	(void)state;
	struct noise_probe a = at(1000, 10000, 0, 500), b = at(2900, 12000, 0, 1400);
	struct machine_noise n;
	noise_judge(&a, &b, 2, 0.02, &n);
	assert_true(n.noisy);
	assert_true(fabs(n.others_pct - 50.0) < 1e-9);
	assert_non_null(strstr(n.why, "other processes took 50% of the 2 CPUs' time"));
}

static void steal_and_a_spread_reference_each_make_it_noisy(void **state)
{
	(void)state;
	struct noise_probe a = at(1000, 10000, 100, 500), b = at(2000, 12000, 200, 1400);
	struct machine_noise n;
	noise_judge(&a, &b, 2, 0.02, &n);
	assert_true(n.noisy);
	assert_non_null(strstr(n.why, "the hypervisor took 5.0% (steal)"));
	assert_false(strstr(n.why, "other processes")); /* steal is not counted twice */
	struct noise_probe c = at(1000, 10000, 0, 500), d = at(1900, 12000, 0, 1400);
	noise_judge(&c, &d, 2, 0.25, &n);
	assert_true(n.noisy);
	assert_string_equal(n.why, "the reference's own times spread by 25% (cv)");
}

static void an_unreadable_window_is_not_measured(void **state)
{
	(void)state;
	struct noise_probe a = { 0 }, b = at(2000, 12000, 0, 0);
	struct machine_noise n;
	noise_judge(&a, &b, 2, NAN, &n);
	assert_false(n.measured);
	assert_false(n.noisy);
	assert_true(isnan(n.others_pct));
}

/* The real /proc: a child that spins through the window. Not given as a worker its CPU time is other
 * work; given as one, exactly that time moves from the others' share to the workers'. */
static void a_spinning_child_is_seen_as_other_work(void **state)
{
	(void)state;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < 0.6);
		_exit(0);
	}
	struct noise_probe a, b;
	struct machine_noise as_own, as_other;
	usleep(50000);
	noise_read(&a, &pid, 1);
	usleep(400000);
	noise_read(&b, &pid, 1);
	waitpid(pid, NULL, 0);
	noise_judge(&a, &b, (int)cpus, 0.01, &as_own);
	/* the child's share of the machine's time in the window: on a loaded machine less than one CPU */
	double child = 100.0 * (double)(b.own - a.own) / (double)(b.total - a.total);
	a.own = b.own = 0;
	noise_judge(&a, &b, (int)cpus, 0.01, &as_other);
	assert_true(as_other.measured);
	assert_true(child > 0);
	assert_true(as_other.others_pct >= child - 1e-9);
	/* the process and the machine count ticks apart: a few jiffies may differ, and a share below 0 is 0 */
	double jiffies = 100.0 * 3 / (double)(b.total - a.total);
	assert_true(fabs((as_other.others_pct - as_own.others_pct) - child) < jiffies + 1e-6 ||
		    (as_own.others_pct == 0 && as_other.others_pct <= child + jiffies));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_quiet_window_is_not_noisy),
		cmocka_unit_test(other_processes_make_it_noisy),
		cmocka_unit_test(steal_and_a_spread_reference_each_make_it_noisy),
		cmocka_unit_test(an_unreadable_window_is_not_measured),
		cmocka_unit_test(a_spinning_child_is_seen_as_other_work),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
