/* reward.h - the number `serve` hands a trainer for a verdict: StitchCUDA's reward, the plain speedup or
 * pass/fail, computed from the verdict JSON as stored, so a restarted server answers the same number. */
#ifndef SB_SERVE_REWARD_H
#define SB_SERVE_REWARD_H

#include <jansson.h>

enum reward_kind {
	REWARD_STITCHCUDA, /* (min(s, 5) + 0.3) x (1 + lambda x (r - 0.5)) */
	REWARD_SPEEDUP,    /* s */
	REWARD_PASS,       /* 1 or 0 */
};

/* "stitchcuda", "speedup", "pass"; parse returns 0, or -1 for another name. */
const char *reward_kind_name(enum reward_kind k);
int reward_kind_parse(const char *name, enum reward_kind *out);

/* What a reward is computed from, read from one verdict (docs/verdict.md). */
struct reward_facts {
	int judged;          /* the verdict is about the candidate (not cannot_judge or harness_error) */
	int pass;            /* status pass */
	int rejected;        /* a reject: status rejected, a finding with severity reject, or the rubric's
			      * anti_hacking criterion scored 0 */
	int flagged;         /* a finding with severity flag */
	char first_finding[8]; /* the id of the first reject finding, else of the first flag ("" when none) */
	double speedup;      /* speedup.vs_eager; NAN when not timed */
	int rubric;          /* the verdict carries the rubric judge's answer */
	double rubric_total; /* its total in [0, 1]; NAN when the judge gave no scores */
	char status[24];
};

/* Reads the facts from a verdict JSON; -1 when it is not one (no status). */
int reward_facts_from_verdict(const json_t *verdict, struct reward_facts *f);

/* The reward of kind k with the rubric's weight lambda (REWARD_STITCHCUDA only). r is the rubric's
 * total when the verdict has one and 0.5 otherwise, so the factor is 1 without a judge. Every kind is 0
 * for a candidate that did not pass or was rejected. A flagged pass earns no speedup: REWARD_SPEEDUP is
 * 0 and REWARD_STITCHCUDA keeps only its base, (0.3) x (1 + lambda x (r - 0.5)), below any honest
 * pass; REWARD_PASS is 1, as the candidate is correct. NAN (no number) for a verdict that judged
 * nothing, for a pass never timed under a speed reward, and when the judge was asked and gave no score.
 * note, when not NULL, receives why the number is what it is (always set, one line). */
double reward_compute(enum reward_kind k, const struct reward_facts *f, double lambda, char *note, size_t note_len);

#endif
