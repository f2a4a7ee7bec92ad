/* test_feedback_hints.c - the Verifier's feedback on a verdict whose kernels carry hardware metrics: each
 * top kernel's line with its bound class and throughputs, one hint per bound class shown (from
 * harness/prompts/bound-hints.md, or a prompts_dir's copy), and nothing of it for a verdict without
 * metrics. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "agents/boundhints.h"
#include "agents/feedback.h"

#define MEMORY_HINT "- Memory-bound ("
#define LAUNCH_HINT "- Launch-bound ("
#define HEADING "What each bound class above calls for:\n"

/* A pass whose profile holds two memory-bound kernels and a launch-bound one, as the evaluator writes
 * it when eval.profile_metrics measured them on an H100. */
static const char *const two_classes =
	"{\"status\": \"pass\", \"message\": \"ok\", \"timing\": null, \"speedup\": null,"
	" \"profile\": {\"metrics\": {\"source\": \"cupti\", \"chip\": \"GH100\", \"kernels_measured\": 3},"
	" \"kernels\": ["
	"{\"name\": \"fused_gelu_kernel\", \"total_us\": 80.0, \"calls\": 10, \"bound\": \"memory\","
	" \"limiter\": \"DRAM bandwidth\", \"roofline_pct\": 86.4, \"sm_pct\": 21.0, \"mem_pct\": 86.4,"
	" \"dram_pct\": 86.4, \"l2_pct\": 40.2, \"l1_pct\": 30.1, \"occupancy_pct\": 71.2, \"tensor_pct\": 0.0,"
	" \"duration_us\": 8.0},"
	"{\"name\": \"bias_add_kernel\", \"total_us\": 15.0, \"calls\": 10, \"bound\": \"memory\","
	" \"limiter\": \"L2 bandwidth\", \"roofline_pct\": 64.0, \"sm_pct\": 11.0, \"dram_pct\": 50.0,"
	" \"occupancy_pct\": 80.0},"
	"{\"name\": \"tiny_scale_kernel\", \"total_us\": 5.0, \"calls\": 10, \"bound\": \"launch\","
	" \"limiter\": \"launch overhead\", \"roofline_pct\": 4.0, \"sm_pct\": 3.0, \"dram_pct\": 2.4,"
	" \"occupancy_pct\": 12.0, \"duration_us\": 1.9}]}}";

static json_t *verdict(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);
	if (!v)
		fail_msg("fixture: %s", jerr.text);
	return v;
}

static char *feedback(const char *text, const struct bound_hints *h)
{
	struct strbuf out = STRBUF_INIT;
	json_t *v = verdict(text);
	feedback_from_verdict(v, 2.0, h, &out);
	json_decref(v);
	return strbuf_detach(&out, NULL);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The built-in folders, with `mine` (may be NULL) before them as an agent's prompts_dir. */
static void load_hints(struct bound_hints *h, const char *mine)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	char *builtin = xstrfmt("%s/harness/prompts", root ? root : ".");
	struct prompt_dirs d;
	struct sb_error err = { 0 };
	prompt_dirs_init(&d, mine, builtin, NULL);
	if (bound_hints_load(h, &d, &err))
		fail_msg("%s", err.msg);
	free(builtin);
}

static void load_fails(const char *template, const char *msg_part)
{
	char *mine = tmpdir_make();
	const char *root = getenv("SB_SOURCE_ROOT");
	char *builtin = xstrfmt("%s/harness/prompts", root ? root : ".");
	struct bound_hints h;
	struct prompt_dirs d;
	struct sb_error err = { 0 };
	write_file(mine, "bound-hints.md", template);
	prompt_dirs_init(&d, mine, builtin, NULL);
	int rc = bound_hints_load(&h, &d, &err);
	if (!rc || !strstr(err.msg, msg_part))
		fail_msg("template loaded (%d) or error '%s' lacks '%s'", rc, err.msg, msg_part);
	free(builtin);
	tmpdir_remove(mine);
}

static void two_classes_get_one_hint_each(void **state)
{
	(void)state;
	struct bound_hints h;
	load_hints(&h, NULL);
	char *fb = feedback(two_classes, &h);
	/* each kernel's line carries its class, roofline, limiter and throughputs */
	assert_non_null(strstr(fb, "- fused_gelu_kernel: 80.0% (80.0 us, 10 calls); memory-bound at 86% of roofline"
				   ", limiter: DRAM bandwidth; DRAM 86%, SM 21%, occupancy 71%\n"));
	assert_non_null(strstr(fb, "- bias_add_kernel: 15.0% (15.0 us, 10 calls); memory-bound at 64% of roofline"
				   ", limiter: L2 bandwidth; DRAM 50%, SM 11%, occupancy 80%\n"));
	assert_non_null(strstr(fb, "- tiny_scale_kernel: 5.0% (5.0 us, 10 calls); launch-bound at 4% of roofline"
				   ", limiter: launch overhead; DRAM 2%, SM 3%, occupancy 12%\n"));
	/* then one hint per class, in the order the classes first appear, naming their kernels */
	assert_int_equal(count(fb, HEADING), 1);
	assert_int_equal(count(fb, MEMORY_HINT), 1);
	assert_int_equal(count(fb, LAUNCH_HINT), 1);
	const char *heading = strstr(fb, HEADING), *mem = strstr(fb, MEMORY_HINT), *launch = strstr(fb, LAUNCH_HINT);
	assert_true(heading > strstr(fb, "tiny_scale_kernel") && heading < mem && mem < launch);
	assert_non_null(strstr(fb, MEMORY_HINT "fused_gelu_kernel, bias_add_kernel): "));
	assert_non_null(strstr(fb, LAUNCH_HINT "tiny_scale_kernel): "));
	assert_non_null(strstr(mem, "Fuse"));
	assert_non_null(strstr(launch, "CUDA graph"));
	/* classes absent from the kernels get nothing */
	assert_null(strstr(fb, "Compute-bound"));
	assert_null(strstr(fb, "Latency-bound"));
	assert_true(ends_with(fb, "\n"));
	free(fb);
	/* without hints the lines keep their numbers and no hint follows */
	fb = feedback(two_classes, NULL);
	assert_non_null(strstr(fb, "memory-bound at 86% of roofline"));
	assert_null(strstr(fb, HEADING));
	free(fb);
	bound_hints_release(&h);
}

static void a_verdict_without_metrics_reads_as_before(void **state)
{
	(void)state;
	struct bound_hints h;
	load_hints(&h, NULL);
	const char *plain = "{\"status\": \"pass\", \"message\": \"ok\", \"timing\": null, \"speedup\": null,"
			    " \"profile\": {\"kernels\": [{\"name\": \"relu_kernel\", \"total_us\": 75.0, \"calls\": 10},"
			    " {\"name\": \"memcpy\", \"total_us\": 25.0}]}}";
	char *with = feedback(plain, &h), *without = feedback(plain, NULL);
	assert_string_equal(with, without);
	assert_non_null(strstr(with, "Top kernels by share of kernel time:\n- relu_kernel: 75.0% (75.0 us, 10 calls)\n"
				     "- memcpy: 25.0% (25.0 us)\n"));
	assert_null(strstr(with, "bound"));
	assert_null(strstr(with, HEADING));
	free(with);
	free(without);
	/* metrics that were not measured, with the reason: no class, so no hint */
	with = feedback("{\"status\": \"pass\", \"message\": \"ok\", \"timing\": null, \"speedup\": null,"
			" \"profile\": {\"metrics\": {\"source\": \"cupti\", \"kernels_measured\": 0,"
			" \"reason\": \"CUPTI range profiler unavailable\"},"
			" \"kernels\": [{\"name\": \"k\", \"total_us\": 1.0, \"calls\": 1}]}}", &h);
	assert_null(strstr(with, HEADING));
	assert_null(strstr(with, "bound"));
	free(with);
	/* a failure without a profile: no kernel section at all */
	with = feedback("{\"status\": \"incorrect\", \"message\": \"m\", \"trials\": []}", &h);
	assert_null(strstr(with, "kernels"));
	free(with);
	bound_hints_release(&h);
}

static void a_prompts_dir_rewords_the_hints(void **state)
{
	(void)state;
	char *mine = tmpdir_make();
	write_file(mine, "bound-hints.md",
		   "{{! my hints }}\n"
		   "## memory\nOURS: stage {{kernels}} through shared memory.\n\n"
		   "## compute-tensor-idle\nc1\n## compute-tensor-busy\nc2\n"
		   "## latency-low-occupancy\nl1\n## latency-occupancy-ok\nl2\n"
		   "## launch\n\n");
	struct bound_hints h;
	load_hints(&h, mine);
	assert_true(starts_with(h.where, mine));
	char *fb = feedback(two_classes, &h);
	assert_non_null(strstr(fb, HEADING "- OURS: stage fused_gelu_kernel, bias_add_kernel through shared memory.\n"));
	assert_null(strstr(fb, MEMORY_HINT));
	/* an empty section: no hint for that class, and nothing else lost */
	assert_null(strstr(fb, LAUNCH_HINT));
	assert_true(ends_with(fb, "through shared memory.\n"));
	free(fb);
	bound_hints_release(&h);
	/* a folder without the file falls back to the built-in template */
	char *other = tmpdir_make();
	load_hints(&h, other);
	assert_non_null(strstr(h.where, "harness/prompts/bound-hints.md"));
	bound_hints_release(&h);
	tmpdir_remove(other);
	tmpdir_remove(mine);
}

static void a_broken_template_is_refused_where_it_is_broken(void **state)
{
	(void)state;
	const char *rest = "## compute-tensor-idle\nc\n## compute-tensor-busy\nc\n## latency-low-occupancy\nl\n"
			   "## latency-occupancy-ok\nl\n## launch\nx\n";
	struct strbuf t = STRBUF_INIT;
	strbuf_addf(&t, "## memroy\nm\n%s", rest);
	load_fails(t.buf, "bound-hints.md:1: unknown section '## memroy' (the sections: memory, compute-tensor-idle");
	strbuf_reset(&t);
	strbuf_addf(&t, "## memory\nm\n%s## memory\nagain\n", rest);
	load_fails(t.buf, "bound-hints.md:13: a second section '## memory'");
	load_fails("## memory\nm\n", "no section '## compute-tensor-idle'");
	strbuf_reset(&t);
	strbuf_addf(&t, "## memory\n\nfor {{kernel}}\n%s", rest);
	load_fails(t.buf, "bound-hints.md:3: unknown placeholder {{kernel}}");
	strbuf_release(&t);
}

static struct hw_metrics metrics(const char *bound, const char *limiter, double occupancy, double tensor)
{
	struct hw_metrics m;
	memset(&m, 0, sizeof(m));
	m.measured = 1;
	m.bound = bound;
	m.limiter = limiter;
	m.duration_us = m.sm_pct = m.mem_pct = m.dram_pct = m.l2_pct = m.l1_pct = m.roofline_pct = NAN;
	m.occupancy_pct = occupancy;
	m.tensor_pct = tensor;
	return m;
}

static void the_metrics_pick_the_hint_of_a_class(void **state)
{
	(void)state;
	struct hw_metrics m = metrics("compute", "SM pipelines", 60, 3);
	assert_int_equal(bound_hint_for(&m), HINT_COMPUTE_TENSOR_IDLE);
	m = metrics("compute", "SM pipelines", 60, NAN); /* unmeasured tensor pipes: idle */
	assert_int_equal(bound_hint_for(&m), HINT_COMPUTE_TENSOR_IDLE);
	m = metrics("compute", "tensor pipelines", 60, NAN);
	assert_int_equal(bound_hint_for(&m), HINT_COMPUTE_TENSOR_BUSY);
	m = metrics("compute", "SM pipelines", 60, 75);
	assert_int_equal(bound_hint_for(&m), HINT_COMPUTE_TENSOR_BUSY);
	m = metrics("latency", "latency (stalls)", 20, NAN);
	assert_int_equal(bound_hint_for(&m), HINT_LATENCY_LOW_OCCUPANCY);
	m = metrics("latency", "occupancy", NAN, NAN);
	assert_int_equal(bound_hint_for(&m), HINT_LATENCY_LOW_OCCUPANCY);
	m = metrics("latency", "latency (stalls)", 70, NAN);
	assert_int_equal(bound_hint_for(&m), HINT_LATENCY_OCCUPANCY_OK);
	m = metrics("memory", "DRAM bandwidth", 70, NAN);
	assert_int_equal(bound_hint_for(&m), HINT_MEMORY);
	m = metrics("launch", "launch overhead", NAN, NAN);
	assert_int_equal(bound_hint_for(&m), HINT_LAUNCH);
	m = metrics("io", NULL, NAN, NAN);
	assert_int_equal(bound_hint_for(&m), -1);

	/* the line: only what was measured; the tensor pipes for a compute-bound kernel */
	struct strbuf out = STRBUF_INIT;
	m = metrics("compute", "SM pipelines", 55.6, 3.2);
	m.roofline_pct = m.sm_pct = 91;
	bound_metrics_line(&m, &out);
	assert_string_equal(out.buf, "; compute-bound at 91% of roofline, limiter: SM pipelines; SM 91%, occupancy 56%, tensor 3%");
	strbuf_reset(&out);
	m = metrics("launch", NULL, NAN, NAN);
	bound_metrics_line(&m, &out);
	assert_string_equal(out.buf, "; launch-bound");
	strbuf_reset(&out);
	m.measured = 0;
	bound_metrics_line(&m, &out);
	assert_int_equal(out.len, 0);
	strbuf_release(&out);

	/* the class's first kernel picks its hint; the feedback names the case */
	struct bound_hints h;
	load_hints(&h, NULL);
	char *fb = feedback("{\"status\": \"pass\", \"message\": \"ok\", \"timing\": null, \"speedup\": null,"
			    " \"profile\": {\"kernels\": ["
			    "{\"name\": \"sgemm_naive\", \"share\": 0.7, \"bound\": \"compute\", \"limiter\": \"SM pipelines\","
			    " \"roofline_pct\": 88, \"sm_pct\": 88, \"dram_pct\": 10, \"occupancy_pct\": 50, \"tensor_pct\": 0},"
			    "{\"name\": \"hmma_ok\", \"share\": 0.2, \"bound\": \"compute\", \"tensor_pct\": 80},"
			    "{\"name\": \"reduce_rows\", \"share\": 0.1, \"bound\": \"latency\", \"limiter\": \"occupancy\","
			    " \"occupancy_pct\": 18}]}}", &h);
	assert_non_null(strstr(fb, "- sgemm_naive: 70.0%; compute-bound at 88% of roofline, limiter: SM pipelines; "
				   "DRAM 10%, SM 88%, occupancy 50%, tensor 0%\n"));
	assert_int_equal(count(fb, "- Compute-bound ("), 1);
	assert_non_null(strstr(fb, "- Compute-bound (sgemm_naive, hmma_ok) with the tensor cores nearly idle"));
	assert_non_null(strstr(fb, "- Latency-bound (reduce_rows) at low occupancy"));
	assert_non_null(strstr(fb, "__launch_bounds__"));
	free(fb);
	bound_hints_release(&h);
}

static void hints_keep_the_feedback_bounded(void **state)
{
	(void)state;
	char *mine = tmpdir_make();
	struct strbuf t = STRBUF_INIT;
	strbuf_addstr(&t, "## memory\n");
	strbuf_addchars(&t, 'm', 5000);
	strbuf_addstr(&t, "\n## compute-tensor-idle\nc\n## compute-tensor-busy\nc\n## latency-low-occupancy\nl\n"
			  "## latency-occupancy-ok\nl\n## launch\n");
	strbuf_addchars(&t, 'l', 5000);
	strbuf_addch(&t, '\n');
	write_file(mine, "bound-hints.md", t.buf);
	struct bound_hints h;
	load_hints(&h, mine);
	char *fb = feedback(two_classes, &h);
	/* each hint is cut at its own limit, and both still fit */
	assert_non_null(strstr(fb, "mmmm [...]\n- llll"));
	assert_true(strlen(fb) <= FEEDBACK_MAX_BYTES + 32);
	assert_null(strstr(fb, "(feedback cut here)"));
	free(fb);
	/* a verdict that fills the feedback already: the cut still holds */
	struct strbuf big = STRBUF_INIT;
	json_t *findings = json_array();
	strbuf_addchars(&big, 'x', 2000);
	for (int i = 0; i < 4; i++)
		json_array_append_new(findings, json_pack("{s:s, s:s, s:s}", "id", "H14", "severity", "flag", "message", big.buf));
	json_t *v = verdict(two_classes);
	json_object_set_new(v, "findings", findings);
	struct strbuf out = STRBUF_INIT;
	feedback_from_verdict(v, 2.0, &h, &out);
	assert_true(out.len <= FEEDBACK_MAX_BYTES + 32);
	assert_true(ends_with(out.buf, "(feedback cut here)\n"));
	json_decref(v);
	strbuf_release(&out);
	strbuf_release(&big);
	strbuf_release(&t);
	bound_hints_release(&h);
	tmpdir_remove(mine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_classes_get_one_hint_each),
		cmocka_unit_test(a_verdict_without_metrics_reads_as_before),
		cmocka_unit_test(a_prompts_dir_rewords_the_hints),
		cmocka_unit_test(a_broken_template_is_refused_where_it_is_broken),
		cmocka_unit_test(the_metrics_pick_the_hint_of_a_class),
		cmocka_unit_test(hints_keep_the_feedback_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
