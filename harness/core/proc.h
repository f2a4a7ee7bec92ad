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
	/* A private command channel: the child reads requests on fd 3 and writes replies on fd 4 (Unix
	 * sockets, which can carry descriptors), so nothing it prints on stdout can be mistaken for a reply. */
	int channel;
	/* Keep the last out_cap/err_cap bytes instead of the first (crash messages come last). */
	int keep_tail;
	/* Not killed when the thread that started it ends (no PR_SET_PDEATHSIG). Only for a child that
	 * exits by itself once its command channel closes, as a kept reference worker does: it is started
	 * by one run thread and used by others after that thread is gone. */
	int outlives_thread;
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

/* A started child, for conversations (workers) rather than run-to-completion. */
struct proc_handle {
	pid_t pid;
	int out_fd, err_fd;     /* read ends of the child's stdout and stderr; -1 once closed */
	int cmd_fd, reply_fd;   /* with opts.channel: our ends of its fd 3 and fd 4; else -1 */
	double t0;              /* monotonic start time, seconds */
	int reaped;
	int status;             /* wait status once reaped */
	/* A child another process forked for us (a fork server, DESIGN §6): not ours to waitpid, so its
	 * wait status arrives on this pipe (4 bytes, then end-of-file). -1 for our own children. */
	int status_fd;
};

int proc_start(const struct proc_opts *o, struct proc_handle *h);

/* Starts the child through `spawn` instead of fork and exec: proc_start's pipes are made, and spawn
 * gets the child's ends (fds[0..3]: stdout, stderr, fd 3 and fd 4 of the channel; fds[4]: the write end
 * of the status pipe, which the spawner writes the child's wait status to when it reaps it). spawn
 * returns the child's pid (in our PID namespace; it must call setsid, so that its group can be
 * killed), or -1 when it could not, which proc_start_via returns as -EAGAIN. Needs opts.channel. */
typedef pid_t (*proc_spawn_fn)(void *arg, const struct proc_opts *o, const int fds[5]);
int proc_start_via(const struct proc_opts *o, struct proc_handle *h, proc_spawn_fn spawn, void *arg);

/* The child's side of proc_start up to the exec, for a spawner that runs in the child it forked
 * itself (lib/libsbspawn.so): dies with `parent` (unless opts.outlives_thread), stdin from
 * opts.stdin_path, its own session, no signal blocked, the given ends at fds 1-4, opts.cwd, then
 * opts.pre_exec (the sandbox). Returns only on success; otherwise the child exits 126 or 127 with the
 * reason on stderr, as proc_start's child does. */
void proc_child_setup(const struct proc_opts *o, pid_t parent, int out_w, int err_w, int cmd_r, int reply_w);
/* Reads whatever stdout/stderr have ready into r (capped per o), waiting at most wait_ms. */
void proc_pump(struct proc_handle *h, const struct proc_opts *o, struct proc_result *r, int wait_ms);
/* Closes the channel, waits for the child until deadline_s (monotonic; <= 0: forever), killing its
 * whole process group at the deadline, drains the rest of its output, and fills r. */
int proc_finish(struct proc_handle *h, const struct proc_opts *o, struct proc_result *r, double deadline_s);
/* Kills the child's process group now (the child is reaped by proc_finish). */
void proc_kill(struct proc_handle *h);
double proc_now(void);

/* Runs to completion (or timeout, which kills the child's whole process group).
 * Returns 0 when the child was started and reaped (whatever its status), negative on a local error. */
int proc_run(const struct proc_opts *o, struct proc_result *r);

/* True when the program ended with exit code 0. */
int proc_ok(const struct proc_result *r);

/* Looks up a program on PATH; returns an allocated path or NULL. */
char *proc_which(const char *prog);

#endif
