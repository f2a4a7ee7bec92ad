/* noise.h - whether the machine was busy with other work while an evaluation timed: the share of the
 * machine's CPU time that processes other than the two workers took (and the hypervisor's steal) over the
 * timing window, read from /proc, and the reference's own spread. A verdict timed on a busy machine says
 * so: its interval is then wider than the code's own spread, or wrong in ways no interval shows. */
#ifndef SB_NOISE_H
#define SB_NOISE_H

#include <sys/types.h>

/* A reading of the machine and of the workers at one moment. */
struct noise_probe {
	int ok;                        /* /proc/stat answered */
	unsigned long long busy, total, steal; /* jiffies over every CPU */
	unsigned long long own;        /* the workers' CPU jiffies (user + system) */
};

struct machine_noise {
	int measured;                  /* both readings answered */
	int cpus;
	double others_pct;             /* % of the machine's CPU time other processes took while timing */
	double steal_pct;              /* % the hypervisor took */
	double reference_cv;           /* the eager reference's coefficient of variation over the rounds */
	int noisy;
	char why[200];                 /* what made it noisy; "" when not */
};

/* Reads /proc/stat and the CPU time of the given processes (their threads included). */
void noise_read(struct noise_probe *p, const pid_t *pids, int npids);
/* Judges the window between two readings, with the reference's cv. The thresholds, in noise.c, are
 * documented in docs/evaluation.md. */
void noise_judge(const struct noise_probe *a, const struct noise_probe *b, int cpus, double reference_cv,
		 struct machine_noise *out);

#endif
