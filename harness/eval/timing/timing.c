/* timing.c - the timing loop: warm both sides up, then rounds of one block of calls per side in
 * alternating order (R C, C R, ...; with torch.compile R C K, K C R), call j of each block forming
 * pair j; the first round is discarded; it stops when the median pair ratio is known to rse_target,
 * the pair budget is spent, or the wall-clock cap is hit.
 *
 * Every timed call is a checked call. Each gets fresh inputs written into its slot's tensors (the same
 * objects, new values from a seed it learns only in its block's request), and its outputs are frozen
 * before the next call runs; once both sides' blocks of a round are in, the caller's check compares
 * them call by call, before the candidate's worker runs again. And the parent times every block with its
 * own clock, which bounds what the candidate's process says its calls took (trusted_summarise). */
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../proc/proc.h"
#include "../verdict.h"

#define MIN_PAIRS 20
/* Kept rounds before the loop may stop early, and before the parent's clock (trusted_summarise) is judged:
 * its interval is a bootstrap over rounds, and over two rounds that is little more than the two rounds
 * themselves, so one slow harness step in each of the candidate's two blocks reads as a lie. */
#define MIN_ROUNDS 3

struct side {
	struct worker *w;
	const char *which;
	int is_cand;
	double *us;
};

/* Records the first failure of a side: who failed and why. */
static void side_failed(struct side *s, const struct worker_fault *f, json_t *reply, struct worker_fault *fault,
			int *cand_failed, char **msg)
{
	*cand_failed = s->is_cand;
	if (reply) {
		*msg = xstrfmt("%s failed during timing: %s", s->is_cand ? "the candidate" : "the reference",
			       json_string_value(json_object_get(reply, "message")) ?: "?");
		fault->kind = WF_NONE;
	} else {
		*fault = *f;
		*msg = xstrfmt("%s during timing: %s", s->is_cand ? "the candidate" : "the reference", f->what);
	}
}

/* One request to each of n sides, all sent before any reply is read: the workers do what nothing is
 * timed by (drawing the timing inputs, warming up, saving outputs) side by side. Every reply sent for
 * is read, a failure or not, so a kept reference worker is never left with an unread answer. */
static int ask_each(struct side **s, json_t **reqs, json_t **replies, int n, double ref_deadline,
		    double cand_deadline, struct worker_fault *fault, int *cand_failed, char **msg)
{
	int sent[3] = { 0, 0, 0 }, rc = 0;
	struct worker_fault f;
	for (int i = 0; i < n; i++) {
		replies[i] = NULL;
		if (rc == 0 && worker_send(s[i]->w, reqs[i], &f) == 0)
			sent[i] = 1;
		else if (rc == 0) {
			side_failed(s[i], &f, NULL, fault, cand_failed, msg);
			rc = -1;
		}
		json_decref(reqs[i]);
	}
	for (int i = 0; i < n; i++) {
		json_t *r;
		if (!sent[i])
			continue;
		if (worker_receive(s[i]->w, &r, s[i]->is_cand ? cand_deadline : ref_deadline, &f)) {
			if (rc == 0)
				side_failed(s[i], &f, NULL, fault, cand_failed, msg);
			rc = -1;
			continue;
		}
		if (!json_is_true(json_object_get(r, "ok"))) {
			if (rc == 0)
				side_failed(s[i], &f, r, fault, cand_failed, msg);
			rc = -1;
			json_decref(r);
			continue;
		}
		replies[i] = r;
	}
	if (rc)
		for (int i = 0; i < n; i++) {
			json_decref(replies[i]);
			replies[i] = NULL;
		}
	return rc;
}

/* The worker's reply lists the CPUs its threads may run on after pinning (eval.timing_cpu): exactly `cpu`? */
static int pinned_to(json_t *cpus, int cpu)
{
	return json_is_array(cpus) && json_array_size(cpus) == 1 &&
	       json_integer_value(json_array_get(cpus, 0)) == cpu;
}

/* One side's block answered by several `time` requests, gathered as one request would have answered it:
 * the calls' times, host times and shared outputs in call order, the calls launched too late summed, the
 * longest lead, and `pinned`: every request's threads stayed on `cpu`. Takes r; returns the gathered
 * reply (acc, or a new one when acc is NULL). */
static json_t *gather_reply(json_t *acc, json_t *r, int cpu)
{
	if (!acc)
		acc = json_pack("{s:[], s:[], s:i, s:i, s:b}", "us", "host_us", "exposed", 0, "lead_us", 0, "pinned", 1);
	json_t *us = json_object_get(r, "us"), *hu = json_object_get(r, "host_us"), *sh = json_object_get(r, "shared");
	for (size_t j = 0; j < json_array_size(us); j++) {
		json_array_append(json_object_get(acc, "us"), json_array_get(us, j));
		json_array_append_new(json_object_get(acc, "host_us"), json_real(json_number_value(json_array_get(hu, j))));
	}
	if (json_is_array(sh)) {
		if (!json_object_get(acc, "shared"))
			json_object_set_new(acc, "shared", json_array());
		json_array_extend(json_object_get(acc, "shared"), sh);
	}
	json_int_t lead = json_integer_value(json_object_get(r, "lead_us"));
	json_object_set_new(acc, "exposed", json_integer(json_integer_value(json_object_get(acc, "exposed")) +
							 json_integer_value(json_object_get(r, "exposed"))));
	if (lead > json_integer_value(json_object_get(acc, "lead_us")))
		json_object_set_new(acc, "lead_us", json_integer(lead));
	if (cpu >= 0 && !pinned_to(json_object_get(r, "cpus"), cpu))
		json_object_set_new(acc, "pinned", json_false());
	json_decref(r);
	return acc;
}

/* A round's shipped inputs are done with: the draw's reply and its descriptors. */
static void drop_shipped(json_t *shipped, const int *fd, int n)
{
	json_decref(shipped);
	for (int q = 0; q < n; q++)
		if (fd[q] >= 0)
			close(fd[q]);
}

static void ratios(const double *num, const double *den, size_t n, double *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = den[i] > 0 ? num[i] / den[i] : 0;
}

static void summarise(struct timing_result *t, size_t n, int block, int unpaired, uint32_t seed)
{
	double *r = xcalloc(n ? n : 1, sizeof(double));
	stats_compute(t->eager_us, n, &t->eager.us);
	stats_compute(t->candidate_us, n, &t->candidate.us);
	ratios(t->eager_us, t->candidate_us, n, r);
	stats_compute(r, n, &t->ratio_eager);
	double se;
	t->speedup_eager = t->ratio_eager.median;
	bootstrap_median(r, n, 2000, seed, 0.95, &t->speedup_eager_lo, &t->speedup_eager_hi, &se);
	t->speedup_eager_mean_method = t->candidate.us.mean > 0 ? t->eager.us.mean / t->candidate.us.mean : 0;
	snprintf(t->method, sizeof(t->method), "%s", unpaired ? "unpaired_mean" : "paired_median");
	if (unpaired) {
		t->speedup_eager = t->speedup_eager_mean_method;
		bootstrap_mean_ratio(t->eager_us, n, t->candidate_us, n, 2000, seed, 0.95, &t->speedup_eager_lo,
				     &t->speedup_eager_hi);
	}
	/* as measured; a process factor, applied later (procfactor.c), divides speedup_eager only */
	t->speedup_eager_raw = t->speedup_eager;
	t->speedup_eager_raw_lo = t->speedup_eager_lo;
	t->speedup_eager_raw_hi = t->speedup_eager_hi;
	/* pair i belongs to kept round i / block, which was round i / block + 1 of the loop: eager went
	 * first in the odd-numbered kept rounds */
	double *first = xcalloc(n ? n : 1, sizeof(double)), *second = xcalloc(n ? n : 1, sizeof(double));
	size_t nf = 0, ns = 0;
	for (size_t i = 0; i < n; i++) {
		if ((i / (size_t)block) % 2)
			first[nf++] = r[i];
		else
			second[ns++] = r[i];
	}
	struct sample_stats sf, ss;
	stats_compute(first, nf, &sf);
	stats_compute(second, ns, &ss);
	t->order_bias = nf && ns && ss.median > 0 ? sf.median / ss.median : NAN;
	free(first);
	free(second);
	if (t->compiled.available) {
		stats_compute(t->compiled_us, n, &t->compiled.us);
		ratios(t->compiled_us, t->candidate_us, n, r);
		stats_compute(r, n, &t->ratio_compiled);
		t->speedup_compiled = t->ratio_compiled.median;
		bootstrap_median(r, n, 2000, seed + 1, 0.95, &t->speedup_compiled_lo, &t->speedup_compiled_hi, &se);
		if (unpaired) {
			t->speedup_compiled = t->candidate.us.mean > 0 ? t->compiled.us.mean / t->candidate.us.mean : 0;
			bootstrap_mean_ratio(t->compiled_us, n, t->candidate_us, n, 2000, seed + 1, 0.95,
					     &t->speedup_compiled_lo, &t->speedup_compiled_hi);
		}
	}
	t->pairs = n;
	free(r);
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

/* One clock sample, taken right after a block while the clock still reflects it. */
static void clock_sample(struct nvml_gpu *g, unsigned *mhz, size_t *n, size_t cap, unsigned long long *reasons)
{
	unsigned m;
	unsigned long long r;
	if (!g || *n >= cap || nvml_sample(g, &m, &r))
		return;
	mhz[(*n)++] = m;
	*reasons |= r & ~1ULL; /* "idle" is about the moments between calls, not the calls */
}

static void clock_summarise(struct gpu_clock *c, struct nvml_gpu *g, unsigned *mhz, size_t n, unsigned long long reasons)
{
	if (!g)
		return;
	if (!n) {
		snprintf(c->note, sizeof(c->note), "NVML gave no clock reading during timing");
		return;
	}
	qsort(mhz, n, sizeof(*mhz), cmp_unsigned);
	c->available = 1;
	c->samples = n;
	c->mhz_min = mhz[0];
	c->mhz_max = mhz[n - 1];
	c->mhz_median = mhz[n / 2];
	c->mhz_limit = nvml_max_sm_mhz(g);
	c->reasons = reasons;
}

/* One request to one side, with a descriptor attached when fd >= 0; on failure says who failed and why. */
static int ask(struct side *s, json_t *req, int fd, json_t **reply, double deadline, struct worker_fault *fault,
	       int *cand_failed, char **msg)
{
	struct worker_fault f;
	if (fd < 0)
		return ask_each(&s, &req, reply, 1, deadline, deadline, fault, cand_failed, msg);
	*reply = NULL;
	int rc = worker_send_fds(s->w, req, &fd, 1, &f);
	json_decref(req);
	json_t *r = NULL;
	if (rc == 0)
		rc = worker_receive(s->w, &r, deadline, &f);
	if (rc) {
		side_failed(s, &f, NULL, fault, cand_failed, msg);
		return -1;
	}
	if (!json_is_true(json_object_get(r, "ok"))) {
		side_failed(s, &f, r, fault, cand_failed, msg);
		json_decref(r);
		return -1;
	}
	*reply = r;
	return 0;
}

/* The candidate's process stops while another side times: SIGSTOP to its process group and to the worker
 * itself (which may have left the group), and a wait of at most 20 ms until the kernel shows it stopped.
 * A thread it left running then cannot take the CPU or the memory bandwidth from the reference's calls,
 * nor work ahead while they run. The worker's pid (below a namespace's relay) is found once per loop. */
struct frozen {
	pid_t group, worker; /* 0: nothing to stop */
};

static struct frozen freeze_target(const struct worker *w)
{
	struct proc_view v;
	if (!w->started || w->finished || w->h.pid <= 0)
		return (struct frozen){ 0, 0 };
	procwatch_read(w->h.pid, &v, 0);
	return (struct frozen){ w->h.pid, v.known && v.worker > 0 ? v.worker : w->h.pid };
}

static void freeze(const struct frozen *f, int on)
{
	int sig = on ? SIGSTOP : SIGCONT;
	if (!f->group)
		return;
	kill(-f->group, sig); /* a worker that leads its group; the processes themselves either way */
	kill(f->group, sig);
	if (f->worker != f->group)
		kill(f->worker, sig);
	struct proc_view v;
	for (double t0 = proc_now(); on && proc_now() - t0 < 0.02; usleep(100)) {
		procwatch_read(f->worker, &v, 0);
		if (!v.known || v.state == 'T' || v.state == 't')
			break;
	}
}

/* The seed of timing slot k's first draw, and of timed call `call` (its fresh inputs and forward's own
 * random draws, the same on every side). */
static uint32_t set_seed(const struct timing_plan *p, int k)
{
	return p->seeds ? eval_seed(p->seeds, p->set_use, (uint32_t)k) : trial_seed(p->base_seed, 1000 + k);
}

/* Every REPEAT_EVERY-th timed call repeats the inputs of the call REPEAT_LAG before it: the same seed, so
 * the same values (and the same draws inside forward) in a slot that held others meanwhile. Only a
 * candidate that recognises contents can tell; one that keeps results by content answers these faster
 * than the others, which the paired ratios show (repeat_summarise). */
#define REPEAT_EVERY 5
#define REPEAT_LAG 2

static int is_repeat(const struct timing_plan *p, long call)
{
	return p->fresh && call >= REPEAT_EVERY && call % REPEAT_EVERY == REPEAT_EVERY - 1;
}

static uint32_t seed_of_call(const struct timing_plan *p, long call);

static uint32_t call_seed(const struct timing_plan *p, long call)
{
	return seed_of_call(p, is_repeat(p, call) ? call - REPEAT_LAG : call);
}

static uint32_t seed_of_call(const struct timing_plan *p, long call)
{
	/* a stream of its own for the calls: with SEED_FACTOR for both, the offset keeps them apart */
	return p->seeds ? eval_seed(p->seeds, p->call_use, 1000000 + (uint32_t)call) : trial_seed(p->base_seed, 5000 + (uint32_t)call);
}

json_t *timing_setup_request(const struct timing_plan *p)
{
	json_t *seeds = json_array();
	for (int k = 0; k < p->nsets; k++)
		json_array_append_new(seeds, json_integer(set_seed(p, k)));
	return json_pack("{s:s, s:o, s:I}", "cmd", "timing_setup", "seeds", seeds, "flush_bytes", (json_int_t)p->flush_bytes);
}

static const char *keep_name(enum timed_keep k)
{
	static const char *const names[] = { NULL, "memfd", "share" };
	return names[k];
}

/* One round's wall time and reported time on one side, for the parent's clock. */
struct block_clock {
	double wall_us, sum_us;
	int m;
};

/* The parent's clock against the reported times (struct trusted_clock). Per round b, the candidate's
 * excess overhead is (Wc - Sc) - (Wr - Sr): wall minus reported, candidate less reference, so what the
 * host does in both blocks (drawing the fresh inputs, flushing, freezing the outputs, the channel)
 * cancels and what is left is work the candidate's process did outside its timed calls, or time it left
 * out of what it reported. The first round is left out (first touches on both sides). */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *x, int n)
{
	qsort(x, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* The reference's time per call over the candidate's by the parent's clock, from the candidate's reported
 * time per call and the excess per call: INFINITY where the excess makes the candidate's time 0 or less. */
static double trusted_speedup(double ref_us, double cand_us, double excess_us)
{
	return cand_us + excess_us > 0 ? ref_us / (cand_us + excess_us) : INFINITY;
}

/* The median of x[idx[0..n)], sorted in scratch (n values). */
static double median_at(const double *x, const int *idx, int n, double *scratch)
{
	for (int i = 0; i < n; i++)
		scratch[i] = x[idx[i]];
	return median_of(scratch, n);
}

/* The statistic: per kept round, the candidate's overhead per call less the reference's in the same round
 * (each side's block wall time less its reported times, over its calls); the excess is their median over
 * rounds. Every kept round counts the same, so a candidate that rewrites its times in most rounds and leaves
 * a few honest moves the median, and one that lies in fewer rounds than half cannot move the paired median
 * of its calls far either: no statistic here is steered by choosing where to lie. A busy machine disturbs
 * single blocks, on either side, which the median passes over. A percentile bootstrap over rounds gives the
 * interval; the speedup by the parent's clock is the reference's mean time per call over the candidate's
 * reported mean plus that excess. Beside it, the reported block sums: per round the reference's over the
 * candidate's, their median (block_speedup), which moving work from one call of a block to another cannot
 * change. */
static void trusted_summarise(struct trusted_clock *tc, const struct block_clock *r, const struct block_clock *c,
			      int rounds, int lead_us, double reported, uint32_t seed)
{
	memset(tc, 0, sizeof(*tc));
	double *d = xcalloc((size_t)rounds + 1, sizeof(double)), *orr = xcalloc((size_t)rounds + 1, sizeof(double));
	double *ratio = xcalloc((size_t)rounds + 1, sizeof(double)), *scratch = xcalloc((size_t)rounds + 1, sizeof(double));
	int *idx = xcalloc((size_t)rounds + 1, sizeof(int)), n = 0, calls = 0, least_m = 0;
	double ro = 0, co = 0, sr = 0, sc = 0;
	for (int b = 1; b < rounds; b++) {
		if (r[b].m <= 0 || c[b].m != r[b].m)
			continue;
		least_m = !least_m || c[b].m < least_m ? c[b].m : least_m;
		orr[n] = (r[b].wall_us - r[b].sum_us) / r[b].m;
		d[n] = (c[b].wall_us - c[b].sum_us) / c[b].m - orr[n];
		ratio[n] = c[b].sum_us > 0 ? r[b].sum_us / c[b].sum_us : INFINITY;
		idx[n] = n;
		ro += r[b].wall_us - r[b].sum_us;
		co += c[b].wall_us - c[b].sum_us;
		sr += r[b].sum_us;
		sc += c[b].sum_us;
		calls += c[b].m;
		n++;
	}
	tc->rounds = (size_t)n;
	if (n < 1 || calls <= 0) {
		free(d);
		free(orr);
		free(ratio);
		free(scratch);
		free(idx);
		return;
	}
	tc->measured = 1;
	tc->ref_overhead_us = ro / calls;
	tc->cand_overhead_us = co / calls;
	double ref_us = sr / calls, cand_us = sc / calls;
	enum { B = 2000 };
	double *boot = xcalloc(B, sizeof(double));
	int *pick = xcalloc((size_t)n, sizeof(int));
	struct sb_rng rng;
	sb_rng_seed(&rng, seed ^ 0x7C10C4);
	for (int k = 0; k < B; k++) {
		for (int i = 0; i < n; i++)
			pick[i] = (int)(sb_rng_uniform(&rng) * n);
		boot[k] = median_at(d, pick, n, scratch);
	}
	qsort(boot, B, sizeof(double), cmp_double);
	tc->ref_least_us = INFINITY;
	for (int i = 0; i < n; i++)
		tc->ref_least_us = orr[i] < tc->ref_least_us ? orr[i] : tc->ref_least_us;
	tc->excess_us = median_at(d, idx, n, scratch);
	/* the median's standard error from the median absolute deviation: 1.4826 MAD estimates a normal
	 * spread's sigma, and the median of n draws has sqrt(pi/2) sigma / sqrt(n) */
	double *dev = xcalloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++)
		dev[i] = fabs(d[i] - tc->excess_us);
	tc->excess_noise_us = 1.2533 * 1.4826 * median_at(dev, idx, n, scratch) / sqrt((double)n);
	free(dev);
	tc->excess_lo_us = boot[(int)(0.025 * B)];
	tc->excess_hi_us = boot[(int)(0.975 * B) - 1];
	tc->block_speedup = median_at(ratio, idx, n, scratch);
	tc->block_calls = least_m;
	free(boot);
	free(pick);
	free(d);
	free(orr);
	free(ratio);
	free(scratch);
	free(idx);
	tc->speedup = trusted_speedup(ref_us, cand_us, tc->excess_us);
	tc->lo = trusted_speedup(ref_us, cand_us, tc->excess_hi_us);
	tc->hi = trusted_speedup(ref_us, cand_us, tc->excess_lo_us);
	tc->reported = reported;
	if (lead_us != 0)
		snprintf(tc->note, sizeof(tc->note), "a device-side lead (%s us) runs before each start event: the host's "
			 "clock holds it on both sides, so the bound is not judged", lead_us < 0 ? "auto" : "fixed");
	else if (n < MIN_ROUNDS)
		snprintf(tc->note, sizeof(tc->note), "%d round%s kept, %d needed to measure the clock's noise (more "
			 "timed calls: --perf-trials)", n, n == 1 ? "" : "s", MIN_ROUNDS);
	else
		tc->judged = 1;
}

/* A paired median is not additive over a block: a candidate that sees a block's inputs before their calls
 * can do several calls' work in one and answer the others at once, every time true, and the median of the
 * pair ratios then rewards it. The sums of a block's reported times cannot be moved so. Per kept round, the
 * median of its pair ratios over the ratio of its sums is that gain; the median over rounds is block_gap
 * (so lying in fewer rounds than half cannot move it), and where it is over BLOCK_CAP the speedup and its
 * interval are scaled down by BLOCK_CAP / block_gap: moving work between calls gains at most BLOCK_CAP.
 * Within one round both sides' calls run under the same conditions, so rounds a busy machine or a slow
 * warm-up slowed whole leave the gap near 1, where the paired median against the sums of all rounds would
 * not (a CPU candidate whose first fifty calls run ten times slower: 1.03-1.32). An honest gap stays
 * within a few per cent; a switch penalty of a whole call on the first call of each block of four is 1.15.
 * The mean over means is a ratio of sums already. With the runtime checks off there is no cap, so an
 * attack's gain can be shown. */
static void block_cap(struct timing_result *t, const struct timing_plan *p, size_t n, int block)
{
	size_t nr = block > 0 ? (n + (size_t)block - 1) / (size_t)block : 0;
	double *gap = xcalloc(nr + 1, sizeof(double)), *r = xcalloc((size_t)block + 1, sizeof(double));
	int ng = 0;
	for (size_t k = 0; k < nr; k++) {
		size_t lo = k * (size_t)block, hi = lo + (size_t)block < n ? lo + (size_t)block : n;
		double se = 0, sc = 0;
		int m = 0;
		for (size_t i = lo; i < hi; i++) {
			if (!(t->candidate_us[i] > 0))
				continue;
			r[m++] = t->eager_us[i] / t->candidate_us[i];
			se += t->eager_us[i], sc += t->candidate_us[i];
		}
		if (m >= 2 && se > 0 && sc > 0)
			gap[ng++] = median_of(r, m) / (se / sc);
	}
	t->trusted.block_gap = ng ? median_of(gap, ng) : 0;
	free(gap);
	free(r);
	if (!p->block_cap || p->unpaired_mean || ng < MIN_ROUNDS || !(t->trusted.block_gap > BLOCK_CAP))
		return;
	double k = BLOCK_CAP / t->trusted.block_gap;
	t->speedup_eager *= k, t->speedup_eager_lo *= k, t->speedup_eager_hi *= k;
	t->speedup_eager_raw *= k, t->speedup_eager_raw_lo *= k, t->speedup_eager_raw_hi *= k;
	t->trusted.block_capped = 1;
}

/* The median pair ratio of the calls that repeated earlier inputs, and of the others; and `within`: each
 * repeat's ratio over the median ratio of the fresh calls of its own round, their median. A busy machine
 * slows whole blocks, which moves a round's ratios together (on a loaded 2-core machine an honest
 * candidate's repeats can come out 2x "faster" across rounds); a cache by content answers the repeats
 * faster than the fresh calls beside them. */
void timing_repeat_summarise(struct repeat_calls *rc, const double *ref, const double *cand, const char *repeat,
			     const int *round, size_t n)
{
	double *a = xcalloc(n + 1, sizeof(double)), *b = xcalloc(n + 1, sizeof(double));
	double *w = xcalloc(n + 1, sizeof(double)), *f = xcalloc(n + 1, sizeof(double));
	int na = 0, nb = 0, nw = 0;
	memset(rc, 0, sizeof(*rc));
	for (size_t i = 0; i < n; i++) {
		if (!(cand[i] > 0))
			continue;
		if (repeat[i])
			a[na++] = ref[i] / cand[i];
		else
			b[nb++] = ref[i] / cand[i];
	}
	for (size_t i = 0; i < n; i++) {
		if (!repeat[i] || !(cand[i] > 0))
			continue;
		/* its own round's fresh calls; a round of one call (a huge output) has none: then the rounds
		 * on either side of it */
		int nf = 0;
		for (int span = 0; span <= 1 && !nf; span++)
			for (size_t j = 0; j < n; j++)
				if (abs(round[j] - round[i]) <= span && !repeat[j] && cand[j] > 0)
					f[nf++] = ref[j] / cand[j];
		if (nf)
			w[nw++] = ref[i] / cand[i] / median_of(f, nf);
	}
	rc->n = (size_t)na;
	if (na && nb) {
		rc->ratio_repeat = median_of(a, na);
		rc->ratio_fresh = median_of(b, nb);
	}
	if (nw)
		rc->within = median_of(w, nw);
	free(a);
	free(b);
	free(w);
	free(f);
}

/* The GPU-only diagnostic (struct gpu_only_time): one block per side, reference first, behind the
 * automatic lead (worker.py's auto_lead_us), so each call's time is the GPU's without the host's launch.
 * Its calls continue the timing's numbering, so their inputs are fresh ones from the timing's seeds. They
 * are not checked, and nothing is decided by the candidate's: its time is shown, never scored; the
 * reference's (trusted) tells a launch-heavy model. */
static int gpu_only_round(struct side *R, struct side *C, const struct timing_plan *p, long first_call,
			  double ref_deadline, double cand_deadline, struct gpu_only_time *g, struct worker_fault *fault,
			  int *cand_failed, char **msg)
{
	struct side *both[2] = { R, C };
	int m = p->gpu_only_calls;
	double *us[2], *host[2];
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < 2; i++) {
		json_t *sets = json_array(), *seeds = json_array(), *reply;
		for (int j = 0; j < m; j++) {
			json_array_append_new(sets, json_integer((first_call + j) % p->nsets));
			json_array_append_new(seeds, json_integer(seed_of_call(p, first_call + j)));
		}
		json_t *req = json_pack("{s:s, s:s, s:o, s:o, s:i, s:i, s:i, s:b, s:b}", "cmd", "time", "which", "model",
					"sets", sets, "seeds", seeds, "prime_ms", p->prime_ms, "lead_us", -1, "cpu", p->cpu,
					"gc", p->gc, "fresh", p->fresh);
		if (ask(both[i], req, -1, &reply, both[i]->is_cand ? cand_deadline : ref_deadline, fault, cand_failed, msg)) {
			if (i)
				free(us[0]), free(host[0]);
			return -1;
		}
		us[i] = xcalloc((size_t)m, sizeof(double));
		host[i] = xcalloc((size_t)m, sizeof(double));
		json_t *u = json_object_get(reply, "us"), *h = json_object_get(reply, "host_us");
		for (int j = 0; j < m; j++) {
			us[i][j] = json_number_value(json_array_get(u, j));
			host[i][j] = json_number_value(json_array_get(h, j));
		}
		int lead = (int)json_integer_value(json_object_get(reply, "lead_us"));
		g->lead_us = lead > g->lead_us ? lead : g->lead_us;
		json_decref(reply);
	}
	stats_compute(us[0], (size_t)m, &g->eager);
	stats_compute(us[1], (size_t)m, &g->candidate);
	stats_compute(host[0], (size_t)m, &g->eager_host);
	stats_compute(host[1], (size_t)m, &g->candidate_host);
	g->speedup = g->candidate.median > 0 ? g->eager.median / g->candidate.median : 0;
	g->measured = 1;
	for (int i = 0; i < 2; i++)
		free(us[i]), free(host[i]);
	return 0;
}

int timing_run(struct worker *ref, struct worker *cand, const struct timing_plan *p, double cand_deadline,
	       struct timing_result *t, struct worker_fault *fault, int *cand_failed, char **msg)
{
	struct side R = { ref, "model", 0, NULL }, C = { cand, "model", 1, NULL }, K = { ref, "compiled", 0, NULL };
	struct side *all[3] = { &R, &C, &K };
	int nsides = p->with_compiled ? 3 : 2;
	json_t *reply = NULL;
	double t0 = proc_now(), ref_deadline = t0 + p->cap_s + 600;
	struct sb_error cerr = { 0 };

	*msg = NULL;
	*cand_failed = 0;
	/* same seeds on both sides; the fingerprints must agree or the pair is not comparing like with like
	 * (the reference's may have come with its load) */
	json_t *reqs[3], *replies[3];
	int from = p->ref_inputs ? 1 : 0;
	for (int s = from; s < 2; s++)
		reqs[s] = timing_setup_request(p);
	if (ask_each(all + from, reqs + from, replies + from, 2 - from, ref_deadline, cand_deadline, fault,
		     cand_failed, msg))
		return -1;
	if (from)
		replies[0] = json_pack("{s:O}", "inputs", p->ref_inputs);
	int same = json_equal(json_object_get(replies[0], "inputs"), json_object_get(replies[1], "inputs"));
	json_decref(replies[0]);
	json_decref(replies[1]);
	if (!same) {
		*cand_failed = 1;
		*msg = xstrdup("the timing inputs the candidate drew differ from the reference's (something in the "
			       "candidate changes how get_inputs draws)");
		return -1;
	}
	/* both sides warm up at once: nothing is timed yet, and the first round is discarded anyway */
	for (int s = 0; s < nsides; s++)
		reqs[s] = json_pack("{s:s, s:s, s:i, s:i}", "cmd", "warmup", "which", all[s]->which, "min_ms",
				    p->warmup_ms, "min_calls", p->warmup_calls);
	if (ask_each(all, reqs, replies, nsides, ref_deadline, cand_deadline, fault, cand_failed, msg))
		return -1;
	for (int s = 0; s < nsides; s++)
		json_decref(replies[s]);

	struct frozen stop = freeze_target(cand);
	/* the machine's CPU time from here to the last round, less what the workers and this process took */
	pid_t own[3] = { getpid(), ref->h.pid, stop.worker ? stop.worker : cand->h.pid };
	struct noise_probe before, after;
	noise_read(&before, own, 3);
	int block = p->block > 0 ? p->block : 1;
	if (block > TIMING_MAX_BLOCK)
		block = TIMING_MAX_BLOCK;
	size_t cap = (size_t)p->max_pairs + (size_t)block;
	t->eager_us = xcalloc(cap, sizeof(double));
	t->candidate_us = xcalloc(cap, sizeof(double));
	t->compiled_us = xcalloc(cap, sizeof(double));
	double *dst[3] = { t->eager_us, t->candidate_us, t->compiled_us };
	double *rbuf = xcalloc(cap, sizeof(double));
	double *got[3] = { xcalloc(block, sizeof(double)), xcalloc(block, sizeof(double)),
			   xcalloc(block, sizeof(double)) };
	/* the host's time for the same calls, the longest lead and the calls launched too late, per side */
	double *host[3] = { xcalloc(cap, sizeof(double)), xcalloc(cap, sizeof(double)), xcalloc(cap, sizeof(double)) };
	double *got_host[3] = { xcalloc(block, sizeof(double)), xcalloc(block, sizeof(double)),
				xcalloc(block, sizeof(double)) };
	struct timing_side *sides[3] = { &t->eager, &t->candidate, &t->compiled };
	size_t n = 0, nclk = 0, clk_cap = 3 * ((size_t)p->max_pairs / (size_t)block + 2);
	unsigned *clk = xcalloc(clk_cap, sizeof(unsigned));
	unsigned long long clk_reasons = 0;
	/* the parent's clock, per round, for the reference and the candidate */
	size_t rounds_cap = (size_t)p->max_pairs / (size_t)block + 3;
	struct block_clock *rclock = xcalloc(rounds_cap, sizeof(*rclock)), *cclock = xcalloc(rounds_cap, sizeof(*cclock));
	char *repeat = xcalloc(cap, 1);
	int *roundof = xcalloc(cap, sizeof(int));
	int rounds = 0, rc = -1, pinned = 1, kept_rounds = 0;
	snprintf(t->stop_reason, sizeof(t->stop_reason), "max_pairs");
	for (int round = 0; (int)n < p->max_pairs && (size_t)round < rounds_cap; round++) {
		/* R C [K] on even rounds, [K] C R on odd ones: drift and clock changes hit both sides alike */
		int order[3] = { 0, 1, 2 };
		if (round % 2) {
			order[0] = nsides == 3 ? 2 : 1;
			order[1] = nsides == 3 ? 1 : 0;
			order[2] = 0;
		}
		int m = round == 0 ? block : block < p->max_pairs - (int)n ? block : p->max_pairs - (int)n;
		json_t *cand_reply = NULL, *ref_reply = NULL, *shipped = NULL;
		/* With per_call, every call of a block is a request of its own, carrying only its own set, seed and
		 * shipped inputs: nothing of call j+1 is in the candidate's process before call j has answered, so
		 * no work can move from one call to an earlier one. Every side is asked the same way, so both walls
		 * of the parent's clock hold the same request handling. Otherwise one request carries the block. */
		int nreq = p->per_call ? m : 1, per = p->per_call ? 1 : m;
		int ship_fd[TIMING_MAX_BLOCK];
		for (int q = 0; q < nreq; q++)
			ship_fd[q] = -1;
		if (p->fresh && p->ship) { /* the round's fresh inputs, drawn by the (trusted) reference worker */
			json_t *seeds = json_array();
			for (int j = 0; j < m; j++)
				json_array_append_new(seeds, json_integer(call_seed(p, (long)round * block + j)));
			if (ask(&R, json_pack("{s:s, s:o, s:b}", "cmd", "draw", "seeds", seeds, "each", p->per_call), -1, &shipped,
				ref_deadline, fault, cand_failed, msg))
				goto out;
			json_t *parts = p->per_call ? json_object_get(shipped, "parts") : NULL;
			int nparts = p->per_call ? (json_is_array(parts) ? (int)json_array_size(parts) : -1) : 1;
			for (int q = 0; q < nreq; q++)
				ship_fd[q] = worker_take_fd(ref);
			if (nparts != nreq || ship_fd[nreq - 1] < 0) {
				*msg = xstrdup("the reference worker shipped no inputs");
				goto round_failed;
			}
		}
		for (int i = 0; i < nsides; i++) {
			struct side *s = all[order[i]];
			enum timed_keep keep = !p->check || s == &K ? TIMED_KEEP_NONE : p->check->keep;
			if (!s->is_cand)
				freeze(&stop, 1);
			/* priming is a request of its own, answered before the block's request (its seeds, its shipped
			 * inputs) is sent: no candidate code runs, untimed, where the block's inputs can be seen; it
			 * names the set before the block's first */
			double side_deadline = s->is_cand ? cand_deadline : ref_deadline;
			long first = ((long)round * block) % p->nsets;
			int arc = 0;
			if (p->prime_ms > 0) {
				arc = ask(s, json_pack("{s:s, s:s, s:I, s:i}", "cmd", "prime", "which", s->which, "set",
						       (json_int_t)((first + p->nsets - 1) % p->nsets), "ms", p->prime_ms),
					  -1, &reply, side_deadline, fault, cand_failed, msg);
				json_decref(reply);
			}
			/* the block's requests; their replies are gathered into one, as one request would answer */
			json_t *block_reply = NULL;
			double wall_us = 0;
			for (int q = 0; arc == 0 && q < nreq; q++) {
				/* call j of every side's block: the same slot and seed, so the fresh inputs and the random
				 * draws inside forward match across sides */
				json_t *sets = json_array(), *seeds = json_array();
				for (int j = q * per; j < q * per + per; j++) {
					long call = (long)round * block + j;
					json_array_append_new(sets, json_integer(call % p->nsets));
					json_array_append_new(seeds, json_integer(call_seed(p, call)));
				}
				json_t *req = json_pack("{s:s, s:s, s:o, s:o, s:i, s:i, s:b, s:b}", "cmd", "time", "which",
							s->which, "sets", sets, "seeds", seeds, "lead_us", p->lead_us, "cpu",
							p->cpu, "gc", p->gc, "fresh", p->fresh);
				if (shipped) {
					json_t *part = p->per_call ? json_array_get(json_object_get(shipped, "parts"), (size_t)q)
								   : shipped;
					json_object_set_new(req, "inputs", json_pack("{s:O, s:O}", "sets", json_object_get(part, "sets"),
										     "bytes", json_object_get(part, "bytes")));
				}
				if (keep != TIMED_KEEP_NONE) {
					json_object_set_new(req, "snapshot", json_string(keep_name(keep)));
					json_object_set_new(req, "max_output_bytes", json_integer(p->max_output_bytes));
				}
				arc = ask(s, req, ship_fd[q], &reply, side_deadline, fault, cand_failed, msg);
				if (arc)
					break;
				wall_us += (s->w->replied_at - s->w->sent_at) * 1e6;
				json_t *us = json_object_get(reply, "us");
				if (!json_is_array(us) || (int)json_array_size(us) != per) {
					*cand_failed = s->is_cand;
					*msg = xstrfmt("%s's worker answered a request for %d timed calls with %d times",
						       s->is_cand ? "the candidate" : "the reference", per,
						       json_is_array(us) ? (int)json_array_size(us) : -1);
					json_decref(reply);
					arc = -1;
					break;
				}
				block_reply = gather_reply(block_reply, reply, p->cpu);
			}
			if (!s->is_cand)
				freeze(&stop, 0);
			if (arc) {
				json_decref(block_reply);
				goto round_failed;
			}
			reply = block_reply;
			json_t *us = json_object_get(reply, "us");
			json_t *hu = json_object_get(reply, "host_us");
			double sum = 0;
			for (int j = 0; j < m; j++) {
				got[order[i]][j] = json_number_value(json_array_get(us, j));
				got_host[order[i]][j] = json_number_value(json_array_get(hu, j)); /* 0 when absent */
				sum += got[order[i]][j];
			}
			if (s != &K) {
				struct block_clock *bc = s->is_cand ? &cclock[round] : &rclock[round];
				*bc = (struct block_clock){ wall_us, sum, m };
			}
			if (round > 0) {
				struct timing_side *ts = sides[order[i]];
				int lead = (int)json_integer_value(json_object_get(reply, "lead_us"));
				ts->exposed += (int)json_integer_value(json_object_get(reply, "exposed"));
				ts->lead_us_max = lead > ts->lead_us_max ? lead : ts->lead_us_max;
			}
			if (p->cpu >= 0 && !json_is_true(json_object_get(reply, "pinned")))
				pinned = 0;
			if (s->is_cand)
				cand_reply = reply;
			else if (s == &R)
				ref_reply = reply;
			else
				json_decref(reply);
			if (round > 0)
				clock_sample(p->nvml, clk, &nclk, clk_cap, &clk_reasons);
		}
		drop_shipped(shipped, ship_fd, nreq);
		rounds = round + 1;
		/* both sides are in and the candidate waits for its next request: check every call of the round */
		if (p->check) {
			int crc = p->check->round(p->check->arg, (long)round * block, m, ref_reply, cand_reply, &cerr);
			json_decref(cand_reply);
			json_decref(ref_reply);
			if (crc) {
				rc = crc;
				if (crc < 0)
					*msg = xstrdup(cerr.msg);
				goto out;
			}
			t->checked_calls += (size_t)m;
		} else {
			json_decref(cand_reply);
			json_decref(ref_reply);
		}
		worker_drop_fds(ref);
		worker_drop_fds(cand);
		if (round == 0)
			continue; /* first round: caches, allocator and clocks still settling */
		kept_rounds++;
		for (int j = 0; j < m; j++, n++) {
			for (int s = 0; s < 3; s++) {
				dst[s][n] = got[s][j];
				host[s][n] = got_host[s][j];
			}
			repeat[n] = is_repeat(p, (long)round * block + j);
			roundof[n] = round;
		}
		if ((int)n >= MIN_PAIRS && kept_rounds >= MIN_ROUNDS) {
			ratios(t->eager_us, t->candidate_us, n, rbuf);
			if (median_rse(rbuf, n, p->base_seed) < p->rse_target) {
				snprintf(t->stop_reason, sizeof(t->stop_reason), "rse_target");
				break;
			}
		}
		if (proc_now() - t0 > p->cap_s) {
			snprintf(t->stop_reason, sizeof(t->stop_reason), "time_cap");
			break;
		}
		continue;
	round_failed: /* a side's request failed mid-round: the round's replies and shipped inputs go */
		json_decref(cand_reply);
		json_decref(ref_reply);
		drop_shipped(shipped, ship_fd, nreq);
		goto out;
	}
	if (p->gpu_only_calls > 0 &&
	    gpu_only_round(&R, &C, p, (long)rounds * block, ref_deadline, cand_deadline, &t->gpu_only, fault, cand_failed, msg))
		goto out;
	rc = 0;
out:
	worker_drop_fds(ref);
	worker_drop_fds(cand);
	for (int s = 0; s < 3; s++) {
		if (!rc)
			stats_compute(host[s], n, &sides[s]->host_us);
		free(got[s]);
		free(got_host[s]);
		free(host[s]);
	}
	if (!rc)
		clock_summarise(&t->gpu_clock, p->nvml, clk, nclk, clk_reasons);
	free(clk);
	free(rbuf);
	if (rc) {
		free(rclock);
		free(cclock);
		free(repeat);
		free(roundof);
		return rc;
	}
	noise_read(&after, own, 3);
	t->ran = 1;
	t->cpu = p->cpu;
	t->pinned = p->cpu >= 0 && pinned;
	t->eager.available = t->candidate.available = 1;
	t->compiled.available = p->with_compiled;
	t->revalidated = p->check != NULL;
	summarise(t, n, block, p->unpaired_mean, p->base_seed);
	trusted_summarise(&t->trusted, rclock, cclock, rounds, p->lead_us, t->speedup_eager_raw, p->base_seed);
	block_cap(t, p, n, block);
	t->trusted.round_us = xcalloc((size_t)rounds * 5 + 1, sizeof(double));
	for (int b = 0; b < rounds; b++) {
		double *x = &t->trusted.round_us[5 * b];
		x[0] = rclock[b].wall_us, x[1] = rclock[b].sum_us, x[2] = cclock[b].wall_us, x[3] = cclock[b].sum_us;
		x[4] = cclock[b].m;
	}
	t->trusted.nround = (size_t)rounds;
	timing_repeat_summarise(&t->repeats, t->eager_us, t->candidate_us, repeat, roundof, n);
	noise_judge(&before, &after, (int)sysconf(_SC_NPROCESSORS_ONLN), t->eager.us.cv, &t->noise);
	free(rclock);
	free(cclock);
	free(repeat);
	free(roundof);
	return 0;
}
