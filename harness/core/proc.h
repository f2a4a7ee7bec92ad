/* proc.h - the small process-running layer: spawn, capture, time out, reap.
 * Everything the harness runs (python probes, nvidia-smi, workers) goes through proc_run(). */
#ifndef SB_PROC_H
#define SB_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "strbuf.h"

struct proc_opts {
	const char *const *argv;  /* argv[0] is looked up on PATH when it has no '/' */
	const char *const *env;   /* NULL: inherit the parent's environment */
	const char *cwd;          /* NULL: inherit */
	int timeout_ms;           /* <= 0: no timeout */
	size_t out_cap, err_cap;  /* bytes kept of stdout/stderr; 0: 1 MiB default */
	const char *stdin_path;   /* NULL: /dev/null */
	/* Runs in the child after fork, before exec (the sandbox hooks in here).
	 * Returning non-zero aborts the exec; the child exits 127 and writes msg to stderr. */
	int (*pre_exec)(void *arg, char *msg, size_t msglen);
	void *pre_exec_arg;
};

struct proc_result {
	int exited;           /* 1 when the child called exit() */
	int exit_code;
	int signaled;         /* 1 when a signal ended it */
	int signo;
	int timed_out;        /* 1 when we killed it at the wall-clock limit */
	int spawn_failed;     /* exec failed (program not found, pre_exec refused) */
	int out_truncated, err_truncated;
	double wall_s;
	struct strbuf out, err;
};

void proc_result_init(struct proc_result *r);
void proc_result_release(struct proc_result *r);

/* Runs to completion (or timeout, which kills the child's whole process group).
 * Returns 0 when the child was started and reaped (whatever its status), negative on a local error. */
int proc_run(const struct proc_opts *o, struct proc_result *r);

/* True when the program ended with exit code 0. */
int proc_ok(const struct proc_result *r);

/* Looks up a program on PATH; returns an allocated path or NULL. */
char *proc_which(const char *prog);

#endif
