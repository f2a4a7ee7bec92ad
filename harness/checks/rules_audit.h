/* rules_audit.h - the audit's rules (DESIGN §7, rows marked D; docs/audit.md): flaws of a problem itself,
 * decided over what harness/audit/ measured by running its reference. No I/O. */
#ifndef SB_RULES_AUDIT_H
#define SB_RULES_AUDIT_H

#include <stddef.h>

#include "finding.h"

/* Finding ids beside DESIGN §7's: properties of a problem that are not hacks but change what a result means. */
#define AUDIT_NONDETERMINISTIC "nondeterministic"
#define AUDIT_INTEGER_INPUTS "integer_inputs"

/* One output of the reference, over the audit's seeds and its two signed input sets. */
struct audit_output {
	int zero;                    /* every seed's output is within the tolerance of zero */
	int constant;                /* ... of one constant tensor (looked at only when not zero) */
	int signed_ran;              /* the signed inputs gave this output too */
	int zero_signed, constant_signed; /* the same over the signed inputs (when signed_ran) */
	double maxabs, range, atol;  /* the largest |value|, the largest spread across seeds, the tolerance */
	long equals_input;           /* the first input it equals within tolerance on every seed; -1: none */
	int equals_input_signed;     /* and on the signed inputs too */
};

struct audit_facts {
	int seeds;                   /* how many seeds the reference ran on */
	const char *const *input_dtypes; /* "torch.int64", ... (NULL: unknown), one per input */
	size_t ninputs;
	int rerun_differs;           /* two runs with the same seed differ */
	int again_differs;           /* two calls on the same inputs differ */
	const struct audit_output *outputs;
	size_t noutputs;
};

void rules_audit(const struct audit_facts *f, struct findings *out);

#endif
