/* test_refprofile.c - what the StitchCUDA Planner is told about the reference's kernels: the text made
 * from a profile recorded on an H200 (tests/fixtures/traces/recorded_h200_prof_check.trace: per call one
 * cuBLAS SGEMM, two custom kernels on the timed stream and one on a side stream), and the sentence a
 * CPU run gets instead. */
#include "testutil.h"

#include <string.h>

#include "agents/refprofile.h"
#include "profile/session.h"

static void the_recorded_profile_reads_as_kernels_by_share(void **state)
{
	(void)state;
	const char *root = getenv("SB_SOURCE_ROOT");
	char *path = xstrfmt("%s/tests/fixtures/traces/recorded_h200_prof_check.trace", root ? root : ".");
	struct prof_report r;
	struct sb_error err = { 0 };
	struct strbuf out = STRBUF_INIT;
	prof_report_init(&r);
	if (prof_report_from_kept(path, &r, &err))
		fail_msg("%s", err.msg);
	refprofile_text(&r, "NVIDIA H200", &out);
	const char *t = out.buf;
	assert_non_null(strstr(t, "Measured with CUPTI on NVIDIA H200 over 10 calls"));
	/* the GEMM first, as cuBLAS, once per call, with its launch shape */
	const char *gemm = strstr(t, "\n- sm80_xmma_gemm");
	assert_non_null(gemm);
	assert_non_null(strstr(gemm, ", cuBLAS, 1 per call, mean "));
	assert_non_null(strstr(gemm, "(15,8,1) x 128"));
	/* the three custom kernels follow, each once per call with a 1-D grid */
	const char *names[] = { "sb_scale_kernel", "sb_shift_kernel", "sb_side_kernel" };
	for (int i = 0; i < 3; i++) {
		const char *k = strstr(t, names[i]);
		assert_non_null(k);
		assert_true(k > gemm);
		assert_non_null(strstr(k, ", custom, 1 per call, mean "));
		assert_non_null(strstr(k, "3600 x 256"));
	}
	/* shares are the table's: the GEMM's line carries the largest */
	char share[16];
	snprintf(share, sizeof(share), ": %.1f%%", 100 * r.rows[0].share);
	assert_non_null(strstr(gemm, share));
	assert_true(r.rows[0].share > 0.5);
	assert_null(strstr(t, "more, "));            /* 4 rows: none left out */
	prof_report_release(&r);
	strbuf_release(&out);
	free(path);
}

static void a_cpu_run_is_told_there_is_no_profile(void **state)
{
	(void)state;
	struct eval_env env;
	memset(&env, 0, sizeof(env));
	snprintf(env.device, sizeof(env.device), "cpu");
	struct run_shared sh;
	memset(&sh, 0, sizeof(sh));
	sh.env = &env;
	struct strbuf out = STRBUF_INIT;
	refprofile_for_planner(&sh, NULL, &out);
	assert_non_null(strstr(out.buf, "None: this run is on the CPU"));
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_recorded_profile_reads_as_kernels_by_share),
		cmocka_unit_test(a_cpu_run_is_told_there_is_no_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
