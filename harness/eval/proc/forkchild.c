/* forkchild.c - the child's side of a fork server's spawn (lib/libsbspawn.so, DESIGN §6).
 *
 * The fork server (harness/worker/template.py) is a trusted Python process that has imported torch
 * once and forks a fresh candidate worker per evaluation instead of stitchbench starting Python anew.
 * In the forked child it calls sbspawn_child(), which does what proc_start's child does before its
 * exec: the same code (proc_child_setup and sandbox_enter), so a forked worker is confined exactly as
 * an exec'd one, down to the descriptors: it keeps 0-4 and closes the rest, as there is no exec to. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/proc.h"
#include "proc.h"

/* "a\nb\n" -> { "a", "b", NULL } in place (list is modified); NULL for an empty list. */
static const char **split_lines(char *list)
{
	if (!list || !*list)
		return NULL;
	size_t n = 1;
	for (char *p = list; *p; p++)
		n += *p == '\n';
	const char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	size_t k = 0;
	for (char *tok = strtok(list, "\n"); tok && k < n; tok = strtok(NULL, "\n"))
		v[k++] = tok;
	return v;
}

/* Called in the forked child with the server's pid as `parent`. fds: stdout, stderr, the channel's
 * fd 3 and fd 4 ends. sandboxed = 0: a trusted worker, only the process setup. write_dirs and hidden
 * are newline-separated lists. Returns 0 with the child ready to run the worker; on a failure the
 * child has exited (126 or 127, the reason on stderr). */
int sbspawn_child(int parent, const int fds[4], const char *cwd, int outlives_parent, int sandboxed, const char *workdir,
		  const char *write_dirs, const char *hidden, int cpu_seconds, long long file_bytes, long long address_space,
		  int open_files, int processes, int no_network, int own_pids, int private_tmp, int landlock, int disabled)
{
	char *wd = write_dirs ? strdup(write_dirs) : NULL, *hd = hidden ? strdup(hidden) : NULL;
	struct sandbox_opts sb = {
		.workdir = workdir, .write_dirs = split_lines(wd), .hidden = split_lines(hd), .cpu_seconds = cpu_seconds,
		.file_bytes = file_bytes, .address_space = address_space, .open_files = open_files, .processes = processes, .no_network = no_network,
		.own_pids = own_pids, .private_tmp = private_tmp, .landlock = landlock, .disabled = disabled,
	};
	struct proc_opts o = {
		.cwd = cwd, .channel = 1, .outlives_thread = outlives_parent,
		.pre_exec = sandboxed ? sandbox_enter : NULL, .pre_exec_arg = &sb,
	};
	/* it keeps 0-4 and closes the rest before the sandbox: what the server holds (its own channel, the
	 * other children's status pipes) must not reach a candidate, and Landlock does not cover open files */
	proc_child_setup(&o, (pid_t)parent, fds[0], fds[1], fds[2], fds[3]);
	return 0;
}
