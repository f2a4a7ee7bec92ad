/* feedback.h - the Verifier's words to the Coder: a verdict (docs/verdict.md JSON) turned into concise,
 * structured, size-bounded feedback (docs/agents.md "Verifier feedback"). */
#ifndef SB_FEEDBACK_H
#define SB_FEEDBACK_H

#include <jansson.h>

#include "../core/strbuf.h"
#include "boundhints.h"

#define FEEDBACK_MAX_BYTES 6000   /* the whole feedback; longer parts are cut first */
#define FEEDBACK_MAX_LINES 40     /* compiler errors and tracebacks */
#define FEEDBACK_MAX_TRIALS 5
#define FEEDBACK_MAX_FINDINGS 8
#define FEEDBACK_MAX_KERNELS 5

/* Appends the feedback on one verdict: status and message; then by status the trimmed compiler errors,
 * the error tail, the worst element of each failing trial, the hack findings with what to do instead,
 * or the timings and speedups against the target; and the top kernels with their share of time when
 * the verdict holds a profile, each with its bound class and throughputs where they were measured,
 * followed by one hint per bound class shown (from hints; none when hints is NULL). At most
 * FEEDBACK_MAX_BYTES. */
void feedback_from_verdict(json_t *verdict, double target_speedup, const struct bound_hints *hints,
			   struct strbuf *out);

/* Keeps at most max_lines lines and max_bytes bytes of text, each line at most 300 bytes, saying how
 * much was left out. Compiler output (tail = 0): when lines mention "error", those (with the line
 * before each) are kept in preference, from the first on, so the first real error survives a long build
 * log. A traceback (tail = 1): the last lines, where Python puts the exception. */
void feedback_trim(const char *text, size_t max_lines, size_t max_bytes, int tail, struct strbuf *out);

#endif
