/* test_python.c - what the run learns from the workers' Python (harness/core/python.c): the probe's JSON
 * parsed into python_info, and the decision whether torch-compile can run, from that JSON as
 * harness/worker/probe.py prints it under torch 1.13 (no torch.compile) and torch 2.x. */
#include "testutil.h"

#include "core/python.h"

/* One probe reply: {"python": ..., "torch": version, "torch_compile": tc} (tc NULL: left out). */
static int parse(struct python_info *py, const char *version, const char *tc)
{
	struct sb_error err = { 0 };
	char *text = xstrfmt("{\"python\": \"3.11.2\", \"executable\": \"/usr/bin/python3\", \"torch\": \"%s\", "
			     "\"torch_cuda\": null, \"cuda_available\": false%s%s, \"devices\": []}",
			     version, tc ? ", \"torch_compile\": " : "", tc ? tc : "");
	int rc = python_info_parse("/usr/bin/python3", text, py, &err);
	free(text);
	return rc;
}

static void torch_1_13_has_no_compile(void **state)
{
	(void)state;
	struct python_info py;
	char why[128] = "";
	assert_int_equal(parse(&py, "1.13.0a0", "false"), 0);
	assert_string_equal(py.torch_version, "1.13.0a0");
	assert_int_equal(py.torch_compile, 0);
	assert_int_equal(python_torch_compile(&py, why, sizeof(why)), 0);
	assert_string_equal(why, "torch 1.13.0a0 has no torch.compile (needs torch 2.0 or later)");
	python_info_release(&py);
}

static void torch_2_has_compile(void **state)
{
	(void)state;
	struct python_info py;
	char why[128] = "";
	assert_int_equal(parse(&py, "2.4.1+cu124", "true"), 0);
	assert_int_equal(py.torch_compile, 1);
	assert_int_equal(python_torch_compile(&py, why, sizeof(why)), 1);
	assert_string_equal(why, "");
	python_info_release(&py);
}

/* What the probe found wins over the version: a 2.x build without torch.compile cannot run it. */
static void the_probe_wins_over_the_version(void **state)
{
	(void)state;
	struct python_info py;
	char why[128] = "";
	assert_int_equal(parse(&py, "2.0.0a0", "false"), 0);
	assert_int_equal(python_torch_compile(&py, why, sizeof(why)), 0);
	assert_string_equal(why, "torch 2.0.0a0 has no torch.compile (needs torch 2.0 or later)");
	python_info_release(&py);
}

/* A probe that did not say (an older probe.py): torch.compile appeared in torch 2.0. */
static void without_the_probe_the_version_decides(void **state)
{
	(void)state;
	static const struct { const char *version; int has; } cases[] = {
		{ "1.13.0a0", 0 }, { "1.9.1", 0 }, { "2.0.0", 1 }, { "2.5.1+cu121", 1 }, { "10.0", 1 }, { "garbage", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct python_info py;
		char why[128] = "";
		assert_int_equal(parse(&py, cases[i].version, NULL), 0);
		assert_int_equal(py.torch_compile, -1);
		if (python_torch_compile(&py, why, sizeof(why)) != cases[i].has)
			fail_msg("torch %s: expected %s", cases[i].version, cases[i].has ? "available" : "unavailable");
		assert_int_equal(!*why, cases[i].has);
		python_info_release(&py);
	}
}

static void a_probe_without_torch_is_an_environment_error(void **state)
{
	(void)state;
	struct python_info py;
	struct sb_error err = { 0 };
	assert_int_equal(python_info_parse("/opt/py", "{\"python\": \"3.12.1\", \"torch_error\": \"ModuleNotFoundError: "
					   "No module named 'torch'\"}", &py, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "/opt/py (Python 3.12.1): cannot import torch: ModuleNotFoundError"));
	assert_int_equal(python_info_parse("/opt/py", "Traceback (most recent call last):", &py, &err), SB_EENV);
	assert_non_null(strstr(err.msg, "the probe printed no JSON"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torch_1_13_has_no_compile),
		cmocka_unit_test(torch_2_has_compile),
		cmocka_unit_test(the_probe_wins_over_the_version),
		cmocka_unit_test(without_the_probe_the_version_decides),
		cmocka_unit_test(a_probe_without_torch_is_an_environment_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
