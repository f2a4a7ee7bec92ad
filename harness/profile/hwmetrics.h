/* hwmetrics.h - hardware metrics per kernel (what Nsight Compute's Speed of Light and Occupancy sections
 * show), read from the CUPTI range profiler's file (docs/trace.md, "metrics file"), and the bound class
 * each kernel falls in: memory, compute, latency or launch. */
#ifndef SB_HWMETRICS_H
#define SB_HWMETRICS_H

#include <stddef.h>

#include "../core/error.h"

/* The values of one kernel, as percentages of the GPU's peak (NAN: not measured). A kernel launched
 * more than once gets the duration-weighted mean of its launches. */
struct hw_metrics {
	int measured;                /* at least one launch of it was measured */
	size_t launches;             /* launches measured */
	double duration_us;          /* mean GPU time of a measured launch (replayed, so not a timing) */
	double sm_pct;               /* sm__throughput: the busiest SM pipeline or unit, % of peak */
	double mem_pct;              /* gpu__compute_memory_throughput: the busiest memory unit, % of peak */
	double dram_pct;             /* dram__throughput */
	double l2_pct;               /* lts__throughput */
	double l1_pct;               /* l1tex__throughput (L1 and shared memory) */
	double occupancy_pct;        /* sm__warps_active: achieved occupancy */
	double tensor_pct;           /* the tensor pipes' busiest (HMMA or, on Hopper, GMMA), % of peak */
	/* filled by hw_classify */
	const char *bound;           /* "memory", "compute", "latency" or "launch" */
	const char *limiter;         /* the unit that bounds it: "DRAM bandwidth", "L2 bandwidth", "L1/shared
				      * bandwidth", "SM pipelines", "tensor pipelines", "occupancy",
				      * "latency (stalls)", "launch overhead" */
	double roofline_pct;         /* how close the busiest unit is to its peak: max(sm_pct, mem_pct) */
};

/* The threshold Nsight Compute's Speed of Light rule uses: a kernel whose busiest compute and memory
 * units both stay below 60% of peak is held back by latency, not by a roof. */
#define HW_ROOF_PCT 60.0
/* A kernel shorter than this that reaches no roof is launch-bound: its time is mostly the fixed cost of
 * a launch (a few microseconds), so fusing it away saves more than tuning it. */
#define HW_LAUNCH_US 8.0
/* A memory-bound kernel's limiter is DRAM while DRAM is at least this share of its busiest cache level. */
#define HW_DRAM_SHARE 0.8
/* Below this achieved occupancy a latency-bound kernel has too few warps to hide its latency. */
#define HW_LOW_OCCUPANCY_PCT 40.0

void hw_metrics_init(struct hw_metrics *m);
/* Sets bound, limiter and roofline_pct from the measured values (nothing when !m->measured). */
void hw_classify(struct hw_metrics *m);

/* One measured launch, in launch order, as the metrics file lists it. */
struct hw_range {
	char *mangled;               /* the kernel's name (NULL: the launch was not matched to a name) */
	struct hw_metrics m;
};

struct hw_file {
	char chip[32];               /* "GH100" */
	struct hw_range *ranges;
	size_t nranges;
	size_t names;                /* launches the library saw; differs from nranges when CUPTI made ranges
				      * it did not see launched (graphs, library-internal launches) */
	size_t dropped;              /* ranges CUPTI dropped (more launches than it had room for) */
	int passes;                  /* replay passes per kernel */
	int complete;                /* the file ends with its `end` line */
	char reason[256];            /* why there is nothing (the library's error line) */
};

/* Parses the metrics file the worker's libstitchprof wrote. It was written by the candidate's process:
 * every line is checked, a bad one is an error naming file:line. */
int hw_file_read(const char *path, struct hw_file *f, struct sb_error *err);
void hw_file_release(struct hw_file *f);

/* The duration-weighted mean over the launches of kernel `mangled`, classified. */
void hw_file_kernel(const struct hw_file *f, const char *mangled, struct hw_metrics *out);

#endif
