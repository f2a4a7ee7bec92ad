/* proc.c - fork/exec with captured output, a wall-clock limit that kills the process group,
 * and size caps, so a runaway child can neither hang nor flood the harness. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CAP (1u << 20)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void proc_result_init(struct proc_result *r)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->out, 0);
	strbuf_init(&r->err, 0);
}

void proc_result_release(struct proc_result *r)
{
	strbuf_release(&r->out);
	strbuf_release(&r->err);
}

int proc_ok(const struct proc_result *r)
{
	return r->exited && r->exit_code == 0 && !r->timed_out && !r->spawn_failed;
}

char *proc_which(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? xstrdup(prog) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		char *cand = xstrfmt("%.*s/%s", (int)n, n ? path : ".", prog);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

/* In the child: never returns. Error text goes to the (captured) stderr. */
static void child_exec(const struct proc_opts *o, int out_w, int err_w)
{
	char msg[512] = "";
	int in = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY);
	/* Own process group, so a timeout can kill grandchildren (builds, forks) too. */
	setsid();
	if (in >= 0) {
		dup2(in, 0);
		close(in);
	}
	dup2(out_w, 1);
	dup2(err_w, 2);
	close(out_w);
	close(err_w);
	signal(SIGPIPE, SIG_DFL);
	if (o->cwd && chdir(o->cwd) != 0) {
		dprintf(2, "stitchbench: cannot enter %s: %s\n", o->cwd, strerror(errno));
		_exit(127);
	}
	if (o->pre_exec && o->pre_exec(o->pre_exec_arg, msg, sizeof(msg)) != 0) {
		dprintf(2, "stitchbench: sandbox setup failed: %s\n", msg);
		_exit(127);
	}
	if (o->env)
		execvpe(o->argv[0], (char *const *)o->argv, (char *const *)o->env);
	else
		execvp(o->argv[0], (char *const *)o->argv);
	dprintf(2, "stitchbench: cannot run %s: %s\n", o->argv[0], strerror(errno));
	_exit(127);
}

static void drain(int *fd, struct strbuf *sb, size_t cap, int *trunc)
{
	char buf[16384];
	ssize_t n = read(*fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	size_t room = sb->len < cap ? cap - sb->len : 0;
	if ((size_t)n > room)
		*trunc = 1; /* keep reading so the child never blocks on a full pipe */
	strbuf_add(sb, buf, (size_t)n < room ? (size_t)n : room);
}

int proc_run(const struct proc_opts *o, struct proc_result *r)
{
	int out_p[2], err_p[2], status = 0;
	size_t out_cap = o->out_cap ? o->out_cap : DEFAULT_CAP;
	size_t err_cap = o->err_cap ? o->err_cap : DEFAULT_CAP;
	double t0 = now_s();

	if (pipe2(out_p, O_CLOEXEC) != 0)
		return -errno;
	if (pipe2(err_p, O_CLOEXEC) != 0) {
		int e = errno;
		close(out_p[0]);
		close(out_p[1]);
		return -e;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(out_p[0]); close(out_p[1]); close(err_p[0]); close(err_p[1]);
		return -e;
	}
	if (pid == 0)
		child_exec(o, out_p[1], err_p[1]);
	close(out_p[1]);
	close(err_p[1]);

	int fds[2] = { out_p[0], err_p[0] };
	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd pf[2];
		int n = 0, wait_ms = -1;
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				pf[n++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		if (o->timeout_ms > 0) {
			double left = (double)o->timeout_ms / 1000.0 - (now_s() - t0);
			if (left <= 0) {
				r->timed_out = 1;
				break;
			}
			wait_ms = (int)(left * 1000.0) + 1;
		}
		int pr = poll(pf, (nfds_t)n, wait_ms);
		if (pr < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n && pr > 0; i++) {
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (pf[i].fd == fds[0])
				drain(&fds[0], &r->out, out_cap, &r->out_truncated);
			else
				drain(&fds[1], &r->err, err_cap, &r->err_truncated);
		}
	}
	if (r->timed_out)
		kill(-pid, SIGKILL);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* The pipes can close before the child exits (it may close stdout early): wait, bounded. */
	for (;;) {
		pid_t w = waitpid(pid, &status, r->timed_out ? 0 : WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (w == 0) {
			if (o->timeout_ms > 0 && now_s() - t0 > (double)o->timeout_ms / 1000.0) {
				r->timed_out = 1;
				kill(-pid, SIGKILL);
				continue;
			}
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
	}
	/* Anything the child left behind in its group dies with it. */
	kill(-pid, SIGKILL);
	r->wall_s = now_s() - t0;
	if (WIFEXITED(status)) {
		r->exited = 1;
		r->exit_code = WEXITSTATUS(status);
		if (r->exit_code == 127 && (strstr(r->err.buf, "stitchbench: cannot run") ||
					    strstr(r->err.buf, "stitchbench: sandbox setup failed")))
			r->spawn_failed = 1;
	} else if (WIFSIGNALED(status)) {
		r->signaled = 1;
		r->signo = WTERMSIG(status);
	}
	return 0;
}
