/* test_hwmetrics.c - the metrics file libstitchprof writes (docs/trace.md) and the bound class of a
 * kernel: every class and limiter reached from the numbers that define it, the thresholds on both
 * sides, launches averaged by duration, and damaged files refused with file:line. */
#include "testutil.h"

#include <math.h>

#include "profile/hwmetrics.h"
#include "profile/session.h"

static struct hw_metrics make(double sm, double mem, double dram, double l2, double l1, double occ, double tensor,
			      double us)
{
	struct hw_metrics m;
	hw_metrics_init(&m);
	m.measured = 1;
	m.sm_pct = sm, m.mem_pct = mem, m.dram_pct = dram, m.l2_pct = l2, m.l1_pct = l1;
	m.occupancy_pct = occ, m.tensor_pct = tensor, m.duration_us = us;
	hw_classify(&m);
	return m;
}

static void classes_follow_the_speed_of_light_rule(void **state)
{
	(void)state;
	struct hw_metrics m = make(30, 88, 85, 40, 30, 80, NAN, 45);
	assert_string_equal(m.bound, "memory");
	assert_string_equal(m.limiter, "DRAM bandwidth");
	assert_true(fabs(m.roofline_pct - 88) < 1e-9);

	m = make(30, 75, 20, 74, 30, 80, NAN, 45); /* an L2-resident working set */
	assert_string_equal(m.limiter, "L2 bandwidth");
	m = make(31, 71.5, 71.5, 75, 40, 72, NAN, 16); /* streaming: L2 carries the DRAM traffic too */
	assert_string_equal(m.limiter, "DRAM bandwidth");
	m = make(31, 71.5, 59, 75, 40, 72, NAN, 16);
	assert_string_equal(m.limiter, "L2 bandwidth");
	m = make(30, 70, 10, 20, 70, 80, NAN, 45);
	assert_string_equal(m.limiter, "L1/shared bandwidth");

	m = make(82, 40, 22, 40, 38, 12, 78, 95);
	assert_string_equal(m.bound, "compute");
	assert_string_equal(m.limiter, "tensor pipelines");
	m = make(82, 40, 22, 40, 38, 50, 5, 95); /* FMA-bound, no tensor cores */
	assert_string_equal(m.limiter, "SM pipelines");

	m = make(10, 12, 9, 12, 8, 30, NAN, 3);
	assert_string_equal(m.bound, "launch");
	assert_string_equal(m.limiter, "launch overhead");

	m = make(20, 35, 30, 35, 20, 25, NAN, 20);
	assert_string_equal(m.bound, "latency");
	assert_string_equal(m.limiter, "occupancy");
	m = make(20, 35, 30, 35, 20, 75, NAN, 20);
	assert_string_equal(m.limiter, "latency (stalls)");
}

static void thresholds_sit_where_they_are_documented(void **state)
{
	(void)state;
	struct hw_metrics m = make(HW_ROOF_PCT, 10, 10, 10, 10, 50, NAN, 100);
	assert_string_equal(m.bound, "compute");
	m = make(HW_ROOF_PCT - 0.1, 10, 10, 10, 10, 50, NAN, 100);
	assert_string_equal(m.bound, "latency");
	m = make(10, 10, 10, 10, 10, 50, NAN, HW_LAUNCH_US);
	assert_string_equal(m.bound, "latency");
	m = make(10, 10, 10, 10, 10, 50, NAN, HW_LAUNCH_US - 0.1);
	assert_string_equal(m.bound, "launch");
	/* without the memory summary the units stand in for it */
	m = make(30, NAN, 70, NAN, NAN, 50, NAN, 100);
	assert_string_equal(m.bound, "memory");
	/* nothing measured: no class, not a guess */
	struct hw_metrics none;
	hw_metrics_init(&none);
	hw_classify(&none);
	assert_null(none.bound);
	none.measured = 1;
	hw_classify(&none);
	assert_null(none.bound);
	assert_true(isnan(none.roofline_pct));
}

static const char *header = "stitchmetrics 1\nchip GH100\npasses 2\n"
			    "metric 0 gpu__time_duration.sum\n"
			    "metric 1 sm__throughput.avg.pct_of_peak_sustained_elapsed\n"
			    "metric 2 dram__throughput.avg.pct_of_peak_sustained_elapsed\n"
			    "metric 3 sm__warps_active.avg.pct_of_peak_sustained_active\n";

static int read_text(const char *body, struct hw_file *f, struct sb_error *err)
{
	char *dir = tmpdir_make(), *text = xstrfmt("%s%s", header, body), *path = xstrfmt("%s/m", dir);
	write_file(dir, "m", text);
	memset(err, 0, sizeof(*err));
	int rc = hw_file_read(path, f, err);
	free(text);
	free(path);
	tmpdir_remove(dir);
	return rc;
}

static void launches_average_by_duration_and_only_inside_the_call(void **state)
{
	(void)state;
	struct hw_file f;
	struct sb_error err;
	int rc = read_text("launches 4 0\n"
			   "range 0 1 _Z1kv 10000 90 10 50\n"
			   "range 1 1 _Z1kv 30000 50 nan 70\n"
			   "range 2 0 _Z1kv 1000000 0 0 0\n" /* the flush around the call: not the kernel's */
			   "range 3 1 _Z5otherv 5000 1 1 1\n"
			   "dropped 0\nend 4\n", &f, &err);
	assert_int_equal(rc, 0);
	assert_string_equal(f.chip, "GH100");
	assert_int_equal(f.passes, 2);
	assert_int_equal(f.nranges, 4);
	struct hw_metrics m;
	hw_file_kernel(&f, "_Z1kv", &m);
	assert_int_equal(m.launches, 2);
	assert_true(fabs(m.duration_us - 20) < 1e-9);          /* plain mean of 10 and 30 us */
	assert_true(fabs(m.sm_pct - (90 * 10 + 50 * 30) / 40.0) < 1e-9); /* weighted by duration: 60 */
	assert_true(fabs(m.dram_pct - 10) < 1e-9);             /* the launch without it does not count */
	assert_string_equal(m.bound, "compute");
	hw_file_kernel(&f, "_Z7missingv", &m);
	assert_false(m.measured);
	assert_null(m.bound);
	hw_file_release(&f);
}

static void damaged_files_are_refused(void **state)
{
	(void)state;
	struct hw_file f;
	struct sb_error err;
	assert_int_not_equal(read_text("range 0 1 _Z1kv 1 2 3 4\n", &f, &err), 0);
	assert_non_null(strstr(err.msg, "no end line"));
	assert_int_not_equal(read_text("range 0 1 _Z1kv 1 2\nend 1\n", &f, &err), 0);
	assert_non_null(strstr(err.msg, ":8: range 0 has 2 values, 4 metrics"));
	assert_int_not_equal(read_text("range 1 1 _Z1kv 1 2 3 4\nend 1\n", &f, &err), 0);
	assert_non_null(strstr(err.msg, ":8: bad range line"));
	assert_int_not_equal(read_text("range 0 2 _Z1kv 1 2 3 4\nend 1\n", &f, &err), 0);
	assert_int_not_equal(read_text("range 0 1 _Z1kv 1 2 3 4\nend 2\n", &f, &err), 0);
	assert_non_null(strstr(err.msg, "counts 2 ranges, the file has 1"));
	assert_int_not_equal(read_text("end 0\nrange 0 1 _Z1kv 1 2 3 4\n", &f, &err), 0);
	assert_non_null(strstr(err.msg, "after the end line"));
	assert_int_not_equal(read_text("metric 7 x\nend 0\n", &f, &err), 0);
	/* a number no counter can give is dropped, not believed */
	assert_int_equal(read_text("range 0 1 _Z1kv 1000 1e9 -5 50\nend 1\n", &f, &err), 0);
	assert_true(isnan(f.ranges[0].m.sm_pct));
	assert_true(isnan(f.ranges[0].m.dram_pct));
	assert_true(fabs(f.ranges[0].m.occupancy_pct - 50) < 1e-9);
	hw_file_release(&f);
}

static char *fixture(const char *name)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	return xstrfmt("%s/tests/fixtures/traces/%s", root ? root : ".", name);
}

/* A kept trace with its metrics file beside it: the rows of the report carry the classes. */
static void a_kept_trace_reads_its_metrics(void **state)
{
	(void)state;
	struct prof_report r;
	struct sb_error err = { 0 };
	char *path = fixture("two_streams.trace");
	prof_report_init(&r);
	assert_int_equal(prof_report_from_kept(path, &r, &err), 0);
	assert_true(r.metrics_asked);
	assert_int_equal(r.metrics_kernels, 4);
	assert_string_equal(r.metrics_chip, "GH100");
	const char *want[][2] = { { "cuBLAS", "compute" }, { "scale_kernel", "memory" }, { "side_kernel", "launch" },
				  { "shift_kernel", "latency" } };
	for (size_t i = 0; i < 4; i++) {
		assert_non_null(strstr(r.rows[i].library ? r.rows[i].library : r.rows[i].name, want[i][0]));
		assert_string_equal(r.rows[i].hw.bound, want[i][1]);
	}
	/* the flush kernel ran outside the call: it is no row's metric */
	json_t *j = prof_report_json(&r, 20);
	json_t *k0 = json_array_get(json_object_get(j, "kernels"), 0);
	assert_string_equal(json_string_value(json_object_get(k0, "limiter")), "tensor pipelines");
	assert_true(fabs(json_number_value(json_object_get(k0, "roofline_pct")) - 82) < 1e-9);
	assert_null(json_object_get(json_array_get(json_object_get(j, "kernels"), 4), "bound")); /* the memset */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "metrics"), "kernels_measured")), 4);
	struct strbuf table = STRBUF_INIT;
	prof_report_table(&r, 15, &table);
	assert_non_null(strstr(table.buf, "hardware metrics (CUPTI range profiler on GH100"));
	assert_non_null(strstr(table.buf, "launch overhead"));
	strbuf_release(&table);
	json_decref(j);
	prof_report_release(&r);
	free(path);
}

/* Recorded on an H100 (tests/fixtures/traces/README.md): L2/1's reference, a cuBLAS GEMM below both roofs
 * at 12% occupancy and ATen's GELU streaming from DRAM; the flush kernel before the call is no row's. */
static void a_recorded_reference_reads_its_metrics(void **state)
{
	(void)state;
	struct prof_report r;
	struct sb_error err = { 0 };
	char *path = fixture("recorded_h100_l2_1_reference.trace");
	prof_report_init(&r);
	assert_int_equal(prof_report_from_kept(path, &r, &err), 0);
	assert_int_equal(r.metrics_passes, 26);
	assert_int_equal(r.metrics_kernels, 2);
	assert_string_equal(r.metrics_reason, "");
	assert_string_equal(r.rows[0].library, "cuBLAS");
	assert_string_equal(r.rows[0].hw.bound, "latency");
	assert_string_equal(r.rows[0].hw.limiter, "occupancy");
	assert_true(r.rows[0].hw.occupancy_pct < HW_LOW_OCCUPANCY_PCT);
	assert_non_null(strstr(r.rows[1].name, "Gelu"));
	assert_string_equal(r.rows[1].hw.bound, "memory");
	assert_string_equal(r.rows[1].hw.limiter, "DRAM bandwidth");
	assert_int_equal(r.rows[1].hw.launches, 1);
	prof_report_release(&r);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classes_follow_the_speed_of_light_rule),
		cmocka_unit_test(thresholds_sit_where_they_are_documented),
		cmocka_unit_test(launches_average_by_duration_and_only_inside_the_call),
		cmocka_unit_test(damaged_files_are_refused),
		cmocka_unit_test(a_kept_trace_reads_its_metrics),
		cmocka_unit_test(a_recorded_reference_reads_its_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
