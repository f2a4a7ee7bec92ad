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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_CAP (1u << 20)

double proc_now(void)
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

/* Moves fd to exactly `target`, leaving it open across exec. */
static void move_fd(int fd, int target)
{
	if (fd == target) {
		fcntl(fd, F_SETFD, 0);
		return;
	}
	dup2(fd, target); /* dup2 clears FD_CLOEXEC on the copy */
	close(fd);
}

void proc_child_setup(const struct proc_opts *o, pid_t parent, int out_w, int err_w, int cmd_r, int reply_w)
{
	char msg[512] = "";
	/* Dies with the thread that started it: a killed stitchbench (SIGKILL, OOM) must not leave
	 * workers behind that hold GPU memory. The fork happened in the thread that also stops the
	 * process, so the thread-exit semantics of PR_SET_PDEATHSIG do no harm; if the parent is already
	 * gone, go now. */
	if (!o->outlives_thread)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	int in = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY | O_CLOEXEC);
	/* Own process group, so a timeout can kill grandchildren (builds, forks) too. */
	setsid();
	/* No signal blocked: `run` blocks SIGINT/SIGTERM in its threads to take them in one thread, and a
	 * worker must still die of SIGTERM (a Slurm job's end, say) as any program would. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* fds 3 and 4 may be taken by our own pipes: lift everything above 10 first. */
	int fds[4] = { in, out_w, err_w, cmd_r };
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0 && fds[i] < 10) {
			int hi = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
			close(fds[i]);
			fds[i] = hi;
		}
	if (reply_w >= 0 && reply_w < 10) {
		int hi = fcntl(reply_w, F_DUPFD_CLOEXEC, 10);
		close(reply_w);
		reply_w = hi;
	}
	if (fds[0] >= 0)
		move_fd(fds[0], 0);
	move_fd(fds[1], 1);
	move_fd(fds[2], 2);
	if (fds[3] >= 0) {
		move_fd(fds[3], 3);
		move_fd(reply_w, 4);
	}
	/* Nothing else passes: descriptors stitchbench inherited from whatever started it are not
	 * close-on-exec, and a candidate must not get them (tests/e2e/test_fork_server.sh checks). */
	int keep = fds[3] >= 0 ? 5 : 3;
	if (close_range((unsigned)keep, ~0U, 0) != 0)
		for (int fd = keep; fd < 65536; fd++)
			close(fd);
	signal(SIGPIPE, SIG_DFL);
	if (o->cwd && chdir(o->cwd) != 0) {
		dprintf(2, "stitchbench: cannot enter %s: %s\n", o->cwd, strerror(errno));
		_exit(127);
	}
	if (o->pre_exec && o->pre_exec(o->pre_exec_arg, msg, sizeof(msg)) != 0) {
		dprintf(2, "stitchbench: sandbox setup failed: %s\n", msg);
		_exit(127);
	}
}

/* In the child: never returns. Error text goes to the (captured) stderr. */
static void child_exec(const struct proc_opts *o, pid_t parent, int out_w, int err_w, int cmd_r, int reply_w)
{
	proc_child_setup(o, parent, out_w, err_w, cmd_r, reply_w);
	if (o->env)
		execvpe(o->argv[0], (char *const *)o->argv, (char *const *)o->env);
	else
		execvp(o->argv[0], (char *const *)o->argv);
	dprintf(2, "stitchbench: cannot run %s: %s\n", o->argv[0], strerror(errno));
	_exit(127);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* fork and exec: proc_start's spawner */
static pid_t fork_exec(void *arg, const struct proc_opts *o, const int fds[5])
{
	(void)arg;
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		child_exec(o, parent, fds[0], fds[1], fds[2], fds[3]);
	return pid;
}

static int start(const struct proc_opts *o, struct proc_handle *h, proc_spawn_fn spawn, void *arg)
{
	/* p[4]: the status pipe of a child someone else forks */
	int p[5][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } };
	int npipes = o->channel ? 4 : 2, e, remote = spawn != fork_exec;
	memset(h, 0, sizeof(*h));
	h->out_fd = h->err_fd = h->cmd_fd = h->reply_fd = h->status_fd = -1;
	if (remote && !o->channel)
		return -EINVAL; /* a spawner passes the channel's ends: a child without one cannot be spawned */
	/* stdout and stderr are pipes; the command channel is a pair of Unix sockets, so that a reply can
	 * carry a file descriptor (SCM_RIGHTS: a worker's shared outputs, DESIGN §5.4) */
	for (int i = 0; i < npipes; i++)
		if ((i < 2 ? pipe2(p[i], O_CLOEXEC) : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[i])) != 0)
			goto fail;
	if (remote && pipe2(p[4], O_CLOEXEC) != 0)
		goto fail;
	h->t0 = proc_now();
	int fds[5] = { p[0][1], p[1][1], p[2][0], p[3][1], p[4][1] };
	h->pid = spawn(arg, o, fds);
	if (h->pid < 0) {
		if (remote)
			errno = EAGAIN;
		goto fail;
	}
	if (remote) {
		close(p[4][1]);
		h->status_fd = p[4][0];
	}
	close(p[0][1]);
	close(p[1][1]);
	h->out_fd = p[0][0];
	h->err_fd = p[1][0];
	if (o->channel) {
		close(p[2][0]);
		close(p[3][1]);
		h->cmd_fd = p[2][1];
		h->reply_fd = p[3][0];
		shutdown(h->cmd_fd, SHUT_RD); /* one direction each: the child cannot talk back on its requests */
		shutdown(h->reply_fd, SHUT_WR);
	}
	return 0;
fail:
	e = errno;
	for (int i = 0; i < 5; i++) {
		close_fd(&p[i][0]);
		close_fd(&p[i][1]);
	}
	return -e;
}

int proc_start(const struct proc_opts *o, struct proc_handle *h)
{
	return start(o, h, fork_exec, NULL);
}

int proc_start_via(const struct proc_opts *o, struct proc_handle *h, proc_spawn_fn spawn, void *arg)
{
	return start(o, h, spawn, arg);
}

/* Appends what fd has, keeping at most cap bytes (the head, or the tail with keep_tail). */
static void drain(int *fd, struct strbuf *sb, size_t cap, int keep_tail, int *trunc)
{
	char buf[65536];
	ssize_t n = read(*fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(fd);
		return;
	}
	if (keep_tail) {
		strbuf_add(sb, buf, (size_t)n);
		if (sb->len > cap) {
			/* trim in big steps so a chatty child costs amortised O(1) per byte */
			size_t drop = sb->len - cap / 2;
			memmove(sb->buf, sb->buf + drop, sb->len - drop);
			strbuf_setlen(sb, sb->len - drop);
			*trunc = 1;
		}
		return;
	}
	size_t room = sb->len < cap ? cap - sb->len : 0;
	if ((size_t)n > room)
		*trunc = 1; /* keep reading so the child never blocks on a full pipe */
	strbuf_add(sb, buf, (size_t)n < room ? (size_t)n : room);
}

void proc_pump(struct proc_handle *h, const struct proc_opts *o, struct proc_result *r, int wait_ms)
{
	struct pollfd pf[2];
	int n = 0;
	if (h->out_fd >= 0)
		pf[n++] = (struct pollfd){ .fd = h->out_fd, .events = POLLIN };
	if (h->err_fd >= 0)
		pf[n++] = (struct pollfd){ .fd = h->err_fd, .events = POLLIN };
	if (!n) {
		if (wait_ms > 0) {
			struct timespec ts = { wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		return;
	}
	if (poll(pf, (nfds_t)n, wait_ms) <= 0)
		return;
	for (int i = 0; i < n; i++) {
		if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (pf[i].fd == h->out_fd)
			drain(&h->out_fd, &r->out, o->out_cap ? o->out_cap : DEFAULT_CAP, o->keep_tail, &r->out_truncated);
		else
			drain(&h->err_fd, &r->err, o->err_cap ? o->err_cap : DEFAULT_CAP, o->keep_tail, &r->err_truncated);
	}
}

void proc_kill(struct proc_handle *h)
{
	if (h->pid > 0 && !h->reaped)
		kill(-h->pid, SIGKILL);
}

/* A fork server's child: its status comes down the status pipe. End-of-file without one means the
 * server died, and its children with it (they die with their parent): counted as killed. */
static int try_reap_remote(struct proc_handle *h, int block)
{
	struct pollfd pf = { .fd = h->status_fd, .events = POLLIN };
	int n;
	do
		n = poll(&pf, 1, block ? -1 : 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	int st = 0;
	ssize_t got;
	do
		got = read(h->status_fd, &st, sizeof(st));
	while (got < 0 && errno == EINTR);
	h->status = got == (ssize_t)sizeof(st) ? st : SIGKILL; /* a wait status: killed by SIGKILL */
	close_fd(&h->status_fd);
	h->reaped = 1;
	return 1;
}

static int try_reap(struct proc_handle *h, int block)
{
	if (h->reaped)
		return 1;
	if (h->status_fd >= 0)
		return try_reap_remote(h, block);
	pid_t w;
	do
		w = waitpid(h->pid, &h->status, block ? 0 : WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == h->pid || (w < 0 && errno == ECHILD))
		h->reaped = 1;
	return h->reaped;
}

int proc_finish(struct proc_handle *h, const struct proc_opts *o, struct proc_result *r, double deadline_s)
{
	close_fd(&h->cmd_fd);
	close_fd(&h->reply_fd);
	/* Drain until the child exits and its pipes close; the pipes can close before it exits
	 * (it may close stdout early), and a grandchild may keep them open after it exits. */
	for (;;) {
		double left = deadline_s > 0 ? deadline_s - proc_now() : 1.0;
		if (left <= 0 && !h->reaped) {
			r->timed_out = 1;
			proc_kill(h);
			try_reap(h, 1);
			break;
		}
		if (try_reap(h, 0) && h->out_fd < 0 && h->err_fd < 0)
			break;
		if (h->reaped) {
			/* the child is gone; whatever still holds its pipes dies with its group */
			kill(-h->pid, SIGKILL);
		}
		int wait_ms = left > 0.05 ? 50 : (int)(left * 1000) + 1;
		proc_pump(h, o, r, wait_ms);
	}
	kill(-h->pid, SIGKILL); /* anything left in its group dies with it */
	while (h->out_fd >= 0 || h->err_fd >= 0)
		proc_pump(h, o, r, 100);
	r->wall_s = proc_now() - h->t0;
	if (WIFEXITED(h->status)) {
		r->exited = 1;
		r->exit_code = WEXITSTATUS(h->status);
		if (r->exit_code == 127 && (strstr(r->err.buf, "stitchbench: cannot run") ||
					    strstr(r->err.buf, "stitchbench: sandbox setup failed")))
			r->spawn_failed = 1;
	} else if (WIFSIGNALED(h->status)) {
		r->signaled = 1;
		r->signo = WTERMSIG(h->status);
	}
	return 0;
}

int proc_run(const struct proc_opts *o, struct proc_result *r)
{
	struct proc_handle h;
	int rc = proc_start(o, &h);
	if (rc)
		return rc;
	return proc_finish(&h, o, r, o->timeout_ms > 0 ? h.t0 + o->timeout_ms / 1000.0 : 0);
}
