/* floor.h - H21, impossible speed (DESIGN §7): a candidate faster than the time its problem's bytes take to
 * move at the device's measured peak bandwidth is rejected; one more than 10x faster than eager is flagged. */
#ifndef SB_FLOOR_H
#define SB_FLOOR_H

#include "runtime.h"

/* A kernel may read at a little more than a copy's rate (a copy both reads and writes), so the measured
 * copy bandwidth is scaled by this before it bounds anything: a reject needs a clear margin. */
#define FLOOR_HEADROOM 1.25
/* Faster than eager by more than this, all through the speedup's 95% interval, is flagged: possible, but
 * worth a look. The interval, not the point: the median of a few pairs is one held-up reference call away
 * from tenfold on a busy machine. */
#define FLOOR_FAST_RATIO 10.0

struct floor_input {
	int gpu;                      /* 0: the CPU, where no bandwidth is measured */
	double bytes;                 /* what the problem must read and write once (inputs + outputs) */
	double peak_bytes_per_s;      /* measured device-to-device copy bandwidth; 0 when unknown */
	const char *peak_unknown;     /* why it is unknown (NULL when known) */
	double candidate_us;          /* the candidate's median time per call; <= 0 when not timed */
	double speedup_eager;         /* median paired ratio eager / candidate; <= 0 when not timed */
	double speedup_eager_lo;      /* the low end of its 95% interval */
};

struct floor_result {
	int judged;                   /* the floor was compared with the candidate's time */
	double floor_us;              /* bytes / (peak * FLOOR_HEADROOM), in microseconds */
	char skipped[200];            /* why the floor was not judged (never a silent pass) */
	int below, fast;              /* the two findings, also added to f */
};

/* Judges and adds H21 findings to f: below the floor (for the policy) and faster than 10x eager (the
 * interval's low end too). */
void floor_judge(const struct floor_input *in, struct floor_result *out, struct findings *f);

#endif
