/* test_profile_ncu.c - reading Nsight Compute's --csv output for `profile --ncu`: metrics found by
 * column name, quoted fields and thousands separators, and ncu's own errors passed on. The CSV below
 * is written by hand in the layout ncu documents for --csv (one row per metric); gpu-check runs the
 * real tool where it exists. */
#include "testutil.h"

#include "profile/ncu.h"

static const char CSV[] =
	"==PROF== Connected to process 4242 (/usr/bin/python3.12)\n"
	"==PROF== Profiling \"sb_scale_kernel\": 0%....50%....100% - 3 passes\n"
	"==PROF== Disconnected from process 4242\n"
	"\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
	"\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
	"\"0\",\"4242\",\"python3.12\",\"127.0.0.1\",\"_Z15sb_scale_kernelPKfPfif\",\"1\",\"7\",\"(256, 1, 1)\","
	"\"(3600, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
	"\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"85.12\"\n"
	"\"0\",\"4242\",\"python3.12\",\"127.0.0.1\",\"_Z15sb_scale_kernelPKfPfif\",\"1\",\"7\",\"(256, 1, 1)\","
	"\"(3600, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
	"\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"12.5\"\n"
	"\"0\",\"4242\",\"python3.12\",\"127.0.0.1\",\"_Z15sb_scale_kernelPKfPfif\",\"1\",\"7\",\"(256, 1, 1)\","
	"\"(3600, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
	"\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"%\",\"1,091.5\"\n";

static void reads_the_three_metrics_by_column_name(void **state)
{
	(void)state;
	struct ncu_result r = { 0 };
	struct sb_error err = { 0 };
	assert_int_equal(ncu_parse_csv(CSV, &r, &err), 0);
	assert_int_equal(r.found, 7);
	assert_float_equal(r.dram_pct, 85.12, 1e-9);
	assert_float_equal(r.sm_pct, 12.5, 1e-9);
	assert_float_equal(r.occupancy_pct, 1091.5, 1e-9); /* the separator is not a decimal point */
	assert_string_equal(r.kernel, "_Z15sb_scale_kernelPKfPfif");
}

static void columns_may_come_in_any_order(void **state)
{
	(void)state;
	const char csv[] = "\"Metric Value\",\"Kernel Name\",\"Metric Name\"\n"
			   "\"42.0\",\"k\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
			   "\"7\",\"k\",\"some__other_metric\"\n";
	struct ncu_result r = { 0 };
	struct sb_error err = { 0 };
	assert_int_equal(ncu_parse_csv(csv, &r, &err), 0);
	assert_int_equal(r.found, 1);
	assert_float_equal(r.sm_pct, 42.0, 1e-9);
}

static void ncus_own_errors_are_passed_on(void **state)
{
	(void)state;
	struct ncu_result r = { 0 };
	struct sb_error err = { 0 };
	const char perm[] = "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have "
			    "permission to access NVIDIA GPU Performance Counters on the target device 0.\n";
	assert_int_equal(ncu_parse_csv(perm, &r, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "ERR_NVGPUCTRPERM"));
	const char none[] = "==WARNING== No kernels were profiled.\n";
	assert_int_equal(ncu_parse_csv(none, &r, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "No kernels were profiled"));
	assert_int_equal(ncu_parse_csv("", &r, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "no metric rows"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_the_three_metrics_by_column_name),
		cmocka_unit_test(columns_may_come_in_any_order),
		cmocka_unit_test(ncus_own_errors_are_passed_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
