/* regress.h - `stitchbench compare`: two runs candidate by candidate, keyed (agent, problem, sample) with
 * each sample's best attempt, flagging clean-pass flips and speedup changes beyond the timing noise both
 * verdicts recorded and the spread between evaluations of one candidate (the rule: docs/report.md). A pass
 * with a hack finding is no clean pass: never an improvement, and losing a clean pass to it is a regression. */
#ifndef SB_REGRESS_H
#define SB_REGRESS_H

#include <jansson.h>
#include <stddef.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "metrics.h"

#define REGRESS_DEFAULT_FLOOR 0.05 /* a speedup change below 5% is never called a change */

/* One run's candidates: rows plus, per row, what compare reads from its verdict JSON. */
struct regress_run {
	const char *name;             /* as the user gave it */
	struct metric_input mi;
	struct regress_noise {
		const char *status;
		double noise;             /* half-width of the speedup's 95% interval in ln units; NAN: unknown */
		const char *from;         /* "ci95", "iqr" or NULL: where noise came from */
		const char *sha256;       /* the candidate's sha256; NULL when the verdict has none */
	} *noise;                     /* one per mi.rows */
	size_t nnoise;
	struct strvec strings;
};
/* Reads a store's verdicts (the caller opened it) into r. */
struct store;
int regress_run_load(struct regress_run *r, const char *name, struct store *s, struct sb_error *err);
void regress_run_release(struct regress_run *r);

/* The timing noise of a verdict's speedup vs eager, as the half-width of its 95% interval in ln units:
 * from speedup.vs_eager_ci95 when present; else estimated from timing.ratio_eager's p25, p75 and n (the
 * standard error of a median, 1.2533 sigma / sqrt(n), with sigma = IQR / 1.349 of the ln ratios); NAN when
 * the verdict has neither. *from says which ("ci95", "iqr") or NULL. */
double regress_noise_of(json_t *verdict, const char **from);
/* The change a speedup ratio must exceed, as a fraction (0.05 = 5%): the largest of floor, the two sides'
 * combined noise exp(sqrt(nb^2 + nn^2)) - 1 (an unknown side counts as 0), and the spread between
 * evaluations exp(spread) - 1 (NAN: unknown, counts as 0). */
double regress_threshold(double floor, double noise_base, double noise_new, double spread);

/* The spread between evaluations of one candidate, from every correct timed verdict of the runs whose
 * candidate (problem, sha256) was evaluated more than once, in either run or across them: the pooled
 * standard deviation s of ln speedup vs eager within those groups, as the 95% half-width of the ratio of
 * two evaluations, 1.96 x sqrt(2) x s. NAN when no candidate was evaluated twice; *groups and *evals say
 * how many candidates and verdicts it came from. */
double regress_spread(const struct regress_run *const *runs, size_t n, size_t *groups, size_t *evals);

/* "Clean" is metrics_clean(): a pass with no hack finding. */
enum regress_outcome {
	RG_LOST,          /* a clean pass in BASE, not in NEW (not correct, or a flagged pass): a regression */
	RG_SLOWER,        /* clean in both, NEW slower beyond the threshold: a regression */
	RG_FIXED,         /* no clean pass in BASE, a clean pass in NEW */
	RG_FASTER,        /* faster beyond the threshold */
	RG_FLAGGED,       /* no clean pass in BASE, a flagged pass in NEW: neither compared for speed nor better */
	RG_REMEASURED,    /* the same candidate (sha256) on both sides: a re-measurement, never a change */
	RG_NOISE,         /* clean and timed in both, the change within the threshold */
	RG_NOT_TIMED,     /* clean in both, one side without a speedup: not compared for speed */
	RG_BOTH_FAIL,     /* no pass on either side (BASE may have a flagged one) */
	RG_ONLY_BASE,
	RG_ONLY_NEW,
	RG_OUTCOMES
};

struct regress_item {
	const char *agent, *problem;
	int sample;
	const struct metric_row *base, *new;        /* the sample's best attempt; NULL on the side without it */
	const struct regress_noise *base_n, *new_n;
	double ratio;                               /* NEW / BASE speedup vs eager; NAN unless both timed */
	double threshold;                           /* fraction; NAN unless both timed */
	enum regress_outcome outcome;
};

struct regress {
	struct regress_item *items;  /* in agent, level, problem, sample order */
	size_t n;
	size_t count[RG_OUTCOMES];
	double floor;
	double spread;               /* regress_spread of the two runs; NAN when unknown */
	size_t spread_groups, spread_evals;
	double geomean_ratio;        /* over RG_SLOWER, RG_FASTER and RG_NOISE items; NAN when none */
	size_t geomean_n;
	double remeasured_ratio;     /* geometric mean of NEW / BASE over re-measured items with both timed */
	size_t remeasured_n;
};

int regress_compute(const struct regress_run *base, const struct regress_run *new, double floor, struct regress *out);
void regress_release(struct regress *r);
static inline size_t regress_regressions(const struct regress *r)
{
	return r->count[RG_LOST] + r->count[RG_SLOWER];
}
/* The Markdown a CI job posts: verdict line, counts, the rule, regressions, improvements, every compared
 * key, keys only in one run, and settings_diff (lines) when the runs' settings differ. */
void regress_markdown(const struct regress *r, const struct regress_run *base, const struct regress_run *new,
		      const char *settings_diff, struct strbuf *out);

#endif
