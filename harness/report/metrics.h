/* metrics.h - the numbers a results table shows, per agent x level and overall (DESIGN §9, docs/metrics.md):
 * compiled, correct and hack rates, fast_p, geometric-mean speedups, cost to the first correct candidate. */
#ifndef SB_METRICS_H
#define SB_METRICS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "table.h"

struct store;
struct store_verdict_row;

/* Which candidate stands for a problem when an agent wrote several (samples, attempts). A sample is
 * represented by its best attempt; `first` then takes the lowest-numbered sample (KernelBench's pass@1
 * with one sample), `best` the best sample (best-of-n). "Best" ranks: a clean pass (faster first) > a
 * flagged pass (faster first) > ran but wrong > hack > did not compile; ties go to the earlier sample and
 * attempt. */
enum metrics_by { METRICS_FIRST, METRICS_BEST };

/* Which problems a rate is over. `all` (KernelBench's convention, the default): every problem the agent's
 * run selected, a problem without a verdict counting as a failure; `judged`: only the problems the agent
 * has a verdict for. */
enum metrics_denominator { METRICS_ALL, METRICS_JUDGED };

/* Whose tables are shown beside stitchbench's own: none (stitchbench), or StitchCUDA's protocol's (docs/
 * metrics.md, "StitchCUDA's protocol"). auto: StitchCUDA's when a run was made with the stitchcuda preset
 * (run_inputs_protocol). */
enum metrics_protocol { METRICS_PROTOCOL_AUTO, METRICS_PROTOCOL_STITCHBENCH, METRICS_PROTOCOL_STITCHCUDA };

/* One stored verdict, as much of it as the metrics need. */
struct metric_row {
	const char *agent;
	const char *problem;          /* "L1/19" */
	int level, sample, attempt;
	int compiled;                 /* status is not compile_error or format_error */
	int correct;                  /* status pass */
	int hack;                     /* status rejected, or a finding with severity reject */
	double speedup_eager;         /* NAN when not timed */
	double speedup_compiled;      /* NAN when not timed or torch.compile was unavailable */
	int missing;                  /* no verdict: stands for a problem of the run the agent has none for */
	int flagged;                  /* a finding with a hack id (H01..H22), whatever its severity */
	const char *hack_ids;         /* those findings' ids, space-separated in the verdict's order; NULL: none */
	int rewarded;                 /* the verdict has a reward (docs/verdict.md: rubric scores, and timing for a
	                                 pass) */
	double reward;
	int robust_failed;            /* its robust trials failed (robust.passed false, docs/verdict.md) */
	int noisy;                    /* timed on a busy machine (timing.noise.noisy, docs/verdict.md) */
};

/* What is known of how much a verdict's speedup vs eager would move if it were measured again, kept beside
 * its row (metric_input.speed, metric_scope.speed: one per row, in the same order). */
struct metric_speed {
	double lo, hi;                /* the verdict's own 95% interval of speedup_eager; unknown unless
	                                 0 < lo <= speedup_eager <= hi */
	int repeats;                  /* later evaluations of the same candidate that passed with a speedup (the
	                                 store's repeats); 0: this evaluation is the only one */
	int repeats_failed;           /* later evaluations that did not pass or were not timed */
	double repeat_sd;             /* the standard deviation of ln speedup vs eager over this evaluation and its
	                                 `repeats` (n - 1 in the denominator); used only when repeats > 0 */
};


/* A pass with no hack finding: the only kind of candidate fast_p and the geometric means count. A flagged
 * pass (H17 on a flawed problem, H21 more than 10x eager, H14, ...) is correct and nothing more. */
int metrics_clean(const struct metric_row *r);
/* A pass whose robust trials did not fail (they passed, were not applicable or did not run): what
 * correct_robust and fast_p_robust count, beside correct and fast_p. */
int metrics_robust(const struct metric_row *r);

/* A sample of an agent that could not be judged because its problem's reference failed (the store's
 * reference_failures): the problem's failure or the harness's, never the agent's. */
struct metric_reffail {
	const char *agent, *problem;
	int level, sample;
	const char *message;
};

/* A problem an agent's run selected (the store's problems, for each of its agents that could run). */
struct metric_expect {
	const char *agent, *problem;
	int level;
};

/* What the rates are over (docs/metrics.md, "Which problems count"). */
struct metric_scope {
	enum metrics_denominator denominator;
	const struct metric_expect *expect; /* the problems each agent was to solve; may be empty */
	size_t nexpect;
	const struct metric_reffail *reffail; /* samples whose reference failed; may be empty */
	size_t nreffail;
	const struct metric_speed *speed; /* one per row given to metrics_compute, in its order; NULL: the rows'
	                                     points alone (every speed interval a single point) */
};

/* One LLM call (llm_calls), for tokens and cost. */
struct metric_call {
	const char *agent, *problem;
	int sample, attempt;
	long tokens;                  /* prompt + completion */
	double cost_usd;
};

#define METRICS_NP 6
extern const double metrics_p[METRICS_NP];   /* 0, 0.5, 0.8, 1, 1.5, 2 */
#define METRICS_RESAMPLES 2000
#define METRICS_SEED 20240601u
#define METRICS_LEVELS 4                      /* cells[0] is every level together, cells[L] level L */

/* A percentile bootstrap 95% interval over problems; NAN when undefined. */
struct metric_ci {
	double lo, hi;
};

/* The speed interval of one candidate (docs/metrics.md, "Repeated evaluations"):
 *
 *   A verdict's own interval (speedup.vs_eager_ci95) describes the rounds of one evaluation; a second
 *   evaluation of the same file lands elsewhere for reasons those rounds cannot see (which cores, clocks,
 *   process placement, other load). Both are kept and combined in ln units, side by side of the point:
 *
 *     own_below = ln(s / lo)      own_above = ln(hi / s)      (0 when the verdict has no interval)
 *     between   = 1.96 x sd(ln s_0, ln s_1, ..., ln s_k)     (0 when no timed repeat is stored)
 *     below     = sqrt(own_below^2 + between^2)              above = sqrt(own_above^2 + between^2)
 *
 *   s and [lo, hi] are the verdict's (the first evaluation stays the point), s_1..s_k its repeats that
 *   passed with a speedup. The two are added as independent errors rather than the larger taken: with few
 *   repeats the sample deviation is itself uncertain (with two repeats it is below half the true one about
 *   one time in five), and the own interval keeps a floor under it.
 *
 * below and above are half-widths in ln units; both are 0 for a row that is not a clean timed pass, and
 * for sp NULL. */
void metrics_speed_halfwidths(const struct metric_row *r, const struct metric_speed *sp, double *below, double *above);
/* The same as an interval of the speedup: [s exp(-below), s exp(above)]; NAN when not a clean timed pass.
 * sp NULL: nothing is known beyond the point (a width of 0). */
struct metric_ci metrics_speed_interval(const struct metric_row *r, const struct metric_speed *sp);
/* The standard deviation (n - 1) of ln x over n positive values; NAN with fewer than two. */
double metrics_log_sd(const double *x, size_t n);

/* A cell by StitchCUDA's protocol, over the same problems and representatives: every pass counts for
 * speed, a flagged one too (StitchCUDA counts partially hacked solutions and reports them apart: the
 * cell's `flagged`). Its success rate is the cell's correct %. */
struct metric_stitchcuda {
	size_t fast1;                 /* passes with a speedup vs eager > 1 */
	double fast1_pct;
	double mean_speedup;          /* mean over the problems of the representative's speedup vs eager, a
	                                 problem without a timed pass counting 0; NAN: no problems */
	double mean_speedup_passes;   /* the mean over the timed passes alone; NAN: none */
	size_t timed_passes;
	double mean_reward;           /* over the representatives whose verdict has a reward; NAN: none */
	size_t rewarded;
};

struct metric_cell {
	size_t problems;              /* problems of this level in the denominator; 0 = empty cell */
	size_t missing;               /* problems of the run without a verdict: in `problems` with --denominator
	                                 all (as failures), left out of it with judged */
	size_t unjudged;              /* problems without a verdict whose reference failed: never in `problems` */
	size_t correct;               /* representatives that pass, flagged ones too */
	size_t flagged;               /* representatives that pass with a hack finding */
	size_t timed, noisy;          /* clean passes with a speedup; of those, timed on a busy machine */
	size_t repeated;              /* of `timed`, those whose candidate has a timed repeat stored */
	size_t repeats;               /* their timed repeats, together: the evaluations the speed intervals add */
	size_t repeats_failed;        /* repeats of `timed` candidates that did not pass or were not timed */
	double compiled_pct, correct_pct, hack_pct, flagged_pct; /* correct counts flagged passes too */
	double fast_pct[METRICS_NP];  /* % of problems with a clean pass and speedup vs eager > p (fast_0 = clean
	                                 passes) */
	double correct_robust_pct;    /* correct_pct less the passes whose robust trials failed */
	double fast_robust_pct[METRICS_NP]; /* fast_pct less the same */
	double geomean_eager;         /* over clean passes with a speedup; NAN = n/a */
	size_t geomean_eager_n;
	double geomean_compiled;
	size_t geomean_compiled_n;
	double attempts_to_correct;   /* mean over problems solved; NAN = n/a */
	double tokens_to_correct;     /* mean over problems solved; NAN = n/a (no LLM calls stored) */
	double cost_usd;              /* every LLM call of the agent on these problems; NAN = no calls stored */
	/* fast_1 and the geometric mean's intervals also cover each problem's speed interval (the bootstrap
	 * draws each drawn problem's speedup from it: metrics_speed_halfwidths) */
	struct metric_ci correct_ci, fast1_ci, geomean_eager_ci;
	struct metric_stitchcuda stitchcuda;
};

/* One problem of one agent, reduced to the candidate that represents it (kept for reports). */
struct metric_problem {
	const struct metric_row *rep; /* points into the rows given to metrics_compute() */
	int attempts_to_correct;      /* 0: no correct candidate among those counted */
	double tokens_to_correct;     /* NAN: unknown */
	double cost_usd;              /* NAN: the agent has no LLM calls */
};

struct metric_agent {
	char *name;
	struct metric_cell cells[METRICS_LEVELS + 1];
	struct metric_problem *problems; /* in level and problem order */
	size_t nproblems;
};

/* Two agents compared over the problems both have a representative for (docs/metrics.md, "Agents compared in
 * pairs"), each difference a's number less b's (the speed a ratio, a's over b's). */
#define METRICS_PAIR_MIN 2            /* problems an interval needs; with fewer there is too little data */
struct metric_pair {
	size_t a, b;                  /* indices into metrics.agents, a < b */
	size_t problems;              /* problems both have a representative for */
	size_t timed;                 /* of those, the ones both pass cleanly with a speedup vs eager */
	double speed_ratio;           /* geometric mean over `timed` of a's speedup / b's; NAN: none */
	double correct_diff;          /* a's correct % less b's over `problems`, in points; NAN: none */
	double fast1_diff;            /* the same for fast_1 % */
	size_t repeats;               /* timed repeats of both agents' candidates over `timed` */
	struct metric_ci speed_ci, correct_ci, fast1_ci; /* NAN: fewer than METRICS_PAIR_MIN problems */
};

/* What an interval of a difference shows: no interval (too little data), nothing (it holds the value of no
 * difference), or the first agent's number above or below the second's. */
enum metrics_outcome { METRICS_TOO_LITTLE, METRICS_NO_DIFFERENCE, METRICS_HIGHER, METRICS_LOWER };
/* The outcome of an interval against `none`, the value of no difference (1 for a ratio, 0 for points). */
enum metrics_outcome metrics_decide(const struct metric_ci *ci, double none);

/* An agent its run could not run at all (store_put_unavailable): it has no numbers, which is not 0%. */
struct metric_unavailable {
	const char *agent, *reason;
};

struct metrics {
	enum metrics_by by;
	enum metrics_denominator denominator;
	enum metrics_protocol protocol; /* set by the caller; StitchCUDA's adds its table to the output */
	struct metric_agent *agents;  /* sorted by name */
	size_t nagents;
	struct metric_unavailable *unavailable; /* agents without verdicts that their run marked unavailable */
	size_t nunavailable;
	struct metric_row *missing;   /* one row per expected (agent, problem) without a verdict, owned */
	size_t nmissing;
	/* one per (agent, problem) without a verdict whose reference failed (its first such sample), in key
	 * order, owned (the strings are the scope's): left out of every denominator */
	struct metric_reffail *unjudged;
	size_t nunjudged;
	struct metric_pair *pairs;    /* every two agents, (0, 1), (0, 2), ..., (1, 2), ...; owned */
	size_t npairs;
	const struct metric_row *rows; /* the rows given to metrics_compute, and the scope's speeds of them */
	size_t nrows;
	const struct metric_speed *speed;
};

/* What is known of the speed of row r (one of m->rows): its metric_speed, or NULL (a row the metrics made
 * for a problem without a verdict, or no speeds were given). */
const struct metric_speed *metrics_row_speed(const struct metrics *m, const struct metric_row *r);

/* Computes every agent's cells from verdict rows and LLM calls (either may come from fixtures). The rows
 * and the scope's strings must outlive *out (its problems point at them). scope NULL: the rows alone
 * (nothing is expected, so nothing is missing). With METRICS_ALL an expected problem without a verdict is
 * represented by a `missing` row (a failure); an agent with no verdict at all is then listed with 0%. A
 * problem the agent has no verdict for and whose reference failed for one of its samples is neither: it is
 * `unjudged`, out of the denominator with either choice. */
int metrics_compute(const struct metric_row *rows, size_t nrows, const struct metric_call *calls, size_t ncalls,
		    enum metrics_by by, const struct metric_scope *scope, struct metrics *out, struct sb_error *err);
void metrics_release(struct metrics *m);
/* Adds the agents that are unavailable and have no verdicts (an agent with verdicts ran somewhere: its
 * numbers stand). The strings must outlive *m. */
void metrics_add_unavailable(struct metrics *m, const struct metric_unavailable *v, size_t n);

/* Rows and calls read from stores, with owned strings. */
struct metric_input {
	struct metric_row *rows;
	size_t nrows;
	struct metric_call *calls;
	size_t ncalls;
	struct metric_unavailable *unavailable; /* the stores' unavailable agents (suffixed like rows) */
	size_t nunavailable;
	struct metric_expect *expect; /* the problems each agent's run selected (run_inputs_load fills them) */
	size_t nexpect;
	struct metric_reffail *reffail; /* the stores' samples whose reference failed (suffixed like rows) */
	size_t nreffail;
	struct metric_speed *speed;   /* one per row: its own interval and repeats (metric_scope.speed) */
	struct strvec strings;        /* owns the strings the rows point at */
	/* Optional: called for each verdict as its row is appended (rows[index]), for readers that need more
	 * of the verdict than the metrics do (stage, status, JSON); a non-zero return stops the load. */
	int (*on_row)(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err);
	void *on_row_arg;
};
/* Appends the store's verdicts, calls, unavailable agents and reference failures; agent names get `suffix`
 * appended when it is not NULL (two runs with an agent of the same name). */
int metrics_load(struct store *s, const char *suffix, struct metric_input *in, struct sb_error *err);
/* Adds that the agent (suffix appended when not NULL) was to solve problem (a ref such as "L1/19"). */
void metric_input_expect(struct metric_input *in, const char *agent, const char *suffix, const char *problem);
void metric_input_release(struct metric_input *in);
/* The scope that counts in's expected problems and reference failures with denominator d. */
struct metric_scope metric_input_scope(const struct metric_input *in, enum metrics_denominator d);

/* 1 when candidate a ranks strictly above b (a clean pass, faster first > a flagged pass, faster first >
 * ran but wrong > hack > did not compile), the ranking that picks representatives; ties are 0, so the
 * earlier candidate stays. */
int metrics_better(const struct metric_row *a, const struct metric_row *b);
/* qsort comparator of const struct metric_row * by agent, level, problem number, sample, attempt. */
int metrics_row_cmp(const void *a, const void *b);

/* The table as Markdown: agents as rows, levels as columns (correct % / fast_1 % / geomean, the best agent
 * marked), the agents compared in pairs when there are two or more, StitchCUDA's table when m->protocol asks
 * for it, then the details of each agent with intervals. */
void metrics_table(const struct metrics *m, struct strbuf *out);
/* The same tables as models, for other renderers (report HTML): the summary, and agent a's details. */
void metrics_summary_table(const struct metrics *m, struct table *t);
void metrics_detail_table(const struct metrics *m, size_t a, struct table *t);
/* The agent the headline table marks best: the highest overall geometric mean, and faster than every other
 * agent by its pair's interval; -1 when no agent is (fewer than two agents, a tie, an interval holding 1). */
int metrics_best_agent(const struct metrics *m);
/* Pair i as one plain sentence: the speed ratio, then the correct % and fast_1 % differences, each with its
 * interval and what the interval shows. name writes an agent's name (NULL: as it is). */
void metrics_pair_sentence(const struct metrics *m, size_t i, struct strbuf *out,
			   void (*name)(struct strbuf *out, const char *s));
/* The paragraph before the pairs: which problems count, what the numbers are, and the rule of "(best)". */
void metrics_pairs_note(struct strbuf *out);
/* The sentence that stands for unavailable agent u's numbers. */
void metrics_unavailable_note(const struct metrics *m, size_t u, struct strbuf *out);
/* The line under the tables saying how intervals were made. */
void metrics_intervals_note(struct strbuf *out);
/* StitchCUDA's protocol's table (agent x level rows: success, average speedups, Fast1, partial hacks, and
 * the mean reward when a verdict has one), and the sentence that defines its numbers. */
void metrics_stitchcuda_table(const struct metrics *m, struct table *t);
void metrics_stitchcuda_note(const struct metrics *m, struct strbuf *out);
json_t *metrics_json(const struct metrics *m);
const char *metrics_by_name(enum metrics_by by);
const char *metrics_denominator_name(enum metrics_denominator d);
/* "all" or "judged" into *out; -1 for anything else. */
int metrics_denominator_parse(const char *name, enum metrics_denominator *out);
const char *metrics_protocol_name(enum metrics_protocol p);
/* "stitchbench" or "stitchcuda" into *out; -1 for anything else. */
int metrics_protocol_parse(const char *name, enum metrics_protocol *out);
/* The sentence that says what the rates are over and which candidate represents a problem. */
void metrics_scope_note(const struct metrics *m, struct strbuf *out);
/* The sentence that says what the speed intervals cover: each verdict's own interval, and per agent how many
 * repeated evaluations widen them (or that none is stored: one evaluation only). metrics_scope_note ends
 * with it. */
void metrics_repeats_note(const struct metrics *m, struct strbuf *out);
/* The line that says which problems could not be judged because their reference failed, and for which
 * agents; nothing when there are none. */
void metrics_unjudged_note(const struct metrics *m, struct strbuf *out);
/* One warning per agent some of whose timed representatives were timed on a busy machine; "" for none. */
void metrics_noise_note(const struct metrics *m, struct strbuf *out);

#endif
