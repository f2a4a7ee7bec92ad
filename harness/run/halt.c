/* halt.c - SIGKILL to every process below this one (halt.h), found by their parents in /proc. */
#include "halt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/strbuf.h"

/* The parent of a live process, from /proc/PID/stat; -1 when it is gone or a zombie (a zombie has no
 * children left and nothing to kill). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the last ')' ends it */
	char *p = strrchr(buf, ')'), state;
	int ppid;
	if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2 || state == 'Z' || state == 'X')
		return -1;
	return (pid_t)ppid;
}

/* Whether one of the arguments of pid's command line, after the program, is arg. */
static int runs(pid_t pid, const char *arg)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	struct strbuf sb = STRBUF_INIT;
	int hit = 0;
	if (strbuf_read_file(&sb, path, 64 << 10) == 0)
		for (size_t at = strlen(sb.buf) + 1; !hit && at < sb.len; at += strlen(sb.buf + at) + 1)
			hit = !strcmp(sb.buf + at, arg);
	strbuf_release(&sb);
	return hit;
}

struct pinned {
	pid_t pid;
	int fd;    /* its pidfd; -1 where the kernel has none (then kill(2), with the small race it leaves) */
	int spare; /* left alone (halt_descendants' spare) */
};

static int found(const struct pinned *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return 1;
	return 0;
}

int halt_descendants(const char *spare)
{
	pid_t self = getpid();
	struct pinned *v = NULL;
	size_t n = 0, cap = 0;
	/* passes over /proc until one finds nobody new: a child listed after its parent in one pass is found
	 * in the next */
	for (int grew = 1; grew;) {
		grew = 0;
		DIR *d = opendir("/proc");
		if (!d)
			break;
		for (struct dirent *de; (de = readdir(d));) {
			char *end;
			long p = strtol(de->d_name, &end, 10);
			if (*end || p <= 0 || p == self || found(v, n, (pid_t)p))
				continue;
			pid_t pp = parent_of((pid_t)p);
			if (pp <= 0 || (pp != self && !found(v, n, pp)))
				continue;
			int fd = (int)syscall(SYS_pidfd_open, (pid_t)p, 0);
			if (fd < 0 && errno != ENOSYS)
				continue; /* gone already */
			/* the pidfd holds whatever process has the pid now: it must still be one of ours */
			if (parent_of((pid_t)p) != pp) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[n++] = (struct pinned){ (pid_t)p, fd, spare && pp == self && runs((pid_t)p, spare) };
			grew = 1;
		}
		closedir(d);
	}
	int killed = 0;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].spare)
			killed += (v[i].fd >= 0 ? (int)syscall(SYS_pidfd_send_signal, v[i].fd, SIGKILL, NULL, 0)
					      : kill(v[i].pid, SIGKILL)) == 0;
		if (v[i].fd >= 0)
			close(v[i].fd);
	}
	free(v);
	return killed;
}
