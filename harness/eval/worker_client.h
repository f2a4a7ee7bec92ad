/* worker_client.h - the parent's side of a worker process: start it (sandboxed or not), send one
 * JSON request, read one JSON reply within a deadline, and describe how it died if it did. */
#ifndef SB_WORKER_CLIENT_H
#define SB_WORKER_CLIENT_H

#include <jansson.h>

#include "../core/error.h"
#include "../core/proc.h"
#include "forkserver.h"
#include "sandbox.h"

struct worker_spec {
	const char *python;
	const char *script;        /* harness/worker/worker.py */
	const char *dir;           /* private working directory (created by the caller) */
	const char *const *env;    /* extra NAME=value on top of the allow-list */
	const struct sandbox_opts *sandbox; /* NULL: trusted (reference) worker */
	size_t log_cap;            /* bytes of stdout/stderr kept (the tail) */
	int outlives_thread;       /* may outlive the starting thread (proc.h); it exits when the channel closes */
	struct forkserver *fork_server; /* fork it from here (forkserver.h); NULL, or a server that fails: exec */
};

/* Why a call did not produce a reply. */
enum worker_fault_kind { WF_NONE, WF_DIED, WF_TIMEOUT, WF_PROTOCOL };

struct worker_fault {
	enum worker_fault_kind kind;
	char what[512];            /* "killed by SIGSEGV", "exited with status 1", "no reply within 30 s" */
};

#define WORKER_MAX_FDS 64

struct worker {
	struct proc_opts opts;
	struct proc_handle h;
	struct proc_result log;    /* captured stdout and stderr (tails) */
	struct strvec argv, env;
	struct strbuf pending;     /* reply bytes read but not yet a full line */
	int started, finished;
	int forked;                /* started by a fork server, not exec'd */
	double quit_at;            /* when worker_quit asked it to quit (0: not asked) */
	double sent_at;            /* when the last request was sent, and when its reply was read (proc_now): the
				    * parent's own clock around a request (the timing loop's trusted bound) */
	double replied_at;
	char sent_cmd[32];         /* and its "cmd" */
	/* File descriptors that came with its replies (SCM_RIGHTS), oldest first, until taken. At most
	 * WORKER_MAX_FDS: more are closed on arrival, so a worker cannot fill our descriptor table. */
	int fds[WORKER_MAX_FDS];
	int nfds;
};

int worker_start(struct worker *w, const struct worker_spec *spec, struct sb_error *err);
/* Sends `req` (not stolen) and waits for the reply until `deadline` (proc_now() seconds).
 * Returns 0 with *reply set (the caller json_decref's it), or -1 with `fault` filled; after a
 * fault the worker is dead or killed and must not be called again. */
int worker_call(struct worker *w, json_t *req, json_t **reply, double deadline, struct worker_fault *fault);
/* The two halves of worker_call, for a request whose reply is collected later (a prestarted
 * candidate worker's `hello`, answered once torch is imported). Same return and fault rules. */
int worker_send(struct worker *w, json_t *req, struct worker_fault *fault);
int worker_receive(struct worker *w, json_t **reply, double deadline, struct worker_fault *fault);
/* worker_send with file descriptors attached to the request (they stay open here; the worker gets
 * its own copies). */
int worker_send_fds(struct worker *w, json_t *req, const int *fds, int nfds, struct worker_fault *fault);
/* The oldest descriptor that came with a reply, now the caller's to close; -1 when none came. */
int worker_take_fd(struct worker *w);
/* Closes every descriptor not taken. */
void worker_drop_fds(struct worker *w);
/* Asks it to quit, waits up to grace_s, then kills its whole process group; reaps it. */
void worker_stop(struct worker *w, double grace_s);
/* Asks it to quit and returns at once, so that its exit (a CUDA context's teardown) overlaps other work;
 * a later worker_stop reaps it, killing its group if it is not gone grace_s after this call. */
void worker_quit(struct worker *w);
/* The last `max` bytes of what it printed (stderr after stdout), for verdicts. */
char *worker_log_tail(struct worker *w, size_t max);

#endif
