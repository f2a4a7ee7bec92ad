/* timing.c - the timing loop: warm both sides up, then rounds of one block of calls per side in
 * alternating order (R C, C R, ...; with torch.compile R C K, K C R), call j of each block forming
 * pair j; the first round is discarded; it stops when the median pair ratio is known to rse_target,
 * the pair budget is spent, or the wall-clock cap is hit. */
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_PAIRS 20

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

static void ratios(const double *num, const double *den, size_t n, double *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = den[i] > 0 ? num[i] / den[i] : 0;
}

static void summarise(struct timing_result *t, size_t n, int block, uint32_t seed)
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

/* One request to one side; on failure says who failed and why. */
static int ask(struct side *s, json_t *req, json_t **reply, double deadline, struct worker_fault *fault,
	       int *cand_failed, char **msg)
{
	return ask_each(&s, &req, reply, 1, deadline, deadline, fault, cand_failed, msg);
}

json_t *timing_setup_request(int nsets, uint32_t base_seed, long long flush_bytes)
{
	json_t *seeds = json_array();
	for (int k = 0; k < nsets; k++)
		json_array_append_new(seeds, json_integer(trial_seed(base_seed, 1000 + k)));
	return json_pack("{s:s, s:o, s:I}", "cmd", "timing_setup", "seeds", seeds, "flush_bytes", (json_int_t)flush_bytes);
}

int timing_run(struct worker *ref, struct worker *cand, const struct timing_plan *p, double cand_deadline,
	       struct timing_result *t, struct worker_fault *fault, int *cand_failed, char **msg)
{
	struct side R = { ref, "model", 0, NULL }, C = { cand, "model", 1, NULL }, K = { ref, "compiled", 0, NULL };
	struct side *all[3] = { &R, &C, &K };
	int nsides = p->with_compiled ? 3 : 2;
	json_t *reply = NULL;
	double t0 = proc_now(), ref_deadline = t0 + p->cap_s + 600;

	*msg = NULL;
	*cand_failed = 0;
	/* same seeds on both sides; the fingerprints must agree or the pair is not comparing like with like
	 * (the reference's may have come with its load) */
	json_t *reqs[3], *replies[3];
	int from = p->ref_inputs ? 1 : 0;
	for (int s = from; s < 2; s++)
		reqs[s] = timing_setup_request(p->nsets, p->base_seed, p->flush_bytes);
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

	int block = p->block > 0 ? p->block : 1;
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
	int rc = -1, pinned = 1;
	snprintf(t->stop_reason, sizeof(t->stop_reason), "max_pairs");
	for (int round = 0; (int)n < p->max_pairs; round++) {
		/* R C [K] on even rounds, [K] C R on odd ones: drift and clock changes hit both sides alike */
		int order[3] = { 0, 1, 2 };
		if (round % 2) {
			order[0] = nsides == 3 ? 2 : 1;
			order[1] = nsides == 3 ? 1 : 0;
			order[2] = 0;
		}
		int m = round == 0 ? block : block < p->max_pairs - (int)n ? block : p->max_pairs - (int)n;
		for (int i = 0; i < nsides; i++) {
			struct side *s = all[order[i]];
			/* call j of every side's block: the same input set and seed, so random draws inside
			 * forward match across sides */
			json_t *sets = json_array(), *seeds = json_array();
			for (int j = 0; j < m; j++) {
				long call = (long)round * block + j;
				json_array_append_new(sets, json_integer(call % p->nsets));
				json_array_append_new(seeds, json_integer(trial_seed(p->base_seed, 5000 + (uint32_t)call)));
			}
			json_t *req = json_pack("{s:s, s:s, s:o, s:o, s:i, s:i, s:i, s:b}", "cmd", "time", "which", s->which,
						"sets", sets, "seeds", seeds, "prime_ms", p->prime_ms, "lead_us", p->lead_us,
						"cpu", p->cpu, "gc", p->gc);
			if (ask(s, req, &reply, s->is_cand ? cand_deadline : ref_deadline, fault, cand_failed, msg))
				goto out;
			json_t *us = json_object_get(reply, "us");
			if (!json_is_array(us) || (int)json_array_size(us) != m) {
				*cand_failed = s->is_cand;
				*msg = xstrfmt("%s's worker answered a block of %d timed calls with %d times",
					       s->is_cand ? "the candidate" : "the reference", m,
					       json_is_array(us) ? (int)json_array_size(us) : -1);
				json_decref(reply);
				goto out;
			}
			json_t *hu = json_object_get(reply, "host_us");
			for (int j = 0; j < m; j++) {
				got[order[i]][j] = json_number_value(json_array_get(us, j));
				got_host[order[i]][j] = json_number_value(json_array_get(hu, j)); /* 0 when absent */
			}
			if (round > 0) {
				struct timing_side *ts = sides[order[i]];
				int lead = (int)json_integer_value(json_object_get(reply, "lead_us"));
				ts->exposed += (int)json_integer_value(json_object_get(reply, "exposed"));
				ts->lead_us_max = lead > ts->lead_us_max ? lead : ts->lead_us_max;
			}
			if (p->cpu >= 0 && !pinned_to(json_object_get(reply, "cpus"), p->cpu))
				pinned = 0;
			json_decref(reply);
			if (round > 0)
				clock_sample(p->nvml, clk, &nclk, clk_cap, &clk_reasons);
		}
		if (round == 0)
			continue; /* first round: caches, allocator and clocks still settling */
		for (int j = 0; j < m; j++, n++)
			for (int s = 0; s < 3; s++) {
				dst[s][n] = got[s][j];
				host[s][n] = got_host[s][j];
			}
		if ((int)n >= MIN_PAIRS) {
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
	}
	rc = 0;
out:
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
	if (rc) {
		free(rbuf);
		return -1;
	}
	free(rbuf);
	t->ran = 1;
	t->cpu = p->cpu;
	t->pinned = p->cpu >= 0 && pinned;
	t->eager.available = t->candidate.available = 1;
	t->compiled.available = p->with_compiled;
	summarise(t, n, block, p->base_seed);

	/* the outputs of the last timed calls, saved for the parent to re-validate (H12), both at once */
	if (!p->ref_out)
		return 0; /* the process factor's calls: both sides ran the reference, nothing to re-validate */
	for (int s = 0; s < 2; s++)
		reqs[s] = json_pack("{s:s, s:s, s:s, s:I}", "cmd", "save_last", "which", "model", "out",
				    s ? p->cand_out : p->ref_out, "max_output_bytes", (json_int_t)p->max_output_bytes);
	if (ask_each(all, reqs, replies, 2, ref_deadline, cand_deadline, fault, cand_failed, msg))
		return -1;
	json_decref(replies[0]);
	json_decref(replies[1]);
	return 0;
}
