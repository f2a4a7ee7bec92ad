/* noise.c - how busy the machine was while timing (timing.h). */
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../core/strbuf.h"

/* Other processes above a quarter of the machine's CPU time, steal above 2%, or the reference's calls
 * spreading by more than 10% of their mean: any of them makes paired times disagree from round to round
 * by more than the code under test does. A quiet machine shows none (a few % of other work at most). */
#define OTHERS_PCT_MAX 25.0
#define STEAL_PCT_MAX 2.0
#define REFERENCE_CV_MAX 0.10

static unsigned long long own_jiffies(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	unsigned long long ut = 0, st = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid > 0 && strbuf_read_file(&sb, path, 4096) == 0) {
		/* after "pid (comm)": state is field 3; utime and stime are fields 14 and 15 */
		const char *p = strrchr(sb.buf, ')');
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
			ut = st = 0;
	}
	strbuf_release(&sb);
	return ut + st;
}

void noise_read(struct noise_probe *p, const pid_t *pids, int npids)
{
	memset(p, 0, sizeof(*p));
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[10] = { 0 };
	if (f) {
		p->ok = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			       &v[6], &v[7]) == 8;
		fclose(f);
	}
	/* user nice system idle iowait irq softirq steal */
	p->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	p->total = p->busy + v[3] + v[4];
	p->steal = v[7];
	for (int i = 0; i < npids; i++)
		p->own += own_jiffies(pids[i]);
}

void noise_judge(const struct noise_probe *a, const struct noise_probe *b, int cpus, double reference_cv,
		 struct machine_noise *out)
{
	memset(out, 0, sizeof(*out));
	out->cpus = cpus;
	out->reference_cv = reference_cv;
	out->others_pct = out->steal_pct = NAN;
	struct strbuf why = STRBUF_INIT;
	if (a->ok && b->ok && b->total > a->total) {
		double total = (double)(b->total - a->total);
		double busy = (double)(b->busy - a->busy), own = b->own >= a->own ? (double)(b->own - a->own) : 0;
		double steal = (double)(b->steal - a->steal);
		out->measured = 1;
		out->others_pct = fmax(0, 100.0 * (busy - own - steal) / total);
		out->steal_pct = 100.0 * steal / total;
		if (out->others_pct > OTHERS_PCT_MAX)
			strbuf_addf(&why, "other processes took %.0f%% of the %d CPUs' time", out->others_pct, cpus);
		if (out->steal_pct > STEAL_PCT_MAX)
			strbuf_addf(&why, "%sthe hypervisor took %.1f%% (steal)", why.len ? "; " : "", out->steal_pct);
	}
	if (isfinite(reference_cv) && reference_cv > REFERENCE_CV_MAX)
		strbuf_addf(&why, "%sthe reference's own times spread by %.0f%% (cv)", why.len ? "; " : "",
			    100 * reference_cv);
	out->noisy = why.len > 0;
	snprintf(out->why, sizeof(out->why), "%s", why.buf ? why.buf : "");
	strbuf_release(&why);
}
