/* progress.h - what a run tells people while it works: on a terminal one progress line (samples and
 * attempts done, passes, hacks, each agent's best speedup, what is in flight, ETA) redrawn in place; in
 * a log (not a terminal, and always RUN/run.log) one plain line per attempt and per finished sample. */
#ifndef SB_PROGRESS_H
#define SB_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

struct progress;

/* tty: the terminal to redraw the line on (NULL: none); log: plain lines (NULL: none); file: run.log
 * (NULL: none). Samples already finished before this process started count as done from the start. */
struct progress *progress_new(FILE *tty, FILE *log, FILE *file, const char *const *agents, size_t nagents,
			      size_t total_samples, size_t finished_before);
void progress_free(struct progress *p);

/* One attempt judged (or read back when resumed: logged, and its speedup counts for the best, but not
 * in this process's counts). speedup: NAN when none. */
void progress_attempt(struct progress *p, size_t agent, const char *ref, int sample, int attempt, const char *stage,
		      const char *status, double speedup, int resumed);
/* A sample ended (outcome: its stop reason, or "unfinished: why"). best: NAN when nothing passed. */
void progress_sample(struct progress *p, size_t agent, const char *ref, int sample, const char *outcome, double best,
		     int ended);
/* A sample finished before this process started reached `best` (resume). */
void progress_seed_best(struct progress *p, size_t agent, double best);
/* A free-form line (warnings, the final words). */
__attribute__((format(printf, 2, 3)))
void progress_line(struct progress *p, const char *fmt, ...);
/* Redraws the terminal line with what is in flight now. */
void progress_tick(struct progress *p, int evaluating, int llm_in_flight);
/* The run is stopping: text (what it waits for) takes the place of what is in flight and the ETA on the
 * terminal line, and goes to the log and run.log as a line of its own each time it changes. */
void progress_stopping(struct progress *p, const char *text);
/* Clears the terminal line for good (the run ended). */
void progress_end(struct progress *p);

/* Counts for the closing summary. */
struct progress_counts {
	size_t samples_done, samples_total, attempts, pass, hacks;
};
void progress_counts(struct progress *p, struct progress_counts *out);
/* The best speedup an agent reached so far (NAN when none passed). */
double progress_best(struct progress *p, size_t agent);

#endif
