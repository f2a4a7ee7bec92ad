/* ncu.h - `stitchbench profile --ncu`: Nsight Compute's SM throughput, DRAM throughput and achieved
 * occupancy of one kernel, measured with --clock-control none so the clocks are the ones timing saw. */
#ifndef SB_NCU_H
#define SB_NCU_H

#include "../core/error.h"
#include "../core/types.h"
#include "../eval/evaluate.h"

struct ncu_result {
	char kernel[256];            /* the mangled name measured */
	double sm_pct;               /* sm__throughput.avg.pct_of_peak_sustained_elapsed */
	double dram_pct;             /* dram__throughput.avg.pct_of_peak_sustained_elapsed */
	double occupancy_pct;        /* sm__warps_active.avg.pct_of_peak_sustained_active */
	int found;                   /* bit per metric above: 1 sm, 2 dram, 4 occupancy */
};

/* ncu on PATH or in the CUDA toolkit; NULL when absent. */
char *ncu_find(void);

/* Reads ncu's --csv output (the rows of one profiled kernel). Returns 0 when at least one metric was
 * found, else SB_EENV with ncu's own error line (no permission for the counters, no kernel matched). */
int ncu_parse_csv(const char *text, struct ncu_result *out, struct sb_error *err);

/* Runs the problem's Model (candidate == NULL) or the candidate's ModelNew under ncu and measures the
 * first launches after two of the kernel whose mangled name is `mangled`. The candidate runs outside the
 * sandbox (ncu must launch it): only use it on files you trust. */
int ncu_measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate,
		const char *mangled, struct ncu_result *out, struct sb_error *err);

#endif
