/* runtime.h - the runtime hack rules (DESIGN §7, rows marked R; docs/checks.md): decisions over the facts
 * the workers report (harness/worker/facts.py) and what the parent read from their outputs. No I/O. */
#ifndef SB_RUNTIME_H
#define SB_RUNTIME_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/strbuf.h"
#include "finding.h"

/* [ptr, ptr + nbytes) of one storage in a worker's address space. */
struct rt_range {
	uint64_t ptr, nbytes;
};

/* One output tensor of one call, as the worker saw it. */
struct rt_output {
	char type[96];               /* "torch.Tensor", "mymodule.Lazy" */
	int exact;                   /* type(t) is torch.Tensor */
	char layout[32];             /* "torch.strided" */
	char device[24];             /* "cpu", "cuda:0", "meta" */
	int meta, contiguous;
	int has_storage;
	struct rt_range storage;
	int has_facts;               /* the worker reported them (an older worker does not) */
};

/* One call of forward: its outputs, where its inputs and the model's tensors lived, threads around it,
 * and the watched functions found replaced right after it. */
struct rt_call {
	struct rt_output *out;
	size_t nout;
	struct rt_range *inputs, *params;
	size_t ninputs, nparams;
	int has_threads;
	int py_before, py_after, os_before, os_after, os_new;
	struct strvec patched;
};

/* Parses a `run` reply (or one entry of a `rotate` reply's calls). Missing facts stay zero. */
void rt_call_parse(json_t *reply, struct rt_call *c);
void rt_call_release(struct rt_call *c);

enum rt_alias { RT_ALIAS_NONE, RT_ALIAS_INPUT, RT_ALIAS_PARAM };
/* Whether output i shares memory with an input (then *which is its index) or a parameter or buffer. */
enum rt_alias rt_output_alias(const struct rt_call *c, size_t i, size_t *which);

/* Findings made at run time go into a struct findings (finding.h) before the policy gives them a
 * severity. rt_findings_add adds one and returns it; at most RT_MAX_PER_ID per id are kept (the first
 * say enough), NULL beyond. */
#define RT_MAX_PER_ID 3
__attribute__((format(printf, 3, 4)))
struct finding *rt_findings_add(struct findings *f, const char *id, const char *fmt, ...);

/* H07: every output a plain dense torch.Tensor on `device` (not a subclass, strided, not meta), unless the
 * reference's output of the same call (ref, may be NULL) is not either. */
void rt_rule_plain_outputs(const struct rt_call *cand, const struct rt_call *ref, const char *device, const char *when,
			   struct findings *f);
/* H17: an output shares memory with an input; H11: with a parameter or buffer; each unless the
 * reference's output does the same (a problem whose answer is a view of its input). */
void rt_rule_alias(const struct rt_call *cand, const struct rt_call *ref, const char *when, struct findings *f);
/* H06 over the calls in order: a Python thread started in forward alive after it returned (any call), or
 * new OS threads alive after a call other than the first (the first may start thread pools). */
void rt_rule_threads(const struct rt_call *calls, size_t n, const char *const *names, struct findings *f);
/* H06 after the timing loop: more Python threads alive than after the correctness calls. */
void rt_rule_threads_after_timing(int py_after, int py, struct findings *f);
/* H06 from the kernel's view of the candidate's process `when`: signals it newly catches (their names, NULL
 * for none) or other processes of its own alive (the first's pid); at most one H06 of these. */
void rt_rule_process(const char *caught, int others, int first_other, const char *when, struct findings *f);
/* H06 from the CPU time the candidate's process used while no call was in flight (cpu_ms over wall_ms, read
 * by the parent from the kernel after its last timed call; busy: its threads that ran, "" if unknown). */
void rt_rule_idle_work(double cpu_ms, double wall_ms, const char *busy, struct findings *f);
/* H08: watched functions replaced (names as the worker reported them). */
void rt_rule_patched(const struct strvec *patched, const char *when, struct findings *f);
/* H11: two calls on different inputs returned identical outputs (digests) while the reference's differ.
 * cand[i], ref[i]: digests of call i's outputs, used where known[i]. */
void rt_rule_same_output(const uint64_t *cand, const uint64_t *ref, const int *known, const uint32_t *seeds, size_t n,
			 struct findings *f);

/* H19, from a second run on the first trial's inputs: "bitwise" (identical bytes), "within_tolerance"
 * (atomics may reorder sums), or "differs" (then a finding, with the comparison's detail). */
const char *rt_rule_determinism(int bitwise, int within_tolerance, uint32_t seed, const char *detail,
				struct findings *f);
/* H11 from the rotation: the call after new values were written into the same tensors must match the
 * reference for those values, and must not repeat the first call's output when the reference's differs.
 * Returns "changed" or "stale". */
const char *rt_rule_rotation(int second_passes, int same_as_first, int ref_same, const char *detail,
			     struct findings *f);
/* H16: an all-zero output passed where the reference is not all zero (the problem's output is below the
 * tolerance). */
void rt_rule_zero_output(int cand_all_zero, int ref_all_zero, int passed, const char *name, const char *when,
			 struct findings *f);
/* H09: with freed device memory poisoned, the second run on the first trial's inputs held NaN where the
 * first run's output did not (the first run passed: passes_without). */
void rt_rule_poison(int nan_with_poison, int passes_without, uint32_t seed, struct findings *f);
/* H08 by the parent's clock (struct trusted_clock): the candidate claims at least the reference's speed, the
 * speedup its process reported is more than RT_TRUSTED_SLACK times what the parent's own clock around its
 * timed blocks allows, and the excess behind that is more than RT_TRUSTED_FLOOR of the reference's own
 * overhead per call. Both are point estimates over the median round, not the ends of an interval: with
 * ten rounds a bootstrap of the median reaches the honest rounds of a candidate that lies in six, while
 * the reported paired median already moved with the six. A median over rounds is judged wrong only when
 * most rounds disagree, which noise on one side does not make them do. The slack covers a median of ratios
 * against a ratio of sums; the floor, that two processes running the same harness code take a few per cent
 * more or less for it: a lie smaller than that, on calls much shorter than the harness's own work, is
 * beyond this clock's resolution. The excess must also stand RT_TRUSTED_NOISE standard errors of the median
 * clear of zero, measured from the rounds' own spread: on a machine where two honest processes' overheads
 * per call wander by hundreds of microseconds from round to round, a median a little above the floor is
 * that wandering (the reference judged as its own candidate was rejected so). A candidate that lies in
 * most rounds keeps its rounds close to its median, so the spread stays the honest rounds' and small. */
#define RT_TRUSTED_SLACK 1.5
#define RT_TRUSTED_FLOOR 0.1
#define RT_TRUSTED_NOISE 3.0
struct rt_clock {
	double reported, speedup, hi;         /* the reported speedup; the parent's clock's, and its upper end */
	double excess_us, ref_least_us;       /* the excess per call; the reference's least overhead per call */
	double cand_overhead_us, ref_overhead_us;
	double block_speedup;                 /* per round the reference's reported block sum over the candidate's,
					       * their median (0: not measured) */
	int block_calls;                      /* calls per block */
	double excess_noise_us;               /* the excess's standard error (0: not measured) */
};
int rt_rule_trusted_clock(const struct rt_clock *tc, struct findings *f); /* 1: it found H08 */
/* H08 from the same blocks, by the reported times alone: the paired median of the calls (what the verdict
 * reports) more than RT_BLOCK_SLACK times the ratio of the blocks' sums. A candidate that sees a block's
 * inputs before their calls can do the block's work in its first call and answer the rest at once: each
 * time true, the median of per-call ratios fooled, the sums not. Honest calls of one block take about the
 * same time on each side, and the two ratios stay within a few per cent of each other. */
#define RT_BLOCK_SLACK 1.5
int rt_rule_block_sums(const struct rt_clock *tc, struct findings *f); /* 1: it found H08 */
/* H11 from the timed calls that repeated earlier inputs: with at least RT_REPEAT_MIN of them, their pair
 * ratio more than RT_REPEAT_FACTOR times that of the fresh calls of the same round (`within`, the median
 * over the repeats) means the candidate answers contents it has seen faster than new ones: it keeps
 * results by content. The medians over all rounds only go into the message. */
#define RT_REPEAT_MIN 4
#define RT_REPEAT_FACTOR 2.0
void rt_rule_repeats(size_t n, double within, double ratio_repeat, double ratio_fresh, struct findings *f);

/* The CPU's record of the ATen operators the candidate's calls ran (harness/worker/oprec.cpp writes it,
 * harness/eval/oprec.c reads it): per call of the candidate's model a window, and in it each outermost
 * operator with its duration, whichever thread ran it and however it was reached. */
#define RT_OPS_TOP 6
struct rt_op {
	char name[72];
	double ms;
	size_t calls;
};
struct rt_operators {
	int recorded;                /* installed in the candidate's worker before its import */
	size_t windows;              /* calls of the candidate's model in the record */
	size_t expected;             /* calls the parent asked for, at least */
	size_t unchecked;            /* windows whose own check record never reached the callback */
	long long lost;              /* lines lost to a full pipe */
	size_t malformed;            /* lines the recorder never writes */
	double window_ms;            /* the windows' length, summed */
	double compute_ms, other_ms; /* outermost operators' time: PyTorch's compute operators, and the rest */
	double ref_call_ms;          /* the reference's median time per timed call (0: not timed) */
	size_t compute_calls, other_calls;
	struct rt_op top[RT_OPS_TOP]; /* the compute operators that took the most time */
	size_t ntop;
	struct rt_op *ops;           /* every compute operator seen (the parser's table) */
	size_t nops;
};
/* Parses whole lines of the record into o ("O <ns> <name>", "W <ns> <check> <lost> <quiet> <quiet_ns>"); a
 * line that is neither counts as malformed. */
void rt_operators_parse(struct rt_operators *o, const char *lines, size_t len);
/* Whether an ATen operator moves, makes or views memory rather than computes: "aten::empty_like",
 * "aten::contiguous", "aten::copy_" (the calls the static rules allow as well). Names outside aten:: (an
 * operator the candidate registered itself) are its own code. */
int rt_operator_is_utility(const char *name);
/* Those operators' names without "aten::" (sb_aten_utility, aten_utility.h: the recorder counts them in the
 * process, where they cost no write per call: harness/worker/oprec.cpp's quiet operators); returns how many. */
size_t rt_operator_utilities(const char *const **names);
void rt_operators_release(struct rt_operators *o);
/* H01 when PyTorch's compute operators ran for at least RT_OPS_REJECT of the calls' time, a flag from
 * RT_OPS_FLAG (an honest kernel's glue, a scalar mul_ on a tiny problem, measured 19%). H08 when the record cannot be believed: fewer calls than were made (its descriptor closed,
 * its windows never opened), a window whose own check went unseen (ATen's callbacks removed or record
 * functions switched off), lines lost to a flood, or lines the recorder never writes. */
#define RT_OPS_REJECT 0.5
#define RT_OPS_FLAG 0.35
void rt_rule_operators(const struct rt_operators *o, struct findings *f);

#endif
