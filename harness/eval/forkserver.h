/* forkserver.h - candidate workers forked from a process that imported torch once (DESIGN §6,
 * docs/worker.md "The fork server"): lib/libsbspawn.so and harness/worker/template.py do the forking;
 * this is stitchbench's side. One server per evaluation environment, shared by its threads. */
#ifndef SB_FORKSERVER_H
#define SB_FORKSERVER_H

#include "../core/proc.h"
#include "sandbox.h"

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

#endif
