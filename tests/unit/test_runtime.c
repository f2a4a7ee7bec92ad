/* test_runtime.c - the runtime hack rules (harness/checks/runtime.c) and H21's floor (floor.c) on facts
 * written as the worker reports them, and numbers: each rule fires on the hack and stays quiet on the
 * honest variant of the same facts. */
#include "testutil.h"

#include <math.h>

#include "checks/floor.h"
#include "checks/runtime.h"

static struct rt_call call_of(const char *json_text)
{
	json_error_t e;
	json_t *j = json_loads(json_text, 0, &e);
	if (!j)
		fail_msg("bad test JSON: %s", e.text);
	struct rt_call c;
	rt_call_parse(j, &c);
	json_decref(j);
	return c;
}

/* an honest call: a fresh output, one input, one parameter, no thread left behind */
#define OUT(extra) "{\"name\": \"out0\", \"type\": \"torch.Tensor\", \"exact\": true, \"layout\": \"torch.strided\"," \
		   " \"contiguous\": true, \"device\": \"cpu\", \"meta\": false, \"storage\": " extra "}"
#define CALL(out, threads) "{\"outputs\": [" out "], \"inputs_storage\": [[1000, 400]], \"params_storage\": [[5000, 64]]," \
			   " \"threads\": " threads ", \"patched\": []}"
#define QUIET "{\"python\": [1, 1], \"os\": [3, 3], \"new\": 0}"

static size_t count(const struct findings *f, const char *id)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += !strcmp(f->v[i].id, id);
	return n;
}

static void facts_parse(void **state)
{
	(void)state;
	struct rt_call c = call_of("{\"outputs\": [" OUT("[7000, 400]") "], \"inputs_storage\": [[1000, 400], [2000, 8]],"
				   " \"params_storage\": [], \"threads\": {\"python\": [1, 2], \"os\": [3, 5], \"new\": 2},"
				   " \"patched\": [\"torch.allclose\"]}");
	assert_int_equal(c.nout, 1);
	assert_true(c.out[0].has_facts && c.out[0].exact && c.out[0].contiguous && c.out[0].has_storage);
	assert_string_equal(c.out[0].layout, "torch.strided");
	assert_int_equal(c.out[0].storage.ptr, 7000);
	assert_int_equal(c.ninputs, 2);
	assert_int_equal(c.inputs[1].nbytes, 8);
	assert_true(c.has_threads && c.py_after == 2 && c.os_after == 5 && c.os_new == 2);
	assert_int_equal(c.patched.nr, 1);
	rt_call_release(&c);
	/* a reply of an older worker: nothing known, nothing judged */
	c = call_of("{\"outputs\": [{\"name\": \"out0\", \"dtype\": \"torch.float32\"}]}");
	assert_false(c.out[0].has_facts || c.has_threads);
	struct findings f = { 0 };
	rt_rule_plain_outputs(&c, NULL, "cpu", "trial 0", &f);
	rt_rule_alias(&c, NULL, "trial 0", &f);
	assert_int_equal(f.n, 0);
	rt_call_release(&c);
}

static void aliasing(void **state)
{
	(void)state;
	struct findings f = { 0 };
	struct rt_call fresh = call_of(CALL(OUT("[9000, 400]"), QUIET));
	struct rt_call same = call_of(CALL(OUT("[1000, 400]"), QUIET));
	struct rt_call view = call_of(CALL(OUT("[1200, 8]"), QUIET));   /* inside the input's storage */
	struct rt_call edge = call_of(CALL(OUT("[1400, 8]"), QUIET));   /* right after it: no overlap */
	struct rt_call param = call_of(CALL(OUT("[5000, 64]"), QUIET));
	assert_int_equal(rt_output_alias(&fresh, 0, NULL), RT_ALIAS_NONE);
	size_t which = 9;
	assert_int_equal(rt_output_alias(&view, 0, &which), RT_ALIAS_INPUT);
	assert_int_equal(which, 0);
	assert_int_equal(rt_output_alias(&edge, 0, NULL), RT_ALIAS_NONE);
	assert_int_equal(rt_output_alias(&param, 0, NULL), RT_ALIAS_PARAM);

	rt_rule_alias(&fresh, &fresh, "trial 0", &f);
	assert_int_equal(f.n, 0);
	rt_rule_alias(&same, &fresh, "trial 0", &f);
	rt_rule_alias(&param, &fresh, "trial 1", &f);
	assert_int_equal(count(&f, "H17"), 1);
	assert_int_equal(count(&f, "H11"), 1);
	assert_non_null(strstr(f.v[0].message, "input 0"));
	findings_release(&f);
	/* a problem whose reference returns a view of its input: the candidate may too */
	rt_rule_alias(&view, &same, "trial 0", &f);
	assert_int_equal(f.n, 0);
	rt_call_release(&fresh);
	rt_call_release(&same);
	rt_call_release(&view);
	rt_call_release(&edge);
	rt_call_release(&param);
}

static void plain_outputs(void **state)
{
	(void)state;
	struct findings f = { 0 };
	struct rt_call ok = call_of(CALL(OUT("[9000, 400]"), QUIET));
	struct rt_call sub = call_of(CALL("{\"type\": \"m.Lazy\", \"exact\": false, \"layout\": \"torch.strided\","
					  " \"device\": \"cpu\", \"meta\": false}", QUIET));
	struct rt_call sparse = call_of(CALL("{\"type\": \"torch.Tensor\", \"exact\": true, \"layout\": \"torch.sparse_coo\","
					     " \"device\": \"cpu\", \"meta\": false}", QUIET));
	struct rt_call meta = call_of(CALL("{\"type\": \"torch.Tensor\", \"exact\": true, \"layout\": \"torch.strided\","
					   " \"device\": \"meta\", \"meta\": true}", QUIET));
	struct rt_call gpu = call_of(CALL("{\"type\": \"torch.Tensor\", \"exact\": true, \"layout\": \"torch.strided\","
					  " \"device\": \"cuda:0\", \"meta\": false}", QUIET));
	rt_rule_plain_outputs(&ok, &ok, "cpu", "trial 0", &f);
	rt_rule_plain_outputs(&gpu, NULL, "cuda", "trial 0", &f); /* "cuda" means cuda:N */
	rt_rule_plain_outputs(&gpu, NULL, "cuda:0", "trial 0", &f);
	assert_int_equal(f.n, 0);
	rt_rule_plain_outputs(&sub, &ok, "cpu", "trial 0", &f);
	rt_rule_plain_outputs(&sparse, &ok, "cpu", "trial 0", &f);
	rt_rule_plain_outputs(&meta, &ok, "cpu", "trial 0", &f);
	rt_rule_plain_outputs(&ok, &gpu, "cuda:0", "trial 0", &f); /* a CPU output of a GPU evaluation */
	assert_int_equal(count(&f, "H07"), 3); /* at most RT_MAX_PER_ID of one id */
	assert_non_null(strstr(f.v[0].message, "m.Lazy"));
	assert_non_null(strstr(f.v[1].message, "sparse_coo"));
	assert_non_null(strstr(f.v[2].message, "meta"));
	findings_release(&f);
	rt_rule_plain_outputs(&ok, &gpu, "cuda:0", "trial 0", &f);
	assert_int_equal(f.n, 1);
	assert_non_null(strstr(f.v[0].message, "is on cpu"));
	findings_release(&f);
	rt_rule_plain_outputs(&ok, &ok, "cuda:0", "trial 0", &f); /* the reference's is on the CPU as well */
	assert_int_equal(f.n, 0);
	/* the reference returns a sparse tensor itself: the candidate may too */
	rt_rule_plain_outputs(&sparse, &sparse, "cpu", "trial 0", &f);
	assert_int_equal(f.n, 0);
	rt_call_release(&ok);
	rt_call_release(&sub);
	rt_call_release(&sparse);
	rt_call_release(&meta);
	rt_call_release(&gpu);
}

static void threads(void **state)
{
	(void)state;
	struct findings f = { 0 };
	const char *names[] = { "trial 0", "trial 1", "trial 2" };
	struct rt_call calls[3];
	/* the first call starts a thread pool (OpenMP) and keeps it: that is not a finding */
	calls[0] = call_of(CALL(OUT("null"), "{\"python\": [1, 1], \"os\": [1, 3], \"new\": 2}"));
	calls[1] = call_of(CALL(OUT("null"), QUIET));
	calls[2] = call_of(CALL(OUT("null"), QUIET));
	rt_rule_threads(calls, 3, names, &f);
	assert_int_equal(f.n, 0);
	rt_call_release(&calls[2]);
	/* a new OS thread alive after a later call is */
	calls[2] = call_of(CALL(OUT("null"), "{\"python\": [1, 1], \"os\": [3, 4], \"new\": 1}"));
	rt_rule_threads(calls, 3, names, &f);
	assert_int_equal(count(&f, "H06"), 1);
	assert_non_null(strstr(f.v[0].message, "trial 2"));
	findings_release(&f);
	/* a thread that started and ended within the call left nothing: ids changed but not the count */
	rt_call_release(&calls[2]);
	calls[2] = call_of(CALL(OUT("null"), "{\"python\": [1, 1], \"os\": [3, 3], \"new\": 1}"));
	rt_rule_threads(calls, 3, names, &f);
	assert_int_equal(f.n, 0);
	/* a Python thread alive after any call, the first too */
	rt_call_release(&calls[0]);
	calls[0] = call_of(CALL(OUT("null"), "{\"python\": [1, 2], \"os\": [1, 2], \"new\": 1}"));
	rt_rule_threads(calls, 3, names, &f);
	assert_int_equal(count(&f, "H06"), 1);
	assert_non_null(strstr(f.v[0].message, "Python thread started during forward (trial 0)"));
	findings_release(&f);
	for (int i = 0; i < 3; i++)
		rt_call_release(&calls[i]);
}

/* H06 from the kernel's view of the process, and from the threads left after the timing loop. */
static void process_and_late_threads(void **state)
{
	(void)state;
	struct findings f = { 0 };
	rt_rule_process(NULL, 0, 0, "after the timed calls", &f);
	rt_rule_threads_after_timing(2, 2, &f);
	assert_int_equal(f.n, 0);
	/* signals and helper processes together make one H06: the first says enough */
	rt_rule_process("SIGALRM", 2, 4242, "after the timed calls", &f);
	assert_int_equal(f.n, 1);
	assert_non_null(strstr(f.v[0].message, "catches SIGALRM after the timed calls"));
	findings_release(&f);
	rt_rule_process(NULL, 1, 4242, "after its import", &f);
	assert_int_equal(f.n, 1);
	assert_non_null(strstr(f.v[0].message, "1 other process of the candidate's (pid 4242) is alive after its import"));
	findings_release(&f);
	rt_rule_threads_after_timing(2, 3, &f);
	assert_int_equal(count(&f, "H06"), 1);
	assert_non_null(strstr(f.v[0].message, "1 more Python thread was alive"));
	assert_false(f.v[0].flag_only);
	findings_release(&f);
}

static void idle_work(void **state)
{
	(void)state;
	struct findings f = { 0 };
	/* a pool that went to sleep, and stray wake-ups of a few milliseconds: nothing */
	rt_rule_idle_work(0.0, 150.0, "", &f);
	rt_rule_idle_work(7.9, 150.0, "", &f);
	rt_rule_idle_work(14.0, 150.0, "", &f);
	rt_rule_idle_work(50.0, 0.0, "", &f);
	assert_int_equal(f.n, 0);
	/* a thread that works while no call is in flight, even on a machine that gives it a fifth of a core */
	rt_rule_idle_work(30.0, 150.0, "python3 (77) 30 ms", &f);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].id, "H06");
	assert_non_null(strstr(f.v[0].message, "used 30 ms of CPU in 150 ms while no call of it was in flight"));
	assert_non_null(strstr(f.v[0].message, "threads: python3 (77) 30 ms"));
	findings_release(&f);
}

static void patched_and_same_output(void **state)
{
	(void)state;
	struct findings f = { 0 };
	struct strvec none = STRVEC_INIT, two = STRVEC_INIT;
	rt_rule_patched(&none, "after import", &f);
	assert_int_equal(f.n, 0);
	strvec_push(&two, "torch.allclose");
	strvec_push(&two, "time.perf_counter");
	rt_rule_patched(&two, "after import", &f);
	assert_int_equal(count(&f, "H08"), 1);
	assert_non_null(strstr(f.v[0].message, "torch.allclose, time.perf_counter were replaced after import"));
	strvec_clear(&two);
	findings_release(&f);

	const uint32_t seeds[3] = { 11, 22, 33 };
	const uint64_t ref[3] = { 1, 2, 3 }, honest[3] = { 7, 8, 9 }, constant[3] = { 5, 5, 5 };
	const uint64_t ref_const[3] = { 4, 4, 4 };
	const int known[3] = { 1, 1, 1 }, partly[3] = { 1, 0, 0 };
	rt_rule_same_output(honest, ref, known, seeds, 3, &f);
	rt_rule_same_output(constant, ref_const, known, seeds, 3, &f); /* a constant problem: the same is right */
	rt_rule_same_output(constant, ref, partly, seeds, 3, &f);      /* unknown digests prove nothing */
	assert_int_equal(f.n, 0);
	rt_rule_same_output(constant, ref, known, seeds, 3, &f);
	assert_int_equal(count(&f, "H11"), 1);
	assert_non_null(strstr(f.v[0].message, "seeds 11 and 22"));
	findings_release(&f);
}

static void determinism_rotation_zero_poison(void **state)
{
	(void)state;
	struct findings f = { 0 };
	assert_string_equal(rt_rule_determinism(1, 1, 5, "", &f), "bitwise");
	assert_string_equal(rt_rule_determinism(0, 1, 5, "", &f), "within_tolerance");
	assert_int_equal(f.n, 0);
	assert_string_equal(rt_rule_determinism(0, 0, 5, "17 of 64 elements differ", &f), "differs");
	assert_int_equal(count(&f, "H19"), 1);
	assert_non_null(strstr(f.v[0].message, "17 of 64 elements differ"));
	findings_release(&f);

	assert_string_equal(rt_rule_rotation(1, 0, 0, "", &f), "changed");
	assert_string_equal(rt_rule_rotation(1, 1, 1, "", &f), "changed"); /* the reference's did not change either */
	assert_int_equal(f.n, 0);
	assert_string_equal(rt_rule_rotation(0, 1, 0, "", &f), "stale");
	assert_non_null(strstr(f.v[0].message, "same output as before"));
	assert_string_equal(rt_rule_rotation(0, 0, 0, "3 of 9 elements differ", &f), "stale");
	assert_non_null(strstr(f.v[1].message, "3 of 9 elements differ"));
	assert_int_equal(count(&f, "H11"), 2);
	findings_release(&f);

	rt_rule_zero_output(1, 1, 1, "out0", "trial 0", &f); /* the reference is zero too: nothing to say */
	rt_rule_zero_output(1, 0, 0, "out0", "trial 0", &f); /* zeros that failed: just wrong */
	rt_rule_zero_output(0, 0, 1, "out0", "trial 0", &f);
	assert_int_equal(f.n, 0);
	rt_rule_zero_output(1, 0, 1, "out1", "trial 2", &f);
	assert_int_equal(count(&f, "H16"), 1);
	assert_non_null(strstr(f.v[0].message, "out1 of trial 2"));
	findings_release(&f);

	rt_rule_poison(1, 0, 3, &f); /* NaN either way: a plain bug */
	rt_rule_poison(0, 1, 3, &f);
	assert_int_equal(f.n, 0);
	rt_rule_poison(1, 1, 3, &f);
	assert_int_equal(count(&f, "H09"), 1);
	findings_release(&f);
}

static void findings_are_capped_per_id(void **state)
{
	(void)state;
	struct findings f = { 0 };
	for (int i = 0; i < 10; i++)
		rt_findings_add(&f, "H07", "number %d", i);
	assert_non_null(rt_findings_add(&f, "H06", "other"));
	assert_null(rt_findings_add(&f, "H07", "one more"));
	assert_int_equal(count(&f, "H07"), RT_MAX_PER_ID);
	assert_true(findings_has(&f, "H06") && !findings_has(&f, "H11"));
	findings_release(&f);
}

/* H21 with numbers: 134217728 bytes (a 4096 x 4096 fp32 ReLU, in and out) at 4 TB/s measured. */
static void floor_numbers(void **state)
{
	(void)state;
	struct findings f = { 0 };
	struct floor_result r;
	struct floor_input in = { .gpu = 1, .bytes = 134217728, .peak_bytes_per_s = 4e12, .candidate_us = 40,
				  .speedup_eager = 1.1 };
	/* floor = 134217728 / (4e12 * 1.25) s = 26.84 us */
	floor_judge(&in, &r, &f);
	assert_true(r.judged && !r.below && !r.fast);
	assert_true(fabs(r.floor_us - 26.8435456) < 1e-6);
	assert_int_equal(f.n, 0);
	in.candidate_us = 26.8; /* just below */
	floor_judge(&in, &r, &f);
	assert_true(r.below);
	assert_int_equal(count(&f, "H21"), 1);
	assert_false(f.v[0].flag_only);
	assert_non_null(strstr(f.v[0].message, "below the physical floor of 26.84 us"));
	assert_non_null(strstr(f.v[0].message, "4000 GB/s"));
	findings_release(&f);

	/* 10x eager is flagged only above 10 all through its interval, and as a flag whatever the policy */
	in.candidate_us = 40;
	in.speedup_eager = 10.0;
	in.speedup_eager_lo = 10.0;
	floor_judge(&in, &r, &f);
	assert_false(r.fast);
	in.speedup_eager = 12.5; /* the median of two pairs, one of them a reference call held up */
	in.speedup_eager_lo = 0.3;
	floor_judge(&in, &r, &f);
	assert_false(r.fast);
	assert_int_equal(f.n, 0);
	in.speedup_eager_lo = 10.5;
	floor_judge(&in, &r, &f);
	assert_true(r.fast && !r.below);
	assert_int_equal(count(&f, "H21"), 1);
	assert_true(f.v[0].flag_only);
	assert_non_null(strstr(f.v[0].message, "12.5x faster"));
	findings_release(&f);

	/* the CPU: no floor, a reason, and the 10x flag still applies */
	struct floor_input cpu = { .gpu = 0, .bytes = 1e6, .candidate_us = 1, .speedup_eager = 50, .speedup_eager_lo = 40 };
	floor_judge(&cpu, &r, &f);
	assert_false(r.judged);
	assert_non_null(strstr(r.skipped, "on the CPU"));
	assert_int_equal(f.n, 1);
	assert_true(f.v[0].flag_only);
	findings_release(&f);

	/* an unknown bandwidth or a candidate that was not timed: skipped with the reason, never passed */
	struct floor_input unknown = { .gpu = 1, .bytes = 1e6, .peak_unknown = "the worker failed", .candidate_us = 1 };
	floor_judge(&unknown, &r, &f);
	assert_false(r.judged || r.below);
	assert_non_null(strstr(r.skipped, "the worker failed"));
	struct floor_input untimed = { .gpu = 1, .bytes = 1e6, .peak_bytes_per_s = 1e12 };
	floor_judge(&untimed, &r, &f);
	assert_false(r.judged);
	assert_true(r.floor_us > 0);
	assert_non_null(strstr(r.skipped, "not timed"));
	assert_int_equal(f.n, 0);
}

/* The record of ATen operators: lines parsed into windows and operators, PyTorch's compute operators told
 * from memory utilities and from the candidate's own registered operators, broken records counted. */
static void operator_record_parses(void **state)
{
	(void)state;
	struct rt_operators o = { 0 };
	const char *rec = "O 2000000 aten::relu\nO 100000 aten::empty_like\nO 50000 mine::fused_relu\n"
			  "W 4000000 1 0 0 0\nO 1000000 aten::relu\nO 500000 aten::addmm\nW 2000000 1 0 3 300000\n";
	rt_operators_parse(&o, rec, strlen(rec));
	assert_int_equal(o.windows, 2);
	assert_int_equal(o.compute_calls, 3);
	assert_int_equal(o.other_calls, 5); /* two written, three counted in the process (quiet) */
	assert_true(fabs(o.window_ms - 6.0) < 1e-9 && fabs(o.compute_ms - 3.5) < 1e-9 && fabs(o.other_ms - 0.45) < 1e-9);
	assert_int_equal(o.ntop, 2);
	assert_string_equal(o.top[0].name, "aten::relu");
	assert_int_equal(o.top[0].calls, 2);
	assert_int_equal(o.malformed + o.unchecked + (size_t)o.lost, 0);
	/* what the recorder never writes, a window whose check went unseen, lost lines */
	const char *bad = "O -5 aten::relu\nX 1 2\nO 10 aten::relu trailing\nW 100 0 3 0 0\nW 100 1 0\n\n";
	rt_operators_parse(&o, bad, strlen(bad));
	assert_int_equal(o.malformed, 4);
	assert_int_equal(o.unchecked, 1);
	assert_int_equal(o.lost, 3);
	assert_int_equal(o.windows, 3);
	rt_operators_release(&o);
	assert_true(rt_operator_is_utility("aten::empty_like") && rt_operator_is_utility("aten::copy_"));
	assert_true(rt_operator_is_utility("aten::empty.memory_format") && rt_operator_is_utility("myops::anything"));
	assert_true(rt_operator_is_utility("aten::bernoulli_"));
	assert_false(rt_operator_is_utility("aten::relu") || rt_operator_is_utility("aten::matmul"));
	assert_false(rt_operator_is_utility("aten::emptyish") || rt_operator_is_utility("aten::_softmax"));
	/* the list the import rules share: in-place draws by their own names, exact names only */
	assert_true(rt_operator_is_utility("aten::exponential_") && rt_operator_is_utility("aten::sym_size.int"));
	assert_false(rt_operator_is_utility("aten::slice_scatter") || rt_operator_is_utility("aten::exponential"));
	/* what the worker's recorder is told is quiet: the same names, without an overload */
	const char *const *names;
	size_t n = rt_operator_utilities(&names);
	assert_true(n > 50);
	for (size_t i = 0; i < n; i++) {
		char full[128];
		snprintf(full, sizeof(full), "aten::%s", names[i]);
		assert_null(strchr(names[i], '.'));
		assert_true(rt_operator_is_utility(full));
	}
}

static struct rt_operators record_of(double window_ms, double compute_ms)
{
	struct rt_operators o = { .recorded = 1, .windows = 10, .expected = 10, .window_ms = window_ms,
				  .compute_ms = compute_ms, .compute_calls = compute_ms > 0 ? 10 : 0 };
	return o;
}

/* PyTorch's compute at or past half the calls' time is H01, past 35% a flag (not the reference's time: a
 * glue operator on a tiny problem is most of the reference's); a record that cannot be believed is H08 whatever it holds; no
 * record, no finding. */
static void operator_record_rule(void **state)
{
	(void)state;
	struct findings f = { 0 };
	struct rt_operators o = record_of(10, 9);
	rt_rule_operators(&o, &f);
	assert_true(findings_has(&f, "H01") && !f.v[0].flag_only);
	findings_release(&f);
	o = record_of(10, 4);
	rt_rule_operators(&o, &f);
	assert_true(findings_has(&f, "H01") && f.v[0].flag_only);
	findings_release(&f);
	o = record_of(10, 1);
	rt_rule_operators(&o, &f);
	assert_int_equal(f.n, 0);
	o = record_of(10, 3); /* glue around a kernel of its own, however small the reference */
	o.ref_call_ms = 0.004;
	rt_rule_operators(&o, &f);
	assert_int_equal(f.n, 0);
	o = record_of(10, 0);
	o.recorded = 0;
	o.windows = 0;
	rt_rule_operators(&o, &f);
	assert_int_equal(f.n, 0);
	struct rt_operators broken[4];
	for (int i = 0; i < 4; i++)
		broken[i] = record_of(10, 0);
	broken[0].windows = 9;   /* a call that left no window */
	broken[1].unchecked = 1; /* callbacks gone at a window's end */
	broken[2].lost = 7;      /* a flood */
	broken[3].malformed = 1; /* something else wrote */
	for (int i = 0; i < 4; i++) {
		rt_rule_operators(&broken[i], &f);
		assert_true(f.n == 1 && findings_has(&f, "H08") && !f.v[0].flag_only);
		findings_release(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(facts_parse),
		cmocka_unit_test(aliasing),
		cmocka_unit_test(plain_outputs),
		cmocka_unit_test(threads),
		cmocka_unit_test(process_and_late_threads),
		cmocka_unit_test(idle_work),
		cmocka_unit_test(patched_and_same_output),
		cmocka_unit_test(determinism_rotation_zero_poison),
		cmocka_unit_test(findings_are_capped_per_id),
		cmocka_unit_test(floor_numbers),
		cmocka_unit_test(operator_record_parses),
		cmocka_unit_test(operator_record_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
