/* proc.h - the process layer of an evaluation: the workers as processes, started, confined and watched.
 *   sandbox_caps.c: what isolation this kernel grants the sandbox, probed once.
 *   sandbox.c: the confinement of candidate workers (namespaces, rlimits, Landlock, capabilities, environment).
 *   procwatch.c: what the parent sees of a worker from /proc without asking it (signals, threads, processes).
 *   forkserver.c (forkchild.c, the child's side): workers forked from a process that imported torch once.
 *   worker_client.c: the parent's side of a worker: start it, send a JSON request, read the reply by a deadline. */
#ifndef SB_EVAL_PROC_H
#define SB_EVAL_PROC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/error.h"
#include "../../core/proc.h"
#include "../../core/strbuf.h"

/* sandbox_caps.c - what isolation this kernel grants the candidate sandbox (DESIGN §6).
 * Probed once; doctor reports every downgrade, and verdicts will record which layers applied. */

struct sandbox_caps {
	int netns;            /* unshare(CLONE_NEWNET) works in a child */
	int netns_needs_userns; /* it worked only together with CLONE_NEWUSER (unprivileged) */
	char netns_why[160];  /* why not, when it does not */
	int landlock_abi;     /* 0 = unavailable */
	char landlock_why[160];
};

void sandbox_probe(struct sandbox_caps *caps);

/* sandbox.c - the confinement of untrusted candidate workers (DESIGN §6): namespaces (no network,
 * own PID space), rlimits, Landlock, dropped capabilities, an allow-listed environment. */

struct sandbox_opts {
	const char *workdir;          /* private directory: the only place it may write, besides write_dirs */
	const char *const *write_dirs; /* more writable trees (its build directory); NULL-terminated, may be NULL */
	const char *const *hidden;    /* trees it must not read at all (reference cache, results); NULL-terminated */
	int cpu_seconds;              /* RLIMIT_CPU; 0 = none */
	long long file_bytes;         /* RLIMIT_FSIZE; 0 = none */
	long long address_space;      /* RLIMIT_AS, the memory limit; 0 = none (on a GPU: CUDA reserves address
				       * space far beyond what it uses, so no such limit fits there) */
	int open_files;               /* RLIMIT_NOFILE; 0 = leave */
	int processes;                /* RLIMIT_NPROC; 0 = leave (root is exempt from it anyway) */
	int no_network;               /* new network namespace; Landlock TCP rules as a second layer */
	int own_pids;                 /* new PID namespace: every process it forks dies with it; with it a mount
				       * namespace, with a private /dev/shm that goes with the process */
	int private_tmp;              /* with own_pids, a private /tmp too (the caller knows nothing the worker
				       * needs lives under /tmp) */
	int landlock;                 /* apply Landlock when the kernel has it */
	int disabled;                 /* SANDBOX_NO_* layers switched off (diagnosis only; recorded in verdicts) */
};

enum {
	SANDBOX_NO_NETNS = 1, SANDBOX_NO_PIDNS = 2, SANDBOX_NO_LANDLOCK = 4, SANDBOX_NO_RLIMITS = 8,
	SANDBOX_NO_CAPS = 16, SANDBOX_NO_ALL = 32, SANDBOX_NO_SIGLOCK = 64,
};

/* Layers named in $STITCHBENCH_SANDBOX_DISABLE (netns,pidns,landlock,rlimits,caps,all), for
 * diagnosing a machine where a layer breaks CUDA (siglock: the seccomp filter that keeps glibc's signals 32
 * and 33 out of the candidate's reach); every verdict records what was off. */
int sandbox_disabled_from_env(void);

/* What was applied, recorded with every verdict; a downgrade is a line in `notes`. */
struct sandbox_report {
	int netns, pidns, landlock_abi, caps_dropped;
	int private_shm, private_tmp; /* /dev/shm and /tmp of its own (with the PID namespace) */
	long long memory_limit;       /* RLIMIT_AS in bytes; 0: none */
	char notes[512];
};

/* The pre_exec hook for proc_opts (arg = struct sandbox_opts *). Runs in the forked child. */
int sandbox_enter(void *arg, char *msg, size_t msglen);

/* Predicts, in the parent, what sandbox_enter will manage on this kernel (from sandbox_probe). */
void sandbox_describe(const struct sandbox_opts *o, struct sandbox_report *r);

/* Builds the child's environment from an allow-list: nothing else of the parent's passes (no API
 * keys). `set` adds or replaces variables ("NAME=value"). Returns a NULL-terminated vector. */
void sandbox_env(struct strvec *env, const char *const *set);

/* procwatch.c - what the parent itself sees of a candidate's worker from /proc, without asking it: the
 * signals it catches and the processes it keeps. Trusted facts, unlike what the worker reports: no code in
 * the candidate's process can change what the kernel shows the parent. */

struct proc_view {
	int known;                 /* /proc answered for the worker */
	pid_t worker;              /* its host PID: the worker process, below its namespace's relay if any */
	uint64_t caught;           /* SigCgt: signals with a handler */
	int threads;               /* OS threads of the worker */
	char state;                /* its State letter: 'T' stopped by a signal, 't' stopped by a tracer, ... */
	int seccomp;               /* its Seccomp mode: 2 with a filter (sandbox.c's lock on signals 32 and 33) */
	int others;                /* other live processes in its PID namespace (0 without one) */
	pid_t first_other;         /* one of them, for the message */
};

/* Reads the view of the worker started as `pid` (proc_handle.pid): when that process is a PID
 * namespace's relay (sandbox.c), the worker is its only child. The other processes are counted with
 * `others` only (a walk over /proc). */
void procwatch_read(pid_t pid, struct proc_view *v, int others);
/* The CPU time the process `pid` (all its threads, live and ended) has used, in seconds, from the kernel's
 * clock for it; -1 when it cannot be read. */
double procwatch_cpu_s(pid_t pid);
/* The threads of `pid` that used CPU between two reads: call with *n = 0 first (it records each thread's
 * time in ticks into tids/ticks, up to cap), then again with the same arrays to get, in buf, the busiest
 * ones as "name (tid) N ms", comma-separated. */
void procwatch_threads_busy(pid_t pid, int *tids, long long *ticks, int cap, int *n, char *buf, size_t len);
/* Names of the signals set in `bits` (SIGALRM, SIGUSR1, ...), comma-separated, into buf. */
void procwatch_signal_names(uint64_t bits, char *buf, size_t len);

/* forkserver.c - candidate workers forked from a process that imported torch once (DESIGN §6,
 * docs/worker.md "The fork server"): lib/libsbspawn.so and harness/worker/template.py do the forking;
 * this is stitchbench's side. One server per evaluation environment, shared by its threads. */

struct forkserver;

/* The library a forked child runs (lib/libsbspawn.so under home, or $STITCHBENCH_SPAWN_LIB); allocated. */
char *forkserver_lib(const char *home);

/* Starts the server (python -u template.py, trusted: no sandbox) with the allow-listed environment
 * plus `env` (NAME=value, NULL-terminated; what every worker it forks shares: PYTHONHASHSEED is read
 * once, at its start). Does not wait for its `import torch`: the first spawn does. NULL when it cannot
 * start (no lib/libsbspawn.so, say): workers are then exec'd as before, and *why says so. */
struct forkserver *forkserver_start(const char *python, const char *template_script, const char *spawn_lib,
				    const char *dir, const char *const *env, char *why, size_t whylen);

/* Starts a worker from the server: o as for proc_start (argv ignored: the server runs worker.py; the
 * environment replaced by o->env; o->cwd), sandbox NULL for a trusted worker. Returns 0 with h filled
 * (h->status_fd set), or non-zero when the server cannot (it is then stopped for good, and the caller
 * starts the worker itself). */
int forkserver_spawn(struct forkserver *fs, const struct proc_opts *o, const struct sandbox_opts *sandbox,
		     struct proc_handle *h);

/* Whether the server is up (started and not failed). */
int forkserver_alive(struct forkserver *fs);

/* Stops it (its children die with it) and frees it; NULL is fine. */
void forkserver_stop(struct forkserver *fs);

/* worker_client.c - the parent's side of a worker process: start it (sandboxed or not), send one
 * JSON request, read one JSON reply within a deadline, and describe how it died if it did. */

struct worker_spec {
	const char *python;
	const char *script;        /* harness/worker/worker.py */
	const char *dir;           /* private working directory (created by the caller) */
	const char *const *env;    /* extra NAME=value on top of the allow-list */
	const struct sandbox_opts *sandbox; /* NULL: trusted (reference) worker */
	size_t log_cap;            /* bytes of stdout/stderr kept (the tail) */
	int outlives_thread;       /* may outlive the starting thread (proc.h); it exits when the channel closes */
	struct forkserver *fork_server; /* fork it from here (forkserver.c); NULL, or a server that fails: exec */
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
