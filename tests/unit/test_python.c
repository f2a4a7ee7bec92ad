/* test_python.c - what the run learns from the workers' Python (harness/core/python.c): the probe's JSON
 * parsed into python_info, and the decision whether torch-compile can run, from that JSON as
 * harness/worker/probe.py prints it under torch 1.13 (no torch.compile) and torch 2.x; and the probe
 * cache (harness/core/probecache.c), run against a stand-in interpreter that counts its runs. */
#include "testutil.h"

#include <fcntl.h>
#include <sys/stat.h>

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

/* ---------- the probe cache ---------- */

struct fake {
	char *dir, *python, *probe, *torch_file, *count, *cache;
};

/* A shell script standing in for python3: counts its runs, prints what probe.py prints (or a failed
 * torch import when dir/broken exists). */
static void fake_make(struct fake *f)
{
	f->dir = tmpdir_make();
	f->python = xstrfmt("%s/bin/python3", f->dir);
	f->probe = xstrfmt("%s/probe.py", f->dir);
	f->torch_file = xstrfmt("%s/site/torch/__init__.py", f->dir);
	f->count = xstrfmt("%s/count", f->dir);
	f->cache = xstrfmt("%s/cache/probe", f->dir);
	write_file(f->dir, "site/torch/__init__.py", "# torch\n");
	write_file(f->dir, "probe.py", "# the probe, version 1\n");
	char *script = xstrfmt("#!/bin/sh\necho run >> '%s'\n"
			       "if [ -e '%s/broken' ]; then echo '{\"python\": \"3.11.2\", \"torch_error\": \"ImportError: no\"}'; exit 0; fi\n"
			       "echo '{\"python\": \"3.11.2\", \"torch\": \"2.4.1\", \"torch_file\": \"%s\", "
			       "\"torch_cuda\": null, \"cuda_available\": false, \"torch_compile\": true, \"devices\": []}'\n",
			       f->count, f->dir, f->torch_file);
	write_file(f->dir, "bin/python3", script);
	free(script);
	chmod(f->python, 0755);
}

static int fake_runs(const struct fake *f)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 0;
	if (strbuf_read_file(&sb, f->count, 1 << 16) == 0)
		for (const char *p = sb.buf; (p = strchr(p, '\n')); p++)
			n++;
	strbuf_release(&sb);
	return n;
}

/* Probes through the cache; returns whether it was a hit, and checks what came back either way. */
static int probe(const struct fake *f)
{
	struct python_info py;
	struct sb_error err = { 0 };
	int hit = -1;
	assert_int_equal(python_probe_cached(f->cache, f->python, f->probe, &py, &hit, &err), 0);
	assert_string_equal(py.torch_version, "2.4.1");
	assert_string_equal(py.path, f->python);
	assert_int_equal(py.torch_compile, 1);
	python_info_release(&py);
	return hit;
}

static void fake_free(struct fake *f)
{
	tmpdir_remove(f->dir);
	free(f->python);
	free(f->probe);
	free(f->torch_file);
	free(f->count);
	free(f->cache);
}

static void the_second_probe_is_read_from_the_cache(void **state)
{
	(void)state;
	struct fake f;
	fake_make(&f);
	unsetenv("STITCHBENCH_PROBE_CACHE");
	assert_int_equal(probe(&f), 0);
	assert_int_equal(probe(&f), 1);
	assert_int_equal(probe(&f), 1);
	assert_int_equal(fake_runs(&f), 1);
	fake_free(&f);
}

/* Each thing the answer depends on, changed, makes the next read a fresh probe. */
static void a_change_to_what_it_depends_on_probes_again(void **state)
{
	(void)state;
	struct fake f;
	fake_make(&f);
	unsetenv("STITCHBENCH_PROBE_CACHE");
	unsetenv("CUDA_VISIBLE_DEVICES");
	assert_int_equal(probe(&f), 0);
	/* torch reinstalled: its __init__.py rewritten with another time */
	struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, f.torch_file, ts, 0), 0);
	assert_int_equal(probe(&f), 0);
	assert_int_equal(probe(&f), 1);
	/* other GPUs visible */
	setenv("CUDA_VISIBLE_DEVICES", "1", 1);
	assert_int_equal(probe(&f), 0);
	unsetenv("CUDA_VISIBLE_DEVICES");
	assert_int_equal(probe(&f), 1); /* the earlier answer for no CUDA_VISIBLE_DEVICES is still good */
	/* a new probe.py */
	write_file(f.dir, "probe.py", "# the probe, version 2\n");
	assert_int_equal(probe(&f), 0);
	/* the interpreter replaced */
	char *script = NULL;
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&sb, f.python, 1 << 16), 0);
	strbuf_addstr(&sb, "# touched\n");
	script = strbuf_detach(&sb, NULL);
	write_file(f.dir, "bin/python3", script);
	free(script);
	assert_int_equal(probe(&f), 0);
	assert_int_equal(probe(&f), 1);
	assert_int_equal(fake_runs(&f), 5);
	fake_free(&f);
}

static void failed_probes_are_not_kept_and_the_cache_can_be_off(void **state)
{
	(void)state;
	struct fake f;
	struct python_info py;
	struct sb_error err = { 0 };
	int hit = -1;
	fake_make(&f);
	unsetenv("STITCHBENCH_PROBE_CACHE");
	write_file(f.dir, "broken", "");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(python_probe_cached(f.cache, f.python, f.probe, &py, &hit, &err), SB_EENV);
		assert_int_equal(hit, 0);
		assert_non_null(strstr(err.msg, "cannot import torch"));
	}
	assert_int_equal(fake_runs(&f), 2);
	char *broken = xstrfmt("%s/broken", f.dir);
	unlink(broken);
	free(broken);
	assert_int_equal(probe(&f), 0);
	setenv("STITCHBENCH_PROBE_CACHE", "0", 1);
	assert_int_equal(probe(&f), 0);
	assert_int_equal(probe(&f), 0);
	unsetenv("STITCHBENCH_PROBE_CACHE");
	assert_int_equal(probe(&f), 1);
	assert_int_equal(fake_runs(&f), 5);
	fake_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torch_1_13_has_no_compile),
		cmocka_unit_test(torch_2_has_compile),
		cmocka_unit_test(the_probe_wins_over_the_version),
		cmocka_unit_test(without_the_probe_the_version_decides),
		cmocka_unit_test(a_probe_without_torch_is_an_environment_error),
		cmocka_unit_test(the_second_probe_is_read_from_the_cache),
		cmocka_unit_test(a_change_to_what_it_depends_on_probes_again),
		cmocka_unit_test(failed_probes_are_not_kept_and_the_cache_can_be_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
