/* sandbox.h - the confinement of untrusted candidate workers (DESIGN §6): namespaces (no network,
 * own PID space), rlimits, Landlock, dropped capabilities, an allow-listed environment. */
#ifndef SB_SANDBOX_H
#define SB_SANDBOX_H

#include <stddef.h>

#include "../core/strbuf.h"

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

#endif
