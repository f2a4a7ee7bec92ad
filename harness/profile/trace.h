/* trace.h - a stitchprof trace (docs/trace.md) read into memory: the records libstitchprof wrote in
 * the worker, checked line by line, with the correlation-to-trial map built once. */
#ifndef SB_TRACE_H
#define SB_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/error.h"

#define TRACE_FORMAT 1

struct trace_name {
	char *mangled, *demangled;
};

struct trace_kernel {
	uint32_t name;               /* index into names + 1; 0 = unknown */
	uint64_t start, end;         /* ns; both 0 when CUPTI could not time it */
	uint32_t device, ctx, stream, corr;
	int32_t grid[3], block[3];
	uint32_t regs;
	int32_t static_smem, dynamic_smem;
	uint32_t local_mem;
};

/* A memcpy or a memset. */
struct trace_copy {
	int memset;
	char kind[8];                /* memcpy: HtoD, DtoD, ...; memset: "set" */
	uint64_t bytes;
	uint64_t start, end;
	uint32_t device, ctx, stream, corr;
};

struct trace_sync {
	char type[20];               /* event_sync, stream_wait_event, stream_sync, context_sync, unknown */
	uint64_t start, end;
	uint32_t ctx;
	int64_t stream, event;       /* -1: not applicable */
	uint32_t corr;
};

struct trace_event {
	uint32_t event;
	uint64_t ts;                 /* GPU completion time; 0 = not collected */
	uint32_t ctx, stream, corr;
};

struct trace_trial {
	uint64_t id;
	int64_t stream;              /* CUPTI stream id timed on; -1 unknown */
	uint64_t begin, end;         /* host times */
};

struct trace_ext {
	uint32_t corr;
	uint64_t trial;
};

struct trace {
	char *path;
	int format;
	uint32_t cupti_api;
	int event_timestamps;        /* CUPTI agreed to collect event device timestamps */
	char disabled[256];          /* activity kinds CUPTI refused, space-separated */
	struct trace_name *names;
	size_t nnames;
	struct trace_kernel *kernels;
	size_t nkernels;
	struct trace_copy *copies;
	size_t ncopies;
	struct trace_sync *syncs;
	size_t nsyncs;
	struct trace_event *events;
	size_t nevents;
	struct trace_trial *trials;
	size_t ntrials;
	struct trace_ext *ext;       /* sorted by corr once parsed */
	size_t next;
	uint64_t dropped;            /* sum of drop lines, or the end line's count if larger */
	size_t untimed;              /* kernels without timestamps */
	int complete;                /* the end line is there */
	size_t capacity[7];          /* allocation sizes of the arrays above */
};

/* Reads and checks a trace; errors name path:line. The trace comes from an untrusted process:
 * sizes are bounded and every field is validated. */
int trace_parse_file(const char *path, struct trace *t, struct sb_error *err);
int trace_parse_text(const char *name, const char *text, size_t len, struct trace *t, struct sb_error *err);
void trace_release(struct trace *t);

/* The trial an API call (by correlation id) was made in; 0 when none. */
uint64_t trace_trial_of(const struct trace *t, uint32_t corr);
const struct trace_trial *trace_find_trial(const struct trace *t, uint64_t id);
/* Demangled and mangled name of kernel name id `id`; "?" for an unknown id. */
const char *trace_name_of(const struct trace *t, uint32_t id);
const char *trace_mangled_of(const struct trace *t, uint32_t id);

#endif
