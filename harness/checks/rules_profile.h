/* rules_profile.h - the profile's hack rules (H01, H04, H05, H06, H08; docs/profile.md): decisions over
 * what a CUPTI trace of the profiled calls showed, as harness/profile/report.c measured it. No I/O. */
#ifndef SB_RULES_PROFILE_H
#define SB_RULES_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "finding.h"

/* PyTorch's own compute kernels taking this share of the kernel time, beside the candidate's, is an H01 flag. */
#define PROF_PYTORCH_SHARE 0.5

struct prof_facts {
	int started;                 /* the tracer loaded and started in the candidate's worker */
	int available, complete;     /* a trace was parsed; it ends with its footer */
	int attributed;              /* its records carry trial ids */
	uint64_t dropped;            /* records the tracer lost */
	size_t calls;                /* profiled calls the trace holds */
	int kernels, custom, late, early, foreign, copies; /* over those calls: custom = the candidate's own kernels */
	double late_by_us;           /* how far the latest late kernel ended past the end event */
	double early_by_us;          /* how far the earliest early kernel started before the start event */
	int pytorch;                 /* a PyTorch compute kernel ran */
	double kernel_us, pytorch_us; /* kernel time in all, and PyTorch's compute kernels' */
	int own_library_calls;       /* the candidate's C++ calls a CUDA library's API itself */
	const char *kernels_top;     /* "custom k (61%), cublas gemm (22%)": the largest kernels, for messages */
	const char *pytorch_top;     /* the same of PyTorch's compute kernels */
};

/* Adds the findings the facts support. Evidence that cannot tell a hack from honest code (only
 * vendor-library kernels, another thread's kernels, a tracer whose records name no call) is flag_only;
 * only library kernels from a candidate with own_library_calls is no finding at all. */
void rules_profile(const struct prof_facts *f, struct findings *out);

#endif
