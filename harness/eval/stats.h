/* stats.h - the statistics of timing samples (DESIGN §5.5-6) and the seeds of correctness trials.
 * Everything here is deterministic from its inputs and seed, so a verdict can be recomputed exactly. */
#ifndef SB_STATS_H
#define SB_STATS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
