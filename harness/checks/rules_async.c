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

static void rule_h05(struct static_ctx *c)
{
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

/* ---------- H06: threads and processes ---------- */

static const char *const py_async[] = { "threading", "_thread", "multiprocessing", "concurrent", "asyncio",
					"torch.multiprocessing", "joblib", "os.fork", "os.forkpty", "os.register_at_fork",
					NULL };
static const char *const cx_thread_after_scope[] = { "thread", "jthread", "async", NULL };
static const char *const cx_thread[] = { "pthread_create", "fork", "vfork", "clone", NULL };
static const char *const cx_thread_headers[] = { "thread", "future", "pthread.h", NULL };

/* What these modules offer that runs nothing concurrently (build settings use it). */
static const char *const async_harmless[] = { "multiprocessing.cpu_count", "os.cpu_count", NULL };

static void async_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	if (!path_in(r->path, py_async) || r->head != REF_IMPORT || path_in(r->path, async_harmless) ||
	    !strcmp(r->path, "multiprocessing"))
		return;
	const struct pytok *k = &c->t->v[r->start];
	static_add(c, "H06", "thread", k->line, k->col,
		   "%s (line %d) runs work concurrently with forward, which can finish after the timer stops; do all "
		   "the work in forward's kernels on the current stream", r->path, k->line);
}

static void rule_h06(struct static_ctx *c)
{
	for (size_t i = 0; i < c->v->nimports; i++) {
		const struct pv_import *m = &c->v->imports[i];
		if (!path_in(m->path, py_async) || path_in(m->path, async_harmless) || !strcmp(m->path, "multiprocessing"))
			continue; /* `import multiprocessing` is judged by what it is used for */
		const struct pytok *k = &c->t->v[m->at];
		static_add(c, "H06", "thread", k->line, k->col,
			   "imports %s (line %d): threads and processes can finish the work after the timer stops; do all "
			   "the work in forward's kernels on the current stream", m->path, k->line);
	}
	for_each_ref(c, async_refs, NULL);
	const struct cx_list *x = c->cx;
	for (size_t i = 0; i < x->n; i++) {
		int hit = (cx_ident_in(x, i, cx_thread_after_scope) && i > 0 && cx_is(x, i - 1, CX_PUNCT, "::")) ||
			  (cx_ident_in(x, i, cx_thread) && cx_is(x, i + 1, CX_PUNCT, "(")) ||
			  (x->v[i].kind == CX_INCLUDE && word_in(x->v[i].text, cx_thread_headers));
		if (hit)
			static_add(c, "H06", "cxx-thread", x->v[i].line, x->v[i].col,
				   "the C++ source uses %s (line %d): a host thread or process can finish the work after "
				   "the timer stops; launch kernels from the calling thread", x->v[i].text, x->v[i].line);
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
