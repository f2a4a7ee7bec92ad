/* timing.h - paired, interleaved timing (DESIGN §5.5): the reference and the candidate workers
 * stay alive together and the parent alternates short blocks of timed calls between them. */
#ifndef SB_TIMING_H
#define SB_TIMING_H

#include "../core/config.h"
#include "../core/nvml.h"
#include "seeds.h"
#include "verdict.h"
#include "proc/proc.h"

/* Input slots the timed calls rotate through, on each side. */
#define TIMING_SETS 3
#define TIMING_BIG_SET_BYTES (2LL << 30) /* beyond it, one set (eval_timing_sets) */
/* Timed calls per side per round at most: each call's outputs come back as a descriptor (proc/proc.h). */
#define TIMING_MAX_BLOCK 32

/* How a side keeps each timed call's outputs until the parent has checked them (worker.py, snapshot). */
enum timed_keep {
	TIMED_KEEP_NONE,   /* not kept: warm-up-like calls (the process factor's) */
	TIMED_KEEP_MEMFD,  /* a sealed memfd per call with the reply, compared here (eval.exchange = files) */
	TIMED_KEEP_SHARE,  /* exported per call for the reference worker to take (eval.exchange = shared) */
};

/* Every timed call checked: once both sides' blocks of a round are in, and before the candidate's worker
 * is asked anything again, `round` compares call j of the candidate with call j of the reference (the same
 * fresh inputs, the same seed), from the two blocks' replies and the descriptors that came with them.
 * Returns 0 when all agree, 1 when one of the candidate's is wrong (it has set the verdict; timing
 * stops), -1 on a harness failure (err). Both sides keep their outputs the same way, so a block costs
 * the same work on both and the parent's clock compares like with like. */
struct timed_check {
	int (*round)(void *arg, long first_call, int m, json_t *ref_reply, json_t *cand_reply, struct sb_error *err);
	void *arg;
	enum timed_keep keep;
};

struct timing_plan {
	int max_pairs;           /* eval.perf_trials: timed calls per side */
	int block;               /* eval.timing_block: calls per side per round, back to back */
	int prime_ms;            /* eval.timing_prime_ms: GPU warm-up before each block (0 on the CPU) */
	int lead_us;             /* eval.timing_lead_us: GPU-side wait before each start event (0 on the CPU) */
	int unpaired_mean;       /* the speedup is mean over mean (KernelBench's), not the median pair ratio */
	int gpu_only_calls;      /* > 0: that many calls per side behind an automatic lead after the timing
				  * proper, for timing.gpu_only (GPU, timed end to end); 0: none */
	int cpu;                 /* eval.timing_cpu: both workers' threads pinned to it while timing; -1: not */
	int gc;                  /* eval.timing_gc: Python's collector may run inside a timed block */
	int warmup_ms, warmup_calls;
	double rse_target;
	double cap_s;            /* wall-clock cap of the loop itself */
	int nsets;               /* input sets rotated so no call sees the pointers of the previous one */
	const struct eval_seeds *seeds; /* the evaluation's seeds; NULL: from base_seed, for timings no
					 * candidate takes part in */
	enum seed_use set_use, call_use; /* the streams of the slots' first draws and of the calls */
	uint32_t base_seed;
	int fresh;               /* every timed call's slot gets new values from its own seed first */
	int ship;                /* with fresh: the reference worker draws each block's inputs and both sides
				  * copy them (the CPU, where drawing costs more than many calls); else each
				  * side draws them from the seeds (a GPU draws in microseconds) */
	struct timed_check *check; /* NULL: the outputs of timed calls are not checked (nobody's a candidate) */
	long long flush_bytes;   /* L2 flush buffer; 0 on the CPU */
	int with_compiled;       /* the reference worker also has a torch.compile'd model */
	long long max_output_bytes;
	struct nvml_gpu *nvml;   /* the timed GPU, to sample its clock after each block; NULL: not sampled */
	json_t *ref_inputs;      /* the reference's timing inputs' fingerprints when its `load` already drew
				  * them (timing_setup_request in the load); NULL: timing_run asks for them */
};

/* The `timing_setup` request both workers get (the reference's may ride on its early `load`). */
json_t *timing_setup_request(const struct timing_plan *p);

/* Fills v->timing. Returns 0; 1 when the per-call check failed the candidate (the verdict says how); or -1
 * with `fault` (which side failed in `*cand_failed`). */
/* The repeats' statistics (struct repeat_calls) from n kept calls: the reference's and the candidate's
 * times, which calls were repeats, and the round each ran in. */
void timing_repeat_summarise(struct repeat_calls *rc, const double *ref, const double *cand, const char *repeat,
			     const int *round, size_t n);
int timing_run(struct worker *ref, struct worker *cand, const struct timing_plan *p, double cand_deadline,
	       struct timing_result *t, struct worker_fault *fault, int *cand_failed, char **fail_msg);

#endif
