/* verdict.h - the result of evaluating one candidate: status, per-trial errors, paired timings,
 * speedups, findings and the environment (DESIGN §5.7). One struct, serialised by verdict.c. */
#ifndef SB_VERDICT_H
#define SB_VERDICT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../checks/finding.h"
#include "../core/strbuf.h"
#include "check/check.h"
#include "proc/proc.h"
#include "timing/timing.h"

#define VERDICT_SCHEMA 1

enum verdict_status {
	V_PASS, V_INCORRECT, V_COMPILE_ERROR, V_RUNTIME_ERROR, V_TIMEOUT, V_REJECTED, V_FORMAT_ERROR,
	V_CANNOT_JUDGE,  /* this machine cannot run the candidate (CUDA code, no GPU here): nothing was judged,
			  * nothing counts for or against it; another machine judges it */
	V_HARNESS_ERROR, /* the trusted side failed (the reference, the cache, the exchange): no verdict on the
			  * candidate; written by eval --samples so the file is accounted for, never stored */
};
#define V_NSTATUS (V_HARNESS_ERROR + 1)

struct output_check {
	char name[16];
	int ndim;                    /* of the candidate's tensor, for worst_coord */
	struct compare_result cmp;
};

struct trial_result {
	uint32_t seed;
	int pass;
	int inputs_mutated;          /* the candidate changed its inputs (H10 evidence) */
	double run_s;
	struct output_check *outputs;
	size_t noutputs;
};

/* The robust trials (docs/verdict.md, "Robust correctness"): the candidate on signed, scaled inputs once
 * every correctness trial passed. A failure is the finding H17, never the status. */
struct robust_result {
	int trials;                  /* robust trials run */
	int passed;                  /* 1, 0, or -1: not run or not applicable (note says why) */
	char note[512];              /* why not run or not applicable, or the failure; "" when they passed */
	double max_abs_err;          /* the largest absolute error of any output compared; NAN: none compared */
};

struct timing_side {
	int available;
	struct sample_stats us;      /* per-call microseconds */
	struct sample_stats host_us; /* the host's microseconds per call: Python and launches */
	int lead_us_max;             /* the longest device-side lead before a start event (0: none) */
	int exposed;                 /* calls whose start event fired before the host had launched them */
};

/* The GPU's SM clock while the candidate and the reference were timed (NVML, sampled after every
 * block): times taken at a throttled or still-idle clock are not the GPU's best and say so. */
struct gpu_clock {
	int available;               /* NVML answered */
	char note[160];              /* why not, when not */
	size_t samples;
	unsigned mhz_min, mhz_median, mhz_max, mhz_limit; /* limit: the highest SM clock the GPU allows */
	unsigned long long reasons;  /* every sample's clock-event reasons OR'ed (NVML bits; idle left out) */
};

/* eval.process_factor: the reference timed in the candidate's worker, before the candidate's code loaded,
 * in interleaved pairs with the reference worker (procfactor.c). A launch-heavy model's GPU time is
 * partly the process's (BENCHMARKS.md, "The process factor"); dividing the speedup vs eager
 * by this ratio compares both sides as if both had run in the candidate's process. */
struct process_factor {
	int measured;
	int launch_heavy;            /* the reference's host time per call >= 2x its GPU time (procfactor.c), as
				      * the factor's pairs timed it or the problem's last timing recorded it */
	int applied;                 /* divided into the speedup: launch-heavy, or eval.process_factor = on */
	int widened;                 /* not applied, but the speedup's interval spans it (procfactor.c) */
	double value, lo, hi;        /* median of the pair ratios reference worker / candidate's process; 95% CI */
	size_t pairs;
	double ref_us, cand_us;      /* the reference's median in its worker and in the candidate's process */
	double seconds;              /* what measuring it took: the load, the timing and the unload */
	char note[200];              /* why it was not measured ("" when it was, or was not asked for) */
};

/* The parent's own monotonic clock around every block of timed calls (timing.c). The candidate's process
 * reports its calls' times; this bounds them with a clock nothing in that process can touch. A side's
 * overhead is its block's wall time less the times it reported: the reference's (trusted) is what the
 * harness's own work inside a block costs; the candidate's is that plus anything it did outside its
 * timed calls or left out of the times it reported. */
struct trusted_clock {
	int measured;                /* rounds were timed on both sides */
	int judged;                  /* tight enough to judge by: no device-side lead in the blocks */
	char note[160];              /* why not judged */
	size_t rounds;               /* rounds the bound rests on (the first is left out) */
	double ref_overhead_us, cand_overhead_us;  /* per call, mean over the rounds */
	double excess_us, excess_lo_us, excess_hi_us; /* per call: the candidate's overhead minus the reference's in
						       * the same round, the median over rounds (bootstrap 95%
						       * interval) */
	double excess_noise_us;      /* the standard error of that median, from the rounds' spread around it (MAD):
				      * how far two honest processes' overheads wander apart on this machine */
	double ref_least_us;         /* the reference's least overhead per call: the scale of the harness's own work */
	double speedup, lo, hi;      /* the reference's time per call over the candidate's by this clock (what it
				      * reported plus the excess), with the interval the excess's gives: the
				      * clock's own noise, measured */
	double reported;             /* the reported speedup vs eager (paired median) it is held against */
	double block_speedup;        /* per round the reference's reported block sum over the candidate's, the
				      * median over rounds: what moving work between calls cannot change */
	int block_calls;             /* calls per block (the smallest kept) */
	double block_gap;            /* per kept round, the median of its pair ratios over the ratio of its sums;
				      * the median over rounds (0: not measured) */
	int block_capped;            /* block_gap was over BLOCK_CAP: the speedup is scaled down by BLOCK_CAP /
				      * block_gap (timing.c); `reported` stays the paired median as measured */
	int fired;                   /* H08 by this clock or by the blocks' sums (checks/runtime.h:
				      * rt_rule_trusted_clock, rt_rule_block_sums) */
	char *first_finding;         /* not NULL: a first evaluation was rejected by those rules alone, with this H08,
				      * and this verdict is a second one's, in fresh worker processes (entry.c) */
	double first_excess_us, first_noise_us; /* the first evaluation's excess per call and its standard error */
	double *round_us;            /* per round (the first too): reference wall, reference reported, candidate
				      * wall, candidate reported, calls; 5 values each, `nround` rounds */
	size_t nround;
};

/* Timed calls that repeated an earlier call's inputs (timing.c): against the rest, by their paired ratios. */
struct repeat_calls {
	size_t n;                    /* kept calls that were repeats */
	double ratio_repeat, ratio_fresh; /* median reference/candidate of those, and of the others */
	double within;               /* median over the repeats of their ratio over the median of the fresh
				      * calls of the same round: what the rule judges (a round the machine slowed
				      * moves both, and cancels) */
};

/* The GPU-only diagnostic (timing.c): calls timed behind a device-side lead after the timing proper, so
 * that their time is the GPU's alone, without the host's launch. The speedup is never taken from it; it
 * says how much of a call's time is launch, and tells a launch-heavy reference. */
struct gpu_only_time {
	int measured;
	int lead_us;                 /* the longest lead the calls had */
	struct sample_stats eager, candidate;            /* per-call microseconds, GPU only */
	struct sample_stats eager_host, candidate_host;  /* the host's microseconds for the same calls */
	double speedup;              /* median eager over median candidate, for the diagnostic only */
};

struct timing_result {
	int ran;
	char clock[16];              /* "cuda_event" | "host" */
	/* "paired_median": the median of the per-pair ratios (stitchbench's); "unpaired_mean": the reference's
	 * mean over the candidate's mean, KernelBench's (eval.preset kernelbench and stitchcuda) */
	char method[16];
	size_t pairs;                /* rounds kept (the first is discarded) */
	char stop_reason[32];        /* "rse_target" | "max_pairs" | "time_cap" */
	struct timing_side eager, candidate, compiled;
	struct sample_stats ratio_eager, ratio_compiled;    /* per-round reference/candidate */
	double speedup_eager, speedup_eager_lo, speedup_eager_hi;
	double speedup_compiled, speedup_compiled_lo, speedup_compiled_hi;
	double speedup_eager_mean_method; /* KernelBench's: mean(reference) / mean(candidate), unpaired */
	/* the paired speedup vs eager before the process factor divided it (equal to it without one) */
	double speedup_eager_raw, speedup_eager_raw_lo, speedup_eager_raw_hi;
	struct process_factor factor;
	double process_spread_pct;   /* the between-process spread folded into the intervals (procfactor.c); 0: none */
	struct gpu_only_time gpu_only;
	/* Median ratio of rounds where eager went first over that of rounds where it went second: 1.0
	 * when the order of calls does not matter. Far from 1, the pairs are biased (a context-switch cost
	 * that lands on the second call, say) and the speedup's spread is not just noise. */
	double order_bias;
	int revalidated;             /* every timed call's outputs checked against the reference's */
	size_t checked_calls;        /* how many: both sides, the same fresh inputs per call */
	struct trusted_clock trusted;
	struct repeat_calls repeats;
	int cpu;                     /* eval.timing_cpu; -1: not pinned */
	int pinned;                  /* every block of both sides ran with its threads on exactly that CPU */
	struct gpu_clock gpu_clock;
	struct machine_noise noise;  /* how busy the machine was while timing */
	double *eager_us, *candidate_us, *compiled_us; /* raw per-round samples */
};

struct prof_report; /* harness/profile/report.h */
struct rt_report;   /* harness/eval/rtchecks.h */

/* What a verdict does with its profile, given by the profiler that made it (harness/profile/): the verdict
 * frees, writes and tells a profile it has no code for. */
struct verdict_profile_ops {
	void (*release)(struct prof_report *r);
	json_t *(*json)(const struct prof_report *r, size_t max_rows);
	void (*summary)(const struct prof_report *r, struct strbuf *out);
};

struct verdict_env {
	char device[24], gpu[128], sm[8], torch[32], torch_cuda[16], python[16];
};

struct verdict {
	enum verdict_status status;
	char *message;               /* one line a person reads first */
	char *detail;                /* trimmed compiler errors, traceback, or the failing comparison */
	char problem[16], problem_sha256[65], candidate_sha256[65];
	char seeds_secret[33];       /* the evaluation's seed secret (seeds.h): eval --seeds replays it */
	int seeds_replayed;          /* it was given (a replay), not drawn */
	char *candidate_path;
	struct trial_result *trials;
	size_t ntrials;
	struct robust_result robust;
	struct timing_result timing;
	struct findings findings;    /* every rule's, static, runtime, profile; severities applied */
	struct verdict_env env;
	struct sandbox_report sandbox;
	struct {
		int trials, robust_trials, perf_trials, seed, timing_lead_us, timing_gc, hash_seed;
		char preset[16];         /* eval.preset: whose protocol (stitchbench | kernelbench | stitchcuda) */
		char tolerance[16];
		char exchange[8];        /* "files" | "shared": how outputs reached the comparison (check/check.h) */
		json_t *identity;        /* config_identity(): what makes verdicts comparable, as configured */
	} settings;
	/* wall seconds by stage (docs/verdict.md): total, and the stages that add up to nearly all of it */
	struct {
		double total, static_checks, reference, build, correctness, robust, reference_worker, timing, checks,
			profile, finish;
		double first_evaluation; /* a first evaluation judged again (trusted_clock.first_finding); in total */
	} seconds;
	int reference_cached;
	int reference_worker_reused; /* timed against the reference worker of an earlier evaluation (ref/ref.h) */
	int candidate_worker_prestarted; /* its worker was started during the previous evaluation (evalctx.c) */
	int reference_worker_prestarted; /* the reference's too, for this problem, with nothing loaded */
	int candidate_worker_forked; /* its worker was forked from the fork server (eval.fork_server), not exec'd */
	char *log_tail;              /* the candidate worker's stdout/stderr tail */
	struct prof_report *profile; /* CUPTI profile of extra timed calls (docs/profile.md); NULL: not profiled */
	const struct verdict_profile_ops *profile_ops; /* set with profile */
	struct rt_report *runtime;   /* the runtime checks (docs/checks.md); NULL: off or nothing ran */
	json_t *audit;               /* the problem's audit ({findings, device, torch}); NULL: never audited */
	json_t *rubric;              /* the rubric judge's scores (docs/checks.md); NULL: the judge is off */
	double reward;               /* StitchCUDA's reward from the rubric (rubric_reward); NAN: none */
	json_t *builds;              /* the candidate's load_inline builds as its worker reported them; NULL: none */
};

/* Each side's GPU-only time per call and the host's time for the same calls: the timed calls' own when
 * they ran behind a lead, else the GPU-only diagnostic's (timing.gpu_only). 0 when neither exists (the
 * CPU, or calls timed end to end without the diagnostic). */
int timing_gpu_view(const struct timing_result *t, const struct sample_stats **ref_gpu, const struct sample_stats **ref_host,
		    const struct sample_stats **cand_gpu, const struct sample_stats **cand_host);

const char *verdict_status_name(enum verdict_status s);
void verdict_init(struct verdict *v);
void verdict_release(struct verdict *v);
__attribute__((format(printf, 3, 4)))
void verdict_fail(struct verdict *v, enum verdict_status s, const char *fmt, ...);
/* Adds one finding to v with its severity under `policy` (checks.policy) and returns it: the caller
 * decides what its severity does to the status. */
__attribute__((format(printf, 4, 5)))
struct finding *verdict_add_finding(struct verdict *v, const enum policy_action policy[SB_HACK_IDS], const char *id,
				    const char *fmt, ...);
/* Adds copies of the n findings to v, each with its severity under `policy` (checks.policy); the first
 * reject while v still passes rejects it. Returns 1 when one of them is a reject and v is rejected. */
int verdict_add_findings(struct verdict *v, const enum policy_action policy[SB_HACK_IDS], const struct finding *f,
			 size_t n);

json_t *verdict_to_json(const struct verdict *v);
void verdict_print(const struct verdict *v, struct strbuf *out);

#endif
