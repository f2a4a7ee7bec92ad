/* candidate.c - the trust boundary (candidate.h): a candidate's worker from its start to its last
 * answer, every fault of it a verdict, and the workers started ahead for a batch's next candidates. */
#include "candidate.h"

#include "../core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/proc.h"
#include "../core/sha256.h"
#include "eval_int.h"
#include "ref/ref.h"

/* ---------- asking it ---------- */

/* The first compiler errors with a little context, not the whole build log (DESIGN §5). */
static char *trim_compiler_output(const char *text)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = text;
	int keep = 0, lines = 0;
	while (*p && lines < 40) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xstrndup(p, n);
		if (strstr(line, "error") || strstr(line, "Error"))
			keep = 3;
		if (keep > 0) {
			strbuf_addf(&out, "%.300s\n", line);
			keep--;
			lines++;
		}
		free(line);
		p += n + (eol ? 1 : 0);
	}
	if (!out.len) {
		size_t len = strlen(text);
		strbuf_addstr(&out, len > 3000 ? text + len - 3000 : text);
	}
	return strbuf_detach(&out, NULL);
}

static enum verdict_status status_of_kind(const char *kind)
{
	if (!strcmp(kind, "compile_error"))
		return V_COMPILE_ERROR;
	if (!strcmp(kind, "format_error"))
		return V_FORMAT_ERROR;
	return V_RUNTIME_ERROR;
}

/* A fault of the candidate's worker as the verdict's status and message. */
static int cand_fault(struct verdict *v, const struct worker_fault *f, const char *stage, int timeout_s)
{
	if (f->kind == WF_TIMEOUT)
		verdict_fail(v, V_TIMEOUT, "no answer within the %d s limit while %s", timeout_s, stage);
	else
		verdict_fail(v, V_RUNTIME_ERROR, "%s while %s", f->what, stage);
	return -1;
}

int eval_cand_send(struct worker *w, json_t *req, struct verdict *v, const char *stage, int timeout_s)
{
	struct worker_fault f;
	int rc = worker_send(w, req, &f);
	json_decref(req);
	return rc ? cand_fault(v, &f, stage, timeout_s) : 0;
}

int eval_cand_receive(struct worker *w, json_t **reply, double deadline, struct verdict *v, const char *stage,
		      int timeout_s)
{
	struct worker_fault f;
	if (worker_receive(w, reply, deadline, &f))
		return cand_fault(v, &f, stage, timeout_s);
	if (!json_is_true(json_object_get(*reply, "ok"))) {
		const char *kind = jstr_or(*reply, "kind", "runtime_error");
		const char *msg = jstr_or(*reply, "message", "");
		const char *tb = jstr_or(*reply, "traceback", "");
		free(v->detail);
		if (!strcmp(kind, "compile_error")) {
			/* the message leads with the compiler's first error, not the build's command lines */
			v->detail = trim_compiler_output(msg);
			const char *first = strstr(msg, "error") ? v->detail : msg;
			verdict_fail(v, V_COMPILE_ERROR, "compile_error while %s: %.*s", stage, (int)strcspn(first, "\n") < 300
				     ? (int)strcspn(first, "\n") : 300, first);
		} else {
			verdict_fail(v, status_of_kind(kind), "%s while %s: %.300s", kind, stage, msg);
			v->detail = xstrdup(*tb ? tb : msg);
		}
		json_decref(*reply);
		*reply = NULL;
		return -1;
	}
	return 0;
}

int eval_cand_ask(struct worker *w, json_t *req, json_t **reply, double deadline, struct verdict *v, const char *stage,
		  int timeout_s)
{
	*reply = NULL;
	if (eval_cand_send(w, req, v, stage, timeout_s))
		return -1;
	return eval_cand_receive(w, reply, deadline, v, stage, timeout_s);
}


/* The candidate worker's account of its load_inline builds (name, cache key, cache hit, seconds, seconds
 * per ninja step), kept in the verdict so a slow build says which compiler it waited for. The worker is
 * untrusted: only these fields, with their types checked and strings bounded, are copied. */
void eval_keep_builds(struct verdict *v, json_t *builds)
{
	size_t i, n = 0;
	json_t *b;
	if (!json_is_array(builds))
		return;
	json_decref(v->builds);
	v->builds = json_array();
	json_array_foreach(builds, i, b) {
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *key = json_string_value(json_object_get(b, "key"));
		const char *arch = json_string_value(json_object_get(b, "arch"));
		const char *headers = json_string_value(json_object_get(b, "headers"));
		json_t *steps = json_object_get(b, "steps"), *o, *kept = json_object();
		const char *step;
		json_t *sec;
		if (n++ >= 16)
			break;
		json_object_foreach(steps, step, sec)
			if (json_is_number(sec) && strlen(step) < 128 && json_object_size(kept) < 16)
				json_object_set_new(kept, step, json_real(json_number_value(sec)));
		o = json_pack("{s:s%, s:s%, s:s%, s:s%, s:b, s:b, s:o, s:o}", "name", name ? name : "",
			      name ? strnlen(name, 128) : 0, "key", key ? key : "", key ? strnlen(key, 64) : 0, "arch",
			      arch ? arch : "", arch ? strnlen(arch, 32) : 0, "headers", headers ? headers : "",
			      headers ? strnlen(headers, 16) : 0, "cached",
			      json_is_true(json_object_get(b, "cached")), "lean_headers",
			      json_is_true(json_object_get(b, "lean_headers")), "seconds",
			      json_real(json_number_value(json_object_get(b, "seconds"))), "steps", kept);
		json_array_append_new(v->builds, o);
	}
}

/* ---------- the candidate file ---------- */

/* Python's parser over the file: compile to an AST only (nothing runs), in the interpreter that would
 * import it. Exit 3 and "LINE:COL:MESSAGE" then the line's text when it cannot be parsed. */
static const char parse_script[] =
	"import sys\n"
	"try:\n"
	"    compile(sys.stdin.buffer.read(), 'candidate.py', 'exec', 1024, dont_inherit=True)\n"
	"except SyntaxError as x:\n"
	"    print('%s:%s:%s: %s' % (x.lineno or 0, x.offset or 0, type(x).__name__, x.msg))\n"
	"    print((x.text or '').rstrip()[:200])\n"
	"    sys.exit(3)\n"
	"except (ValueError, MemoryError, RecursionError) as x:\n"
	"    print('0:0:%s: %s' % (type(x).__name__, x))\n"
	"    sys.exit(3)\n";

/* A file the parser rejects is format_error with its message (1). A parser that could not run says
 * nothing here: the worker that imports the file reports what it finds. */
static int syntax_check(const struct eval_env *e, const struct candidate_source *s, struct verdict *v)
{
	if (!e || !e->python)
		return 0;
	const char *argv[] = { e->python, "-I", "-S", "-c", parse_script, NULL };
	struct proc_opts o = { .argv = argv, .stdin_path = s->path, .timeout_ms = 30000, .out_cap = 4096,
			       .err_cap = 4096 };
	struct proc_result r;
	proc_result_init(&r);
	int bad = proc_run(&o, &r) == 0 && r.exited && r.exit_code == 3;
	if (bad) {
		int line = 0, col = 0, used = 0;
		char *nl = strchr(r.out.buf, '\n');
		if (nl)
			*nl = '\0';
		sscanf(r.out.buf, "%d:%d:%n", &line, &col, &used);
		const char *msg = used ? r.out.buf + used : r.out.buf;
		if (line > 0)
			verdict_fail(v, V_FORMAT_ERROR, "the candidate is not valid Python: %.300s (line %d, column %d)", msg,
				     line, col);
		else
			verdict_fail(v, V_FORMAT_ERROR, "the candidate is not valid Python: %.300s", msg);
		const char *text = nl ? nl + 1 : "";
		if (*text && line > 0)
			v->detail = xstrfmt("line %d: %.*s", line, (int)strcspn(text, "\n"), text);
	} else if (!r.exited || (r.exit_code != 0 && r.exit_code != 3)) {
		sb_trace("syntax check of %s: the parser did not run (%s); the worker's import judges it", s->path,
			 r.timed_out ? "timed out" : r.err.len ? r.err.buf : "no exit");
	}
	proc_result_release(&r);
	return bad;
}

int eval_format_check(const struct eval_env *e, const struct candidate_source *s, struct verdict *v)
{
	int code = 0;
	if (s->read_errno) {
		verdict_fail(v, V_FORMAT_ERROR, "the candidate file cannot be read: %s", strerror(s->read_errno));
		return 1;
	}
	/* anything but blank lines and comments */
	for (const char *p = s->text.buf; *p && !code;) {
		p += strspn(p, " \t\r\n\f\v");
		if (*p == '#')
			p += strcspn(p, "\n");
		else if (*p)
			code = 1;
	}
	if (!code)
		verdict_fail(v, V_FORMAT_ERROR, "the candidate file is empty: an answer must be one Python file defining "
			     "class ModelNew");
	else if (!strstr(s->text.buf, "ModelNew"))
		verdict_fail(v, V_FORMAT_ERROR, "the candidate defines no ModelNew: an answer must be one Python file "
			     "defining class ModelNew");
	else
		syntax_check(e, s, v);
	return v->status == V_FORMAT_ERROR;
}

int eval_device_check(const struct eval_env *e, const struct config *cfg, const struct candidate_source *s,
		      struct verdict *v)
{
	if (!s->needs_gpu[0] || strcmp(e->device, "cpu"))
		return 0;
	verdict_fail(v, V_CANNOT_JUDGE, "not judged: the candidate has %s and this evaluation runs on the CPU "
		     "(eval.device %s%s); judge it on a machine where torch sees a GPU", s->needs_gpu, cfg->eval.device,
		     strcmp(cfg->eval.device, "auto") ? "" : ": torch sees no GPU here");
	return 1;
}

/* ---------- the candidate worker ---------- */

long long evalctx_max_output(const struct eval_ctx *c)
{
	return 2 * c->out_bytes + (16LL << 20);
}

/* RLIMIT_FSIZE for a candidate: room for the largest legitimate output, not for a disk-filling one. */
long long evalctx_cand_file_bytes(const struct eval_ctx *c)
{
	long long limit = evalctx_max_output(c);
	return limit < (256LL << 20) ? (256LL << 20) : limit;
}

/* The candidate's memory limit on the CPU: three quarters of the machine's memory, so a runaway
 * allocation fails in the candidate (a verdict) rather than the machine failing under everything; none on
 * a GPU, where CUDA reserves address space far beyond what it uses. */
static long long memory_limit(const struct eval_ctx *c)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
	if (strcmp(c->e->device, "cpu") || pages <= 0 || size <= 0)
		return 0;
	return (long long)pages * size / 4 * 3;
}

static int under_tmp(const char *path)
{
	char *real = path ? realpath(path, NULL) : NULL;
	int in = real ? !strncmp(real, "/tmp/", 5) : path && !strncmp(path, "/tmp/", 5);
	free(real);
	return in;
}

/* Whether the candidate's worker may get a /tmp of its own: nothing it reads lives there (its folder and
 * the cache, the worker and the interpreter, the problems; its candidate is copied into its folder). */
static int tmp_can_be_private(const struct eval_ctx *c)
{
	if (under_tmp(c->e->cache_root) || under_tmp(c->e->worker_script) || under_tmp(c->e->python) ||
	    under_tmp(c->e->home) || (c->p && under_tmp(c->p->path)))
		return 0;
	for (int k = 0; k < EVAL_AHEAD; k++)
		if (c->e->next_problems[k] && under_tmp(c->e->next_problems[k]->path))
			return 0;
	return 1;
}

int evalctx_start_cand(struct eval_ctx *c, struct sb_error *err)
{
	c->sb = (struct sandbox_opts){
		.workdir = c->cand_dir, .write_dirs = c->writable, .hidden = c->hidden,
		.cpu_seconds = 4 * c->cfg->eval.timeout_s + 60, .file_bytes = c->spawn_file_bytes ? c->spawn_file_bytes : evalctx_cand_file_bytes(c),
		.address_space = memory_limit(c), .open_files = 4096, .processes = 4096, .no_network = 1, .own_pids = 1,
		.private_tmp = tmp_can_be_private(c), .landlock = 1,
		.disabled = sandbox_disabled_from_env(),
	};
	/* The seccomp lock on glibc's signals 32 and 33 has run on the CPU only: until it has run beside the
	 * CUDA driver, a GPU worker goes without it, and the signal check leaves those two bits out, saying so
	 * in the verdict (rtchecks.c). */
	if (strncmp(c->e->device, "cuda", 4) == 0)
		c->sb.disabled |= SANDBOX_NO_SIGLOCK;
	struct worker_spec spec = { c->e->python, c->e->worker_script, c->cand_dir, c->cand_env.v, &c->sb, LOG_CAP, 0,
				    eval_fork_server(c->e) };
	return worker_start(&c->cand, &spec, err);
}

char *evalctx_candidate_copy(struct eval_ctx *c, const char *candidate_path, const char *sha256, struct sb_error *err)
{
	char *copy = xstrfmt("%s/candidate.py", c->cand_dir), hex[65];
	int rc = fs_copy_tree(candidate_path, copy);
	if (rc) {
		sb_error_set(err, SB_EIO, "cannot copy %s for the candidate's worker: %s", candidate_path, strerror(-rc));
	} else if (sha256_file_hex(copy, hex) || strcmp(hex, sha256)) {
		sb_error_set(err, SB_EINPUT, "%s changed while it was evaluated (its bytes are no longer those checked)",
			     candidate_path);
	} else {
		return copy;
	}
	free(copy);
	return NULL;
}


/* ---------- the candidate worker retired behind ---------- */

/* One at a time, like the spare below: the last evaluation's candidate worker, told to quit, with its
 * folders. Its exit (the CUDA context's teardown, ~0.5 s on a GPU) and the removal of its folders
 * overlap the next evaluation's start instead of adding to its own. */
static struct eval_ctx *retired;

void evalctx_retired_settle(void)
{
	if (!retired)
		return;
	double t0 = proc_now();
	evalctx_release(retired); /* reaps it: killed if not gone 2 s after it was told to quit */
	free(retired);
	retired = NULL;
	sb_trace("eval: waited %.3f s for the last candidate's worker to exit", proc_now() - t0);
}

void evalctx_retire(struct eval_ctx *c, char **log_tail)
{
	static int atexit_done;
	int later = c->e->prestart_next && c->cand.started && !c->cand.finished;
	evalctx_retired_settle();
	if (c->cand.started || c->cand.finished) {
		if (later) /* what it printed so far; what it prints while exiting is not waited for */
			proc_pump(&c->cand.h, &c->cand.opts, &c->cand.log, 0);
		else
			worker_stop(&c->cand, 2);
		*log_tail = worker_log_tail(&c->cand, 8000);
	}
	if (!later) {
		evalctx_release(c);
		return;
	}
	evalctx_release_ref(c); /* the reference worker goes back to the pool now: the next evaluation takes it */
	worker_quit(&c->cand);
	retired = xmalloc(sizeof(*retired));
	*retired = *c;
	retired->v = NULL; /* the verdict is the caller's, and done */
	memset(c, 0, sizeof(*c));
	if (!atexit_done++)
		atexit(evalctx_retired_settle);
}

/* ---------- the candidate worker started ahead ---------- */

/* The largest output a spare's candidate may write: its problem's (the k-th next evaluation's), when
 * that problem's facts are in the cache, else this one's (a batch is sorted by problem: the
 * next one is most often the same). A spare whose file-size limit is too small for its problem is
 * dropped at adoption, so guessing low costs the head start and never the limit (SPARE_FILE_BYTES makes
 * that rare). */
/* A spare's file-size limit until its `load` (set below the problem's output size there). */
#define SPARE_FILE_BYTES (4LL << 30)

static long long spare_out_bytes(const struct eval_ctx *c, const struct problem *next)
{
	long long out = c->out_bytes;
	if (!next || next == c->p)
		return out;
	char *entry = eval_refcache_entry(c->e, c->cfg, next);
	json_t *meta = refcache_lookup(entry);
	if (meta)
		out = json_integer_value(json_object_get(meta, "output_bytes_max"));
	json_decref(meta);
	free(entry);
	return out;
}

/* The spares, oldest first: spares[k] is for the (k+1)-th next evaluation (EVAL_AHEAD of them, why in
 * evaluate.h). `eval --samples` evaluates one candidate after another on its device, from one thread. */
static struct eval_ctx *spares[EVAL_AHEAD];
static int nspares;

static void spare_free(struct eval_ctx *n)
{
	evalctx_release(n);
	free(n);
}

/* Drops the oldest spare. */
static void spare_drop_head(void)
{
	if (!nspares)
		return;
	spare_free(spares[0]);
	memmove(spares, spares + 1, (size_t)(--nspares) * sizeof(spares[0]));
	spares[nspares] = NULL;
}

static void spares_drop(void)
{
	while (nspares)
		spare_drop_head();
}

void eval_prestart_drain(void)
{
	spares_drop();
	evalctx_retired_settle();
}

/* A worker in its own sandbox and folders that imports torch and waits, sized for `next`'s outputs. */
static struct eval_ctx *spare_start(const struct eval_ctx *c, const struct problem *next)
{
	struct sb_error err = { 0 };
	struct worker_fault f;
	struct eval_ctx *n = xcalloc(1, sizeof(*n));
	n->e = c->e;
	n->cfg = c->cfg;
	n->p = next; /* its sandbox must see the problem it is started for */
	n->out_bytes = spare_out_bytes(c, next);
	/* A first evaluation of its problem has no known output size (the reference runs later): the spare
	 * starts with room for outputs of up to SPARE_FILE_BYTES, and its `load` lowers the limit to the
	 * problem's before any candidate code runs (worker.py; a lowered hard limit cannot be raised). */
	long long own = evalctx_cand_file_bytes(n);
	n->spawn_file_bytes = own > SPARE_FILE_BYTES ? own : SPARE_FILE_BYTES;
	if (evalctx_dirs(n, 0, &err) == 0) {
		evalctx_env(n, 1);
		if (evalctx_start_cand(n, &err) == 0) {
			/* answered once worker.py has imported torch; "cpu": no CUDA context before its candidate */
			json_t *hello = json_pack("{s:s, s:s}", "cmd", "hello", "device", "cpu");
			int rc = worker_send(&n->cand, hello, &f);
			json_decref(hello);
			if (rc == 0) {
				n->hello_pending = 1;
				return n;
			}
		}
	}
	spare_free(n);
	return NULL;
}

void evalctx_prestart(const struct eval_ctx *c)
{
	static int atexit_done;
	if (!c->cfg->eval.prestart_candidate) {
		spares_drop();
		return;
	}
	/* spares[k] serves the k-th next evaluation; those already started keep their place */
	while (nspares < EVAL_AHEAD && c->e->next_problems[nspares]) {
		struct eval_ctx *n = spare_start(c, c->e->next_problems[nspares]);
		if (!n)
			return;
		sb_trace("eval: started worker %d ahead for evaluation +%d", (int)n->cand.h.pid, nspares + 1);
		spares[nspares++] = n;
		if (!atexit_done++)
			atexit(eval_prestart_drain);
	}
}

/* Waits for spare n's `hello` (torch imported); 0 when it answered, -1 when it died or hung. */
static int spare_settle(struct eval_ctx *n, double deadline)
{
	json_t *reply;
	struct worker_fault f;
	if (!n->hello_pending)
		return 0;
	double t0 = proc_now();
	int rc = worker_receive(&n->cand, &reply, deadline, &f) || !json_is_true(json_object_get(reply, "ok")) ? -1 : 0;
	json_decref(reply);
	n->hello_pending = 0;
	sb_trace("eval: waited %.3f s for the spare worker's hello", proc_now() - t0);
	return rc;
}

void evalctx_prestart_settle(double deadline)
{
	for (int k = 0; k < nspares; k++)
		if (spare_settle(spares[k], deadline)) {
			/* it died or hung importing torch: the evaluation it was for starts its own */
			spare_free(spares[k]);
			memmove(spares + k, spares + k + 1, (size_t)(nspares - k - 1) * sizeof(spares[0]));
			spares[--nspares] = NULL;
			k--;
		}
}

int evalctx_adopt(struct eval_ctx *c, double deadline)
{
	if (!nspares)
		return -1;
	struct eval_ctx *n = spares[0];
	/* the same invocation, device and settings, and a file-size limit this problem's outputs fit in */
	if (n->e != c->e || n->cfg != c->cfg || n->sb.file_bytes < evalctx_cand_file_bytes(c) || spare_settle(n, deadline)) {
		spare_drop_head();
		return -1;
	}
	memmove(spares, spares + 1, (size_t)(--nspares) * sizeof(spares[0]));
	spares[nspares] = NULL;
	c->cand = n->cand;
	memset(&n->cand, 0, sizeof(n->cand));
	c->sb = n->sb; /* its strings live in n, kept until c is released */
	c->sb.file_bytes = evalctx_cand_file_bytes(c); /* what its `load` sets */
	free(c->cand_dir);
	c->cand_dir = xstrdup(n->cand_dir);
	free(c->ext_dir);
	c->ext_dir = xstrdup(n->ext_dir);
	c->adopted = n;
	return 0;
}
