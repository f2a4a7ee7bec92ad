/* progress.c - the progress line and the log lines of a run. The line is redrawn from the progress
 * thread and after events, always under one mutex, so agent threads never interleave half lines. */
#include "progress.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/strbuf.h"

struct progress {
	pthread_mutex_t mu;
	FILE *tty, *log, *file;
	const char *const *agents;
	size_t nagents;
	double *best;
	size_t total, done, done_before, attempts, pass, hacks;
	double t0, t_done;               /* the start, and when the last sample of this process ended */
	int drawn;
	int evaluating, llm;
	char *stopping;                  /* what a stopping run waits for (progress_stopping); NULL before */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct progress *progress_new(FILE *tty, FILE *log, FILE *file, const char *const *agents, size_t nagents,
			      size_t total_samples, size_t finished_before)
{
	struct progress *p = xcalloc(1, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	p->tty = tty;
	p->log = log;
	p->file = file;
	p->agents = agents;
	p->nagents = nagents;
	p->best = xcalloc(nagents ? nagents : 1, sizeof(*p->best));
	for (size_t i = 0; i < nagents; i++)
		p->best[i] = NAN;
	p->total = total_samples;
	p->done = p->done_before = finished_before;
	p->t0 = p->t_done = now();
	return p;
}

void progress_free(struct progress *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->mu);
	free(p->stopping);
	free(p->best);
	free(p);
}

static void clear_line(struct progress *p)
{
	if (p->tty && p->drawn) {
		fputs("\r\033[K", p->tty);
		p->drawn = 0;
	}
}

/* The estimate is made when a sample ends (this process's time per ended sample, times the samples left)
 * and counts down from there: between two ends nothing new is known, and an estimate that grew with every
 * tick would say that the run gets further away while it works. Past that time the line says by how much
 * the run is late instead of inventing a new figure. */
static void eta_text(struct progress *p, char *out, size_t cap)
{
	size_t fresh = p->done - p->done_before, left = p->total - p->done;
	if (!left) {
		snprintf(out, cap, "done");
		return;
	}
	if (!fresh) {
		snprintf(out, cap, "ETA --");
		return;
	}
	double s = (p->t_done - p->t0) / (double)fresh * (double)left - (now() - p->t_done);
	const char *what = s >= 0 ? "ETA" : "ETA overdue";
	s = fabs(s);
	if (s >= 3600)
		snprintf(out, cap, "%s %dh%02dm", what, (int)(s / 3600), (int)(s / 60) % 60);
	else
		snprintf(out, cap, "%s %dm%02ds", what, (int)(s / 60), (int)s % 60);
}

/* A stream the output went away from (run | head: EPIPE, SIGPIPE being ignored) is not written again:
 * the run goes on, and run.log keeps every line. */
static void check_stream(FILE **f)
{
	if (*f && (fflush(*f) != 0 || ferror(*f)))
		*f = NULL;
}

static void draw(struct progress *p)
{
	if (!p->tty)
		return;
	struct strbuf sb = STRBUF_INIT;
	char eta[32];
	eta_text(p, eta, sizeof(eta));
	if (p->stopping) { /* the counts wait for the final line; what the run waits for needs the room */
		strbuf_addf(&sb, "[%zu/%zu samples] %s", p->done, p->total, p->stopping);
	} else {
		strbuf_addf(&sb, "[%zu/%zu samples] %zu attempts, %zu pass, %zu hack |", p->done, p->total, p->attempts,
			    p->pass, p->hacks);
		for (size_t i = 0; i < p->nagents; i++)
			if (isfinite(p->best[i]))
				strbuf_addf(&sb, " %s %.2fx", p->agents[i], p->best[i]);
			else
				strbuf_addf(&sb, " %s -", p->agents[i]);
		strbuf_addf(&sb, " | eval %d, LLM %d | %s", p->evaluating, p->llm, eta);
	}
	if (sb.len > 200)
		strbuf_setlen(&sb, 200);
	fprintf(p->tty, "\r\033[K%s", sb.buf);
	check_stream(&p->tty);
	p->drawn = 1;
	strbuf_release(&sb);
}

/* A plain line to the log and run.log; on a terminal it goes above the progress line. */
static void emit(struct progress *p, const char *line, int on_tty)
{
	char stamp[16];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	if (p->file) {
		fprintf(p->file, "%s %s\n", stamp, line);
		fflush(p->file);
	}
	if (p->log) {
		fprintf(p->log, "%s %s\n", stamp, line);
		check_stream(&p->log);
	}
	if (p->tty && on_tty) {
		clear_line(p);
		fprintf(p->tty, "%s\n", line);
	}
	draw(p);
}

void progress_attempt(struct progress *p, size_t agent, const char *ref, int sample, int attempt, const char *stage,
		      const char *status, double speedup, int resumed)
{
	char line[256], sp[32] = "";
	if (isfinite(speedup))
		snprintf(sp, sizeof(sp), " %.3fx", speedup);
	snprintf(line, sizeof(line), "%s %s s%d attempt %d (%s): %s%s%s", p->agents[agent], ref, sample, attempt, stage,
		 status, sp, resumed ? " [stored earlier]" : "");
	pthread_mutex_lock(&p->mu);
	if (!resumed) { /* the counts are this process's work; the best speedups are the run's */
		p->attempts++;
		p->pass += !strcmp(status, "pass");
		p->hacks += !strcmp(status, "rejected");
	}
	if (!strcmp(status, "pass") && isfinite(speedup) && !(speedup <= p->best[agent]))
		p->best[agent] = speedup;
	emit(p, line, 0);
	pthread_mutex_unlock(&p->mu);
}

void progress_sample(struct progress *p, size_t agent, const char *ref, int sample, const char *outcome, double best,
		     int ended)
{
	char line[512], sp[32] = "no correct candidate";
	if (isfinite(best))
		snprintf(sp, sizeof(sp), "best %.3fx", best);
	snprintf(line, sizeof(line), "%s %s s%d: %s%s%s", p->agents[agent], ref, sample, ended ? "ended (" : "",
		 outcome, ended ? ")" : "");
	if (ended)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), ", %s", sp);
	pthread_mutex_lock(&p->mu);
	p->done += ended;
	if (ended)
		p->t_done = now();
	emit(p, line, 1);
	pthread_mutex_unlock(&p->mu);
}

void progress_line(struct progress *p, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&p->mu);
	emit(p, sb.buf, 1);
	pthread_mutex_unlock(&p->mu);
	strbuf_release(&sb);
}

void progress_tick(struct progress *p, int evaluating, int llm_in_flight)
{
	pthread_mutex_lock(&p->mu);
	p->evaluating = evaluating;
	p->llm = llm_in_flight;
	draw(p);
	pthread_mutex_unlock(&p->mu);
}

void progress_stopping(struct progress *p, const char *text)
{
	pthread_mutex_lock(&p->mu);
	if (p->stopping && !strcmp(p->stopping, text)) {
		draw(p);
	} else {
		free(p->stopping);
		p->stopping = xstrdup(text);
		emit(p, text, 0);
	}
	pthread_mutex_unlock(&p->mu);
}

void progress_end(struct progress *p)
{
	pthread_mutex_lock(&p->mu);
	clear_line(p);
	if (p->tty)
		fflush(p->tty);
	pthread_mutex_unlock(&p->mu);
}

void progress_counts(struct progress *p, struct progress_counts *out)
{
	pthread_mutex_lock(&p->mu);
	*out = (struct progress_counts){ p->done, p->total, p->attempts, p->pass, p->hacks };
	pthread_mutex_unlock(&p->mu);
}

double progress_best(struct progress *p, size_t agent)
{
	pthread_mutex_lock(&p->mu);
	double b = p->best[agent];
	pthread_mutex_unlock(&p->mu);
	return b;
}

void progress_seed_best(struct progress *p, size_t agent, double best)
{
	pthread_mutex_lock(&p->mu);
	if (isfinite(best) && !(best <= p->best[agent]))
		p->best[agent] = best;
	pthread_mutex_unlock(&p->mu);
}
