/* test_nvml.c - the GPU clock beside a verdict's times: NVML's reason bits named, a machine without
 * NVML told apart from a GPU that answered, and what the JSON and text verdicts then say. The clock
 * readings themselves come from a GPU (scripts/gpu-check.sh, section eval). */
#include "testutil.h"

#include <dlfcn.h>
#include <string.h>

#include "core/nvml.h"
#include "eval/verdict.h"

static void reason_bits_are_named_and_idle_is_left_out(void **state)
{
	(void)state;
	struct strbuf s = STRBUF_INIT;
	nvml_reason_names(0x1, &s);
	assert_string_equal(s.buf, "");
	strbuf_reset(&s);
	nvml_reason_names(0x4 | 0x40 | 0x1, &s);
	assert_string_equal(s.buf, "sw_power_cap,hw_thermal");
	strbuf_reset(&s);
	nvml_reason_names(0x8 | 0x80 | 0x1000, &s);
	assert_string_equal(s.buf, "hw_slowdown,power_brake,other_0x1000");
	strbuf_release(&s);
}

static void without_nvml_open_says_why(void **state)
{
	(void)state;
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib) {
		dlclose(lib);
		skip(); /* a driver is installed here: the GPU check covers this machine */
	}
	char why[160] = "";
	assert_null(nvml_open("GPU-00000000-0000-0000-0000-000000000000", why, sizeof(why)));
	assert_non_null(strstr(why, "libnvidia-ml.so.1 does not load"));
}

static void set_gpu_timing(struct verdict *v, int available, unsigned lo, unsigned med, unsigned hi,
			   unsigned long long reasons)
{
	struct timing_result *t = &v->timing;
	t->ran = 1;
	snprintf(t->clock, sizeof(t->clock), "cuda_event");
	t->gpu_clock.available = available;
	if (!available)
		snprintf(t->gpu_clock.note, sizeof(t->gpu_clock.note), "libnvidia-ml.so.1 does not load: x");
	t->gpu_clock.samples = 12;
	t->gpu_clock.mhz_min = lo;
	t->gpu_clock.mhz_median = med;
	t->gpu_clock.mhz_max = hi;
	t->gpu_clock.mhz_limit = 1980;
	t->gpu_clock.reasons = reasons;
}

static void the_verdict_carries_the_clock_and_warns_below_full_speed(void **state)
{
	(void)state;
	struct verdict v;
	struct strbuf text = STRBUF_INIT;
	verdict_init(&v);
	set_gpu_timing(&v, 1, 1980, 1980, 1980, 0);
	json_t *j = verdict_to_json(&v);
	json_t *c = json_object_get(json_object_get(j, "timing"), "gpu_clock");
	assert_true(json_is_true(json_object_get(c, "available")));
	assert_int_equal(json_integer_value(json_object_get(c, "sm_mhz_median")), 1980);
	assert_int_equal(json_integer_value(json_object_get(c, "samples")), 12);
	assert_int_equal(json_array_size(json_object_get(c, "reasons")), 0);
	json_decref(j);
	verdict_print(&v, &text);
	assert_non_null(strstr(text.buf, "SM 1980 MHz median (1980-1980 over 12 blocks), limit 1980 MHz\n"));
	assert_null(strstr(text.buf, "below the GPU's full clock"));

	/* a power cap held part of the timing at 1410 MHz */
	set_gpu_timing(&v, 1, 1410, 1755, 1980, 0x4);
	j = verdict_to_json(&v);
	c = json_object_get(json_object_get(j, "timing"), "gpu_clock");
	assert_int_equal(json_integer_value(json_object_get(c, "sm_mhz_min")), 1410);
	assert_string_equal(json_string_value(json_array_get(json_object_get(c, "reasons"), 0)), "sw_power_cap");
	json_decref(j);
	strbuf_reset(&text);
	verdict_print(&v, &text);
	assert_non_null(strstr(text.buf, "held down by sw_power_cap"));
	assert_non_null(strstr(text.buf, "below the GPU's full clock"));

	/* no NVML: the verdict says why instead of inventing a clock */
	set_gpu_timing(&v, 0, 0, 0, 0, 0);
	j = verdict_to_json(&v);
	c = json_object_get(json_object_get(j, "timing"), "gpu_clock");
	assert_true(json_is_false(json_object_get(c, "available")));
	assert_non_null(strstr(json_string_value(json_object_get(c, "note")), "libnvidia-ml"));
	json_decref(j);

	/* a CPU verdict has no GPU clock at all */
	snprintf(v.timing.clock, sizeof(v.timing.clock), "host");
	j = verdict_to_json(&v);
	assert_true(json_is_null(json_object_get(json_object_get(j, "timing"), "gpu_clock")));
	json_decref(j);
	strbuf_release(&text);
	v.timing.ran = 0;
	verdict_release(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reason_bits_are_named_and_idle_is_left_out),
		cmocka_unit_test(without_nvml_open_says_why),
		cmocka_unit_test(the_verdict_carries_the_clock_and_warns_below_full_speed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
