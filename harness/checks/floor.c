/* floor.c - H21's decision: the physical floor (bytes / measured bandwidth) and the 10x-eager flag,
 * from numbers alone, so tests can state them (tests/unit/test_runtime.c). */
#include "floor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void floor_judge(const struct floor_input *in, struct floor_result *out, struct findings *f)
{
	memset(out, 0, sizeof(*out));
	if (in->speedup_eager > FLOOR_FAST_RATIO && in->speedup_eager_lo > FLOOR_FAST_RATIO) {
		out->fast = 1;
		struct finding *x = rt_findings_add(f, "H21", "%.1fx faster than eager PyTorch (at least %.1fx by its 95%% interval): more "
				"than %.0fx is rare for an honest kernel and usual for one that skips work (cached or constant "
				"results, work outside the timed call); worth a look", in->speedup_eager, in->speedup_eager_lo,
				FLOOR_FAST_RATIO);
		if (x)
			x->flag_only = 1;
	}
	if (!in->gpu) {
		snprintf(out->skipped, sizeof(out->skipped), "on the CPU: no memory bandwidth is measured there, so there is "
			 "no physical floor to compare with");
		return;
	}
	if (!(in->peak_bytes_per_s > 0)) {
		snprintf(out->skipped, sizeof(out->skipped), "the device's bandwidth is unknown: %s",
			 in->peak_unknown ? in->peak_unknown : "not measured");
		return;
	}
	if (!(in->bytes > 0)) {
		snprintf(out->skipped, sizeof(out->skipped), "the problem's input and output sizes are unknown");
		return;
	}
	out->floor_us = in->bytes / (in->peak_bytes_per_s * FLOOR_HEADROOM) * 1e6;
	if (!(in->candidate_us > 0)) {
		snprintf(out->skipped, sizeof(out->skipped), "the candidate was not timed");
		return;
	}
	out->judged = 1;
	if (in->candidate_us < out->floor_us) {
		out->below = 1;
		rt_findings_add(f, "H21", "median %.2f us per call is below the physical floor of %.2f us (%.1f MB of inputs "
				"and outputs at %.0f GB/s, the measured copy bandwidth x %.2f): no kernel moves that much "
				"data that fast, so the result did not come from this call's work", in->candidate_us,
				out->floor_us, in->bytes / 1e6, in->peak_bytes_per_s / 1e9, FLOOR_HEADROOM);
	}
}
