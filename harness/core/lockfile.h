/* lockfile.h - advisory locks on files (flock): one process at a time on a run, a warning when two
 * processes time on one GPU, the owners of work folders. The kernel drops a lock with its process, so a
 * kill -9 leaves none behind; the file says who held it last. */
#ifndef SB_LOCKFILE_H
#define SB_LOCKFILE_H

#include <stddef.h>

#include "error.h"

struct lockfile {
	int fd;                  /* -1: not held */
};
#define LOCKFILE_INIT { -1 }

/* Takes an exclusive lock on path, creating it (and its folder) when missing; close-on-exec, so no
 * child process keeps it after this one ends. wait: block until it is free, else give up at once.
 * Once taken, the file holds "pid N on HOST: what, since TIME" for whoever finds it taken. Returns 0
 * taken; 1 held by another process, held_by (cap bytes, may be NULL) receiving what that one wrote;
 * negative with err when the file cannot be opened. */
int lockfile_take(struct lockfile *l, const char *path, int wait, const char *what, char *held_by, size_t cap,
		  struct sb_error *err);
void lockfile_release(struct lockfile *l);

/* This machine's name, reduced to letters, digits, '.', '_' and '-' (a file-name part). */
void lockfile_host(char *out, size_t cap);

/* Timing on a GPU: a lock per physical device, <cache_root>/locks/gpu-HOST-ID.lock, ID being the entry
 * of CUDA_VISIBLE_DEVICES that "cuda:N" names (N itself when unset), so two processes that see one GPU
 * under different numbers find the same lock. Never waits: when another process holds it, warning (cap
 * bytes) says who and that both processes' timings will interfere, and 1 is returned; 0 when taken or
 * not needed (the CPU: its timings are this process's own business), negative on an error. */
int lockfile_device(struct lockfile *l, const char *cache_root, const char *device, char *warning, size_t cap,
		    struct sb_error *err);

#endif
