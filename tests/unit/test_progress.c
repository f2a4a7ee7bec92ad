/* test_progress.c - the progress line of a run (harness/run/progress.c): the ETA counts down between
 * samples instead of growing with every tick, and says by how much it is overdue. */
#include "testutil.h"

#include <math.h>
#include <time.h>

#include "run/progress.h"

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

/* The ETA of the last line drawn, in seconds (negative when overdue); NAN without one. */
static double last_eta(char *buf)
{
	char *line = strrchr(buf, '\r');
	char *eta = line ? strstr(line, "| ETA ") : NULL;
	int m, s;
	if (!eta)
		return NAN;
	eta += strlen("| ETA ");
	int late = !strncmp(eta, "overdue ", 8);
	if (late)
		eta += 8;
	if (sscanf(eta, "%dm%ds", &m, &s) != 2)
		return NAN;
	return (late ? -1 : 1) * (m * 60.0 + s);
}

static void the_eta_counts_down_between_samples(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *tty = open_memstream(&buf, &len);
	const char *agents[] = { "a" };
	/* 1000 samples: one that takes 0.3 s leaves an estimate of about 300 s, so whole seconds show it */
	struct progress *p = progress_new(tty, NULL, NULL, agents, 1, 1000, 0);
	nap(0.3);
	progress_sample(p, 0, "L1/1", 0, "stop: attempts", NAN, 1);
	progress_tick(p, 1, 0);
	fflush(tty);
	double first = last_eta(buf);
	nap(0.9);
	progress_tick(p, 1, 0);
	fflush(tty);
	double later = last_eta(buf);
	assert_true(first > 250 && first < 400);
	/* counted down by the 0.9 s that passed (with a second of rounding); growing would be ~900 s */
	assert_true(later <= first);
	assert_true(later >= first - 2);
	progress_free(p);
	fclose(tty);
	free(buf);
}

static void a_late_estimate_says_overdue(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *tty = open_memstream(&buf, &len);
	const char *agents[] = { "a" };
	/* 2 samples: the first took ~0.2 s, so the second is due ~0.2 s later; after 1.3 s it is ~1 s late */
	struct progress *p = progress_new(tty, NULL, NULL, agents, 1, 2, 0);
	nap(0.2);
	progress_sample(p, 0, "L1/1", 0, "stop: attempts", NAN, 1);
	nap(1.3);
	progress_tick(p, 1, 0);
	fflush(tty);
	double eta = last_eta(buf);
	assert_true(eta <= -1 && eta >= -2);
	assert_non_null(strstr(strrchr(buf, '\r'), "ETA overdue 0m01s"));
	progress_free(p);
	fclose(tty);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_eta_counts_down_between_samples),
		cmocka_unit_test(a_late_estimate_says_overdue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
