/* report.h - what a trace says about the profiled calls: per call the kernel time and span beside the
 * CUDA-event time, a kernel table by total time, and the findings (H01, H04, H05, H06) it supports. */
#ifndef SB_PROF_REPORT_H
#define SB_PROF_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/error.h"
#include "../checks/finding.h"
#include "../checks/rules_profile.h"
#include "../core/strbuf.h"
#include "hwmetrics.h"
#include "trace.h"

/* A kernel ending this long after the end event counts as late, one starting this long before the start
 * event as early (clock rounding stays below it). */
#define PROF_LATE_NS 1000

/* One profiled call as the worker reported it. */
struct prof_call {
	uint64_t trial;
	double event_us;             /* its CUDA-event time */
};

struct prof_trial {
	uint64_t id;
	int found;                   /* the trace holds this trial */
	double event_us;             /* the worker's CUDA-event time */
	double gpu_window_us;        /* end event - start event on the GPU clock; NAN when unknown */
	double kernel_sum_us;        /* sum of its kernels' durations */
	double span_us;              /* first kernel start to last kernel end, any stream; 0 without kernels */
	int kernels, custom_kernels, other_stream_kernels, late_kernels, early_kernels, foreign_kernels;
	double late_by_us;           /* how far the latest kernel ended past the end event */
	double early_by_us;          /* how far the earliest kernel started before the start event */
	int memcpys, memsets;
	double copy_us;
};

/* One line of the kernel table: a kernel name, or memcpy/memset of one kind. */
struct prof_row {
	char *name;                  /* demangled, or "[memcpy DtoD]" */
	char *mangled;
	char *short_name;
	char kind;                   /* 'k' kernel, 'c' memcpy, 's' memset */
	int custom;
	const char *library;         /* NULL: custom or a copy */
	size_t calls;
	double total_us, mean_us, share; /* share of all rows' total, 0..1 */
	int64_t stream;              /* -1: more than one */
	int32_t grid[3], block[3];   /* of its first launch */
	int launch_varies;           /* later launches used another grid or block */
	uint32_t regs;
	int32_t static_smem, dynamic_smem;
	uint64_t bytes;              /* copies: bytes moved in all calls; kernels: 0 (unknown) */
	struct hw_metrics hw;        /* kernels: hardware metrics and bound class (eval.profile_metrics) */
};

struct prof_report {
	int started;                 /* the tracer loaded and started in the worker (profile_start said so) */
	int available;               /* a trace was recorded and parsed */
	char reason[512];            /* why not, or what limits it (dropped records, no attribution) */
	int complete;                /* the trace ends with its footer */
	int attributed;              /* records carry trial ids (external correlation worked) */
	uint64_t dropped;
	size_t untimed;
	uint32_t cupti_api;
	char end_event[16];          /* "cuda_event", "event_sync" or "none": what bounds the timed window */
	struct prof_trial *trials;
	size_t ntrials;
	struct prof_row *rows;       /* by total time, largest first */
	size_t nrows;
	double total_us;
	double kernel_sum_us, span_us, event_us; /* medians over the calls */
	long long io_bytes;          /* bytes of the inputs and outputs of one call; 0 unknown */
	size_t objects;              /* candidate .so files used to recognise its own template kernels */
	/* hardware metrics (eval.profile_metrics, hwmetrics.h): rows[].hw holds them per kernel */
	int metrics_asked;           /* a metrics pass was asked for */
	char metrics_chip[32];
	char metrics_reason[256];    /* why some or all kernels have none */
	size_t metrics_kernels;      /* kernel rows with metrics */
	int metrics_passes;          /* replay passes per kernel */
	int own_library_calls;       /* set by the caller: the candidate's C++ calls a CUDA library's API itself
				      * (static_file_calls_library), so library kernels are its own work */
};

void prof_report_init(struct prof_report *r);
void prof_report_release(struct prof_report *r);
/* Builds the report of `calls` from a parsed trace. `objects` are the candidate's .so files (may be
 * none). */
void prof_report_build(struct prof_report *r, const struct trace *t, const struct prof_call *calls, size_t ncalls,
		       const char *const *objects, size_t nobjects);
/* A report that says why there is none. */
void prof_report_unavailable(struct prof_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The verdict's "profile" object (docs/verdict.md), with at most max_rows kernel rows. */
json_t *prof_report_json(const struct prof_report *r, size_t max_rows);
/* The two lines of a verdict's text about its profile. */
void prof_report_summary(const struct prof_report *r, struct strbuf *out);
/* The table `stitchbench profile` prints. */
void prof_report_table(const struct prof_report *r, size_t max_rows, struct strbuf *out);

/* Adds the findings the report supports (checks/rules_profile.c decides them from what it measured) to
 * out and returns how many; the caller gives them their severity (policy_apply). */
size_t prof_findings(const struct prof_report *r, struct findings *out);

#endif
