/* test_verdict_host.c - the host's side of a GPU verdict (harness/eval/verdict.c): each side's host time per
 * call, its longest lead and its exposed calls in the JSON, and the host-bound judgement, in the JSON
 * (timing.host_bound) and as a warning in the text, made only when the launch was kept out of the timed
 * span (a lead) and the candidate's host time dwarfs both its GPU time and the reference's host time;
 * and the launch-bound note (timing.launch_bound), made when the reference's host time per call is at
 * least 3x its GPU time, timed with a lead. */
#include "testutil.h"

#include "eval/rtchecks.h"
#include "eval/verdict.h"

static void side(struct timing_side *s, double gpu_us, double host_us, int lead_us, int exposed)
{
	double g[3] = { gpu_us, gpu_us, gpu_us }, h[3] = { host_us, host_us, host_us };
	s->available = 1;
	stats_compute(g, 3, &s->us);
	stats_compute(h, 3, &s->host_us);
	s->lead_us_max = lead_us;
	s->exposed = exposed;
}

/* A timed GPU verdict with both sides set (the candidate with 2 exposed calls). */
static void timed(struct verdict *v, double ref_gpu, double ref_host, double cand_gpu, double cand_host, int lead)
{
	verdict_init(v);
	v->timing.ran = 1;
	snprintf(v->timing.clock, sizeof(v->timing.clock), "cuda_event");
	side(&v->timing.eager, ref_gpu, ref_host, lead, 0);
	side(&v->timing.candidate, cand_gpu, cand_host, lead, 2);
}

/* The JSON's timing.<flag>, which must be a boolean, and whether the text says `said`; both must agree. */
static int judged(struct verdict *v, const char *flag, const char *said)
{
	struct strbuf text = STRBUF_INIT;
	json_t *j = verdict_to_json(v);
	json_t *b = json_object_get(json_object_get(j, "timing"), flag);
	assert_true(json_is_boolean(b));
	int yes = json_is_true(b);
	json_decref(j);
	verdict_print(v, &text);
	assert_int_equal(strstr(text.buf, said) != NULL, yes);
	assert_non_null(strstr(text.buf, "lead up to"));
	strbuf_release(&text);
	v->timing.ran = 0;
	verdict_release(v);
	return yes;
}

/* The verdict's timing.host_bound after setting both sides; the text warning must agree with it. */
static int judged_host_bound(double cand_gpu, double cand_host, double ref_host, int lead)
{
	struct verdict v;
	timed(&v, 100, ref_host, cand_gpu, cand_host, lead);
	json_t *j = verdict_to_json(&v);
	json_t *c = json_object_get(json_object_get(j, "timing"), "candidate");
	assert_true(json_real_value(json_object_get(json_object_get(c, "host"), "median_us")) == cand_host);
	assert_int_equal(json_integer_value(json_object_get(c, "lead_us_max")), lead);
	assert_int_equal(json_integer_value(json_object_get(c, "exposed_calls")), 2);
	json_decref(j);
	return judged(&v, "host_bound", "warning: the candidate is host-bound");
}

static void host_bound_only_when_the_host_dwarfs_both(void **state)
{
	(void)state;
	assert_int_equal(judged_host_bound(20, 900, 300, 1400), 1);  /* 900 us of host for 20 us of GPU, 3x the reference's */
	assert_int_equal(judged_host_bound(20, 30, 300, 1400), 0);   /* host time within 2x its GPU time */
	assert_int_equal(judged_host_bound(20, 400, 300, 1400), 0);  /* no more host time than 1.5x the reference's */
	assert_int_equal(judged_host_bound(20, 900, 300, 0), 0);     /* no lead: the host's launch was in the time */
}

/* The verdict's timing.launch_bound for a reference of gpu_us on the GPU and host_us on the host; the text
 * note must agree with it. */
static int judged_launch_bound(double gpu_us, double host_us, int lead)
{
	struct verdict v;
	timed(&v, gpu_us, host_us, gpu_us, host_us, lead);
	return judged(&v, "launch_bound", "note: the reference is launch-bound");
}

static void launch_bound_when_the_reference_launches_more_than_it_runs(void **state)
{
	(void)state;
	assert_int_equal(judged_launch_bound(260, 1360, 2000), 1); /* L3/4 on a GPU: 5.2x */
	assert_int_equal(judged_launch_bound(144, 430, 700), 0);   /* just under 3x */
	assert_int_equal(judged_launch_bound(63, 80, 200), 0);     /* L2/1: the host keeps pace */
	assert_int_equal(judged_launch_bound(260, 1360, 0), 0);    /* no lead: the CPU, or the launches timed */
}

/* Timed end to end (no lead), the GPU-only diagnostic decides instead: the same judgements from its
 * calls, and none without it. */
static int judged_from_gpu_only(double ref_gpu, double ref_host, double cand_gpu, double cand_host, const char *flag,
				const char *said)
{
	struct verdict v;
	timed(&v, ref_host, ref_host, cand_host, cand_host, 0); /* end to end: the time is about the host's */
	struct gpu_only_time *g = &v.timing.gpu_only;
	double x[4][3] = { { ref_gpu, ref_gpu, ref_gpu }, { ref_host, ref_host, ref_host }, { cand_gpu, cand_gpu, cand_gpu },
			   { cand_host, cand_host, cand_host } };
	if (ref_gpu > 0) {
		g->measured = 1;
		g->lead_us = 2000;
		stats_compute(x[0], 3, &g->eager);
		stats_compute(x[1], 3, &g->eager_host);
		stats_compute(x[2], 3, &g->candidate);
		stats_compute(x[3], 3, &g->candidate_host);
		g->speedup = ref_gpu / cand_gpu;
	}
	json_t *j = verdict_to_json(&v);
	json_t *go = json_object_get(json_object_get(j, "timing"), "gpu_only");
	assert_int_equal(json_is_object(go), ref_gpu > 0);
	json_decref(j);
	return judged(&v, flag, said);
}

static void end_to_end_timing_is_judged_from_the_gpu_only_calls(void **state)
{
	(void)state;
	assert_int_equal(judged_from_gpu_only(260, 1360, 260, 1360, "launch_bound", "note: the reference is launch-bound"), 1);
	assert_int_equal(judged_from_gpu_only(63, 80, 63, 80, "launch_bound", "note: the reference is launch-bound"), 0);
	assert_int_equal(judged_from_gpu_only(0, 1360, 0, 1360, "launch_bound", "note: the reference is launch-bound"), 0);
	assert_int_equal(judged_from_gpu_only(100, 300, 20, 900, "host_bound", "warning: the candidate is host-bound"), 1);
	assert_int_equal(judged_from_gpu_only(100, 300, 20, 30, "host_bound", "warning: the candidate is host-bound"), 0);
}

/* H21's floor is held to the GPU's time: a value cache timed end to end costs its host side (~30 us of
 * Python and a one-element read), above the ~25 us that moving L1/2's 128 MB takes an H200-class GPU,
 * while its GPU-only calls run a 4-byte copy (3 us), below it. */
static double floor_time_of(double cand_e2e, double cand_gpu_only, int lead, int *gpu_only)
{
	struct verdict v;
	timed(&v, 60, 60, cand_e2e, cand_e2e, lead);
	if (cand_gpu_only > 0) {
		double g[3] = { cand_gpu_only, cand_gpu_only, cand_gpu_only }, h[3] = { 30, 30, 30 };
		v.timing.gpu_only.measured = 1;
		stats_compute(h, 3, &v.timing.gpu_only.eager);
		stats_compute(h, 3, &v.timing.gpu_only.eager_host);
		stats_compute(g, 3, &v.timing.gpu_only.candidate);
		stats_compute(h, 3, &v.timing.gpu_only.candidate_host);
	}
	double us = rt_floor_time(&v.timing, gpu_only);
	v.timing.ran = 0;
	verdict_release(&v);
	return us;
}

static void the_floor_is_held_to_the_gpu_only_time(void **state)
{
	(void)state;
	int gpu_only;
	assert_true(floor_time_of(30, 3, 0, &gpu_only) == 3 && gpu_only);
	assert_true(floor_time_of(30, 0, 0, &gpu_only) == 30 && !gpu_only); /* not measured: the end-to-end time */
	assert_true(floor_time_of(30, 40, 0, &gpu_only) == 30 && !gpu_only); /* the lower of the two */
	assert_true(floor_time_of(30, 0, 2000, &gpu_only) == 30 && gpu_only); /* timed with a lead: GPU only already */
	struct findings f = { 0 };
	struct floor_result r;
	struct floor_input in = { .gpu = 1, .bytes = 134217728.0, .peak_bytes_per_s = 4.2e12,
				  .candidate_us = floor_time_of(30, 3, 0, &gpu_only), .speedup_eager = 2 };
	floor_judge(&in, &r, &f);
	assert_true(r.judged && r.below && findings_has(&f, "H21"));
	findings_release(&f);
	in.candidate_us = floor_time_of(30, 0, 0, &gpu_only);
	floor_judge(&in, &r, &f);
	assert_true(r.judged && !r.below && !findings_has(&f, "H21"));
	findings_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_bound_only_when_the_host_dwarfs_both),
		cmocka_unit_test(launch_bound_when_the_reference_launches_more_than_it_runs),
		cmocka_unit_test(end_to_end_timing_is_judged_from_the_gpu_only_calls),
		cmocka_unit_test(the_floor_is_held_to_the_gpu_only_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
