/* test_progress.c - the progress line of a run (harness/run/progress.c): the ETA counts down between
 * samples instead of growing with every tick, and says by how much it is overdue; a stopping run's line
 * says what it waits for, and the log gets it once per change. */
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

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void a_stopping_run_says_what_it_waits_for(void **state)
{
	(void)state;
	char *tbuf = NULL, *lbuf = NULL;
	size_t tlen = 0, llen = 0;
	FILE *tty = open_memstream(&tbuf, &tlen), *log = open_memstream(&lbuf, &llen);
	const char *agents[] = { "a" };
	struct progress *t = progress_new(tty, NULL, NULL, agents, 1, 4, 1);
	struct progress *l = progress_new(NULL, log, NULL, agents, 1, 4, 1);
	const char *first = "stopping: waiting for 1 evaluation to end; samples at work: a L1/2 s0";
	const char *then = "stopping: waiting for 1 sample to end; samples at work: a L1/2 s0";
	for (int i = 0; i < 2; i++) {
		progress_stopping(t, first);
		progress_stopping(l, first);
	}
	progress_tick(t, 1, 0); /* a tick while stopping keeps the line */
	progress_stopping(t, then);
	progress_stopping(l, then);
	fflush(tty);
	fflush(log);
	/* the terminal line: the samples, then what the run waits for in place of the in-flight counts and ETA */
	char *last = strrchr(tbuf, '\r');
	assert_non_null(last);
	assert_non_null(strstr(last, "[1/4 samples] stopping: waiting for 1 sample to end; samples at work: a L1/2 s0"));
	assert_null(strstr(last, "ETA"));
	/* the log: one line per change, not one per tick */
	assert_int_equal(count(lbuf, first), 1);
	assert_int_equal(count(lbuf, then), 1);
	progress_free(t);
	progress_free(l);
	fclose(tty);
	fclose(log);
	free(tbuf);
	free(lbuf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_eta_counts_down_between_samples),
		cmocka_unit_test(a_late_estimate_says_overdue),
		cmocka_unit_test(a_stopping_run_says_what_it_waits_for),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
