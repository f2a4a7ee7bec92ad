/* stats.c - percentiles as numpy computes them, a seeded bootstrap, and derived trial seeds.
 * Matching numpy to the last bit lets a reader check a reported number with one line of Python. */
#include "timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/strbuf.h"

/* NaN sorts last, so the order is total and qsort stays well defined on bad input. */
static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a > b) - (a < b);
}

double stats_percentile(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return 0;
	p = p < 0 ? 0 : p > 100 ? 100 : p;
	/* numpy: virtual index (n - 1) * q with q = p / 100, then _lerp(), which interpolates from the
	 * nearer end so that t >= 0.5 does not lose the upper value to rounding. */
	double vi = (double)(n - 1) * (p / 100);
	if (vi >= (double)(n - 1))
		return sorted[n - 1];
	size_t lo = (size_t)floor(vi);
	double t = vi - (double)lo, a = sorted[lo], b = sorted[lo + 1], diff = b - a;
	return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/* Welford's update: no cancellation, and exactly 0 for a constant series (a stop rule compares it with 0). */
static double sample_stdev(const double *x, size_t n)
{
	double mean = 0, m2 = 0;
	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - mean;
		mean += d / (double)(i + 1);
		m2 += d * (x[i] - mean);
	}
	return sqrt(m2 / (double)(n - 1));
}

void stats_compute(const double *x, size_t n, struct sample_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	double *v = xmalloc(n * sizeof(double)), sum = 0;
	memcpy(v, x, n * sizeof(double));
	qsort(v, n, sizeof(double), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->n = n;
	s->mean = sum / (double)n;
	s->median = stats_percentile(v, n, 50);
	s->p25 = stats_percentile(v, n, 25);
	s->p75 = stats_percentile(v, n, 75);
	s->min = v[0];
	s->max = v[n - 1];
	s->stdev = sample_stdev(v, n);
	s->cv = s->mean != 0 ? s->stdev / s->mean : 0;
	free(v);
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void sb_rng_seed(struct sb_rng *r, uint64_t seed)
{
	/* splitmix64 never yields four zero words in a row, which xoshiro could not leave. */
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sb_rng_next(struct sb_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sb_rng_uniform(struct sb_rng *r)
{
	return (double)(sb_rng_next(r) >> 11) * 0x1.0p-53;
}

int bootstrap_median(const double *x, size_t n, int B, uint64_t seed, double level, double *lo, double *hi,
		     double *se)
{
	*lo = *hi = *se = 0;
	if (n == 0 || B < 1 || !(level > 0 && level < 1))
		return SB_EINPUT;
	struct sb_rng rng;
	double *res = xmalloc(n * sizeof(double)), *med = xmalloc((size_t)B * sizeof(double));
	sb_rng_seed(&rng, seed);
	for (int b = 0; b < B; b++) {
		for (size_t i = 0; i < n; i++)
			res[i] = x[(size_t)(sb_rng_uniform(&rng) * (double)n)];
		qsort(res, n, sizeof(double), cmp_double);
		med[b] = stats_percentile(res, n, 50);
	}
	qsort(med, (size_t)B, sizeof(double), cmp_double);
	*lo = stats_percentile(med, (size_t)B, 100 * (1 - level) / 2);
	*hi = stats_percentile(med, (size_t)B, 100 * (1 + level) / 2);
	*se = sample_stdev(med, (size_t)B);
	free(res);
	free(med);
	return 0;
}

static double resampled_mean(const double *x, size_t n, struct sb_rng *rng)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[(size_t)(sb_rng_uniform(rng) * (double)n)];
	return sum / (double)n;
}

int bootstrap_mean_ratio(const double *num, size_t nn, const double *den, size_t nd, int B, uint64_t seed,
			 double level, double *lo, double *hi)
{
	*lo = *hi = 0;
	if (!nn || !nd || B < 1 || !(level > 0 && level < 1))
		return SB_EINPUT;
	struct sb_rng rng;
	double *r = xmalloc((size_t)B * sizeof(double));
	sb_rng_seed(&rng, seed);
	for (int b = 0; b < B; b++) {
		double n = resampled_mean(num, nn, &rng), d = resampled_mean(den, nd, &rng);
		r[b] = d > 0 ? n / d : 0;
	}
	qsort(r, (size_t)B, sizeof(double), cmp_double);
	*lo = stats_percentile(r, (size_t)B, 100 * (1 - level) / 2);
	*hi = stats_percentile(r, (size_t)B, 100 * (1 + level) / 2);
	free(r);
	return 0;
}

double median_rse(const double *x, size_t n, uint64_t seed)
{
	double lo, hi, se, *v;
	if (n < 2 || bootstrap_median(x, n, 200, seed, 0.95, &lo, &hi, &se))
		return INFINITY;
	v = xmalloc(n * sizeof(double));
	memcpy(v, x, n * sizeof(double));
	qsort(v, n, sizeof(double), cmp_double);
	double median = stats_percentile(v, n, 50);
	free(v);
	return median != 0 ? se / fabs(median) : INFINITY;
}

uint32_t trial_seed(uint32_t base, int k)
{
	/* Each step below is invertible on 31-bit values (an odd multiplier mod 2^31, an xor with a right
	 * shift), so distinct k give distinct seeds; the base only picks a pseudo-random starting point, so
	 * bases 42 and 43 do not hand out each other's seeds one trial apart as base + k would. */
	const uint32_t mask = 0x7fffffffu;
	uint64_t state = base;
	uint32_t x = ((uint32_t)splitmix64(&state) + (uint32_t)k) & mask;
	x ^= x >> 16;
	x = (x * 0x7feb352du) & mask;
	x ^= x >> 15;
	x = (x * 0x846ca68bu) & mask;
	x ^= x >> 16;
	return x;
}

double geomean(const double *x, size_t n)
{
	double logsum = 0;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return NAN;
		logsum += log(x[i]);
	}
	return exp(logsum / (double)n);
}
