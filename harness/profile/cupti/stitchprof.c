/* stitchprof.c - libstitchprof: records kernels, memcpys, memsets, CUDA events and synchronisations
 * through the CUPTI Activity API and writes them as the line-oriented trace of docs/trace.md. */
#include "stitchprof.h"
#include "stitchprof_int.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACE_FORMAT 1
#define BUF_SIZE (8u << 20)
/* Past this many buffers in flight (2 GiB) CUPTI gets none and counts what it drops: a runaway
 * candidate must not exhaust the worker's memory through us. */
#define MAX_BUFFERS 256
#define EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

struct name_slot {
	char *mangled;       /* NULL: empty slot */
	uint32_t hash, id;
};

struct counts {
	uint64_t records, kernels, untimed, memcpys, memsets, syncs, events, ext, api, other, dropped;
};

/* The one session of this process. CUPTI's buffer callbacks take no user pointer, so the state they
 * reach has to be static; every access below holds `lock`. */
static struct session {
	pthread_mutex_t lock;
	FILE *out;
	int active;
	struct name_slot *names;
	uint32_t ncap, nused;
	struct counts n;
	int buffers;             /* handed to CUPTI and not yet returned */
	int in_trial;
	uint64_t trial_id, trial_begin;
	uint32_t trial_stream;
	demangle_fn demangle;
	int by_callback;         /* calls tied to trials by the callback API, not external correlation */
	CUpti_SubscriberHandle subscriber;
	char err[512];
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Callback attribution (STITCHPROF_ATTRIBUTION=callback): the open trial of this thread and the
 * correlation ids of the CUDA calls it made, kept without a lock and written at the trial's end. */
static __thread uint64_t tl_trial;
static __thread struct { uint32_t *corr; size_t n, cap; } tl_calls;

static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(S.err, sizeof(S.err), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *cupti_msg(CUptiResult r)
{
	const char *s = NULL;
	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

const char *stitchprof_error(void)
{
	return S.err;
}

int sp_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(S.err, sizeof(S.err), fmt, ap);
	va_end(ap);
	return -1;
}

const char *sp_cupti_msg(CUptiResult r)
{
	return cupti_msg(r);
}

int sp_tracing(void)
{
	pthread_mutex_lock(&S.lock);
	int active = S.active;
	pthread_mutex_unlock(&S.lock);
	return active;
}

/* ---------- names ---------- */

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Writes a name token: whitespace and control characters would break the line format. */
static void put_token(FILE *f, const char *s, int spaces_ok)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			c = spaces_ok ? ' ' : '?';
		else if (c == ' ' && !spaces_ok)
			c = '?';
		fputc(c, f);
	}
}

static int names_grow(void)
{
	uint32_t cap = S.ncap ? 2 * S.ncap : 1024;
	struct name_slot *t = calloc(cap, sizeof(*t));
	if (!t)
		return -1;
	for (uint32_t i = 0; i < S.ncap; i++) {
		if (!S.names[i].mangled)
			continue;
		uint32_t j = S.names[i].hash & (cap - 1);
		while (t[j].mangled)
			j = (j + 1) & (cap - 1);
		t[j] = S.names[i];
	}
	free(S.names);
	S.names = t;
	S.ncap = cap;
	return 0;
}

/* The id of a kernel name; a new name gets a `name` line first (the string table). */
static uint32_t name_id(const char *mangled)
{
	if (!mangled || !*mangled)
		mangled = "?";
	if ((S.nused + 1) * 2 > S.ncap && names_grow())
		return 0; /* out of memory: the record still goes out, with name 0 ("?") */
	uint32_t h = fnv1a(mangled), j = h & (S.ncap - 1);
	while (S.names[j].mangled) {
		if (S.names[j].hash == h && !strcmp(S.names[j].mangled, mangled))
			return S.names[j].id;
		j = (j + 1) & (S.ncap - 1);
	}
	char *copy = strdup(mangled);
	if (!copy)
		return 0;
	S.names[j] = (struct name_slot){ copy, h, ++S.nused };
	char *dem = NULL;
	int status = -1;
	if (S.demangle && mangled[0] == '_' && mangled[1] == 'Z')
		dem = S.demangle(mangled, NULL, NULL, &status);
	fprintf(S.out, "name %u ", S.nused);
	put_token(S.out, mangled, 0);
	fputc(' ', S.out);
	put_token(S.out, status == 0 && dem ? dem : mangled, 1);
	fputc('\n', S.out);
	free(dem);
	return S.nused;
}

static void names_free(void)
{
	for (uint32_t i = 0; i < S.ncap; i++)
		free(S.names[i].mangled);
	free(S.names);
	S.names = NULL;
	S.ncap = S.nused = 0;
}

/* __cxa_demangle from libstdc++, which torch has loaded; without it names stay mangled. */
static demangle_fn find_demangler(void)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!f) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			f = dlsym(h, "__cxa_demangle");
	}
	demangle_fn fn;
	memcpy(&fn, &f, sizeof(fn)); /* object pointer to function pointer, as dlsym requires */
	return fn;
}

/* ---------- records ---------- */

static const char *copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "unknown";
	}
}

static const char *sync_kind(CUpti_ActivitySynchronizationType t)
{
	switch (t) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event_sync";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream_wait_event";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream_sync";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context_sync";
	default: return "unknown";
	}
}

/* -1 where CUPTI says a field does not apply. */
static long long opt_id(uint32_t v)
{
	return v == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (long long)v;
}

static void write_record(const CUpti_Activity *r)
{
	FILE *f = S.out;
	S.n.records++;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)r;
		S.n.kernels++;
		if (!k->start && !k->end)
			S.n.untimed++;
		uint32_t id = name_id(k->name);
		fprintf(f, "kernel %u %llu %llu %u %u %u %u %d %d %d %d %d %d %u %d %d %u\n", id,
			(unsigned long long)k->start, (unsigned long long)k->end, k->deviceId, k->contextId, k->streamId,
			k->correlationId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
			(unsigned)k->registersPerThread, k->staticSharedMemory, k->dynamicSharedMemory, k->localMemoryPerThread);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;
		S.n.memcpys++;
		fprintf(f, "memcpy %s %llu %llu %llu %u %u %u %u\n", copy_kind(m->copyKind), (unsigned long long)m->bytes,
			(unsigned long long)m->start, (unsigned long long)m->end, m->deviceId, m->contextId, m->streamId,
			m->correlationId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;
		S.n.memsets++;
		fprintf(f, "memset %llu %u %llu %llu %u %u %u %u\n", (unsigned long long)m->bytes, m->value,
			(unsigned long long)m->start, (unsigned long long)m->end, m->deviceId, m->contextId, m->streamId,
			m->correlationId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)r;
		S.n.syncs++;
		fprintf(f, "sync %s %llu %llu %u %lld %lld %u\n", sync_kind(s->type), (unsigned long long)s->start,
			(unsigned long long)s->end, s->contextId, opt_id(s->streamId), opt_id(s->cudaEventId), s->correlationId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
		const CUpti_ActivityCudaEvent2 *e = (const void *)r;
		S.n.events++;
		fprintf(f, "event %u %llu %u %u %u\n", e->eventId, (unsigned long long)e->deviceTimestamp, e->contextId,
			e->streamId, e->correlationId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *x = (const void *)r;
		if (x->externalKind != EXT_KIND) {
			S.n.other++;
			break;
		}
		S.n.ext++;
		fprintf(f, "ext %llu %u\n", (unsigned long long)x->externalId, x->correlationId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		/* enabled only so that CUPTI emits the external correlation records; not written */
		S.n.records--;
		S.n.api++;
		break;
	default:
		S.n.other++;
		break;
	}
}

static void note_dropped(void)
{
	size_t dropped = 0;
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped) {
		S.n.dropped += dropped;
		fprintf(S.out, "drop %zu\n", dropped);
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*size = 0;
	*buffer = NULL;
	pthread_mutex_lock(&S.lock);
	if (S.buffers < MAX_BUFFERS) {
		*buffer = aligned_alloc(8, BUF_SIZE);
		if (*buffer) {
			*size = BUF_SIZE;
			S.buffers++;
		}
	}
	pthread_mutex_unlock(&S.lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	pthread_mutex_lock(&S.lock);
	if (S.out) {
		CUpti_Activity *r = NULL;
		while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
			write_record(r);
		note_dropped();
	}
	S.buffers--;
	pthread_mutex_unlock(&S.lock);
	free(buffer);
}

/* Every runtime and driver API call enters here in callback mode; only the calls of a thread with an
 * open trial are kept. The id is the one CUPTI puts on the kernel, copy, event or sync it caused. */
static void CUPTIAPI api_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	(void)ud;
	(void)domain;
	(void)cbid;
	const CUpti_CallbackData *cb = data;
	if (!tl_trial || cb->callbackSite != CUPTI_API_ENTER)
		return;
	if (tl_calls.n == tl_calls.cap) {
		size_t cap = tl_calls.cap ? 2 * tl_calls.cap : 256;
		uint32_t *t = realloc(tl_calls.corr, cap * sizeof(*t));
		if (!t)
			return; /* out of memory: this call goes unattributed, as a drop would */
		tl_calls.corr = t;
		tl_calls.cap = cap;
	}
	tl_calls.corr[tl_calls.n++] = cb->correlationId;
}

/* Writes the open trial's calls as `ext` lines (the same lines external correlation gives); the
 * caller holds the lock and is the trial's own thread. */
static void write_trial_calls(uint64_t trial)
{
	for (size_t i = 0; i < tl_calls.n; i++)
		fprintf(S.out, "ext %llu %u\n", (unsigned long long)trial, tl_calls.corr[i]);
	S.n.ext += tl_calls.n;
	tl_calls.n = 0;
}

static int start_callbacks(void)
{
	CUptiResult r = cuptiSubscribe(&S.subscriber, (CUpti_CallbackFunc)api_callback, NULL);
	if (r != CUPTI_SUCCESS)
		return fail("CUPTI refused a callback subscriber: %s", cupti_msg(r));
	if ((r = cuptiEnableDomain(1, S.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API)) != CUPTI_SUCCESS ||
	    (r = cuptiEnableDomain(1, S.subscriber, CUPTI_CB_DOMAIN_DRIVER_API)) != CUPTI_SUCCESS) {
		cuptiUnsubscribe(S.subscriber);
		return fail("CUPTI refused the API callbacks: %s", cupti_msg(r));
	}
	return 0;
}

/* ---------- the session ---------- */

struct kind_spec {
	CUpti_ActivityKind kind;
	const char *name;
	int required;
	int attribution;         /* only there to tie calls to trials: off in callback mode */
};

static const struct kind_spec kinds[] = {
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "concurrent_kernel", 1, 0 },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", 0, 0 },
	{ CUPTI_ACTIVITY_KIND_MEMSET, "memset", 0, 0 },
	{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization", 0, 0 },
	{ CUPTI_ACTIVITY_KIND_CUDA_EVENT, "cuda_event", 0, 0 },
	{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external_correlation", 0, 1 },
	/* external correlation records are emitted per traced API call, so the APIs are traced too */
	{ CUPTI_ACTIVITY_KIND_RUNTIME, "runtime", 0, 1 },
	{ CUPTI_ACTIVITY_KIND_DRIVER, "driver", 0, 1 },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Is name one of the comma-separated words of list? */
static int kind_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (e != NULL);
	}
	return 0;
}

static void disable_all(void)
{
	for (size_t i = 0; i < NKINDS; i++)
		cuptiActivityDisable(kinds[i].kind);
}

/* Undoes a start that failed half-way; the trace file is closed, not finished (it has no end line). */
static void abandon_start(FILE *f)
{
	if (S.by_callback)
		cuptiUnsubscribe(S.subscriber);
	disable_all();
	pthread_mutex_lock(&S.lock);
	S.out = NULL;
	fclose(f);
	names_free();
	pthread_mutex_unlock(&S.lock);
}

int stitchprof_start(const char *path)
{
	CUptiResult r;
	uint32_t version = 0;
	pthread_mutex_lock(&S.lock);
	if (S.active) {
		pthread_mutex_unlock(&S.lock);
		return fail("a profiling session is already running in this process");
	}
	FILE *f = fopen(path, "we");
	if (!f) {
		pthread_mutex_unlock(&S.lock);
		return fail("cannot open the trace %s: %s", path, strerror(errno));
	}
	memset(&S.n, 0, sizeof(S.n));
	S.out = f;
	S.in_trial = 0;
	S.demangle = find_demangler();
	cuptiGetVersion(&version);
	uint64_t now = 0;
	cuptiGetTimestamp(&now);
	fprintf(f, "stitchprof %d\n", TRACE_FORMAT);
	fprintf(f, "meta cupti_api %u\n", version);
	fprintf(f, "meta cupti_built %d\n", CUPTI_API_VERSION);
	fprintf(f, "meta pid %d\n", (int)getpid());
	fprintf(f, "meta start_ns %llu\n", (unsigned long long)now);
	fprintf(f, "meta demangler %s\n", S.demangle ? "cxa" : "none");
	pthread_mutex_unlock(&S.lock);

	/* CUPTI may call back into buffer_requested from here on, so the lock is released */
	if ((r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
		goto fatal;
	r = cuptiActivityEnableCudaEventDeviceTimestamps(1);
	pthread_mutex_lock(&S.lock);
	fprintf(f, "meta event_timestamps %s\n", r == CUPTI_SUCCESS ? "on" : cupti_msg(r));
	pthread_mutex_unlock(&S.lock);
	/* STITCHPROF_ATTRIBUTION=callback ties calls to trials through the callback API instead of
	 * external correlation, which needs every runtime and driver call traced as an activity record
	 * (half of the host-side cost of profiling; BENCHMARKS.md, "Profiling overhead") */
	const char *how = getenv("STITCHPROF_ATTRIBUTION");
	S.by_callback = how && !strcmp(how, "callback");
	if (S.by_callback && start_callbacks()) {
		S.by_callback = 0; /* start_callbacks left nothing subscribed */
		abandon_start(f);
		return -1;
	}
	pthread_mutex_lock(&S.lock);
	fprintf(f, "meta attribution %s\n", S.by_callback ? "callback" : "external_correlation");
	pthread_mutex_unlock(&S.lock);
	/* STITCHPROF_SKIP_KINDS=runtime,driver,...: a diagnostic for measuring what each kind costs
	 * (scripts/bench/prof_overhead.py); a skipped kind is noted in the trace like a refused one */
	const char *skip = getenv("STITCHPROF_SKIP_KINDS");
	for (size_t i = 0; i < NKINDS; i++) {
		if (S.by_callback && kinds[i].attribution)
			continue;
		if (skip && !kinds[i].required && kind_listed(skip, kinds[i].name)) {
			pthread_mutex_lock(&S.lock);
			fprintf(f, "meta disabled %s skipped_by_STITCHPROF_SKIP_KINDS\n", kinds[i].name);
			pthread_mutex_unlock(&S.lock);
			continue;
		}
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS)
			continue;
		if (kinds[i].required)
			goto fatal;
		pthread_mutex_lock(&S.lock);
		fprintf(f, "meta disabled %s %s\n", kinds[i].name, cupti_msg(r));
		pthread_mutex_unlock(&S.lock);
	}
	pthread_mutex_lock(&S.lock);
	S.active = 1;
	fflush(f);
	pthread_mutex_unlock(&S.lock);
	return 0;
fatal:
	abandon_start(f);
	return fail("CUPTI refused to start: %s (no usable NVIDIA driver here, or another profiler such as nsys, ncu or torch.profiler holds CUPTI)",
		    cupti_msg(r));
}

/* Writes the trial line of the open trial; the caller holds the lock and has popped its id. */
static void write_trial(uint64_t end)
{
	if (S.by_callback)
		write_trial_calls(S.trial_id);
	if (S.trial_stream == UINT32_MAX)
		fprintf(S.out, "trial %llu - %llu %llu\n", (unsigned long long)S.trial_id,
			(unsigned long long)S.trial_begin, (unsigned long long)end);
	else
		fprintf(S.out, "trial %llu %u %llu %llu\n", (unsigned long long)S.trial_id, S.trial_stream,
			(unsigned long long)S.trial_begin, (unsigned long long)end);
	S.in_trial = 0;
}

/* Pops the trial's id and takes the time; CUPTI is called without our lock held, since its own
 * worker thread may be waiting for that lock in buffer_completed. */
static uint64_t pop_trial(void)
{
	uint64_t now = 0, popped = 0;
	if (S.by_callback)
		tl_trial = 0;
	else
		cuptiActivityPopExternalCorrelationId(EXT_KIND, &popped);
	cuptiGetTimestamp(&now);
	return now;
}

int stitchprof_trial_begin(uint64_t id, uintptr_t stream)
{
	pthread_mutex_lock(&S.lock);
	int active = S.active, open = S.in_trial;
	pthread_mutex_unlock(&S.lock);
	if (!active)
		return fail("stitchprof_trial_begin: no profiling session (call stitchprof_start first)");
	if (id == 0)
		return fail("stitchprof_trial_begin: trial ids start at 1");
	if (open) { /* the previous trial raised before its end: close it where it stands */
		uint64_t end = pop_trial();
		pthread_mutex_lock(&S.lock);
		write_trial(end);
		pthread_mutex_unlock(&S.lock);
	}
	uint32_t sid = UINT32_MAX;
	uint64_t begin = 0;
	if (cuptiGetStreamIdEx(NULL, (CUstream)stream, 0, &sid) != CUPTI_SUCCESS)
		sid = UINT32_MAX;
	cuptiGetTimestamp(&begin);
	if (S.by_callback) {
		tl_calls.n = 0;
		tl_trial = id;
	} else {
		CUptiResult r = cuptiActivityPushExternalCorrelationId(EXT_KIND, id);
		if (r != CUPTI_SUCCESS)
			return fail("cannot tag trial %llu: %s", (unsigned long long)id, cupti_msg(r));
	}
	pthread_mutex_lock(&S.lock);
	S.trial_id = id;
	S.trial_stream = sid;
	S.trial_begin = begin;
	S.in_trial = 1;
	pthread_mutex_unlock(&S.lock);
	return 0;
}

int stitchprof_trial_end(void)
{
	pthread_mutex_lock(&S.lock);
	int open = S.active && S.in_trial;
	pthread_mutex_unlock(&S.lock);
	if (!open)
		return fail("stitchprof_trial_end: no trial is open");
	uint64_t end = pop_trial();
	pthread_mutex_lock(&S.lock);
	write_trial(end);
	pthread_mutex_unlock(&S.lock);
	return 0;
}

int stitchprof_flush(void)
{
	pthread_mutex_lock(&S.lock);
	int active = S.active;
	pthread_mutex_unlock(&S.lock);
	if (!active)
		return fail("stitchprof_flush: no profiling session");
	/* a plain flush first (completed buffers), then a forced one for the partly filled buffer */
	cuptiActivityFlushAll(0);
	CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&S.lock);
	if (S.out) {
		note_dropped();
		fflush(S.out);
	}
	pthread_mutex_unlock(&S.lock);
	return r == CUPTI_SUCCESS ? 0 : fail("flushing CUPTI's buffers failed: %s", cupti_msg(r));
}

int stitchprof_stop(void)
{
	pthread_mutex_lock(&S.lock);
	int active = S.active, open = S.in_trial;
	pthread_mutex_unlock(&S.lock);
	if (!active)
		return fail("stitchprof_stop: no profiling session");
	if (open) {
		uint64_t end = pop_trial();
		pthread_mutex_lock(&S.lock);
		write_trial(end);
		pthread_mutex_unlock(&S.lock);
	}
	int rc = stitchprof_flush();
	if (S.by_callback) {
		cuptiUnsubscribe(S.subscriber);
		free(tl_calls.corr);
		tl_calls.corr = NULL;
		tl_calls.n = tl_calls.cap = 0;
	}
	disable_all();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* anything recorded while disabling */
	pthread_mutex_lock(&S.lock);
	note_dropped();
	fprintf(S.out, "end %llu %llu %llu\n", (unsigned long long)S.n.records, (unsigned long long)S.n.kernels,
		(unsigned long long)S.n.dropped);
	if (fclose(S.out) != 0 && rc == 0)
		rc = fail("closing the trace failed: %s", strerror(errno));
	S.out = NULL;
	S.active = 0;
	names_free();
	pthread_mutex_unlock(&S.lock);
	return rc;
}

void stitchprof_counts(uint64_t *records, uint64_t *kernels, uint64_t *dropped)
{
	pthread_mutex_lock(&S.lock);
	if (records)
		*records = S.n.records;
	if (kernels)
		*kernels = S.n.kernels;
	if (dropped)
		*dropped = S.n.dropped;
	pthread_mutex_unlock(&S.lock);
}
