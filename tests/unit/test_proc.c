/* test_proc.c - the process layer under stress: output capture and caps, exit codes and
 * signals, a wall-clock timeout that also kills grandchildren, and programs that do not exist. */
#include "testutil.h"

#include <signal.h>

#include "core/proc.h"
#include "core/gpu.h"

static int run_sh(const char *script, int timeout_ms, size_t cap, struct proc_result *r)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = timeout_ms, .out_cap = cap, .err_cap = cap };
	proc_result_init(r);
	return proc_run(&o, r);
}

static void captures_both_streams_and_exit_code(void **state)
{
	(void)state;
	struct proc_result r;
	assert_int_equal(run_sh("echo out; echo err >&2; exit 3", 10000, 0, &r), 0);
	assert_string_equal(r.out.buf, "out\n");
	assert_string_equal(r.err.buf, "err\n");
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 3);
	assert_false(proc_ok(&r));
	proc_result_release(&r);
	assert_int_equal(run_sh("true", 10000, 0, &r), 0);
	assert_true(proc_ok(&r));
	proc_result_release(&r);
}

static void reports_signals(void **state)
{
	(void)state;
	struct proc_result r;
	assert_int_equal(run_sh("kill -SEGV $$", 10000, 0, &r), 0);
	assert_true(r.signaled);
	assert_int_equal(r.signo, SIGSEGV);
	assert_false(proc_ok(&r));
	proc_result_release(&r);
}

static void caps_output_without_blocking_the_child(void **state)
{
	(void)state;
	struct proc_result r;
	/* 8 MiB on stdout with a 1 KiB cap: the child must still finish (we keep draining) */
	assert_int_equal(run_sh("head -c 8388608 /dev/zero; echo done >&2", 20000, 1024, &r), 0);
	assert_true(proc_ok(&r));
	assert_int_equal(r.out.len, 1024);
	assert_true(r.out_truncated);
	assert_string_equal(r.err.buf, "done\n");
	proc_result_release(&r);
}

static void timeout_kills_the_whole_group(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *script = xstrfmt("(sleep 3; touch %s/survivor) & sleep 30", dir);
	struct proc_result r;
	assert_int_equal(run_sh(script, 300, 0, &r), 0);
	assert_true(r.timed_out);
	assert_true(r.wall_s < 5.0);
	assert_false(proc_ok(&r));
	proc_result_release(&r);
	sleep(4);
	char *survivor = xstrfmt("%s/survivor", dir);
	assert_int_equal(access(survivor, F_OK), -1); /* the background grandchild died too */
	free(survivor);
	free(script);
	tmpdir_remove(dir);
}

static void child_closing_stdout_early_is_still_waited_for(void **state)
{
	(void)state;
	struct proc_result r;
	assert_int_equal(run_sh("exec >&- 2>&-; sleep 0.3; exit 4", 10000, 0, &r), 0);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 4);
	assert_true(r.wall_s >= 0.25);
	proc_result_release(&r);
}

static void missing_program_is_a_spawn_failure(void **state)
{
	(void)state;
	const char *argv[] = { "/nonexistent/prog", NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 5000 };
	struct proc_result r;
	proc_result_init(&r);
	assert_int_equal(proc_run(&o, &r), 0);
	assert_true(r.spawn_failed);
	assert_non_null(strstr(r.err.buf, "cannot run /nonexistent/prog"));
	proc_result_release(&r);
	assert_null(proc_which("surely-not-a-program-xyz"));
	char *sh = proc_which("sh");
	assert_non_null(sh);
	assert_true(sh[0] == '/');
	free(sh);
}

static void parses_nvidia_smi_csv(void **state)
{
	(void)state;
	struct gpu_list l = { 0 };
	const char *csv = "0, NVIDIA H200, 9.0, 143771, 580.95.05, 00000000:1B:00.0\n"
			  "1, NVIDIA H200, 9.0, 143771, 580.95.05, 00000000:43:00.0\n";
	assert_int_equal(gpu_parse_smi_csv(csv, &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].name, "NVIDIA H200");
	assert_string_equal(l.v[0].sm, "90");
	assert_true(l.v[0].memory_bytes == 143771LL * 1048576LL);
	assert_string_equal(l.v[1].driver, "580.95.05");
	assert_string_equal(l.v[1].pci_bus, "00000000:43:00.0");
	gpu_list_release(&l);
	/* an error message instead of rows yields no GPU */
	assert_int_equal(gpu_parse_smi_csv("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", &l), -1);
	assert_int_equal(l.n, 0);
	gpu_list_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(captures_both_streams_and_exit_code),
		cmocka_unit_test(reports_signals),
		cmocka_unit_test(caps_output_without_blocking_the_child),
		cmocka_unit_test(timeout_kills_the_whole_group),
		cmocka_unit_test(child_closing_stdout_early_is_still_waited_for),
		cmocka_unit_test(missing_program_is_a_spawn_failure),
		cmocka_unit_test(parses_nvidia_smi_csv),
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
