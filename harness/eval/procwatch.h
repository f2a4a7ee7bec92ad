/* procwatch.h - what the parent itself sees of a candidate's worker from /proc, without asking it: the
 * signals it catches and the processes it keeps. Trusted facts, unlike what the worker reports: no code in
 * the candidate's process can change what the kernel shows the parent. */
#ifndef SB_PROCWATCH_H
#define SB_PROCWATCH_H

#include <stdint.h>
#include <sys/types.h>

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

#endif
