/* procwatch.c - the parent's own view of a candidate's worker from /proc (proc.h). */
#include "proc.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A line "Name:\tvalue" of /proc/<pid>/status, the value's text into out. */
static int status_field(pid_t pid, const char *name, char *out, size_t len)
{
	char path[64], line[512];
	size_t n = strlen(name);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			char *v = line + n + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(out, len, "%s", v);
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

/* The first child of pid, or 0. */
static pid_t first_child(pid_t pid)
{
	char path[96], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	pid_t child = 0;
	if (fgets(buf, sizeof(buf), f))
		child = (pid_t)atoi(buf);
	fclose(f);
	return child;
}

static int same_pidns(pid_t a, const char *ns)
{
	char path[64], link[128];
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)a);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	return !strcmp(link, ns);
}

void procwatch_read(pid_t pid, struct proc_view *v, int others)
{
	char text[64], self_ns[128], ns[128], path[64];
	memset(v, 0, sizeof(*v));
	if (pid <= 0)
		return;
	/* a namespace's relay has the worker below it, in a PID namespace other than ours */
	ssize_t n = readlink("/proc/self/ns/pid", self_ns, sizeof(self_ns) - 1);
	self_ns[n > 0 ? n : 0] = 0;
	pid_t w = first_child(pid);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)(w ? w : pid));
	n = readlink(path, ns, sizeof(ns) - 1);
	ns[n > 0 ? n : 0] = 0;
	v->worker = w && n > 0 && strcmp(ns, self_ns) ? w : pid;
	if (status_field(v->worker, "SigCgt", text, sizeof(text)))
		return;
	v->known = 1;
	v->caught = strtoull(text, NULL, 16);
	if (status_field(v->worker, "Threads", text, sizeof(text)) == 0)
		v->threads = atoi(text);
	if (status_field(v->worker, "State", text, sizeof(text)) == 0)
		v->state = text[0];
	if (status_field(v->worker, "Seccomp", text, sizeof(text)) == 0)
		v->seccomp = atoi(text);
	if (v->worker == pid || !others)
		return; /* without a namespace of its own its children are not counted */
	DIR *d = opendir("/proc");
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		pid_t p = (pid_t)atoi(de->d_name);
		if (p <= 0 || p == v->worker || !same_pidns(p, ns))
			continue;
		/* a zombie waiting to be reaped does no work */
		if (status_field(p, "State", text, sizeof(text)) == 0 && text[0] == 'Z')
			continue;
		if (!v->others++)
			v->first_other = p;
	}
	closedir(d);
}

/* utime + stime (fields 14 and 15) of a /proc stat file, in ticks, and the name in its parentheses. */
static long long stat_ticks(const char *path, char *name, size_t len)
{
	char buf[1024];
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -1;
	if (name)
		snprintf(name, len, "%.*s", (int)(close - open - 1), open + 1);
	/* after ") " come state (field 3) ... utime (14), stime (15) */
	char *p = close + 2;
	long long ut = -1, st = -1;
	for (int field = 3; field <= 15 && p && *p; field++) {
		if (field == 14)
			ut = strtoll(p, NULL, 10);
		else if (field == 15)
			st = strtoll(p, NULL, 10);
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	return ut >= 0 && st >= 0 ? ut + st : -1;
}

double procwatch_cpu_s(pid_t pid)
{
	clockid_t id;
	struct timespec ts;
	/* the kernel's own clock for the process: nanoseconds, every thread, live and ended */
	if (pid > 0 && clock_getcpuclockid(pid, &id) == 0 && clock_gettime(id, &ts) == 0)
		return (double)ts.tv_sec + ts.tv_nsec / 1e9;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	long long t = pid > 0 ? stat_ticks(path, NULL, 0) : -1;
	return t < 0 ? -1 : (double)t / (double)sysconf(_SC_CLK_TCK);
}

void procwatch_threads_busy(pid_t pid, int *tids, long long *ticks, int cap, int *n, char *buf, size_t len)
{
	char dir[64], path[128], name[64];
	int first = *n == 0, used = 0;
	if (buf && len)
		buf[0] = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d/stat", dir, tid);
		long long t = stat_ticks(path, name, sizeof(name));
		if (t < 0)
			continue;
		if (first) {
			if (*n < cap) {
				tids[*n] = tid;
				ticks[(*n)++] = t;
			}
			continue;
		}
		long long was = 0; /* a thread born since counts from 0 */
		for (int i = 0; i < *n; i++)
			if (tids[i] == tid)
				was = ticks[i];
		double ms = (double)(t - was) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
		if (ms > 0 && buf && (size_t)used + 80 < len)
			used += snprintf(buf + used, len - (size_t)used, "%s%s (%d) %.0f ms", used ? ", " : "", name, tid, ms);
	}
	closedir(d);
}

void procwatch_signal_names(uint64_t bits, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int s = 1; s <= 64 && used + 16 < len; s++)
		if (bits & (1ULL << (s - 1))) {
			const char *name = s < SIGRTMIN ? sigabbrev_np(s) : NULL;
			used += name ? (size_t)snprintf(buf + used, len - used, "%sSIG%s", used ? ", " : "", name)
				     : (size_t)snprintf(buf + used, len - used, "%ssignal %d", used ? ", " : "", s);
		}
}
