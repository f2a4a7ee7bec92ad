/* worker_client.c - talks to harness/worker/worker.py over its private fd 3/4 channel while
 * draining its stdout/stderr, so neither a chatty nor a silent, hung or crashed worker can stall us. */
#include "proc.h"

#include "../../core/log.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int worker_start(struct worker *w, const struct worker_spec *spec, struct sb_error *err)
{
	memset(w, 0, sizeof(*w));
	proc_result_init(&w->log);
	strbuf_init(&w->pending, 0);
	strvec_push(&w->argv, spec->python);
	strvec_push(&w->argv, "-u");
	strvec_push(&w->argv, spec->script);
	sandbox_env(&w->env, spec->env);
	w->opts = (struct proc_opts){
		.argv = w->argv.v, .env = w->env.v, .cwd = spec->dir, .channel = 1, .keep_tail = 1,
		.out_cap = spec->log_cap ? spec->log_cap : 64 << 10, .err_cap = spec->log_cap ? spec->log_cap : 64 << 10,
		.pre_exec = spec->sandbox ? sandbox_enter : NULL, .pre_exec_arg = (void *)spec->sandbox,
		.outlives_thread = spec->outlives_thread && !spec->sandbox, /* never a candidate */
	};
	/* forked when a server is up; exec'd when there is none or it cannot (then it is stopped for good) */
	w->forked = spec->fork_server && forkserver_spawn(spec->fork_server, &w->opts, spec->sandbox, &w->h) == 0;
	int rc = w->forked ? 0 : proc_start(&w->opts, &w->h);
	if (rc)
		return sb_error_set(err, SB_EENV, "cannot start the worker %s: %s", spec->script, strerror(-rc));
	w->started = 1;
	return 0;
}

static void describe_death(struct worker *w, struct worker_fault *f)
{
	proc_finish(&w->h, &w->opts, &w->log, proc_now() + 5);
	w->finished = 1;
	f->kind = WF_DIED;
	if (w->log.spawn_failed)
		snprintf(f->what, sizeof(f->what), "the worker could not start (%s)", w->log.err.buf);
	else if (w->log.signaled)
		snprintf(f->what, sizeof(f->what), "the worker was killed by SIG%s (%s)",
			 sigabbrev_np(w->log.signo) ? sigabbrev_np(w->log.signo) : "?", strsignal(w->log.signo));
	else
		snprintf(f->what, sizeof(f->what), "the worker exited with status %d", w->log.exit_code);
	if (w->log.signaled && w->log.signo == SIGXCPU)
		strncat(f->what, " (CPU time limit)", sizeof(f->what) - strlen(f->what) - 1);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The request line, with fds attached to its first byte when there are any. */
static int send_line(int fd, const char *line, size_t len, const int *fds, int nfds)
{
	if (nfds <= 0)
		return write_all(fd, line, len);
	char ctl[CMSG_SPACE(sizeof(int) * WORKER_MAX_FDS)];
	memset(ctl, 0, sizeof(ctl));
	struct iovec iov = { .iov_base = (void *)line, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	ssize_t n;
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	return write_all(fd, line + n, len - (size_t)n);
}

int worker_send(struct worker *w, json_t *req, struct worker_fault *fault)
{
	return worker_send_fds(w, req, NULL, 0, fault);
}

int worker_send_fds(struct worker *w, json_t *req, const int *fds, int nfds, struct worker_fault *fault)
{
	if (nfds > WORKER_MAX_FDS)
		nfds = WORKER_MAX_FDS;
	memset(fault, 0, sizeof(*fault));
	if (w->finished) {
		fault->kind = WF_DIED;
		snprintf(fault->what, sizeof(fault->what), "the worker is no longer running");
		return -1;
	}
	if (sb_trace_on()) {
		const char *cmd = json_string_value(json_object_get(req, "cmd"));
		snprintf(w->sent_cmd, sizeof(w->sent_cmd), "%s", cmd ? cmd : "?");
	}
	char *line = json_dumps(req, JSON_COMPACT);
	size_t len = strlen(line);
	line = xrealloc(line, len + 2);
	line[len++] = '\n';
	/* a dead reader makes write fail with EPIPE instead of killing us */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	w->sent_at = proc_now();
	int wrc = send_line(w->h.cmd_fd, line, len, fds, nfds);
	signal(SIGPIPE, old);
	free(line);
	if (wrc) {
		describe_death(w, fault);
		return -1;
	}
	return 0;
}

static int receive(struct worker *w, json_t **reply, double deadline, struct worker_fault *fault);

/* The reply's "phases" (seconds by step: worker.py's `load` and `run`) as " (name 1.234, ...)" for the trace; at most
 * 8 short names, since the candidate's worker writes them. */
static void trace_phases(const json_t *reply, char *buf, size_t len)
{
	const char *k;
	json_t *v;
	size_t n = 0, used = 0;
	buf[0] = 0;
	json_object_foreach((json_t *)json_object_get(reply, "phases"), k, v) {
		if (!json_is_number(v) || strlen(k) > 24 || n++ >= 8 || used + 40 >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s %.3f", n == 1 ? " (" : ", ", k, json_number_value(v));
	}
	if (used)
		snprintf(buf + used, len - used, ")");
}

int worker_receive(struct worker *w, json_t **reply, double deadline, struct worker_fault *fault)
{
	int rc = receive(w, reply, deadline, fault);
	if (sb_trace_on()) {
		char phases[400];
		trace_phases(rc ? NULL : *reply, phases, sizeof(phases));
		sb_trace("worker %d: %s took %.3f s%s%s", (int)w->h.pid, w->sent_cmd, proc_now() - w->sent_at,
			 rc ? " (failed)" : "", phases);
	}
	return rc;
}

/* Reads what the reply channel has; descriptors that came with it join w->fds (closed beyond the cap). */
static ssize_t read_reply(struct worker *w, char *buf, size_t len)
{
	char ctl[CMSG_SPACE(sizeof(int) * WORKER_MAX_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(w->h.reply_fd, &m, MSG_CMSG_CLOEXEC);
	if (n < 0 && errno == ENOTSOCK) /* a channel that is not a socket carries no descriptors */
		return read(w->h.reply_fd, buf, len);
	for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (w->nfds < WORKER_MAX_FDS)
				w->fds[w->nfds++] = fd;
			else
				close(fd);
		}
	}
	if (m.msg_flags & MSG_CTRUNC) /* more than fit: the kernel closed the rest */
		sb_trace("worker %d: descriptors beyond %d dropped", (int)w->h.pid, WORKER_MAX_FDS);
	return n;
}

int worker_take_fd(struct worker *w)
{
	if (!w->nfds)
		return -1;
	int fd = w->fds[0];
	memmove(w->fds, w->fds + 1, sizeof(int) * (size_t)--w->nfds);
	return fd;
}

void worker_drop_fds(struct worker *w)
{
	while (w->nfds)
		close(worker_take_fd(w));
}

#define STOPPED_S 2

/* Whether the worker has been stopped (SIGSTOP, a ptrace stop) for STOPPED_S seconds: it answers nothing
 * then, and waiting for its deadline would only waste it. Read from /proc, not asked. */
static int stopped(struct worker *w, double *since)
{
	struct proc_view v;
	procwatch_read(w->h.pid, &v, 0);
	if (!v.known || (v.state != 'T' && v.state != 't')) {
		*since = 0;
		return 0;
	}
	if (*since == 0)
		*since = proc_now();
	return proc_now() - *since > STOPPED_S;
}

static int receive(struct worker *w, json_t **reply, double deadline, struct worker_fault *fault)
{
	memset(fault, 0, sizeof(*fault));
	*reply = NULL;
	if (w->finished) {
		fault->kind = WF_DIED;
		snprintf(fault->what, sizeof(fault->what), "the worker is no longer running");
		return -1;
	}
	double stopped_since = 0;
	for (;;) {
		char *nl = memchr(w->pending.buf, '\n', w->pending.len);
		if (nl) {
			json_error_t jerr;
			size_t n = (size_t)(nl - w->pending.buf);
			w->replied_at = proc_now();
			*reply = json_loadb(w->pending.buf, n, 0, &jerr);
			memmove(w->pending.buf, nl + 1, w->pending.len - n - 1);
			strbuf_setlen(&w->pending, w->pending.len - n - 1);
			if (!json_is_object(*reply)) {
				json_decref(*reply);
				*reply = NULL;
				fault->kind = WF_PROTOCOL;
				snprintf(fault->what, sizeof(fault->what), "the worker sent an unreadable reply (%s)", jerr.text);
				proc_kill(&w->h);
				return -1;
			}
			return 0;
		}
		double left = deadline - proc_now();
		if (left <= 0) {
			fault->kind = WF_TIMEOUT;
			snprintf(fault->what, sizeof(fault->what), "no reply before the deadline");
			proc_kill(&w->h);
			return -1;
		}
		/* wait on the reply channel and its logs together: a worker that floods its output is drained as
		 * fast as it writes, never at the pace of this loop's timeout */
		struct pollfd pfs[3] = { { .fd = w->h.reply_fd, .events = POLLIN }, { .fd = w->h.out_fd, .events = POLLIN },
					 { .fd = w->h.err_fd, .events = POLLIN } };
		int ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
		int any = poll(pfs, 3, ms); /* a closed log (fd -1) is left out by poll */
		if (any > 0 && (pfs[1].revents || pfs[2].revents))
			proc_pump(&w->h, &w->opts, &w->log, 0);
		int pr = any > 0 && pfs[0].revents;
		if (any == 0 && stopped(w, &stopped_since)) {
			fault->kind = WF_DIED;
			snprintf(fault->what, sizeof(fault->what), "the worker was stopped (by a signal or a tracer) for over %d s "
				 "and could not answer", STOPPED_S);
			proc_kill(&w->h);
			return -1;
		}
		if (pr > 0) {
			char buf[65536];
			ssize_t n = read_reply(w, buf, sizeof(buf));
			if (n > 0) {
				if (w->pending.len + (size_t)n > (64u << 20)) {
					fault->kind = WF_PROTOCOL;
					snprintf(fault->what, sizeof(fault->what), "the worker's reply exceeds 64 MiB");
					proc_kill(&w->h);
					return -1;
				}
				strbuf_add(&w->pending, buf, (size_t)n);
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				describe_death(w, fault);
				return -1;
			}
		}
	}
}

int worker_call(struct worker *w, json_t *req, json_t **reply, double deadline, struct worker_fault *fault)
{
	*reply = NULL;
	if (worker_send(w, req, fault))
		return -1;
	return worker_receive(w, reply, deadline, fault);
}

void worker_quit(struct worker *w)
{
	struct worker_fault f;
	if (!w->started || w->finished || w->quit_at > 0)
		return;
	json_t *q = json_pack("{s:s}", "cmd", "quit");
	worker_send(w, q, &f); /* a dead reader: nothing to ask, worker_stop reaps it */
	json_decref(q);
	w->quit_at = proc_now();
}

void worker_stop(struct worker *w, double grace_s)
{
	if (!w->started)
		return;
	if (!w->finished) {
		double now = proc_now(), deadline = now + grace_s;
		if (w->quit_at > 0) { /* asked already: its grace counts from then */
			deadline = w->quit_at + grace_s;
			if (deadline < now + 0.05) /* a moment to reap one that has just exited */
				deadline = now + 0.05;
		} else {
			json_t *q = json_pack("{s:s}", "cmd", "quit"), *r = NULL;
			struct worker_fault f;
			if (worker_call(w, q, &r, deadline, &f) == 0)
				json_decref(r);
			json_decref(q);
		}
		if (!w->finished)
			proc_finish(&w->h, &w->opts, &w->log, deadline);
		w->finished = 1;
	}
	strvec_clear(&w->argv);
	strvec_clear(&w->env);
	strbuf_release(&w->pending);
	worker_drop_fds(w);
	w->started = 0;
}

char *worker_log_tail(struct worker *w, size_t max)
{
	struct strbuf sb = STRBUF_INIT;
	if (w->log.out.len)
		strbuf_addf(&sb, "%s%s", w->log.out.buf, w->log.err.len ? "\n" : "");
	strbuf_addstr(&sb, w->log.err.buf);
	if (sb.len > max) {
		char *t = xstrfmt("...%s", sb.buf + sb.len - max);
		strbuf_release(&sb);
		return t;
	}
	return strbuf_detach(&sb, NULL);
}
