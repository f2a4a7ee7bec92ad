/* timing.h - timing: how fast the candidate is against the reference, and how far the number holds.
 *   stats.c: the statistics of timing samples (medians, bootstrap intervals) and the seeds of correctness trials.
 *   noise.c: whether the machine was busy with other work while an evaluation timed, read from /proc.
 *   timing.c: paired, interleaved timing of the reference's and the candidate's workers.
 *   procfactor.c: the process factor, the reference timed in the candidate's process (eval_int.h declares it).
 * verdict.h includes this header for the statistics it holds, so this one does not include verdict.h. */
#ifndef SB_EVAL_TIMING_H
#define SB_EVAL_TIMING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/config.h"
#include "../../core/nvml.h"
#include "../proc/proc.h"
#include "../seeds.h"

/* stats.c - the statistics of timing samples (DESIGN §5.5-6) and the seeds of correctness trials.
 * Everything here is deterministic from its inputs and seed, so a verdict can be recomputed exactly. */

struct sample_stats {
	size_t n;
	double median, mean, p25, p75, min, max;
	double stdev; /* sample standard deviation (n - 1); 0 when n < 2 */
	double cv;    /* stdev / mean; 0 when the mean is 0 */
};

/* n == 0 -> all zero; does not modify x. */
void stats_compute(const double *x, size_t n, struct sample_stats *s);
/* p in [0, 100] (clamped), linear interpolation between closest ranks, computed as numpy's default
 * np.percentile does it (same rounding); 0 when n == 0. */
double stats_percentile(const double *sorted, size_t n, double p);

/* A small deterministic PRNG (splitmix64 seeding xoshiro256**), so every bootstrap is reproducible
 * from its seed on every machine. */
struct sb_rng {
	uint64_t s[4];
};
void sb_rng_seed(struct sb_rng *r, uint64_t seed);
uint64_t sb_rng_next(struct sb_rng *r);
double sb_rng_uniform(struct sb_rng *r); /* [0, 1), 53 random bits */

/* Percentile bootstrap of the median: B resamples (with replacement) of x; fills the [lo, hi] interval at
 * `level` (0.95) and the bootstrap standard error of the median (sample stdev of the B medians).
 * Returns 0, or SB_EINPUT (with lo = hi = se = 0) when n == 0, B < 1 or level is outside (0, 1). */
int bootstrap_median(const double *x, size_t n, int B, uint64_t seed, double level, double *lo, double *hi,
		     double *se);
/* Percentile bootstrap of mean(num) / mean(den) for two unpaired samples (KernelBench's speedup: the
 * reference's mean time over the candidate's): each resample draws each side with replacement on its own.
 * Returns 0, or SB_EINPUT (lo = hi = 0) when a side is empty, B < 1 or level is outside (0, 1). */
int bootstrap_mean_ratio(const double *num, size_t nn, const double *den, size_t nd, int B, uint64_t seed,
			 double level, double *lo, double *hi);
/* Relative standard error of the median: se / |median| from bootstrap_median with B = 200 - the timing
 * loop's stop rule. INFINITY when n < 2 or the median is 0, so that too little data never looks precise. */
double median_rse(const double *x, size_t n, uint64_t seed);
/* The seed of correctness trial k (k >= 0) from a base seed: deterministic, in [0, 2^31), and distinct
 * for every k < 2^31 under one base (a bijection of k), not merely unlikely to collide. */
uint32_t trial_seed(uint32_t base, int k);
/* Geometric mean of positive values (reports use it); 0 for n == 0, NAN if any value is <= 0 or NaN. */
double geomean(const double *x, size_t n);

/* noise.c - whether the machine was busy with other work while an evaluation timed: the share of the
 * machine's CPU time that processes other than the two workers took (and the hypervisor's steal) over the
 * timing window, read from /proc, and the reference's own spread. A verdict timed on a busy machine says
 * so: its interval is then wider than the code's own spread, or wrong in ways no interval shows. */

/* A reading of the machine and of the workers at one moment. */
struct noise_probe {
	int ok;                        /* /proc/stat answered */
	unsigned long long busy, total, steal; /* jiffies over every CPU */
	unsigned long long own;        /* the workers' CPU jiffies (user + system) */
};

struct machine_noise {
	int measured;                  /* both readings answered */
	int cpus;
	double others_pct;             /* % of the machine's CPU time other processes took while timing */
	double steal_pct;              /* % the hypervisor took */
	double reference_cv;           /* the eager reference's coefficient of variation over the rounds */
	int noisy;
	char why[200];                 /* what made it noisy; "" when not */
};

/* Reads /proc/stat and the CPU time of the given processes (their threads included). */
void noise_read(struct noise_probe *p, const pid_t *pids, int npids);
/* Judges the window between two readings, with the reference's cv. The thresholds, in noise.c, are
 * documented in docs/evaluation.md. */
void noise_judge(const struct noise_probe *a, const struct noise_probe *b, int cpus, double reference_cv,
		 struct machine_noise *out);

/* timing.c - paired, interleaved timing (DESIGN §5.5): the reference and the candidate workers
 * stay alive together and the parent alternates short blocks of timed calls between them. */

/* The verdict's structs that timing fills (verdict.h, which includes this header for the
 * statistics it holds). */
struct repeat_calls;
struct timing_result;

/* Input slots the timed calls rotate through, on each side. */
#define TIMING_SETS 3
#define TIMING_BIG_SET_BYTES (2LL << 30) /* beyond it, one set (eval_timing_sets) */
/* Timed calls per side per round at most: each call's outputs come back as a descriptor (proc/proc.h). */
#define TIMING_MAX_BLOCK 32
/* Within a round, the paired median may be at most this times the ratio of the sums (timing.c, block_cap). */
#define BLOCK_CAP 1.25

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
	int block_cap;           /* checks.runtime: the paired speedup held to BLOCK_CAP x the rounds' sums */
	int per_call;            /* checks.runtime: each timed call a request of its own, with its own inputs
				  * (timing.c); else one request per block */
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
