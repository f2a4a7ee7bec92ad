/* oprec.c - the CPU's record of the ATen operators the candidate's calls ran (harness/worker/oprec.cpp,
 * docs/checks.md "Operators that ran"). The recorder is built once per torch into the cache; each
 * evaluation hands the candidate's worker the write end of a pipe before the candidate is imported, and
 * keeps the read end. What the recorder writes leaves the candidate's process as each operator ends, so
 * the parent reads what ran, not what the candidate says ran. */
#include "rtchecks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/log.h"
#include "../core/proc.h"
#include "../core/sha256.h"
#include "evaluate.h"

#define PIPE_BYTES (1 << 20)    /* what the recorder may write between two reads; more is lost, and says so */
#define RECORD_CAP (64u << 20)  /* bytes read from one record at most: beyond, a flood */

static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;

char *eval_oprec_lib(const struct eval_env *e)
{
	char *src = xstrfmt("%s/harness/worker/oprec.cpp", e->home), *out = NULL;
	struct strbuf key = STRBUF_INIT;
	if (strbuf_read_file(&key, src, 0) >= 0) {
		strbuf_addf(&key, "\n%s\n%s\n", e->torch, e->python);
		char hex[65];
		sha256_hex(key.buf, key.len, hex);
		out = xstrfmt("%s/oprec/oprec-%.20s.so", e->cache_root, hex);
	}
	strbuf_release(&key);
	free(src);
	return out;
}

/* The recorder of this environment (e->oprec_lib), built when missing (harness/worker/oprec_build.py);
 * NULL with why. */
static const char *recorder(const struct eval_env *e, char *why, size_t cap)
{
	const char *out = e->oprec_lib;
	if (!out) {
		snprintf(why, cap, "cannot read %s/harness/worker/oprec.cpp", e->home);
		return NULL;
	}
	pthread_mutex_lock(&build_mu);
	if (access(out, R_OK) != 0) {
		char *src = xstrfmt("%s/harness/worker/oprec.cpp", e->home);
		char *script = xstrfmt("%s/harness/worker/oprec_build.py", e->home);
		const char *argv[] = { e->python, script, src, out, NULL };
		struct proc_opts o = { .argv = argv, .timeout_ms = 300000, .keep_tail = 1, .err_cap = 4096 };
		struct proc_result r;
		proc_result_init(&r);
		double t0 = proc_now();
		if (proc_run(&o, &r) != 0 || !proc_ok(&r) || access(out, R_OK) != 0) {
			strbuf_trim(&r.err);
			const char *tail = strrchr(r.err.buf, '\n');
			snprintf(why, cap, "the recorder did not build: %s", tail ? tail + 1 : r.err.len ? r.err.buf : "no output");
			out = NULL;
		} else {
			sb_trace("oprec: built the record of ATen operators for torch %s in %.1f s", e->torch, proc_now() - t0);
		}
		proc_result_release(&r);
		free(script);
		free(src);
	}
	pthread_mutex_unlock(&build_mu);
	return out;
}

static void not_recorded(struct rt_session *s, const char *why)
{
	snprintf(s->report->ops_note, sizeof(s->report->ops_note), "%s", why);
	strvec_pushf(&s->report->skipped, "H01 from the operators that ran (the CPU's record): %s", why);
}

int rt_oprec_start(struct rt_session *s, const struct eval_env *e, struct worker *cand, const char *cand_dir,
		   double deadline, struct sb_error *err)
{
	if (!s->on || strcmp(e->device, "cpu") || !s->cfg->eval.profile)
		return 0;
	char why[160] = "";
	const char *lib = recorder(e, why, sizeof(why));
	if (!lib) {
		not_recorded(s, why);
		return 0;
	}
	/* The worker's own copy, in its folder: Landlock lets it read only the cache root's entries that were
	 * there when its sandbox was made (proc/sandbox.c), and the first evaluation in a fresh cache builds
	 * the recorder after its worker started, which then sees no oprec/. A copy, never a link: the
	 * candidate may write its folder, and through a hard link the recorder later evaluations load. */
	struct strbuf so = STRBUF_INIT;
	char *copy = xstrfmt("%s/oprec.so", cand_dir);
	int rc = strbuf_read_file(&so, lib, 0) < 0 ? -1 : fs_write_atomic(copy, so.buf, so.len);
	strbuf_release(&so);
	int fds[2] = { -1, -1 };
	if (rc || pipe2(fds, O_CLOEXEC)) {
		not_recorded(s, rc ? "cannot copy the recorder into the candidate's folder" : "no pipe");
		free(copy);
		return 0;
	}
	/* neither end blocks: a flood loses lines (the recorder counts them), and a read finds what is there */
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES);
	json_t *quiet = json_array();
	const char *const *names;
	for (size_t i = 0, n = rt_operator_utilities(&names); i < n; i++)
		json_array_append_new(quiet, json_sprintf("aten::%s", names[i]));
	json_t *req = json_pack("{s:s, s:s, s:o}", "cmd", "oprec", "lib", copy, "quiet", quiet), *reply = NULL;
	free(copy);
	struct worker_fault f;
	rc = worker_send_fds(cand, req, &fds[1], 1, &f) || worker_receive(cand, &reply, deadline, &f);
	json_decref(req);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return sb_error_set(err, SB_EENV, "the candidate's worker failed while installing the record of ATen "
				    "operators, before any candidate code ran: %s", f.what);
	}
	if (!json_is_true(json_object_get(reply, "installed"))) {
		const char *w = json_string_value(json_object_get(reply, "why"));
		if (!w)
			w = json_string_value(json_object_get(reply, "message"));
		snprintf(why, sizeof(why), "the worker could not install it: %s", w ? w : "no reason given");
		not_recorded(s, why);
		close(fds[0]);
	} else {
		s->ops_fd = fds[0];
		s->ops_open = 1;
		s->report->ops.recorded = 1;
	}
	json_decref(reply);
	return 0;
}

void rt_oprec_drain(struct rt_session *s)
{
	if (!s->on || !s->ops_open)
		return;
	char buf[65536];
	for (;;) {
		ssize_t n = read(s->ops_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (s->ops_read + (size_t)n > RECORD_CAP) {
			s->report->ops.lost++; /* a flood: the rest is not read */
			continue;
		}
		s->ops_read += (size_t)n;
		strbuf_add(&s->ops_pending, buf, (size_t)n);
		char *last = memrchr(s->ops_pending.buf, '\n', s->ops_pending.len);
		if (!last)
			continue;
		size_t whole = (size_t)(last - s->ops_pending.buf) + 1;
		rt_operators_parse(&s->report->ops, s->ops_pending.buf, whole);
		memmove(s->ops_pending.buf, s->ops_pending.buf + whole, s->ops_pending.len - whole);
		strbuf_setlen(&s->ops_pending, s->ops_pending.len - whole);
	}
}

void rt_oprec_judge(struct rt_session *s, const struct verdict *v)
{
	if (!s->on || !s->ops_open)
		return;
	rt_oprec_drain(s);
	if (s->ops_pending.len) { /* a line without its end: not the recorder's */
		s->report->ops.malformed++;
		strbuf_reset(&s->ops_pending);
	}
	close(s->ops_fd);
	s->ops_open = 0;
	/* every call the parent observed, and every timed call, ran in a window */
	s->report->ops.expected = s->ncalls + (v->timing.ran ? v->timing.candidate.us.n : 0);
	s->report->ops.ref_call_ms = v->timing.ran && v->timing.eager.us.n ? v->timing.eager.us.median / 1000 : 0;
	rt_rule_operators(&s->report->ops, &s->found);
}
