/* test_profile_report.c - from trace fixtures to per-call kernel time and span, the kernel table, the
 * JSON and the findings (H01, H04, H05, H06), with numbers worked out by hand from the fixtures. */
#include "testutil.h"

#include <dirent.h>
#include <math.h>

#include "core/config.h"
#include "profile/report.h"
#include "profile/session.h"

static char *fixture(const char *name)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	return xstrfmt("%s/tests/fixtures/traces/%s", root ? root : ".", name);
}

/* Builds the report of calls 1..ncalls (CUDA-event time 174.2 us each) from a fixture. */
static void build(const char *name, size_t ncalls, struct prof_report *r)
{
	struct trace t;
	struct sb_error err = { 0 };
	char *path = fixture(name);
	if (trace_parse_file(path, &t, &err))
		fail_msg("%s", err.msg);
	free(path);
	struct prof_call calls[8];
	for (size_t i = 0; i < ncalls; i++)
		calls[i] = (struct prof_call){ i + 1, 174.2 };
	prof_report_build(r, &t, calls, ncalls, NULL, 0);
	trace_release(&t);
}

/* The report's findings with the default policy's severities: the first max into f, which owns them. */
static size_t findings(const struct prof_report *r, struct finding *f, size_t max)
{
	struct config cfg;
	struct findings l = { 0 };
	config_init(&cfg);
	prof_findings(r, &l);
	policy_apply(cfg.checks.policy, l.v, l.n);
	config_release(&cfg);
	size_t n = l.n < max ? l.n : max;
	for (size_t i = 0; i < l.n; i++)
		if (i < n)
			f[i] = l.v[i];
		else
			free(l.v[i].message);
	free(l.v);
	return n;
}

static void free_findings(struct finding *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].message);
}

static const struct prof_row *row(const struct prof_report *r, const char *short_name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].short_name, short_name))
			return &r->rows[i];
	fail_msg("no row %s", short_name);
	return NULL;
}

static void per_call_sum_span_and_window(void **state)
{
	(void)state;
	struct prof_report r;
	build("two_streams.trace", 3, &r);
	assert_true(r.available && r.complete && r.attributed);
	assert_string_equal(r.end_event, "cuda_event");
	assert_int_equal(r.ntrials, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct prof_trial *t = &r.trials[i];
		assert_true(t->found);
		/* scale 50 + side 30 + gemm 100 + shift 20; the flush before the start event is not the call's */
		assert_float_equal(t->kernel_sum_us, 200.0, 1e-9);
		assert_float_equal(t->span_us, 172.0, 1e-9);   /* 6 us .. 178 us */
		assert_float_equal(t->gpu_window_us, 174.0, 1e-9); /* events at 5 us and 179 us */
		assert_int_equal(t->kernels, 4);
		assert_int_equal(t->custom_kernels, 3);
		assert_int_equal(t->other_stream_kernels, 1); /* the side stream, joined in time */
		assert_int_equal(t->late_kernels, 0);
		assert_int_equal(t->foreign_kernels, 0);
	}
	assert_int_equal(r.trials[0].memsets, 1);
	assert_int_equal(r.trials[1].memsets, 0);
	assert_float_equal(r.kernel_sum_us, 200.0, 1e-9);
	assert_float_equal(r.span_us, 172.0, 1e-9);
	assert_float_equal(r.event_us, 174.2, 1e-9);
	struct finding f[4];
	assert_int_equal(findings(&r, f, 4), 0);
	prof_report_release(&r);
}

static void the_table_sums_calls_by_kernel(void **state)
{
	(void)state;
	struct prof_report r;
	build("two_streams.trace", 3, &r);
	assert_int_equal(r.nrows, 5);
	/* by total time: gemm 300, scale 150 (the warm-up call's launch is not counted), side 90, shift 60 */
	assert_true(!strncmp(r.rows[0].short_name, "sm90_xmma_gemm", 14));
	assert_string_equal(r.rows[1].short_name, "scale_kernel");
	assert_string_equal(r.rows[2].short_name, "side_kernel");
	assert_string_equal(r.rows[3].short_name, "shift_kernel");
	assert_string_equal(r.rows[4].short_name, "[memset]");
	assert_float_equal(r.total_us, 600.3, 1e-9);
	assert_int_equal(r.rows[0].calls, 3);
	assert_false(r.rows[0].custom);
	assert_string_equal(r.rows[0].library, "cuBLAS");
	assert_float_equal(r.rows[0].share, 300.0 / 600.3, 1e-12);
	assert_int_equal(r.rows[0].dynamic_smem, 213024);
	const struct prof_row *scale = row(&r, "scale_kernel");
	assert_int_equal(scale->calls, 3);
	assert_float_equal(scale->mean_us, 50.0, 1e-9);
	assert_true(scale->custom);
	assert_null(scale->library);
	assert_int_equal(scale->stream, 7);
	assert_int_equal(scale->grid[0], 1024);
	assert_int_equal(scale->block[0], 256);
	assert_false(scale->launch_varies);
	assert_int_equal(row(&r, "side_kernel")->stream, 13);
	assert_int_equal(row(&r, "[memset]")->bytes, 4096);

	struct strbuf out = STRBUF_INIT;
	prof_report_table(&r, 3, &out);
	assert_non_null(strstr(out.buf, "scale_kernel"));
	assert_non_null(strstr(out.buf, "1024x256"));
	assert_non_null(strstr(out.buf, "cuBLAS"));
	assert_non_null(strstr(out.buf, "2 more rows"));
	assert_null(strstr(out.buf, "shift_kernel"));
	strbuf_release(&out);

	json_t *j = prof_report_json(&r, 2);
	assert_int_equal(json_array_size(json_object_get(j, "kernels")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "kernels_omitted")), 3);
	assert_int_equal(json_array_size(json_object_get(j, "trials")), 3);
	json_t *t0 = json_array_get(json_object_get(j, "trials"), 0);
	assert_float_equal(json_real_value(json_object_get(t0, "span_us")), 172.0, 1e-9);
	assert_string_equal(json_string_value(json_object_get(j, "end_event")), "cuda_event");
	json_decref(j);
	prof_report_release(&r);
}

/* Asserts that the report supports exactly one finding, with this id and severity, whose message
 * holds `needle` and not `absent`. */
static void expect_one_finding(const struct prof_report *r, const char *id, const char *severity, const char *needle,
			       const char *absent)
{
	struct finding f[4];
	size_t n = findings(r, f, 4);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].id, id);
	assert_string_equal(severity_name(f[0].severity), severity);
	if (!strstr(f[0].message, needle) || (absent && strstr(f[0].message, absent)))
		fail_msg("%s: %s", id, f[0].message);
	free_findings(f, n);
}

static void a_kernel_after_the_end_event_is_h05(void **state)
{
	(void)state;
	struct prof_report r;
	build("late_side_stream.trace", 2, &r);
	assert_int_equal(r.trials[0].late_kernels, 1);
	assert_float_equal(r.trials[0].late_by_us, 71.0, 1e-9); /* ends at 250 us, the end event at 179 us */
	assert_float_equal(r.trials[0].span_us, 244.0, 1e-9);
	expect_one_finding(&r, "H05", "reject", "71.0 us", NULL);
	prof_report_release(&r);
	/* without device timestamps the end of the event synchronisation bounds the window */
	build("no_event_timestamps.trace", 1, &r);
	assert_string_equal(r.end_event, "event_sync");
	assert_true(isnan(r.trials[0].gpu_window_us));
	assert_int_equal(r.trials[0].late_kernels, 1);
	assert_float_equal(r.trials[0].late_by_us, 65.0, 1e-9);
	/* CUPTI could not name the timed stream here: the start event's stream stands in */
	assert_int_equal(r.trials[0].other_stream_kernels, 1);
	expect_one_finding(&r, "H05", "reject", "65.0 us", NULL);
	prof_report_release(&r);
	/* without event records at all, the call's last event synchronisation bounds it */
	build("no_cuda_events.trace", 1, &r);
	assert_string_equal(r.end_event, "event_sync");
	assert_non_null(strstr(r.reason, "cuda_event"));
	assert_int_equal(r.trials[0].late_kernels, 1);
	assert_float_equal(r.trials[0].late_by_us, 65.0, 1e-9);
	expect_one_finding(&r, "H05", "reject", "65.0 us", NULL);
	prof_report_release(&r);
}

static void a_kernel_before_the_start_event_is_h05(void **state)
{
	(void)state;
	struct prof_report r;
	build("early_side_stream.trace", 2, &r);
	assert_int_equal(r.trials[0].late_kernels, 0);
	assert_int_equal(r.trials[0].early_kernels, 1);
	assert_float_equal(r.trials[0].early_by_us, 55.0, 1e-9); /* starts at 0 us, the start event at 55 us */
	expect_one_finding(&r, "H05", "reject", "started before the timer's start event (up to 55.0 us", NULL);
	prof_report_release(&r);
	/* the flush's fill kernel before the start event is no call's: the honest trace has no early kernel */
	build("late_side_stream.trace", 2, &r);
	assert_int_equal(r.trials[0].early_kernels, 0);
	assert_int_equal(r.trials[1].early_kernels, 0);
	prof_report_release(&r);
}

static void only_pytorch_kernels_is_h01_only_cublas_a_flagged_h04(void **state)
{
	(void)state;
	struct prof_report r;
	build("pytorch_only.trace", 2, &r);
	/* filling an output is not the work: the fill kernel is not named as evidence */
	expect_one_finding(&r, "H01", "reject", "launch_clamp_scalar", "FillFunctor");
	prof_report_release(&r);
	build("cublas_only.trace", 2, &r);
	expect_one_finding(&r, "H04", "flag", "cuBLAS", NULL);
	/* the same trace from a candidate whose C++ calls cuBLAS itself: its own work, no finding */
	r.own_library_calls = 1;
	{
		struct finding f[4];
		size_t n = findings(&r, f, 4);
		if (n)
			fail_msg("own cuBLAS call: unexpected %s: %s", f[0].id, f[0].message);
	}
	prof_report_release(&r);
	build("no_kernels.trace", 2, &r);
	expect_one_finding(&r, "H04", "reject", "no GPU work", NULL);
	prof_report_release(&r);
	/* a 4-byte read of the input per call and no kernel: a cache hit (tests/adversarial/runtime/
	 * h21_value_cache_cuda.py on a GPU), not a library doing the work */
	build("copies_only.trace", 2, &r);
	expect_one_finding(&r, "H04", "reject", "only 2 copies or memsets", NULL);
	prof_report_release(&r);
	/* a kernel of its own beside PyTorch doing 89% of the work: a flag for a person */
	build("pytorch_mostly.trace", 1, &r);
	expect_one_finding(&r, "H01", "flag", "took 89% of the kernel time", NULL);
	prof_report_release(&r);
}

static void absence_is_not_judged_from_an_incomplete_trace(void **state)
{
	(void)state;
	struct prof_report r;
	struct finding f[4];
	build("truncated.trace", 2, &r);
	assert_false(r.complete);
	assert_non_null(strstr(r.reason, "no end line"));
	assert_int_equal(findings(&r, f, 4), 0);
	prof_report_release(&r);
	build("dropped.trace", 2, &r);
	assert_int_equal(r.dropped, 17);
	assert_non_null(strstr(r.reason, "dropped 17"));
	assert_int_equal(findings(&r, f, 4), 0);
	prof_report_release(&r);
	build("no_attribution.trace", 1, &r);
	assert_false(r.attributed);
	assert_non_null(strstr(r.reason, "external_correlation"));
	assert_int_equal(r.trials[0].kernels, 0);
	assert_int_equal(findings(&r, f, 4), 0);
	prof_report_release(&r);
}

static void another_threads_kernel_in_the_window_is_flagged(void **state)
{
	(void)state;
	struct prof_report r;
	build("foreign_thread.trace", 1, &r);
	assert_int_equal(r.trials[0].foreign_kernels, 1);
	assert_int_equal(r.trials[0].kernels, 4); /* not counted as the call's own */
	expect_one_finding(&r, "H06", "flag", "outside the calling thread", NULL);
	prof_report_release(&r);
}

static void calls_missing_from_the_trace_are_reported(void **state)
{
	(void)state;
	struct prof_report r;
	build("late_side_stream.trace", 3, &r); /* it holds calls 1 and 2 only */
	assert_false(r.trials[2].found);
	assert_non_null(strstr(r.reason, "1 of 3 profiled calls are missing"));
	assert_float_equal(r.span_us, 244.0, 1e-9); /* the median over the calls found */
	prof_report_release(&r);
}

static void an_unavailable_report_says_why(void **state)
{
	(void)state;
	struct prof_report r;
	prof_report_init(&r);
	prof_report_unavailable(&r, "lib/libstitchprof.so is missing (%s)", "make");
	json_t *j = prof_report_json(&r, 10);
	assert_false(json_is_true(json_object_get(j, "available")));
	assert_string_equal(json_string_value(json_object_get(j, "reason")), "lib/libstitchprof.so is missing (make)");
	json_decref(j);
	struct finding f[2];
	assert_int_equal(findings(&r, f, 2), 0);
	prof_report_release(&r);
}

/* The same traces after the tracer had started in the candidate's worker: a trace cut short, unusable or
 * naming no call is what blinding the tracer leaves, and is itself a finding. Dropped records are not. */
static void a_blinded_tracer_is_a_finding(void **state)
{
	(void)state;
	struct prof_report r;
	build("truncated.trace", 2, &r);
	r.started = 1;
	expect_one_finding(&r, "H08", "reject", "without its end", NULL);
	prof_report_release(&r);
	build("no_attribution.trace", 1, &r);
	r.started = 1;
	expect_one_finding(&r, "H08", "flag", "no trial ids", NULL);
	prof_report_release(&r);
	prof_report_init(&r);
	r.started = 1;
	prof_report_unavailable(&r, "the trace is unusable: %s", "no header");
	expect_one_finding(&r, "H08", "reject", "unusable", NULL);
	prof_report_release(&r);
	build("dropped.trace", 2, &r);
	r.started = 1;
	struct finding f[4];
	assert_int_equal(findings(&r, f, 4), 0); /* a full buffer loses records honestly */
	prof_report_release(&r);
}

/* What tests/fixtures/candidates/cuda/prof_check.py runs per call, as a recording must show it. */
static void check_prof_check_recording(const char *path, const struct prof_report *r)
{
	const struct prof_row *scale = row(r, "sb_scale_kernel"), *shift = row(r, "sb_shift_kernel"),
			      *side = row(r, "sb_side_kernel"), *gemm = NULL;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].library && (!strcmp(r->rows[i].library, "cuBLAS") || !strcmp(r->rows[i].library, "cuBLASLt")))
			gemm = &r->rows[i];
		else if (!r->rows[i].custom && r->rows[i].kind == 'k')
			fail_msg("%s: unexpected library kernel %s", path, r->rows[i].name);
	if (!gemm)
		fail_msg("%s: no cuBLAS row", path);
	assert_true(scale->custom && shift->custom && side->custom);
	assert_int_equal(scale->calls, r->ntrials);
	assert_int_equal(shift->calls, r->ntrials);
	assert_int_equal(side->calls, r->ntrials);
	assert_true(gemm->calls >= r->ntrials);
	assert_true(scale->stream >= 0 && shift->stream == scale->stream && gemm->stream == scale->stream);
	/* the side stream comes from PyTorch's pool, a different one each call: its row says "many" (-1) */
	assert_true(side->stream != scale->stream);
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct prof_trial *t = &r->trials[i];
		assert_int_equal(t->custom_kernels, 3);
		assert_int_equal(t->other_stream_kernels, 1);
		assert_int_equal(t->late_kernels, 0);
	}
}

/* Traces recorded on a GPU (recorded_*.trace, see tests/fixtures/traces/README.md): complete, every
 * call found, its kernels inside its own window, the window as long as the CUDA events said, and no
 * finding against a candidate's. */
static void recorded_traces_match_the_program(void **state)
{
	(void)state;
	char *dir = fixture("");
	DIR *d = opendir(dir);
	int seen = 0;
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));) {
		if (!starts_with(de->d_name, "recorded_") || !ends_with(de->d_name, ".trace"))
			continue;
		char *path = xstrfmt("%s%s", dir, de->d_name);
		struct prof_report r;
		struct sb_error err = { 0 };
		prof_report_init(&r);
		if (prof_report_from_kept(path, &r, &err))
			fail_msg("%s", err.msg);
		if (!r.complete || r.dropped || !r.attributed || !r.ntrials)
			fail_msg("%s: complete %d, dropped %llu, attributed %d, %zu calls", path, r.complete,
				 (unsigned long long)r.dropped, r.attributed, r.ntrials);
		for (size_t i = 0; i < r.ntrials; i++) {
			const struct prof_trial *t = &r.trials[i];
			assert_true(t->found && t->kernels > 0);
			assert_true(t->span_us > 0 && t->kernel_sum_us > 0);
			if (!isnan(t->gpu_window_us)) {
				assert_true(t->span_us <= t->gpu_window_us + 1.0);
				if (fabs(t->gpu_window_us - t->event_us) > 0.1 * t->event_us + 2.0)
					fail_msg("%s: call %zu: events %.2f us, CUPTI window %.2f us", path, i, t->event_us,
						 t->gpu_window_us);
			}
		}
		if (strstr(de->d_name, "prof_check"))
			check_prof_check_recording(path, &r);
		/* a reference's recording is PyTorch's work by definition: the findings judge candidates only */
		struct finding f[4];
		size_t n = strstr(de->d_name, "_reference.") ? 0 : findings(&r, f, 4);
		if (n)
			fail_msg("%s: unexpected finding %s: %s", path, f[0].id, f[0].message);
		prof_report_release(&r);
		free(path);
		seen++;
	}
	closedir(d);
	free(dir);
	if (!seen)
		skip(); /* none recorded yet: scripts/gpu-check.sh section prof makes them on a GPU node */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_call_sum_span_and_window),
		cmocka_unit_test(the_table_sums_calls_by_kernel),
		cmocka_unit_test(a_kernel_after_the_end_event_is_h05),
		cmocka_unit_test(a_kernel_before_the_start_event_is_h05),
		cmocka_unit_test(only_pytorch_kernels_is_h01_only_cublas_a_flagged_h04),
		cmocka_unit_test(absence_is_not_judged_from_an_incomplete_trace),
		cmocka_unit_test(another_threads_kernel_in_the_window_is_flagged),
		cmocka_unit_test(calls_missing_from_the_trace_are_reported),
		cmocka_unit_test(an_unavailable_report_says_why),
		cmocka_unit_test(a_blinded_tracer_is_a_finding),
		cmocka_unit_test(recorded_traces_match_the_program),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
