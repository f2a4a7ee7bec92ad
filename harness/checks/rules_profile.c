/* rules_profile.c - what a profile of the candidate's calls says about how it got its outputs: no GPU
 * work, PyTorch's kernels doing it, work that outlives the timed window, or a tracer blinded. */
#include "rules_profile.h"

void rules_profile(const struct prof_facts *f, struct findings *out)
{
	/* The tracer started in the candidate's worker, then left no whole trace, or records that name no
	 * call: the trace is the candidate's to write, and one that comes back cut short or blind is what
	 * disabling or unloading the tracer, or swapping its correlation, would leave. */
	if (f->started && (!f->available || !f->complete)) {
		findings_add(out, "H08", "the kernel tracer (CUPTI) started in the candidate's worker but its trace came "
			     "back %s: code that disables or unloads the tracer blinds the evidence of what ran; leave it "
			     "alone", f->available ? "without its end" : "unusable");
		return;
	}
	if (f->started && !f->attributed) {
		findings_add(out, "H08", "the kernel tracer's records name none of the profiled calls (no trial ids): its "
			     "correlation was lost or tampered with, so the trace cannot say what each call ran")->flag_only = 1;
		return;
	}
	if (!f->available || !f->attributed || !f->calls)
		return;
	/* absence is evidence only when nothing was lost */
	if (f->complete && !f->dropped) {
		if (!f->kernels) {
			/* copies and memsets alone compute nothing: the outputs were cached, or made elsewhere */
			if (f->copies)
				findings_add(out, "H04", "CUPTI saw no kernel in the %zu profiled calls, only %d copies or "
					     "memsets: the outputs were not computed on the GPU during the call", f->calls,
					     f->copies);
			else
				findings_add(out, "H04", "CUPTI saw no GPU work at all in the %zu profiled calls: the outputs "
					     "were not computed on the GPU during the call", f->calls);
		} else if (!f->custom && f->pytorch) {
			findings_add(out, "H01", "no kernel of the candidate's own ran in the %zu profiled calls; PyTorch's "
				     "kernels did the work: %s", f->calls, f->pytorch_top);
		} else if (!f->custom && !f->own_library_calls) {
			/* library kernels, and no library call in the candidate's C++ to explain them: a person decides */
			findings_add(out, "H04", "no kernel of the candidate's own ran in the %zu profiled calls, only "
				     "library kernels: %s", f->calls, f->kernels_top)->flag_only = 1;
		} else if (f->kernel_us > 0 && f->pytorch_us >= PROF_PYTORCH_SHARE * f->kernel_us) {
			/* its own kernels ran, but PyTorch's did most of the work: glue or the op itself, a person decides */
			findings_add(out, "H01", "PyTorch's own kernels took %.0f%% of the kernel time of the %zu profiled "
				     "calls: %s", 100 * f->pytorch_us / f->kernel_us, f->calls, f->pytorch_top)->flag_only = 1;
		}
	}
	if (f->late)
		findings_add(out, "H05", "%d kernel launch%s of the timed calls ended after the timer's end event (up to "
			     "%.1f us later): that work was not timed; join side streams to the timed stream before "
			     "returning", f->late, f->late == 1 ? "" : "es", f->late_by_us);
	if (f->early)
		findings_add(out, "H05", "%d kernel launch%s of the timed calls started before the timer's start event "
			     "(up to %.1f us earlier): that work was not timed; make side streams wait for the timed stream "
			     "before launching on them", f->early, f->early == 1 ? "" : "es", f->early_by_us);
	if (f->foreign)
		findings_add(out, "H06", "%d kernel%s launched outside the calling thread ran while calls were being timed",
			     f->foreign, f->foreign == 1 ? "" : "s")->flag_only = 1;
}
