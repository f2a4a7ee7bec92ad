/* stage.h - the decisions of an iterating agent as a pure function of its attempt history: which
 * stage the next attempt is in, when to replan, when to stop (docs/agents.md "The stage machine"). */
#ifndef SB_STAGE_H
#define SB_STAGE_H

#include <stddef.h>

/* What an attempt was asked to do. STAGE_PLAN marks the attempt recorded when planning failed. */
enum agent_stage {
	STAGE_DRAFT,
	STAGE_REPAIR_COMPILE,
	STAGE_REPAIR_CORRECTNESS,
	STAGE_OPTIMIZE_PERFORMANCE,
	STAGE_OPTIMIZE,
	STAGE_PLAN,
	STAGE_ONESHOT,     /* baselines: a single independent draw (oneshot, best-of-n) */
	STAGE_REFINE,      /* baselines: a refine turn with feedback */
	STAGE_REFERENCE,   /* torch-eager / torch-compile: the candidate made from the reference */
	STAGE_SAMPLE,      /* samples: another system's file */
	STAGE_COUNT,
};
const char *stage_name(enum agent_stage s);
/* -1 for an unknown name */
int stage_parse(const char *name);

/* How an attempt's verdict counts for the stage machine. */
enum attempt_class {
	CLASS_COMPILE,   /* compile_error, format_error: nothing usable was built */
	CLASS_WRONG,     /* incorrect, runtime_error, timeout, rejected: built, but not an acceptable result */
	CLASS_CORRECT,   /* pass */
};
/* The class of a verdict status name (docs/verdict.md); an unknown status counts as CLASS_WRONG. */
enum attempt_class attempt_class_of(const char *status);

/* One attempt as the stage machine sees it. */
struct attempt_summary {
	enum attempt_class cls;
	double speedup;        /* vs eager; NAN when not timed */
	double speedup_lo;     /* the low end of its 95% interval; NAN: none, the point stands for it */
};

struct stage_policy {
	int max_attempts;            /* > 0 */
	double target_speedup;       /* stop once a correct attempt's interval lies at or above it (the point
	                                where it has none); <= 0: the first correct one */
	long max_tokens;             /* 0 = unlimited */
	double max_wall_s;           /* 0 = unlimited */
	int replan;                  /* 0: never replan (refine) */
	int max_replans;
	int replan_compile_failures; /* consecutive CLASS_COMPILE attempts that trigger a replan */
	int replan_wrong_results;    /* consecutive CLASS_WRONG attempts that trigger a replan */
	int replan_stagnant;         /* consecutive correct attempts ... */
	double stagnation_pct;       /* ... whose speedups lie within this percent of max(1, best) */
};

/* The history and spending of one sample so far. */
struct stage_input {
	const struct attempt_summary *hist;
	size_t n;
	size_t since;                /* attempts made before the current plan (0 before any replan) */
	int replans;                 /* replans made (failed ones included) */
	long tokens;                 /* prompt + completion tokens spent */
	double seconds;              /* LLM wall time + evaluation time spent */
};

enum stage_action { ACT_ATTEMPT, ACT_REPLAN, ACT_STOP };
enum stop_reason { STOP_NONE, STOP_TARGET, STOP_ATTEMPTS, STOP_TOKENS, STOP_WALL };
enum replan_reason { REPLAN_NONE, REPLAN_COMPILE, REPLAN_WRONG, REPLAN_STAGNANT };

struct stage_decision {
	enum stage_action action;
	enum agent_stage stage;      /* ACT_ATTEMPT: the next attempt's stage */
	enum stop_reason stop;       /* ACT_STOP: why */
	enum replan_reason replan;   /* ACT_REPLAN: why */
};

/* The next step. Order: the target reached stops; then a spent budget stops; then a replan trigger
 * (only attempts since the current plan count, and only while replans < max_replans); else the next
 * attempt, in a stage chosen by the last attempt: draft (none since the plan), repair_compile,
 * repair_correctness, optimize_performance (correct but slower than eager) or optimize (correct, at
 * least as fast as eager, below target). */
struct stage_decision stage_decide(const struct stage_policy *p, const struct stage_input *in);

/* The best speedup of a correct attempt; NAN when none was correct and timed. -1 in *idx when none. */
double stage_best(const struct attempt_summary *hist, size_t n, int *idx);
/* Only the stop rules of stage_decide (for agents without stages). STOP_NONE = go on. */
enum stop_reason stage_should_stop(const struct stage_policy *p, const struct stage_input *in);

const char *stop_reason_name(enum stop_reason r);
const char *replan_reason_name(enum replan_reason r);

#endif
