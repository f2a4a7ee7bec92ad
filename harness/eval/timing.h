/* timing.h - paired, interleaved timing (DESIGN §5.5): the reference and the candidate workers
 * stay alive together and the parent alternates short blocks of timed calls between them. */
#ifndef SB_TIMING_H
#define SB_TIMING_H

#include "../core/config.h"
#include "../core/nvml.h"
#include "verdict.h"
#include "worker_client.h"

/* Input sets the timed calls rotate through, on each side. */
#define TIMING_SETS 3

struct timing_plan {
	int max_pairs;           /* eval.perf_trials: timed calls per side */
	int block;               /* eval.timing_block: calls per side per round, back to back */
	int prime_ms;            /* eval.timing_prime_ms: GPU warm-up before each block (0 on the CPU) */
	int lead_us;             /* eval.timing_lead_us: GPU-side wait before each start event (0 on the CPU) */
	int cpu;                 /* eval.timing_cpu: both workers' threads pinned to it while timing; -1: not */
	int gc;                  /* eval.timing_gc: Python's collector may run inside a timed block */
	int warmup_ms, warmup_calls;
	double rse_target;
	double cap_s;            /* wall-clock cap of the loop itself */
	int nsets;               /* input sets rotated so no call sees the pointers of the previous one */
	uint32_t base_seed;
	long long flush_bytes;   /* L2 flush buffer; 0 on the CPU */
	int with_compiled;       /* the reference worker also has a torch.compile'd model */
	long long max_output_bytes;
	const char *ref_out, *cand_out; /* where the last timed outputs are saved for re-validation; NULL:
					 * not saved (the process factor's timing) */
	struct nvml_gpu *nvml;   /* the timed GPU, to sample its clock after each block; NULL: not sampled */
	json_t *ref_inputs;      /* the reference's timing inputs' fingerprints when its `load` already drew
				  * them (timing_setup_request in the load); NULL: timing_run asks for them */
};

/* The `timing_setup` request both workers get (the reference's may ride on its early `load`). */
json_t *timing_setup_request(int nsets, uint32_t base_seed, long long flush_bytes);

/* Fills v->timing. Returns 0, or -1 with `fault` (which side failed in `*cand_failed`). */
int timing_run(struct worker *ref, struct worker *cand, const struct timing_plan *p, double cand_deadline,
	       struct timing_result *t, struct worker_fault *fault, int *cand_failed, char **fail_msg);

#endif
