/* test_suite.c - loading problem folders: a good suite, every kind of malformed file (each skipped
 * with its reason, none fatal), an empty suite, the upstream KernelBench/ layout, selectors, and the
 * names of a generations folder's files. */
#include "testutil.h"

#include "core/suite.h"

static const char *GOOD =
	"import torch\nimport torch.nn as nn\n\nN = 16\n\n"
	"class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n"
	"def get_inputs():\n    return [torch.rand(N)]\n\n"
	"def get_init_inputs():\n    return []\n";

static void loads_sorted_with_hashes(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "level1/10_Ten.py", GOOD);
	write_file(dir, "level1/2_Two.py", GOOD);
	write_file(dir, "level1/1_One_.py", GOOD);
	write_file(dir, "level3/1_Net.py", GOOD);
	write_file(dir, "level1/__init__.py", "");   /* ignored, not reported */
	write_file(dir, "level1/README.md", "notes"); /* not a .py: ignored */
	struct suite s;
	struct sb_error err = { 0 };
	assert_int_equal(suite_load(&s, "/nonexistent-home", dir, &err), 0);
	assert_int_equal(s.nproblems, 4);
	assert_int_equal(s.nskipped, 0);
	assert_int_equal(s.problems[0].id, 1);
	assert_string_equal(s.problems[0].name, "One_");
	assert_int_equal(s.problems[1].id, 2);
	assert_int_equal(s.problems[2].id, 10); /* numeric, not lexical order */
	assert_int_equal(s.problems[3].level, 3);
	assert_int_equal(strlen(s.problems[0].sha256), 64);
	/* identical content, identical hash: the key is the bytes, not the name */
	assert_string_equal(s.problems[0].sha256, s.problems[1].sha256);
	assert_non_null(suite_find(&s, 3, 1));
	assert_null(suite_find(&s, 2, 1));
	suite_release(&s);
	tmpdir_remove(dir);
}

static void malformed_files_are_skipped_with_reasons(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "level1/1_Good.py", GOOD);
	write_file(dir, "level1/2_NoModel.py", "def get_inputs(): pass\ndef get_init_inputs(): pass\n");
	write_file(dir, "level1/3_NoInputs.py", "class Model:\n    pass\ndef get_init_inputs(): pass\n");
	write_file(dir, "level1/4_NoInit.py", "class Model:\n    pass\ndef get_inputs(): pass\n");
	write_file(dir, "level1/5_Empty.py", "");
	write_file(dir, "level1/relu.py", GOOD);
	write_file(dir, "level1/1_Later.py", GOOD); /* sorts after 1_Good.py: the later name is the one skipped */
	/* the names appear only inside a docstring and indented: not definitions */
	write_file(dir, "level1/6_Docstring.py",
		   "\"\"\"\nclass Model(nn.Module):\ndef get_inputs():\n\"\"\"\n"
		   "def get_init_inputs():\n    pass\nif True:\n    class Model:\n        pass\n");
	write_file(dir, "level1/7_ModelNewOnly.py", "class ModelNew:\n    pass\ndef get_inputs(): pass\ndef get_init_inputs(): pass\n");
	struct suite s;
	struct sb_error err = { 0 };
	assert_int_equal(suite_load(&s, "/x", dir, &err), 0);
	assert_int_equal(s.nproblems, 1);
	assert_string_equal(s.problems[0].name, "Good");
	assert_int_equal(s.nskipped, 8);
	const char *expect[][2] = {
		{ "1_Later.py", "duplicate id L1/1" }, { "2_NoModel.py", "no top-level `class Model`" },
		{ "3_NoInputs.py", "no top-level `def get_inputs()`" }, { "4_NoInit.py", "no top-level `def get_init_inputs()`" },
		{ "5_Empty.py", "empty file" }, { "6_Docstring.py", "no top-level `class Model`" },
		{ "7_ModelNewOnly.py", "no top-level `class Model`" }, { "relu.py", "file name is not ID_Name.py" },
	};
	for (size_t k = 0; k < 8; k++) {
		int found = 0;
		for (size_t i = 0; i < s.nskipped; i++)
			if (ends_with(s.skipped[i].path, expect[k][0])) {
				found = 1;
				if (!strstr(s.skipped[i].reason, expect[k][1]))
					fail_msg("%s: reason '%s' lacks '%s'", expect[k][0], s.skipped[i].reason, expect[k][1]);
			}
		if (!found)
			fail_msg("%s was not reported as skipped", expect[k][0]);
	}
	suite_release(&s);
	tmpdir_remove(dir);
}

static void empty_and_missing_roots(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct suite s;
	struct sb_error err = { 0 };
	/* a folder with no levelN/ is an error that says what was expected */
	assert_int_equal(suite_load(&s, "/x", dir, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "holds no problem folders"));
	suite_release(&s);
	/* level folders without problems: loads, zero problems */
	write_file(dir, "level2/notes.txt", "x");
	assert_int_equal(suite_load(&s, "/x", dir, &err), 0);
	assert_int_equal(s.nproblems, 0);
	suite_release(&s);
	assert_int_equal(suite_load(&s, "/x", "/nonexistent/kb", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "--kernelbench-root"));
	suite_release(&s);
	tmpdir_remove(dir);
}

static void upstream_checkout_layout(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "KernelBench/level1/19_ReLU.py", GOOD);
	write_file(dir, "KernelBench/level4/1_Hf.py", GOOD);
	write_file(dir, "README.md", "upstream");
	struct suite s;
	struct sb_error err = { 0 };
	assert_int_equal(suite_load(&s, "/x", dir, &err), 0);
	assert_true(ends_with(s.root, "/KernelBench"));
	assert_int_equal(s.nproblems, 2);
	assert_int_equal(s.problems[0].id, 19);
	assert_int_equal(s.problems[1].level, 4);
	suite_release(&s);
	tmpdir_remove(dir);
}

static void selectors(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	for (int i = 1; i <= 12; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "level1/%d_P.py", i);
		write_file(dir, rel, GOOD);
	}
	write_file(dir, "level2/1_A.py", GOOD);
	write_file(dir, "level3/1_B.py", GOOD);
	write_file(dir, "level3/2_C.py", GOOD);
	struct suite s;
	struct sb_error err = { 0 };
	const struct problem **sel;
	size_t n;
	int all[4] = { 1, 1, 1, 1 }, l1[4] = { 1, 0, 0, 0 };
	assert_int_equal(suite_load(&s, "/x", dir, &err), 0);

	assert_int_equal(suite_select(&s, all, NULL, 0, &sel, &n, &err), 0);
	assert_int_equal(n, 15);
	free(sel);
	assert_int_equal(suite_select(&s, l1, NULL, 0, &sel, &n, &err), 0);
	assert_int_equal(n, 12);
	free(sel);
	char *a[] = { "L1/3-5", "l3/*", "L1/4" };
	assert_int_equal(suite_select(&s, all, a, 3, &sel, &n, &err), 0);
	assert_int_equal(n, 5); /* overlap counted once, suite order kept */
	assert_int_equal(sel[0]->id, 3);
	assert_int_equal(sel[2]->id, 5);
	assert_int_equal(sel[3]->level, 3);
	free(sel);
	char *b[] = { "2" };
	assert_int_equal(suite_select(&s, all, b, 1, &sel, &n, &err), 0);
	assert_int_equal(n, 1);
	free(sel);

	const char *bad[] = { "L5/1", "L1/", "L1/x", "L1/5-3", "L1/1-", "L1-3", "X1/1", "", "L1/3/4" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *one[] = { (char *)bad[i] };
		if (suite_select(&s, all, one, 1, &sel, &n, &err) != SB_EINPUT || !strstr(err.msg, "not a problem selector"))
			fail_msg("selector '%s' should be rejected, got: %s", bad[i], err.msg);
	}
	char *nohit[] = { "L1/50" };
	assert_int_equal(suite_select(&s, all, nohit, 1, &sel, &n, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "matches no problem"));
	char *offlevel[] = { "L3/1" };
	assert_int_equal(suite_select(&s, l1, offlevel, 1, &sel, &n, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "leave out"));

	int level, id;
	assert_int_equal(problem_ref_parse("L1/19", &level, &id, &err), 0);
	assert_int_equal(level, 1);
	assert_int_equal(id, 19);
	assert_int_equal(problem_ref_parse("L1/1-3", &level, &id, &err), SB_EINPUT);
	assert_int_equal(problem_ref_parse("L1", &level, &id, &err), SB_EINPUT);
	suite_release(&s);
	tmpdir_remove(dir);
}

static void bundled_suite_is_complete(void **state)
{
	(void)state;
	const char *root = getenv("SB_SOURCE_ROOT");
	struct suite s;
	struct sb_error err = { 0 };
	assert_int_equal(suite_load(&s, root ? root : ".", NULL, &err), 0);
	assert_int_equal(s.nskipped, 0);
	assert_true(s.nproblems >= 12);
	int per[4] = { 0 };
	for (size_t i = 0; i < s.nproblems; i++)
		per[s.problems[i].level - 1]++;
	assert_true(per[0] >= 6 && per[1] >= 3 && per[2] >= 3);
	suite_release(&s);
}

/* A generations folder's file names: what suite_sample_name writes, suite_sample_name_parse reads back;
 * a name with anything before, after or inside the pattern is not a sample. */
static void sample_names_round_trip(void **state)
{
	(void)state;
	char *name = suite_sample_name(2, 17, 3);
	int level = 0, id = 0, sample = 0;
	assert_string_equal(name, "level_2_problem_17_sample_3_kernel.py");
	assert_true(suite_sample_name_parse(name, &level, &id, &sample));
	assert_int_equal(level, 2);
	assert_int_equal(id, 17);
	assert_int_equal(sample, 3);
	free(name);
	static const char *const not_samples[] = {
		"level_1_problem_19_sample_0_kernel.py.bak", "level_1_problem_19_sample_0.py", "x_level_1_problem_19_sample_0_kernel.py",
		"level_1_problem_19_kernel.py", "",
	};
	for (size_t i = 0; i < sizeof(not_samples) / sizeof(*not_samples); i++)
		assert_false(suite_sample_name_parse(not_samples[i], &level, &id, &sample));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_sorted_with_hashes),
		cmocka_unit_test(malformed_files_are_skipped_with_reasons),
		cmocka_unit_test(empty_and_missing_roots),
		cmocka_unit_test(upstream_checkout_layout),
		cmocka_unit_test(selectors),
		cmocka_unit_test(bundled_suite_is_complete),
		cmocka_unit_test(sample_names_round_trip),
	};
	return cmocka_run_group_tests_name("suite", tests, NULL, NULL);
}
