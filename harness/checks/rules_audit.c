/* rules_audit.c - what the audit's runs of a reference say about its problem: inputs a candidate must
 * keep integer, randomness no seed fixes, and outputs that a constant, zeros or an input pass for. */
#include "rules_audit.h"

#include <string.h>

void rules_audit(const struct audit_facts *f, struct findings *out)
{
	for (size_t i = 0; i < f->ninputs; i++) {
		const char *dt = f->input_dtypes[i];
		if (dt && (strstr(dt, "int") || !strcmp(dt, "torch.bool")))
			findings_add(out, AUDIT_INTEGER_INPUTS, "input %zu is %s (indices or counts): a candidate must keep "
				     "it %s, and the signed inputs leave it as drawn", i, dt + (strncmp(dt, "torch.", 6) ? 0 : 6),
				     strcmp(dt, "torch.bool") ? "integer" : "boolean");
	}
	if (f->rerun_differs)
		findings_add(out, AUDIT_NONDETERMINISTIC, "two runs with the same seed give different outputs: the "
			     "randomness is not torch's RNG, so no seed makes the reference reproducible and correctness "
			     "trials compare against luck");
	else if (f->again_differs)
		findings_add(out, AUDIT_NONDETERMINISTIC, "two calls on the same inputs give different outputs: forward "
			     "draws random numbers (Dropout in training mode, randn); reseeding torch's RNG before each call, "
			     "as the evaluation does, makes it reproducible, and a candidate must draw the same numbers");
	for (size_t j = 0; j < f->noutputs; j++) {
		const struct audit_output *o = &f->outputs[j];
		if (o->zero)
			findings_add(out, "H16", "every element of out%zu is within the tolerance of zero on all %d seeds "
				     "(largest |value| %.3g, allowed %.0e): an all-zero output passes%s", j, f->seeds, o->maxabs,
				     o->atol, o->signed_ran && o->zero_signed ? ", on signed inputs too" : "");
		else if (o->constant)
			findings_add(out, "H15", "out%zu is within the tolerance of one constant tensor on all %d seeds (it "
				     "varies by at most %.3g across seeds): returning that constant passes%s", j, f->seeds,
				     o->range, !o->signed_ran ? "" : o->constant_signed ? ", on signed inputs too"
				     : "; on signed inputs it is not constant");
		if (o->equals_input >= 0)
			findings_add(out, "H17", "out%zu equals input %ld within tolerance on all %d seeds: returning the "
				     "input passes; %s", j, o->equals_input, f->seeds, o->equals_input_signed
				     ? "on signed inputs too, so the operation is the identity"
				     : "on signed inputs it does not, so the operation is the identity only on this problem's "
				       "input distribution");
	}
}
