/* test_refprofile.c - what the StitchCUDA Planner is told about the reference's kernels: the text made
 * from a profile recorded on an H200 (tests/fixtures/traces/recorded_h200_prof_check.trace: per call one
 * cuBLAS SGEMM, two custom kernels on the timed stream and one on a side stream), the same with hardware
 * metrics on its kernels, and the sentence a CPU run gets instead. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "agents/refprofile.h"
#include "profile/session.h"

static void read_recorded(struct prof_report *r)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	char *path = xstrfmt("%s/tests/fixtures/traces/recorded_h200_prof_check.trace", root ? root : ".");
	struct sb_error err = { 0 };
	prof_report_init(r);
	if (prof_report_from_kept(path, r, &err))
		fail_msg("%s", err.msg);
	free(path);
}

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
	refprofile_text(&r, "NVIDIA H200", NULL, &out);
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

/* What the range profiler would add: a compute-bound GEMM off the tensor cores, a memory-bound kernel. */
static void set_metrics(struct hw_metrics *m, const char *bound, const char *limiter, double roof, double dram,
			double sm, double occupancy, double tensor)
{
	memset(m, 0, sizeof(*m));
	m->measured = 1;
	m->launches = 10;
	m->bound = bound;
	m->limiter = limiter;
	m->roofline_pct = roof;
	m->dram_pct = dram;
	m->sm_pct = sm;
	m->mem_pct = dram;
	m->occupancy_pct = occupancy;
	m->tensor_pct = tensor;
	m->duration_us = m->l2_pct = m->l1_pct = NAN;
}

static void kernels_with_metrics_carry_their_bound_and_hints(void **state)
{
	(void)state;
	struct prof_report r;
	struct strbuf out = STRBUF_INIT, plain = STRBUF_INIT;
	read_recorded(&r);
	refprofile_text(&r, "NVIDIA H200", NULL, &plain);
	const char *root = getenv("SB_SOURCE_ROOT");
	char *builtin = xstrfmt("%s/harness/prompts", root ? root : ".");
	struct prompt_dirs d;
	struct bound_hints h;
	struct sb_error err = { 0 };
	prompt_dirs_init(&d, NULL, builtin, NULL);
	if (bound_hints_load(&h, &d, &err))
		fail_msg("%s", err.msg);
	/* no metrics: the hints change nothing */
	refprofile_text(&r, "NVIDIA H200", &h, &out);
	assert_string_equal(out.buf, plain.buf);
	assert_null(strstr(out.buf, "bound"));
	strbuf_reset(&out);

	assert_true(r.nrows >= 2 && r.rows[0].kind == 'k' && r.rows[1].kind == 'k');
	set_metrics(&r.rows[0].hw, "compute", "SM pipelines", 78.4, 12.0, 78.4, 33.3, 0.0);
	set_metrics(&r.rows[1].hw, "memory", "DRAM bandwidth", 91.0, 91.0, 18.5, 87.0, NAN);
	refprofile_text(&r, "NVIDIA H200", &h, &out);
	const char *t = out.buf;
	const char *gemm = strstr(t, "\n- sm80_xmma_gemm"), *second = strstr(t, r.rows[1].short_name);
	assert_non_null(gemm);
	assert_non_null(strstr(gemm, " registers per thread; compute-bound at 78% of roofline, limiter: SM pipelines; "
				     "DRAM 12%, SM 78%, occupancy 33%, tensor 0%\n"));
	assert_non_null(second);
	assert_non_null(strstr(second, "; memory-bound at 91% of roofline, limiter: DRAM bandwidth; DRAM 91%, SM 18%, "
				       "occupancy 87%\n"));
	/* the rows without metrics read as before */
	for (size_t i = 2; i < r.nrows; i++) {
		const char *row = strstr(t, r.rows[i].short_name ? r.rows[i].short_name : r.rows[i].name);
		assert_non_null(row);
		const char *bound = strstr(row, "-bound");
		assert_true(!bound || strchr(row, '\n') < bound);
	}
	/* the hints close the text, one per class, in the order of the table */
	const char *hints = strstr(t, "What each bound class above calls for:\n- Compute-bound (");
	assert_non_null(hints);
	assert_true(hints > strstr(t, "sb_side_kernel"));
	assert_non_null(strstr(hints, "tensor cores nearly idle"));
	assert_non_null(strstr(hints, "\n- Memory-bound ("));
	assert_null(strstr(hints, "Latency-bound"));
	/* the numbers stay without hints, the hints go */
	strbuf_reset(&out);
	refprofile_text(&r, "NVIDIA H200", NULL, &out);
	assert_non_null(strstr(out.buf, "compute-bound at 78% of roofline"));
	assert_null(strstr(out.buf, "What each bound class"));
	bound_hints_release(&h);
	free(builtin);
	prof_report_release(&r);
	strbuf_release(&out);
	strbuf_release(&plain);
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
	refprofile_for_planner(&sh, NULL, NULL, &out);
	assert_non_null(strstr(out.buf, "None: this run is on the CPU"));
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_recorded_profile_reads_as_kernels_by_share),
		cmocka_unit_test(kernels_with_metrics_carry_their_bound_and_hints),
		cmocka_unit_test(a_cpu_run_is_told_there_is_no_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
