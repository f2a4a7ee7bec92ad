/* test_profile_trace.c - the stitchprof trace parser (docs/trace.md) on the committed fixtures and on
 * damaged traces: every field read, trial attribution by correlation id, errors that name file:line. */
#include "testutil.h"

#include "profile/trace.h"

static char *fixture(const char *name)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	return xstrfmt("%s/tests/fixtures/traces/%s", root ? root : ".", name);
}

static void parse_fixture(const char *name, struct trace *t)
{
	struct sb_error err = { 0 };
	char *path = fixture(name);
	int rc = trace_parse_file(path, t, &err);
	if (rc)
		fail_msg("%s: %s", path, err.msg);
	free(path);
}

/* Parses text that must fail; returns the message. */
static const char *parse_bad(const char *text, struct sb_error *err)
{
	struct trace t;
	memset(err, 0, sizeof(*err));
	assert_int_not_equal(trace_parse_text("bad.trace", text, strlen(text), &t, err), 0);
	assert_null(t.kernels);
	return err->msg;
}

static void reads_every_field_of_a_kernel(void **state)
{
	(void)state;
	struct trace t;
	parse_fixture("two_streams.trace", &t);
	assert_int_equal(t.format, 1);
	assert_int_equal(t.cupti_api, 130001);
	assert_true(t.event_timestamps);
	assert_true(t.complete);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.nnames, 5);
	/* the flush kernel of trial 1 comes first, then trial 1's scale kernel */
	const struct trace_kernel *k = &t.kernels[1];
	assert_string_equal(trace_name_of(&t, k->name), "scale_kernel(float const*, float*, int, float)");
	assert_string_equal(trace_mangled_of(&t, k->name), "_Z12scale_kernelPKfPfif");
	assert_int_equal(k->start, 11006000);
	assert_int_equal(k->end, 11056000);
	assert_int_equal(k->stream, 7);
	assert_int_equal(k->corr, 111);
	assert_int_equal(k->grid[0], 1024);
	assert_int_equal(k->block[0], 256);
	assert_int_equal(k->regs, 16);
	const struct trace_kernel *g = &t.kernels[3];
	assert_int_equal(g->grid[1], 8);
	assert_int_equal(g->block[0], 384);
	assert_int_equal(g->regs, 168);
	assert_int_equal(g->dynamic_smem, 213024);
	/* 3 trials x (flush + 4 kernels) + the warm-up call's kernel */
	assert_int_equal(t.nkernels, 16);
	assert_int_equal(t.ncopies, 1);
	assert_true(t.copies[0].memset);
	assert_int_equal(t.copies[0].bytes, 4096);
	assert_int_equal(t.nevents, 6);
	assert_int_equal(t.nsyncs, 3);
	assert_string_equal(t.syncs[0].type, "event_sync");
	assert_int_equal(t.syncs[0].stream, -1);
	assert_int_equal(t.syncs[0].event, 2);
	trace_release(&t);
}

static void attributes_records_to_trials_by_correlation(void **state)
{
	(void)state;
	struct trace t;
	parse_fixture("two_streams.trace", &t);
	assert_int_equal(t.ntrials, 4);
	const struct trace_trial *tr = trace_find_trial(&t, 2);
	assert_non_null(tr);
	assert_int_equal(tr->stream, 7);
	assert_int_equal(tr->begin, 12000000);
	assert_int_equal(tr->end, 12400000);
	assert_null(trace_find_trial(&t, 4));
	assert_int_equal(trace_trial_of(&t, 111), 1);
	assert_int_equal(trace_trial_of(&t, 212), 2);
	assert_int_equal(trace_trial_of(&t, 901), 9);
	assert_int_equal(trace_trial_of(&t, 101), 0); /* the flush before trial 1 */
	assert_int_equal(trace_trial_of(&t, 555), 0);
	trace_release(&t);
}

static void counts_drops_and_notices_a_cut_trace(void **state)
{
	(void)state;
	struct trace t;
	parse_fixture("dropped.trace", &t);
	assert_int_equal(t.dropped, 17);
	assert_true(t.complete);
	trace_release(&t);
	parse_fixture("truncated.trace", &t);
	assert_false(t.complete);
	assert_int_equal(t.ntrials, 3); /* two profiled calls and a warm-up call */
	trace_release(&t);
	parse_fixture("no_attribution.trace", &t);
	assert_int_equal(t.next, 0);
	assert_string_equal(t.disabled, "external_correlation");
	trace_release(&t);
	parse_fixture("no_event_timestamps.trace", &t);
	assert_false(t.event_timestamps);
	assert_int_equal(t.events[0].ts, 0);
	trace_release(&t);
}

static void untimed_kernels_are_counted(void **state)
{
	(void)state;
	const char *text = "stitchprof 1\nname 1 k k\n"
			   "kernel 1 0 0 0 1 7 5 1 1 1 32 1 1 8 0 0 0\n"
			   "kernel 1 100 200 0 1 7 6 1 1 1 32 1 1 8 0 0 0\nend 2 2 0\n";
	struct trace t;
	struct sb_error err = { 0 };
	assert_int_equal(trace_parse_text("t", text, strlen(text), &t, &err), 0);
	assert_int_equal(t.untimed, 1);
	assert_int_equal(t.nkernels, 2);
	trace_release(&t);
}

static void unknown_lines_are_skipped_and_names_may_stay_mangled(void **state)
{
	(void)state;
	const char *text = "stitchprof 1\nfuture_record 1 2 3\nname 1 relu_kernel\n"
			   "kernel 1 100 200 0 1 7 6 1 1 1 32 1 1 8 0 0 0\n\nend 1 1 0\n";
	struct trace t;
	struct sb_error err = { 0 };
	assert_int_equal(trace_parse_text("t", text, strlen(text), &t, &err), 0);
	assert_string_equal(trace_name_of(&t, 1), "relu_kernel");
	assert_string_equal(trace_name_of(&t, 7), "?");
	trace_release(&t);
}

static void damaged_traces_are_errors_that_name_the_line(void **state)
{
	(void)state;
	struct sb_error err;
	assert_non_null(strstr(parse_bad("", &err), "empty"));
	assert_non_null(strstr(parse_bad("hello\n", &err), "bad.trace:1:"));
	assert_non_null(strstr(parse_bad("stitchprof 2\n", &err), "format 2"));
	/* a kernel before its name line */
	assert_non_null(strstr(parse_bad("stitchprof 1\nkernel 1 1 2 0 1 7 6 1 1 1 32 1 1 8 0 0 0\n", &err), "bad.trace:2:"));
	/* one field short */
	assert_non_null(strstr(parse_bad("stitchprof 1\nname 1 k k\nkernel 1 1 2 0 1 7 6 1 1 1 32 1 1 8 0 0\n", &err),
			       "bad.trace:3: 'kernel' needs 17 fields, found 16"));
	/* not a number, a negative count, overflow */
	assert_non_null(strstr(parse_bad("stitchprof 1\nname 1 k k\nkernel 1 x 2 0 1 7 6 1 1 1 32 1 1 8 0 0 0\n", &err), ":3:"));
	assert_non_null(strstr(parse_bad("stitchprof 1\ndrop -4\n", &err), ":2:"));
	assert_non_null(strstr(parse_bad("stitchprof 1\next 1 99999999999\n", &err), "out of range"));
	assert_non_null(strstr(parse_bad("stitchprof 1\nname 2 k k\n", &err), "without gaps"));
	assert_non_null(strstr(parse_bad("stitchprof 1\nname 1 k k\nkernel 1 9 2 0 1 7 6 1 1 1 32 1 1 8 0 0 0\n", &err),
			       "ends before it starts"));
	assert_non_null(strstr(parse_bad("stitchprof 1\ntrial 1 7 1 2\ntrial 1 7 3 4\n", &err), "twice"));
	assert_non_null(strstr(parse_bad("stitchprof 1\ntrial 0 7 1 2\n", &err), "start at 1"));
	assert_non_null(strstr(parse_bad("stitchprof 1\nname 1 k k\nend 1 1 0\n", &err), "different number of kernels"));
	assert_non_null(strstr(parse_bad("stitchprof 1\nmemcpy HtoDtoHtoD 1 1 2 0 1 7 6\n", &err), "memcpy kind"));
}

static void a_missing_file_is_an_io_error(void **state)
{
	(void)state;
	struct trace t;
	struct sb_error err = { 0 };
	assert_int_equal(trace_parse_file("/nonexistent/x.trace", &t, &err), SB_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent/x.trace"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_every_field_of_a_kernel),
		cmocka_unit_test(attributes_records_to_trials_by_correlation),
		cmocka_unit_test(counts_drops_and_notices_a_cut_trace),
		cmocka_unit_test(untimed_kernels_are_counted),
		cmocka_unit_test(unknown_lines_are_skipped_and_names_may_stay_mangled),
		cmocka_unit_test(damaged_traces_are_errors_that_name_the_line),
		cmocka_unit_test(a_missing_file_is_an_io_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
