/* test_procfactor.c - what the process factor does to a speedup (harness/eval/timing/procfactor.c): divided into
 * it, with both intervals at their unfavourable ends, for a launch-heavy reference (told by the GPU-only
 * calls of an end-to-end timing) or when forced; for any other reference the point stays and the interval
 * spans both readings; a factor that was not measured changes nothing; the spread between processes widens
 * every interval. */
#include "testutil.h"

#include <math.h>

#include "eval/eval_int.h"

static void timed(struct timing_result *t, double s, double lo, double hi, double f, double flo, double fhi)
{
	memset(t, 0, sizeof(*t));
	t->ran = 1;
	t->speedup_eager = s, t->speedup_eager_lo = lo, t->speedup_eager_hi = hi;
	t->factor.measured = f > 0;
	t->factor.value = f, t->factor.lo = flo, t->factor.hi = fhi;
}

static void gpu_only(struct timing_result *t, double gpu, double host)
{
	double g[2] = { gpu, gpu }, h[2] = { host, host };
	t->gpu_only.measured = 1;
	stats_compute(g, 2, &t->gpu_only.eager);
	stats_compute(h, 2, &t->gpu_only.eager_host);
	stats_compute(g, 2, &t->gpu_only.candidate);
	stats_compute(h, 2, &t->gpu_only.candidate_host);
}

static void not_launch_heavy_widens_the_interval_only(void **state)
{
	(void)state;
	struct timing_result t;
	timed(&t, 1.00, 0.99, 1.01, 1.05, 1.04, 1.06);
	gpu_only(&t, 100, 120); /* the host keeps pace */
	eval_apply_process_factor(&t, 0);
	assert_false(t.factor.applied);
	assert_true(t.factor.widened);
	assert_true(t.speedup_eager == 1.00);
	assert_true(fabs(t.speedup_eager_lo - 0.99 / 1.06) < 1e-12);
	assert_true(t.speedup_eager_hi == 1.01); /* 1.01 / 1.04 is inside already */
}

static void launch_heavy_divides_the_speedup(void **state)
{
	(void)state;
	struct timing_result t;
	timed(&t, 1.00, 0.99, 1.01, 1.05, 1.04, 1.06);
	gpu_only(&t, 250, 1300); /* 5.2x: L3/4 on a GPU */
	eval_apply_process_factor(&t, 0);
	assert_true(t.factor.applied && t.factor.launch_heavy);
	assert_true(fabs(t.speedup_eager - 1 / 1.05) < 1e-12);
	assert_true(fabs(t.speedup_eager_lo - 0.99 / 1.06) < 1e-12);
	assert_true(t.speedup_eager_hi == 1.01); /* the speedup as measured stays inside: 1.01 / 1.04 would end below it */
	timed(&t, 0.85, 0.81, 0.92, 1.18, 1.10, 1.21); /* a factor that moved the point the wrong way */
	gpu_only(&t, 250, 1300);
	eval_apply_process_factor(&t, 0);
	assert_true(fabs(t.speedup_eager - 0.85 / 1.18) < 1e-12);
	assert_true(fabs(t.speedup_eager_lo - 0.81 / 1.21) < 1e-12 && t.speedup_eager_hi == 0.92);
	timed(&t, 1.00, 0.99, 1.01, 1.05, 1.04, 1.06); /* no GPU-only calls, but eval.process_factor = on */
	eval_apply_process_factor(&t, 1);
	assert_true(t.factor.applied && !t.factor.launch_heavy);
	assert_true(fabs(t.speedup_eager - 1 / 1.05) < 1e-12);
}

static void an_unmeasured_factor_changes_nothing(void **state)
{
	(void)state;
	struct timing_result t;
	timed(&t, 1.20, 1.10, 1.30, 0, 0, 0);
	gpu_only(&t, 250, 1300);
	eval_apply_process_factor(&t, 1);
	assert_false(t.factor.applied || t.factor.widened);
	assert_true(t.speedup_eager == 1.20 && t.speedup_eager_lo == 1.10 && t.speedup_eager_hi == 1.30);
}

/* The spread between processes goes into each side in quadrature on a log scale: a narrow interval grows
 * to about +-1.96 sd, a wide one barely moves, the point never moves, and 0 changes nothing. */
static void the_spread_between_processes_widens_each_side(void **state)
{
	(void)state;
	struct timing_result t;
	timed(&t, 1.00, 1.00, 1.00, 0, 0, 0);
	eval_widen_for_processes(&t, 1.3);
	assert_true(t.speedup_eager == 1.00 && t.process_spread_pct == 1.3);
	assert_true(fabs(t.speedup_eager_lo - exp(-0.02548)) < 1e-9 && fabs(t.speedup_eager_hi - exp(0.02548)) < 1e-9);
	timed(&t, 2.00, 1.60, 2.02, 0, 0, 0); /* wide below, narrow above */
	eval_widen_for_processes(&t, 1.3);
	double a = log(2.0 / 1.6), b = log(2.02 / 2.0), e = 0.02548;
	assert_true(fabs(t.speedup_eager_lo - 2.0 * exp(-sqrt(a * a + e * e))) < 1e-9);
	assert_true(t.speedup_eager_lo < 1.60 && t.speedup_eager_lo > 1.59); /* barely moves */
	assert_true(fabs(t.speedup_eager_hi - 2.0 * exp(sqrt(b * b + e * e))) < 1e-9);
	assert_true(t.speedup_eager_hi > 2.05); /* grows past the spread */
	timed(&t, 1.20, 1.10, 1.30, 0, 0, 0);
	eval_widen_for_processes(&t, 0);
	assert_true(t.speedup_eager_lo == 1.10 && t.speedup_eager_hi == 1.30 && t.process_spread_pct == 0);
	struct config cfg;
	config_init(&cfg);
	assert_true(eval_process_spread(&cfg, 1) == 1.4 && eval_process_spread(&cfg, 0) == 0);
	cfg.eval.process_spread_pct = 2.5;
	assert_true(eval_process_spread(&cfg, 0) == 2.5);
	config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_launch_heavy_widens_the_interval_only),
		cmocka_unit_test(launch_heavy_divides_the_speedup),
		cmocka_unit_test(an_unmeasured_factor_changes_nothing),
		cmocka_unit_test(the_spread_between_processes_widens_each_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
