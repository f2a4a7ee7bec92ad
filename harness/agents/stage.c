/* stage.c - the stage machine: stop rules, replan triggers and the next stage, computed from the
 * attempt history alone, so a resumed sample takes exactly the path the interrupted one took. */
#include "stage.h"

#include <math.h>
#include <string.h>

static const char *const stage_names[STAGE_COUNT] = {
	[STAGE_DRAFT] = "draft",
	[STAGE_REPAIR_COMPILE] = "repair_compile",
	[STAGE_REPAIR_CORRECTNESS] = "repair_correctness",
	[STAGE_OPTIMIZE_PERFORMANCE] = "optimize_performance",
	[STAGE_OPTIMIZE] = "optimize",
	[STAGE_PLAN] = "plan",
	[STAGE_ONESHOT] = "oneshot",
	[STAGE_REFINE] = "refine",
	[STAGE_REFERENCE] = "reference",
	[STAGE_SAMPLE] = "sample",
};

const char *stage_name(enum agent_stage s)
{
	return (unsigned)s < STAGE_COUNT ? stage_names[s] : "unknown";
}

int stage_parse(const char *name)
{
	for (int i = 0; name && i < STAGE_COUNT; i++)
		if (!strcmp(name, stage_names[i]))
			return i;
	return -1;
}

enum attempt_class attempt_class_of(const char *status)
{
	if (status && !strcmp(status, "pass"))
		return CLASS_CORRECT;
	if (status && (!strcmp(status, "compile_error") || !strcmp(status, "format_error")))
		return CLASS_COMPILE;
	return CLASS_WRONG;
}

const char *stop_reason_name(enum stop_reason r)
{
	static const char *const names[] = { "none", "target", "attempts", "tokens", "wall_time" };
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

const char *replan_reason_name(enum replan_reason r)
{
	static const char *const names[] = { "none", "compile_failures", "wrong_results", "stagnation" };
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

double stage_best(const struct attempt_summary *hist, size_t n, int *idx)
{
	double best = NAN;
	int at = -1;
	for (size_t i = 0; i < n; i++) {
		if (hist[i].cls != CLASS_CORRECT)
			continue;
		if (at < 0)
			at = (int)i; /* a correct attempt without timing still beats no correct attempt */
		if (isfinite(hist[i].speedup) && (isnan(best) || hist[i].speedup > best)) {
			best = hist[i].speedup;
			at = (int)i;
		}
	}
	if (idx)
		*idx = at;
	return best;
}

/* A timed attempt at the target: its whole interval at or above it, not just its point, so that the noise
 * of one evaluation cannot end a sample (an identical file scored 0.65x-1.48x on a busy machine). A
 * verdict without an interval is judged by its point. */
static int at_target(const struct stage_policy *p, const struct attempt_summary *a)
{
	double s = isfinite(a->speedup_lo) ? a->speedup_lo : a->speedup;
	return p->target_speedup > 0 && a->cls == CLASS_CORRECT && isfinite(s) && s >= p->target_speedup;
}

static int target_reached(const struct stage_policy *p, const struct attempt_summary *hist, size_t n)
{
	int idx;
	stage_best(hist, n, &idx);
	if (idx < 0)
		return 0;
	if (p->target_speedup <= 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (at_target(p, &hist[i]))
			return 1;
	return 0;
}

enum stop_reason stage_should_stop(const struct stage_policy *p, const struct stage_input *in)
{
	if (target_reached(p, in->hist, in->n))
		return STOP_TARGET;
	if ((int)in->n >= p->max_attempts)
		return STOP_ATTEMPTS;
	if (p->max_tokens > 0 && in->tokens >= p->max_tokens)
		return STOP_TOKENS;
	if (p->max_wall_s > 0 && in->seconds >= p->max_wall_s)
		return STOP_WALL;
	return STOP_NONE;
}

/* Whether the last k attempts since the plan all have class c. */
static int last_k_are(const struct stage_input *in, int k, enum attempt_class c)
{
	if (k <= 0 || in->n - in->since < (size_t)k)
		return 0;
	for (size_t i = in->n - (size_t)k; i < in->n; i++)
		if (in->hist[i].cls != c)
			return 0;
	return 1;
}

/* The last k attempts since the plan are correct, timed, below target and within stagnation_pct of
 * max(1, the best of them) of each other: optimising the same idea further is not paying off. */
static int stagnating(const struct stage_policy *p, const struct stage_input *in)
{
	int k = p->replan_stagnant;
	if (!last_k_are(in, k, CLASS_CORRECT))
		return 0;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = in->n - (size_t)k; i < in->n; i++) {
		double s = in->hist[i].speedup;
		if (!isfinite(s) || at_target(p, &in->hist[i]))
			return 0;
		lo = s < lo ? s : lo;
		hi = s > hi ? s : hi;
	}
	double scale = hi > 1.0 ? hi : 1.0;
	return hi - lo <= p->stagnation_pct / 100.0 * scale;
}

struct stage_decision stage_decide(const struct stage_policy *p, const struct stage_input *in)
{
	struct stage_decision d = { ACT_ATTEMPT, STAGE_DRAFT, STOP_NONE, REPLAN_NONE };
	if ((d.stop = stage_should_stop(p, in)) != STOP_NONE) {
		d.action = ACT_STOP;
		return d;
	}
	if (p->replan && in->replans < p->max_replans) {
		if (last_k_are(in, p->replan_compile_failures, CLASS_COMPILE))
			d.replan = REPLAN_COMPILE;
		else if (last_k_are(in, p->replan_wrong_results, CLASS_WRONG))
			d.replan = REPLAN_WRONG;
		else if (stagnating(p, in))
			d.replan = REPLAN_STAGNANT;
		if (d.replan != REPLAN_NONE) {
			d.action = ACT_REPLAN;
			return d;
		}
	}
	if (in->n == 0 || in->n <= in->since)
		return d; /* a fresh plan starts with a draft */
	const struct attempt_summary *last = &in->hist[in->n - 1];
	switch (last->cls) {
	case CLASS_COMPILE:
		d.stage = STAGE_REPAIR_COMPILE;
		break;
	case CLASS_WRONG:
		d.stage = STAGE_REPAIR_CORRECTNESS;
		break;
	case CLASS_CORRECT:
		d.stage = isfinite(last->speedup) && last->speedup >= 1.0 ? STAGE_OPTIMIZE : STAGE_OPTIMIZE_PERFORMANCE;
		break;
	}
	return d;
}
