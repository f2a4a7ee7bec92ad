/* test_cli_args.c - argument parsing of the global options and the commands, and the order in
 * which config sources win: defaults < file < --set (in order) < dedicated flags. */
#include "testutil.h"

#include "cli/cli.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void global_options(void **state)
{
	(void)state;
	struct global_args g;
	struct sb_error err = { 0 };
	char *a[] = { "stitchbench", "-v", "-v", "-q", "problems", "--json" };
	assert_int_equal(global_parse_args(ARGC(a), a, &g, &err), 4);
	assert_int_equal(g.verbose, 2);
	assert_int_equal(g.quiet, 1);
	char *b[] = { "stitchbench", "--version" };
	assert_int_equal(global_parse_args(ARGC(b), b, &g, &err), 2);
	assert_int_equal(g.version, 1);
	char *c[] = { "stitchbench", "--frobnicate", "doctor" };
	assert_int_equal(global_parse_args(ARGC(c), c, &g, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "unknown option '--frobnicate'"));
	char *d[] = { "stitchbench" };
	assert_int_equal(global_parse_args(ARGC(d), d, &g, &err), 1);
}

static void problems_arguments(void **state)
{
	(void)state;
	struct problems_args a;
	struct sb_error err = { 0 };
	char *ok[] = { "problems", "--level", "1,3", "--problems", "L1/1-3,L3/*", "--json",
		       "--kernelbench-root=/kb", "--set", "eval.trials=2", "-c", "x.yaml" };
	assert_int_equal(problems_parse_args(ARGC(ok), ok, &a, &err), 0);
	assert_int_equal(a.levels[0], 1);
	assert_int_equal(a.levels[1], 0);
	assert_int_equal(a.levels[2], 1);
	assert_int_equal(a.selectors.nr, 2);
	assert_string_equal(a.selectors.v[1], "L3/*");
	assert_int_equal(a.json, 1);
	assert_string_equal(a.cfg.kernelbench_root, "/kb");
	assert_string_equal(a.cfg.config_path, "x.yaml");
	assert_int_equal(a.cfg.sets.nr, 1);
	problems_args_release(&a);

	char *badlevel[] = { "problems", "--level", "5" };
	assert_int_equal(problems_parse_args(ARGC(badlevel), badlevel, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "--level 5"));
	problems_args_release(&a);
	char *unknown[] = { "problems", "--frob" };
	assert_int_equal(problems_parse_args(ARGC(unknown), unknown, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "'--frob' is not known"));
	problems_args_release(&a);
	char *novalue[] = { "problems", "--level" };
	assert_int_equal(problems_parse_args(ARGC(novalue), novalue, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "needs a value"));
	problems_args_release(&a);
	char *extra[] = { "problems", "stray" };
	assert_int_equal(problems_parse_args(ARGC(extra), extra, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "unexpected argument 'stray'"));
	problems_args_release(&a);
	/* an empty selection is not "every problem", which leaving the option out already says */
	char *empty[] = { "problems", "--problems", "," };
	assert_int_equal(problems_parse_args(ARGC(empty), empty, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "--problems \",\" names nothing"));
	problems_args_release(&a);
	char *help[] = { "problems", "-h" };
	assert_int_equal(problems_parse_args(ARGC(help), help, &a, &err), 0);
	assert_int_equal(a.help, 1);
	problems_args_release(&a);
}

static void doctor_arguments(void **state)
{
	(void)state;
	struct doctor_args a;
	struct sb_error err = { 0 };
	char *ok[] = { "doctor", "--config", "e.yaml", "--python", "/opt/py", "--set", "a=b", "--set", "c=d" };
	assert_int_equal(doctor_parse_args(ARGC(ok), ok, &a, &err), 0);
	assert_string_equal(a.cfg.config_path, "e.yaml");
	assert_string_equal(a.cfg.python, "/opt/py");
	assert_int_equal(a.cfg.sets.nr, 2);
	config_opts_release(&a.cfg);
	char *bad[] = { "doctor", "--json" };
	assert_int_equal(doctor_parse_args(ARGC(bad), bad, &a, &err), SB_EINPUT);
	config_opts_release(&a.cfg);
}

static void flags_override_sets_override_file(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "e.yaml", "python: /from/file\neval:\n  trials: 3\n  seed: 7\nproblems:\n  root: /file/root\n");
	char *path = xstrfmt("%s/e.yaml", dir);
	struct config_opts o = CONFIG_OPTS_INIT;
	struct config cfg;
	struct sb_error err = { 0 };
	o.config_path = path;
	strvec_push(&o.sets, "eval.trials=4");
	strvec_push(&o.sets, "eval.trials=6");
	strvec_push(&o.sets, "python=/from/set");
	o.python = "/from/flag";
	o.kernelbench_root = "/flag/root";
	config_init(&cfg);
	assert_int_equal(config_resolve(&o, &cfg, &err), 0);
	assert_int_equal(cfg.eval.trials, 6);  /* the last --set wins */
	assert_int_equal(cfg.eval.seed, 7);    /* the file beats the default */
	assert_string_equal(cfg.python, "/from/flag");
	assert_string_equal(cfg.problems.root, "/flag/root");
	config_release(&cfg);

	/* an invalid override is reported, not ignored */
	strvec_push(&o.sets, "eval.trials=-1");
	config_init(&cfg);
	assert_int_equal(config_resolve(&o, &cfg, &err), SB_EINPUT);
	config_release(&cfg);
	config_opts_release(&o);
	free(path);
	tmpdir_remove(dir);
}

static void every_listed_command_has_help(void **state)
{
	(void)state;
	int n = 0;
	for (const struct cmd *c = commands; c->name; c++, n++) {
		assert_non_null(c->fn);
		assert_true(strlen(c->summary) > 10);
		char *usage = xstrfmt("usage: stitchbench %s", c->name);
		assert_non_null(strstr(c->help, usage));
		free(usage);
		assert_ptr_equal(cmd_lookup(c->name), c);
	}
	assert_true(n >= 3);
	assert_null(cmd_lookup("nonexistent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(global_options),
		cmocka_unit_test(problems_arguments),
		cmocka_unit_test(doctor_arguments),
		cmocka_unit_test(flags_override_sets_override_file),
		cmocka_unit_test(every_listed_command_has_help),
	};
	return cmocka_run_group_tests_name("cli_args", tests, NULL, NULL);
}
