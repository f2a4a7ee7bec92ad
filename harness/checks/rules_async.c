/* rules_async.c - work that can escape the timed window: side streams never joined back (H05),
 * threads and processes that finish after the timer (H06), L2 lines kept across the flush (H20). */
#include <stdio.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

/* ---------- H05: side streams ---------- */

static const char *const py_stream_new[] = { "torch.cuda.Stream", "torch.cuda.streams.Stream", "torch.Stream",
					     "torch.cuda.ExternalStream", "torch.cuda.streams.ExternalStream",
					     "cupy.cuda.Stream", "cuda.cudart.cudaStreamCreate",
					     "cuda.cudart.cudaStreamCreateWithFlags", "cuda.bindings.runtime.cudaStreamCreate",
					     NULL };
static const char *const py_join[] = { "wait_stream", "wait_event", "synchronize", NULL };
static const char *const cx_stream_new[] = { "cudaStreamCreate", "cudaStreamCreateWithFlags",
					     "cudaStreamCreateWithPriority", "cuStreamCreate", "cuStreamCreateWithPriority",
					     "getStreamFromPool", "getStreamFromExternal", "cudaStreamPerThread",
					     "with_stream", NULL };
static const char *const cx_join[] = { "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaStreamWaitEvent",
				       "cudaEventSynchronize", "cuStreamSynchronize", "cuStreamWaitEvent",
				       "cuCtxSynchronize", "synchronize", NULL };

struct streams {
	size_t made[8];           /* Python tokens that create a stream */
	size_t nmade;
	int set_stream;           /* torch.cuda.set_stream: the timed stream itself changes */
	size_t set_at;
};

static void stream_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	struct streams *s = arg;
	(void)c;
	if (path_in(r->path, py_stream_new) && r->called && s->nmade < 8)
		s->made[s->nmade++] = r->start;
	if (path_under(r->path, "torch.cuda.set_stream") && !s->set_stream) {
		s->set_stream = 1;
		s->set_at = r->start;
	}
}

/* type(torch.cuda.current_stream())() and s.__class__(): a stream made without naming the API. */
static void hidden_streams(struct static_ctx *c)
{
	const struct pytok_list *t = c->t;
	for (size_t i = 0; i + 1 < t->n; i++) {
		size_t a, b, after;
		if (pytok_is_name(t, i, "type") && pytok_is_op(t, i + 1, "(") && !(i > 0 && pytok_is_op(t, i - 1, "."))) {
			a = i + 2;
			b = pytok_matching(t, i + 1);
			after = b + 1;
		} else if (pytok_is_op(t, i, ".") && pytok_is_name(t, i + 1, "__class__") && pytok_is_op(t, i + 2, "(")) {
			/* the receiver: back to the start of the dotted expression, calls included */
			for (a = i; a > 0 && (t->v[a - 1].kind == PT_NAME || pytok_is_op(t, a - 1, ".") ||
					     pytok_is_op(t, a - 1, ")"));)
				a = pytok_is_op(t, a - 1, ")") ? pytok_opening(t, a - 1) : a - 1;
			b = i;
			after = i + 2;
		} else {
			continue;
		}
		if (!pytok_is_op(t, after, "("))
			continue;
		int stream = 0;
		struct pv_ref r;
		for (size_t k = a; k < b && !stream; k++)
			if (t->v[k].kind == PT_NAME && pv_ref_at(c->v, k, &r)) {
				const char *last = path_last(r.path);
				stream = (path_under(r.path, "torch") || path_under(r.path, "cupy")) &&
					 (strstr(last, "stream") || strstr(last, "Stream"));
				if (!stream && (r.head == REF_SELF || r.head == REF_BOUND)) {
					size_t bind[16], nb = r.head == REF_SELF
								 ? pv_lookup_attr(c->v, pv_self_class(c->v, k), path_last(r.path), bind, 16)
								 : pv_lookup(c->v, r.path, k, bind, 16);
					for (size_t j = 0; j < nb && !stream; j++)
						for (size_t q = c->v->binds[bind[j]].rhs; q < c->v->binds[bind[j]].rhs_end; q++)
							stream |= pytok_is_name(t, q, "current_stream") || pytok_is_name(t, q, "Stream") ||
								  pytok_is_name(t, q, "default_stream");
				}
				k = r.end - 1;
			}
		if (stream)
			static_add(c, "H05", "hidden-stream", t->v[i].line, t->v[i].col,
				   "line %d makes a CUDA stream from the type of another stream, so its work can run apart from "
				   "the timed stream and finish after the timer stops; launch on the current stream "
				   "(at::cuda::getCurrentCUDAStream())", t->v[i].line);
	}
}

static void rule_h05(struct static_ctx *c)
{
	hidden_streams(c);
	struct streams s = { 0 };
	int joined = 0;
	for_each_ref(c, stream_refs, &s);
	for (size_t i = 0; i < c->t->n; i++)
		joined |= method_call_at(c->t, i, py_join) ||
			  (pytok_is_name(c->t, i, "synchronize") && pytok_is_op(c->t, i + 1, "("));
	for (size_t i = 0; i < c->cx->n; i++)
		joined |= cx_ident_in(c->cx, i, cx_join);
	const char *fix = "launch on the current stream (at::cuda::getCurrentCUDAStream()), or make it wait for the side "
			  "stream (torch.cuda.current_stream().wait_stream(s), cudaStreamWaitEvent) before forward returns";
	if (s.set_stream) {
		const struct pytok *k = &c->t->v[s.set_at];
		static_add(c, "H05", "set-stream", k->line, k->col,
			   "torch.cuda.set_stream (line %d) changes the stream the timing events are recorded on; %s", k->line, fix);
	}
	if (joined)
		return; /* joined somewhere: the runtime check (CUPTI) judges where its kernels ran */
	for (size_t j = 0; j < s.nmade; j++) {
		const struct pytok *k = &c->t->v[s.made[j]];
		static_add(c, "H05", "side-stream", k->line, k->col,
			   "a CUDA stream is created (line %d) and never joined back to the current stream, so its work "
			   "can finish after the timer stops; %s", k->line, fix);
	}
	for (size_t i = 0; i < c->cx->n; i++)
		if (cx_ident_in(c->cx, i, cx_stream_new))
			static_add(c, "H05", "side-stream", c->cx->v[i].line, c->cx->v[i].col,
				   "the CUDA source uses %s (line %d) and never synchronises with the current stream, so "
				   "its work can finish after the timer stops; %s", c->cx->v[i].text, c->cx->v[i].line, fix);
}

/* ---------- H06: threads, processes, signals, timers ---------- */

static const char *const py_async[] = { "threading", "_thread", "multiprocessing", "concurrent", "asyncio",
					"torch.multiprocessing", "joblib", "os.fork", "os.forkpty", "os.register_at_fork",
					"weakref.finalize", "faulthandler.dump_traceback_later", NULL };
/* Modules judged by what is used from them: a lock or an event alone runs nothing. */
static const char *const py_async_by_use[] = { "threading", "_thread", "multiprocessing", "signal", NULL };
/* What they offer that starts nothing (build settings use the core count). */
static const char *const async_harmless[] = { "multiprocessing.cpu_count", "os.cpu_count", "threading.Lock",
					      "threading.RLock", "threading.Event", "threading.Condition",
					      "threading.Semaphore", "threading.BoundedSemaphore", "threading.Barrier",
					      "threading.local", "threading.get_ident", "threading.get_native_id",
					      "threading.current_thread", "threading.main_thread", "threading.TIMEOUT_MAX",
					      "_thread.allocate_lock", "_thread.get_ident", "_thread.LockType",
					      "multiprocessing.Lock", "multiprocessing.RLock", "multiprocessing.Event",
					      "multiprocessing.Condition", "multiprocessing.Semaphore", NULL };
/* The signal module: handlers and timers run Python code whenever the signal arrives, after the call. */
static const char *const py_signal[] = { "signal.signal", "signal.setitimer", "signal.alarm", "signal.set_wakeup_fd",
					 "signal.pthread_kill", "signal.raise_signal", "signal.siginterrupt",
					 "signal.pthread_sigmask", "signal.sigwait", "signal.sigtimedwait",
					 "signal.sigwaitinfo", "signal.pause", "signal.?", "_signal", NULL };
static const char *const cx_thread_after_scope[] = { "thread", "jthread", "async", NULL };
/* ATen's own pool: at::launch(fn) and at::intraop_launch(fn) run fn on another thread. */
static const char *const cx_aten_launch[] = { "launch", "intraop_launch", "launch_no_thread_state", NULL };
static const char *const cx_thread[] = { "pthread_create", "fork", "vfork", "cudaLaunchHostFunc",
					 "cudaStreamAddCallback", "cuLaunchHostFunc", "cuStreamAddCallback", NULL };
static const char *const cx_signal[] = { "sigaction", "signal", "setitimer", "timer_create", "timer_settime", "alarm",
					 "ualarm", "pthread_kill", "sigqueue", "signalfd", "timerfd_create", "raise", NULL };
static const char *const cx_thread_headers[] = { "thread", "future", "pthread.h", "signal.h", "csignal", "sys/time.h",
						 "sys/signalfd.h", "sys/timerfd.h", NULL };
static const char *const cx_clone_calls[] = { "SYS_clone", "SYS_clone3", "__NR_clone", "__NR_clone3", NULL };

static const char *const h06_fix = "do all the work in forward's kernels on the current stream, before forward returns";

/* weakref.ref(obj, callback), weakref.proxy(obj, callback): the callback runs when obj is collected. */
static int weak_callback(struct static_ctx *c, const struct pv_ref *r)
{
	struct pv_arg a[4];
	return r->called && (!strcmp(r->path, "weakref.ref") || !strcmp(r->path, "weakref.proxy") ||
			     !strcmp(r->path, "weakref.WeakMethod")) &&
	       pv_call_args(c->t, r->end, a, 4) >= 2;
}

static void async_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	if (r->head != REF_IMPORT)
		return;
	const struct pytok *k = &c->t->v[r->start];
	if (weak_callback(c, r)) {
		static_add(c, "H06", "thread", k->line, k->col,
			   "%s with a callback (line %d) runs code whenever the object is collected, outside the timed "
			   "call; %s", r->path, k->line, h06_fix);
		return;
	}
	if (path_in(r->path, py_signal)) {
		static_add(c, "H06", "signal", k->line, k->col,
			   "%s (line %d) arranges for Python code to run when a signal or timer fires, outside the timed "
			   "call; %s", r->path, k->line, h06_fix);
		return;
	}
	if (!path_in(r->path, py_async) || path_in(r->path, async_harmless) || word_in(r->path, py_async_by_use))
		return;
	static_add(c, "H06", "thread", k->line, k->col,
		   "%s (line %d) runs work concurrently with forward, which can finish after the timer stops; %s", r->path,
		   k->line, h06_fix);
}

/* clone(fn, stack, CLONE_VM | ..., arg): a free call with CLONE_ flags. x.clone() copies a tensor. */
static int cx_clone(const struct cx_list *x, size_t i)
{
	if (!cx_is(x, i, CX_IDENT, "clone") || !cx_is(x, i + 1, CX_PUNCT, "(") ||
	    (i > 0 && (cx_is(x, i - 1, CX_PUNCT, ".") || cx_is(x, i - 1, CX_PUNCT, ">"))))
		return 0;
	int depth = 0;
	for (size_t k = i + 1; k < x->n; k++) {
		depth += cx_is(x, k, CX_PUNCT, "(") - cx_is(x, k, CX_PUNCT, ")");
		if (depth <= 0)
			return 0;
		if (x->v[k].kind == CX_IDENT && starts_with(x->v[k].text, "CLONE_"))
			return 1;
	}
	return 0;
}

/* A free call: not x.fork() or obj->signal(...), not a declaration's name after a type. */
static int cx_free_call(const struct cx_list *x, size_t i)
{
	return cx_is(x, i + 1, CX_PUNCT, "(") && !(i > 0 && (cx_is(x, i - 1, CX_PUNCT, ".") || cx_is(x, i - 1, CX_PUNCT, ">")));
}

static void rule_h06(struct static_ctx *c)
{
	for (size_t i = 0; i < c->v->nimports; i++) {
		const struct pv_import *m = &c->v->imports[i];
		/* `from signal import *`: its uses are bare names, so the import is what shows */
		int star = !strcmp(m->name, "*") && (path_in(m->path, py_async) || word_in(m->path, py_async_by_use));
		if (!star && (!path_in(m->path, py_async) || path_in(m->path, async_harmless) || word_in(m->path, py_async_by_use)))
			continue; /* `import threading` is judged by what it is used for */
		const struct pytok *k = &c->t->v[m->at];
		static_add(c, "H06", "thread", k->line, k->col,
			   "imports %s (line %d): threads and processes can finish the work after the timer stops; %s",
			   m->path, k->line, h06_fix);
	}
	for_each_ref(c, async_refs, NULL);
	const struct cx_list *x = c->cx;
	for (size_t i = 0; i < x->n; i++) {
		/* std::thread::hardware_concurrency() counts cores, it starts nothing */
		int counts = cx_is(x, i + 1, CX_PUNCT, "::") && cx_is(x, i + 2, CX_IDENT, "hardware_concurrency");
		int thread = (cx_ident_in(x, i, cx_thread_after_scope) && i > 0 && cx_is(x, i - 1, CX_PUNCT, "::") && !counts) ||
			     (cx_ident_in(x, i, cx_aten_launch) && i > 1 && cx_is(x, i - 1, CX_PUNCT, "::") &&
			      (cx_is(x, i - 2, CX_IDENT, "at") || cx_is(x, i - 2, CX_IDENT, "internal"))) ||
			     (cx_ident_in(x, i, cx_thread) && cx_free_call(x, i)) || cx_clone(x, i) ||
			     cx_ident_in(x, i, cx_clone_calls) ||
			     (x->v[i].kind == CX_INCLUDE && word_in(x->v[i].text, cx_thread_headers));
		int sig = cx_ident_in(x, i, cx_signal) && cx_free_call(x, i) &&
			  !(i > 0 && cx_is(x, i - 1, CX_PUNCT, "::") && i > 1 && x->v[i - 2].kind == CX_IDENT &&
			    strcmp(x->v[i - 2].text, "std"));
		if (thread || sig)
			static_add(c, "H06", "cxx-thread", x->v[i].line, x->v[i].col,
				   "the C++ source uses %s (line %d): %s can finish the work after the timer stops; launch "
				   "kernels from the calling thread, on the current stream", x->v[i].text, x->v[i].line,
				   sig ? "a signal handler or timer" : "a host thread, process or callback");
	}
}

/* ---------- H20: L2 persistence ---------- */

static const char *const l2_names[] = { "cudaAccessPolicyWindow", "accessPolicyWindow", "cudaLimitPersistingL2CacheSize",
					"cudaAccessPropertyPersisting", "cudaStreamAttributeAccessPolicyWindow",
					"cudaLaunchAttributeAccessPolicyWindow", "cudaKernelNodeAttributeAccessPolicyWindow",
					"CU_ACCESS_PROPERTY_PERSISTING", "CU_LIMIT_PERSISTING_L2_CACHE_SIZE",
					"CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW", "CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW",
					"hitProp", NULL };

static void rule_h20(struct static_ctx *c)
{
	const char *msg = "%s (line %d) keeps lines persisting in L2 across the harness's cache flush, so timed calls "
			  "find their data already cached; do not set access policy windows or a persisting L2 limit";
	char name[PV_NAME];
	for (size_t i = 0; i < c->t->n; i++)
		if (name_in(c->t, i, l2_names, name, sizeof(name)))
			static_add(c, "H20", "l2-persist", c->t->v[i].line, c->t->v[i].col, msg, name, c->t->v[i].line);
	for (size_t i = 0; i < c->cx->n; i++)
		if (cx_ident_in(c->cx, i, l2_names))
			static_add(c, "H20", "l2-persist", c->cx->v[i].line, c->cx->v[i].col, msg, c->cx->v[i].text,
				   c->cx->v[i].line);
}

void rules_async(struct static_ctx *c)
{
	rule_h05(c);
	rule_h06(c);
	rule_h20(c);
}
