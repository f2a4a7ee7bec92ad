/* test_timing.c - the paired timing loop against scripted fake workers (tests/fixtures/
 * fake_timing_worker.py): alternating order, the discarded first round, the stop rules, the speedup
 * and its interval, blocks of calls paired call by call, and order_bias exposing a penalty that
 * lands on whoever goes second in a round. */
#include "testutil.h"

#include <math.h>
#include <signal.h>

#include "checks/runtime.h"
#include "eval/timing/timing.h"
#include "eval/verdict.h"

static char *fixture(const char *rel)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	char *rel_path = xstrfmt("%s/%s", root ? root : ".", rel), *abs = realpath(rel_path, NULL);
	free(rel_path);
	assert_non_null(abs); /* the workers run in another folder: the path must be absolute */
	return abs;
}

static const char *python(void)
{
	const char *p = getenv("STITCHBENCH_PYTHON");
	return p && *p ? p : "python3";
}

struct pair {
	struct worker ref, cand;
	char *dir, *script;
	struct strvec env_ref, env_cand;
};

static void start_pair_spinning(struct pair *p, const char *ref_us, const char *cand_us, int penalty, const char *ref_spin,
				const char *cand_spin);
/* One more NAME=VALUE for the candidate's (the reference's) environment in the next start_pair_spinning
 * (NULL: none). */
static char *cand_extra_env, *ref_extra_env;

static void start_pair(struct pair *p, const char *ref_us, const char *cand_us, int penalty)
{
	start_pair_spinning(p, ref_us, cand_us, penalty, "0", "0");
}

/* As start_pair, each worker's calls also really taking the given microseconds (FAKE_SPIN_US). */
static void start_pair_spinning(struct pair *p, const char *ref_us, const char *cand_us, int penalty, const char *ref_spin,
				const char *cand_spin)
{
	struct sb_error err = { 0 };
	memset(p, 0, sizeof(*p));
	p->dir = tmpdir_make();
	p->script = fixture("tests/fixtures/fake_timing_worker.py");
	char *shared = xstrfmt("FAKE_SHARED=%s/last", p->dir), *log = xstrfmt("%s/calls.log", p->dir);
	strvec_push(&p->env_ref, shared);
	strvec_push(&p->env_ref, "FAKE_NAME=ref");
	strvec_push(&p->env_cand, shared);
	strvec_push(&p->env_cand, "FAKE_NAME=cand");
	strvec_pushf(&p->env_ref, "FAKE_SPIN_US=%s", ref_spin);
	strvec_pushf(&p->env_cand, "FAKE_SPIN_US=%s", cand_spin);
	if (cand_extra_env)
		strvec_push(&p->env_cand, cand_extra_env);
	if (ref_extra_env)
		strvec_push(&p->env_ref, ref_extra_env);
	/* worker_start runs `python -u script`; arguments ride in the script path's argv via a wrapper */
	char *ref_script = xstrfmt("%s/ref.py", p->dir), *cand_script = xstrfmt("%s/cand.py", p->dir);
	FILE *f = fopen(ref_script, "w");
	fprintf(f, "import sys, runpy\nsys.argv = ['fake', '%s', '%s', '%s']\nrunpy.run_path('%s', run_name='__main__')\n",
		ref_us, penalty ? "penalty" : "none", log, p->script);
	fclose(f);
	f = fopen(cand_script, "w");
	fprintf(f, "import sys, runpy\nsys.argv = ['fake', '%s', '%s', '%s']\nrunpy.run_path('%s', run_name='__main__')\n",
		cand_us, penalty ? "penalty" : "none", log, p->script);
	fclose(f);
	struct worker_spec rs = { python(), ref_script, p->dir, p->env_ref.v, NULL, 0, 0, NULL };
	struct worker_spec cs = { python(), cand_script, p->dir, p->env_cand.v, NULL, 0, 0, NULL };
	assert_int_equal(worker_start(&p->ref, &rs, &err), 0);
	assert_int_equal(worker_start(&p->cand, &cs, &err), 0);
	free(shared);
	free(log);
	free(ref_script);
	free(cand_script);
}

static void stop_pair(struct pair *p)
{
	worker_stop(&p->ref, 2);
	worker_stop(&p->cand, 2);
	proc_result_release(&p->ref.log);
	proc_result_release(&p->cand.log);
	strvec_clear(&p->env_ref);
	strvec_clear(&p->env_cand);
	free(p->script);
	tmpdir_remove(p->dir);
}

static void free_timing(struct timing_result *t)
{
	free(t->eager_us);
	free(t->candidate_us);
	free(t->compiled_us);
}

/* Runs the loop and fails the test with both workers' logs when it does not succeed. */
static void run_ok(struct pair *p, const struct timing_plan *pl, struct timing_result *t)
{
	struct worker_fault f;
	int cand_failed;
	char *msg = NULL;
	if (timing_run(&p->ref, &p->cand, pl, proc_now() + 60, t, &f, &cand_failed, &msg))
		fail_msg("timing failed: %s; logs: %s %s", msg, p->ref.log.err.buf, p->cand.log.err.buf);
}

static struct timing_plan plan(int pairs, int block, double rse)
{
	struct timing_plan pl = { .max_pairs = pairs, .block = block, .warmup_ms = 0, .warmup_calls = 1, .rse_target = rse,
				  .cap_s = 60, .nsets = 3, .base_seed = 42,
				  .cpu = -1, .block_cap = 1 };
	return pl;
}

static void alternates_and_discards_the_first_round(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "100", "50", 0);
	struct timing_plan pl = plan(6, 1, 0); /* rse 0: never stops early */
	run_ok(&p, &pl, &t);
	assert_int_equal(t.pairs, 6);
	assert_string_equal(t.stop_reason, "max_pairs");
	assert_true(fabs(t.speedup_eager - 2.0) < 1e-9);
	assert_true(fabs(t.speedup_eager_lo - 2.0) < 1e-9 && fabs(t.speedup_eager_hi - 2.0) < 1e-9);
	assert_true(fabs(t.order_bias - 1.0) < 1e-9);
	/* the call log: 7 rounds (one discarded), R C then C R alternately, sets rotating 0 1 2 */
	char *path = xstrfmt("%s/calls.log", p.dir);
	struct strbuf log = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&log, path, 0), 0);
	const char *expect = "ref model 0 ", *rest = "cand model 0 ";
	assert_true(starts_with(log.buf, expect));
	assert_non_null(strstr(log.buf, rest));
	assert_non_null(strstr(log.buf, "\ncand model 1 "));
	const char *order[] = { "ref", "cand", "cand", "ref", "ref", "cand", "cand", "ref" };
	const char *line = log.buf;
	for (int i = 0; i < 8; i++, line = strchr(line, '\n') + 1)
		assert_true(starts_with(line, order[i]));
	int lines = 0;
	for (char *c = log.buf; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 14);
	strbuf_release(&log);
	free(path);
	free_timing(&t);
	stop_pair(&p);
}

static void order_bias_exposes_a_second_call_penalty(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "60", "60", 1);
	struct timing_plan pl = plan(20, 1, 0);
	run_ok(&p, &pl, &t);
	/* identical sides, but whoever goes second pays 30 us: ratios alternate 60/90 and 90/60 */
	assert_true(fabs(t.order_bias - (60.0 / 90.0) / (90.0 / 60.0)) < 1e-9);
	assert_true(t.speedup_eager_hi - t.speedup_eager_lo > 0.5);
	free_timing(&t);
	stop_pair(&p);
}

static void stops_once_the_ratio_is_known(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "80", "40", 0);
	struct timing_plan pl = plan(100, 1, 0.005);
	run_ok(&p, &pl, &t);
	assert_string_equal(t.stop_reason, "rse_target");
	assert_int_equal(t.pairs, 20); /* constant ratios: known at the minimum pair count */
	free_timing(&t);
	stop_pair(&p);
}

static void blocks_pair_call_by_call_and_absorb_a_switch_penalty(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "60", "60", 1);
	struct timing_plan pl = plan(25, 5, 0);
	run_ok(&p, &pl, &t);
	/* 25 pairs in blocks of 5 after a discarded round: 6 rounds of 5 calls per side */
	assert_int_equal(t.pairs, 25);
	/* the 30 us switch penalty hits the first call of the second block only: 1 pair in 5 is off,
	 * so the median ratio is exactly 1 */
	assert_true(fabs(t.speedup_eager - 1.0) < 1e-9);
	char *path = xstrfmt("%s/calls.log", p.dir);
	struct strbuf log = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&log, path, 0), 0);
	int lines = 0;
	for (char *c = log.buf; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 2 * 30);
	/* call j of a round has the same set and seed on both sides */
	char ref_line[128], cand_line[128];
	const char *r = strstr(log.buf, "ref model 1 "), *c = strstr(log.buf, "cand model 1 ");
	assert_non_null(r);
	assert_non_null(c);
	sscanf(r + 4, "%127[^\n]", ref_line);
	sscanf(c + 5, "%127[^\n]", cand_line);
	assert_string_equal(ref_line, cand_line);
	strbuf_release(&log);
	free(path);
	free_timing(&t);
	stop_pair(&p);
}

/* Priming (GPU) is a request of its own before each block, answered before the block's request: it names
 * a set other than the block's first and carries neither the block's seeds nor its inputs, so nothing it
 * runs can see the block. */
static void priming_comes_before_the_block_and_sees_none_of_it(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "60", "60", 0);
	struct timing_plan pl = plan(8, 4, 0);
	pl.prime_ms = 5;
	run_ok(&p, &pl, &t);
	char *path = xstrfmt("%s/calls.log", p.dir);
	struct strbuf log = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&log, path, 0), 0);
	/* per side: prime, then the block's 4 calls; 3 rounds (the first discarded) */
	int primes = 0, calls_since_prime[2] = { -1, -1 }, prime_set[2] = { -1, -1 };
	char who[8], what[16], seeds[16];
	int set;
	for (const char *line = log.buf; *line; line = strchr(line, '\n') + 1) {
		assert_int_equal(sscanf(line, "%7s %15s %d %15s", who, what, &set, seeds), 4);
		int side = !strcmp(who, "cand");
		if (!strcmp(what, "prime")) {
			assert_string_equal(seeds, "none");
			assert_true(calls_since_prime[side] == -1 || calls_since_prime[side] == 4);
			calls_since_prime[side] = 0;
			prime_set[side] = set;
			primes++;
			continue;
		}
		assert_true(calls_since_prime[side] >= 0); /* no call before its block's priming */
		if (calls_since_prime[side]++ == 0)
			assert_int_not_equal(set, prime_set[side] % 3); /* never the block's first set */
	}
	assert_int_equal(primes, 2 * 3);
	strbuf_release(&log);
	free(path);
	free_timing(&t);
	stop_pair(&p);
}

static void a_short_last_block_stops_at_the_pair_budget(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "90", "30", 0);
	struct timing_plan pl = plan(12, 5, 0);
	run_ok(&p, &pl, &t);
	assert_int_equal(t.pairs, 12); /* 5 + 5 + 2 after the discarded round */
	assert_true(fabs(t.speedup_eager - 3.0) < 1e-9);
	free_timing(&t);
	stop_pair(&p);
}

static void a_dead_candidate_is_blamed_on_the_candidate(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	struct worker_fault f;
	int cand_failed = 0;
	char *msg = NULL;
	start_pair(&p, "80", "40", 0);
	kill(p.cand.h.pid, SIGKILL); /* the pid itself: its group may not exist yet this early */
	struct timing_plan pl = plan(5, 1, 0);
	assert_int_equal(timing_run(&p.ref, &p.cand, &pl, proc_now() + 20, &t, &f, &cand_failed, &msg), -1);
	assert_int_equal(cand_failed, 1);
	assert_non_null(strstr(msg, "the candidate"));
	free(msg);
	free_timing(&t);
	stop_pair(&p);
}

static void clock_rule(const struct timing_result *t, struct findings *found)
{
	const struct trusted_clock *tc = &t->trusted;
	struct rt_clock clk = { tc->reported, tc->speedup, tc->hi, tc->excess_us, tc->ref_least_us, tc->cand_overhead_us,
				tc->ref_overhead_us, tc->block_speedup, tc->block_calls, tc->excess_noise_us };
	rt_rule_trusted_clock(&clk, found);
}

/* The candidate reports a fifth of what its calls take: the parent's clock around its blocks holds the
 * whole time, so the speedup by that clock stays far below the reported 5x and H08 fires; an honest
 * candidate twice as fast as the reference is no finding. Calls of 40 ms keep a busy machine's scheduling
 * (a few ms) small beside them. */
static void the_parents_clock_bounds_what_the_candidate_reports(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	struct findings found = { 0 };
	start_pair_spinning(&p, "40000", "8000", 0, "40000", "40000");
	struct timing_plan pl = plan(12, 2, 0);
	run_ok(&p, &pl, &t);
	assert_true(t.trusted.measured && t.trusted.judged);
	assert_true(fabs(t.speedup_eager - 5.0) < 1e-9);
	if (!(t.trusted.speedup < 2.0) || !(t.trusted.excess_lo_us > 16000)) /* 32 ms per call left out */
		fail_msg("trusted %.3f, excess %.0f [%.0f, %.0f] us, overheads %.0f / %.0f us", t.trusted.speedup,
			 t.trusted.excess_us, t.trusted.excess_lo_us, t.trusted.excess_hi_us, t.trusted.ref_overhead_us,
			 t.trusted.cand_overhead_us);
	clock_rule(&t, &found);
	assert_true(findings_has(&found, "H08"));
	findings_release(&found);
	free_timing(&t);
	stop_pair(&p);

	/* two kept rounds: the bootstrap over rounds has no noise to measure, so the bound is not judged and
	 * the note says what would make it so */
	start_pair_spinning(&p, "40000", "8000", 0, "40000", "40000");
	memset(&t, 0, sizeof(t));
	pl = plan(2, 1, 0);
	run_ok(&p, &pl, &t);
	assert_true(t.trusted.measured);
	assert_int_equal(t.trusted.rounds, 2);
	assert_false(t.trusted.judged);
	assert_non_null(strstr(t.trusted.note, "2 rounds kept, 3 needed"));
	free_timing(&t);
	stop_pair(&p);
	pl = plan(12, 2, 0);

	start_pair_spinning(&p, "40000", "20000", 0, "40000", "20000");
	memset(&t, 0, sizeof(t));
	run_ok(&p, &pl, &t);
	clock_rule(&t, &found);
	if (findings_has(&found, "H08"))
		fail_msg("honest: trusted %.3f (at most %.3f), excess %.0f [%.0f, %.0f] us", t.trusted.speedup, t.trusted.hi,
			 t.trusted.excess_us, t.trusted.excess_lo_us, t.trusted.excess_hi_us);
	findings_release(&found);
	free_timing(&t);
	stop_pair(&p);
}

/* Attempts at a measurement whose pattern a loaded machine's scheduling can drown: the pattern is the
 * precondition, checked each time, and the rule's verdict is asserted on the first attempt that shows it. */
#define WOBBLE_ATTEMPTS 3

/* A candidate that rewrites its times in every kept round but one or two (32 ms per call left out). Each
 * side's least overhead over the rounds takes an honest round and sees at most noise, which this test
 * shows from the rounds' own numbers; the median of the rounds' paired excess sees the lie, and H08
 * fires. */
static void one_honest_round_does_not_hide_the_others(void **state)
{
	(void)state;
	/* one honest round of six, then two */
	static const char *const honest[] = { "FAKE_HONEST_BLOCKS=3", "FAKE_HONEST_BLOCKS=2,5" };
	for (size_t i = 0; i < sizeof(honest) / sizeof(*honest); i++) {
		char why[256] = "";
		/* a loaded machine can spread single blocks by more than the rule's noise gate lets pass: such a
		 * measurement is taken again (WOBBLE_ATTEMPTS); the first that shows everything below passes,
		 * and none showing it fails */
		for (int a = 0; a < WOBBLE_ATTEMPTS; a++) {
			struct pair p;
			struct timing_result t = { 0 };
			struct findings found = { 0 };
			cand_extra_env = xstrdup(honest[i]);
			start_pair_spinning(&p, "40000", "8000", 0, "40000", "40000");
			free(cand_extra_env);
			cand_extra_env = NULL;
			struct timing_plan pl = plan(12, 2, 0);
			run_ok(&p, &pl, &t);
			assert_true(t.trusted.measured && t.trusted.judged);
			assert_int_equal(t.trusted.nround, 7);
			/* the attack works against the least overhead per side */
			double least_r = INFINITY, least_c = INFINITY;
			for (size_t b = 1; b < t.trusted.nround; b++) {
				const double *x = &t.trusted.round_us[5 * b];
				least_r = fmin(least_r, (x[0] - x[1]) / x[4]);
				least_c = fmin(least_c, (x[2] - x[3]) / x[4]);
			}
			clock_rule(&t, &found);
			why[0] = '\0';
			/* (a loaded machine adds a few ms to single blocks, so the bound is half the lie, not zero) */
			if (!(least_c - least_r < 16000))
				snprintf(why, sizeof(why), "%s: the honest rounds should hide most of the lie from the least "
					 "overheads: %.0f vs %.0f us", honest[i], least_c, least_r);
			else if (!(t.trusted.excess_us > 16000) || !(t.trusted.speedup < 2.0))
				snprintf(why, sizeof(why), "%s: trusted %.3f, excess %.0f [%.0f, %.0f] us", honest[i],
					 t.trusted.speedup, t.trusted.excess_us, t.trusted.excess_lo_us, t.trusted.excess_hi_us);
			else if (!findings_has(&found, "H08"))
				snprintf(why, sizeof(why), "%s: no H08 (excess %.0f us, its standard error %.0f us)", honest[i],
					 t.trusted.excess_us, t.trusted.excess_noise_us);
			findings_release(&found);
			free_timing(&t);
			stop_pair(&p);
			if (!why[0])
				break;
		}
		if (why[0])
			fail_msg("%s (in %d attempts)", why, WOBBLE_ATTEMPTS);
	}
}

/* A candidate that does a block's work in its first call (its inputs were in the process before their
 * calls) and answers the others at once: every time it reports is true and its blocks take what the
 * reference's take, so the parent's clock has nothing to object to, but the paired median of its calls
 * says 20x. The sums of its blocks say 1x: H08. An honest candidate whose first call of a block pays a
 * switch penalty is no finding. */
/* Both workers spend 2000 us a call; the candidate reports its blocks with FAKE_FRONTLOAD=share. */
static void start_frontloading(struct pair *p, const char *share)
{
	cand_extra_env = xstrfmt("FAKE_FRONTLOAD=%s", share);
	start_pair_spinning(p, "2000", "2000", 0, "2000", "2000");
	free(cand_extra_env);
	cand_extra_env = NULL;
}

static void work_moved_between_calls_of_a_block_is_seen_by_the_sums(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	struct findings found = { 0 };
	start_frontloading(&p, "1");
	struct timing_plan pl = plan(16, 4, 0);
	run_ok(&p, &pl, &t);
	assert_true(t.ratio_eager.median > 10);
	assert_true(t.trusted.block_speedup > 0.9 && t.trusted.block_speedup < 1.1);
	assert_int_equal(t.trusted.block_calls, 4);
	assert_true(t.trusted.block_capped && t.trusted.block_gap > 10);
	assert_true(t.speedup_eager <= BLOCK_CAP * t.trusted.block_speedup * 1.01);
	struct rt_clock clk = { .reported = t.trusted.reported, .block_speedup = t.trusted.block_speedup,
				.block_calls = t.trusted.block_calls };
	rt_rule_block_sums(&clk, &found);
	assert_true(findings_has(&found, "H08"));
	findings_release(&found);
	free_timing(&t);
	stop_pair(&p);

	start_pair(&p, "90", "30", 1);
	memset(&t, 0, sizeof(t));
	run_ok(&p, &pl, &t);
	struct rt_clock honest = { .reported = t.trusted.reported, .block_speedup = t.trusted.block_speedup,
				   .block_calls = t.trusted.block_calls };
	rt_rule_block_sums(&honest, &found);
	if (findings_has(&found, "H08") || t.trusted.block_capped)
		fail_msg("honest with a switch penalty: %.3f by calls, %.3f by sums, gap %.3f%s", t.trusted.reported,
			 t.trusted.block_speedup, t.trusted.block_gap, t.trusted.block_capped ? ", capped" : "");
	assert_true(t.speedup_eager == t.ratio_eager.median);
	findings_release(&found);
	free_timing(&t);
	stop_pair(&p);
}

/* With per_call (checks.runtime), every timed call is a request of its own: a worker that would answer a
 * block's later calls from work done in its first has no later call in any request, so its calls time as
 * they are and the paired median, the sums and the reference agree; the rounds keep their blocks. */
static void each_call_its_own_request_leaves_nothing_to_move(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_frontloading(&p, "1");
	struct timing_plan pl = plan(16, 4, 0);
	pl.per_call = 1;
	run_ok(&p, &pl, &t);
	assert_int_equal(t.pairs, 16);
	assert_int_equal(t.trusted.block_calls, 4);
	if (!(t.ratio_eager.median > 0.9 && t.ratio_eager.median < 1.1) || t.trusted.block_capped)
		fail_msg("paired %.3f, sums %.3f, gap %.3f%s", t.ratio_eager.median, t.trusted.block_speedup,
			 t.trusted.block_gap, t.trusted.block_capped ? ", capped" : "");
	free_timing(&t);
	stop_pair(&p);
}

/* Moving less of the work, a third of each later call's into the first of its block, keeps the paired
 * median under the block-sums rule's 1.5x: no finding, and without the cap a speedup of 1.4x for work that
 * takes as long as the reference's. The reported speedup is held to BLOCK_CAP times the sums' 1.0. */
static void moving_part_of_a_blocks_work_gains_at_most_the_cap(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	struct findings found = { 0 };
	start_frontloading(&p, "0.3");
	struct timing_plan pl = plan(16, 4, 0);
	run_ok(&p, &pl, &t);
	if (!(t.ratio_eager.median > 1.35))
		fail_msg("the move should buy the paired median about 1/0.7: %.3f", t.ratio_eager.median);
	struct rt_clock clk = { .reported = t.trusted.reported, .block_speedup = t.trusted.block_speedup,
				.block_calls = t.trusted.block_calls };
	rt_rule_block_sums(&clk, &found);
	assert_false(findings_has(&found, "H08"));
	assert_true(t.trusted.block_capped);
	assert_true(t.trusted.reported > 1.35); /* the paired median stays in the verdict as measured */
	if (!(t.speedup_eager <= BLOCK_CAP * t.trusted.block_speedup * 1.01) || !(t.speedup_eager < 1.3))
		fail_msg("reported %.3f, sums %.3f, gap %.3f", t.speedup_eager, t.trusted.block_speedup,
			 t.trusted.block_gap);
	assert_true(t.speedup_eager_lo <= t.speedup_eager && t.speedup_eager <= t.speedup_eager_hi);
	findings_release(&found);
	free_timing(&t);
	stop_pair(&p);

	/* the runtime checks off: no cap, and the move buys what the paired median says */
	start_frontloading(&p, "0.3");
	pl.block_cap = 0;
	memset(&t, 0, sizeof(t));
	run_ok(&p, &pl, &t);
	assert_false(t.trusted.block_capped);
	if (!(t.speedup_eager > 1.35))
		fail_msg("uncapped, the move should report about 1/0.7: %.3f", t.speedup_eager);
	free_timing(&t);
	stop_pair(&p);
	pl.block_cap = 1;

	/* under the mean over means (KernelBench's) the sums are the statistic: nothing to cap */
	start_frontloading(&p, "0.3");
	pl.unpaired_mean = 1;
	memset(&t, 0, sizeof(t));
	run_ok(&p, &pl, &t);
	assert_false(t.trusted.block_capped);
	assert_true(t.speedup_eager > 0.95 && t.speedup_eager < 1.05);
	free_timing(&t);
	stop_pair(&p);
}

/* The rule's guards: no finding for a candidate that claims no speedup, nor for an excess within a tenth of
 * the reference's own overhead, however far the reported speedup is from the bound. */
/* While the reference times its block, the candidate's process is stopped: a thread it keeps running
 * beside its worker gets to run in its own blocks, not in the reference's. Each round the reference's
 * block and the candidate's take about as long (40 ms), so a candidate left running would be alive for
 * nearly all of the time between its replies, and a stopped one about half of it. */
static void the_candidate_is_stopped_while_the_reference_times(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	char *dir = tmpdir_make(), *ticks = xstrfmt("%s/ticks", dir);
	cand_extra_env = xstrfmt("FAKE_TICKER=%s", ticks);
	start_pair_spinning(&p, "20000", "20000", 0, "20000", "20000");
	free(cand_extra_env);
	cand_extra_env = NULL;
	struct timing_plan pl = plan(16, 2, 0);
	run_ok(&p, &pl, &t);
	FILE *f = fopen(ticks, "r");
	assert_non_null(f);
	/* over every interval but the first (the worker's start): the rounds' order alternates, so one
	 * interval may hold two of the reference's blocks and the next none */
	double alive, wall, sa = 0, sw = 0;
	int n = 0;
	while (fscanf(f, "%lf %lf", &alive, &wall) == 2)
		if (n++ > 0)
			sa += alive, sw += wall;
	fclose(f);
	assert_true(n >= 6);
	if (!(sa < 0.75 * sw) || !(sa > 0.2 * sw))
		fail_msg("the candidate's thread was alive for %.0f of the %.0f ms between its replies", sa * 1e3, sw * 1e3);
	free(ticks);
	tmpdir_remove(dir);
	free_timing(&t);
	stop_pair(&p);
}

static void the_clock_rule_judges_only_what_it_can_resolve(void **state)
{
	(void)state;
	struct findings found = { 0 };
	struct rt_clock lie = { .reported = 5.0, .speedup = 1.0, .hi = 1.2, .excess_us = 400, .ref_least_us = 1000,
				.cand_overhead_us = 1500, .ref_overhead_us = 1000 };
	rt_rule_trusted_clock(&lie, &found);
	assert_true(findings_has(&found, "H08"));
	findings_release(&found);
	struct rt_clock slow = lie;
	slow.reported = 0.7; /* claims no speedup: nothing to gain */
	rt_rule_trusted_clock(&slow, &found);
	assert_false(findings_has(&found, "H08"));
	struct rt_clock small = lie;
	small.excess_us = 90; /* under a tenth of the reference's 1000 us of harness work per call */
	rt_rule_trusted_clock(&small, &found);
	assert_false(findings_has(&found, "H08"));
	struct rt_clock near = lie;
	near.reported = 1.4; /* within 1.5x of the bound */
	rt_rule_trusted_clock(&near, &found);
	assert_false(findings_has(&found, "H08"));
	/* the reference as its own candidate on an H100: per round the excess wandered from -187 to +1139 us,
	 * its median 142 us (past a tenth of the 925 us of harness work) with a standard error of 83 us */
	struct rt_clock wander = { .reported = 1.004, .speedup = 0.45, .hi = 2.05, .excess_us = 142, .ref_least_us = 925,
				   .cand_overhead_us = 1506, .ref_overhead_us = 1325, .excess_noise_us = 83 };
	rt_rule_trusted_clock(&wander, &found);
	assert_false(findings_has(&found, "H08"));
	struct rt_clock steady = wander;
	steady.excess_noise_us = 20; /* the same median from rounds that agree: a lie */
	rt_rule_trusted_clock(&steady, &found);
	assert_true(findings_has(&found, "H08"));
	findings_release(&found);
}

/* One measurement of a pair whose workers' extra environment is ref_env and cand_env (NULL: none), twelve
 * calls in blocks of two, into t. */
static void measure_wobble(const char *ref_env, const char *cand_env, struct timing_result *t)
{
	struct pair p;
	ref_extra_env = ref_env ? xstrdup(ref_env) : NULL;
	cand_extra_env = cand_env ? xstrdup(cand_env) : NULL;
	start_pair_spinning(&p, "1000", "1000", 0, "1000", "1000");
	free(ref_extra_env);
	free(cand_extra_env);
	ref_extra_env = cand_extra_env = NULL;
	struct timing_plan pl = plan(12, 2, 0);
	*t = (struct timing_result){ 0 };
	run_ok(&p, &pl, t);
	stop_pair(&p);
}


/* Two honest workers of the same speed whose work between calls wanders from block to block, as the
 * reference judged as its own candidate showed on an H100 (per call, -187 to +1139 us from round to round,
 * scaled up here to tens of milliseconds, past a loaded machine's scheduling): the median excess lands well
 * past the floor and would call the 1 ms calls far slower by the parent's clock, but the rounds disagree
 * with each other, so its standard error is large and there is no finding. The pattern keeps that so
 * whichever block's round is left out. A candidate that lies by a steady 40 ms per call keeps its rounds
 * together: H08. */
static void rounds_that_wander_are_noise_not_a_lie(void **state)
{
	(void)state;
	struct timing_result t = { 0 };
	struct findings found = { 0 };
	int shown = 0;
	for (int a = 0; a < WOBBLE_ATTEMPTS && !shown; a++) {
		/* per call, by block: the reference's and the candidate's extra work; block 0's round is left out */
		free_timing(&t);
		measure_wobble("FAKE_WOBBLE_US=0,36000,18000,0,0,0,0", "FAKE_WOBBLE_US=27000,0,0,9000,18000,36000,108000", &t);
		assert_true(t.trusted.measured && t.trusted.judged);
		/* what the rule without the noise gate would have rejected, from rounds that disagree */
		shown = t.trusted.excess_us > RT_TRUSTED_FLOOR * t.trusted.ref_least_us &&
			t.trusted.reported > RT_TRUSTED_SLACK * t.trusted.speedup &&
			t.trusted.excess_us < RT_TRUSTED_NOISE * t.trusted.excess_noise_us;
	}
	if (!shown)
		fail_msg("the wander never showed in %d attempts: excess %.0f us (floor %.0f, standard error %.0f), "
			 "%.2fx by the clock, %.2fx reported", WOBBLE_ATTEMPTS, t.trusted.excess_us,
			 RT_TRUSTED_FLOOR * t.trusted.ref_least_us, t.trusted.excess_noise_us, t.trusted.speedup,
			 t.trusted.reported);
	clock_rule(&t, &found);
	assert_false(findings_has(&found, "H08"));
	findings_release(&found);

	shown = 0;
	for (int a = 0; a < WOBBLE_ATTEMPTS && !shown; a++) {
		free_timing(&t);
		measure_wobble(NULL, "FAKE_WOBBLE_US=40000", &t);
		shown = t.trusted.excess_us > RT_TRUSTED_NOISE * t.trusted.excess_noise_us;
	}
	if (!shown)
		fail_msg("rounds that agree never did in %d attempts: excess %.0f us, its standard error %.0f us",
			 WOBBLE_ATTEMPTS, t.trusted.excess_us, t.trusted.excess_noise_us);
	clock_rule(&t, &found);
	assert_true(findings_has(&found, "H08"));
	findings_release(&found);
	free_timing(&t);
}

struct checked {
	int rounds, calls, fail_at;
	long next;
};

static int check_round(void *arg, long first_call, int m, json_t *ref_reply, json_t *cand_reply, struct sb_error *err)
{
	(void)err;
	struct checked *c = arg;
	assert_int_equal(first_call, c->next); /* every call, in order, the discarded round's too */
	assert_int_equal((int)json_array_size(json_object_get(ref_reply, "us")), m);
	assert_int_equal((int)json_array_size(json_object_get(cand_reply, "us")), m);
	c->next += m;
	c->calls += m;
	return ++c->rounds == c->fail_at;
}

/* The check sees every round, once both sides are in; a failed check stops the loop with 1. */
static void every_round_is_checked(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	struct checked c = { 0 };
	struct timed_check chk = { .round = check_round, .arg = &c, .keep = TIMED_KEEP_NONE };
	start_pair(&p, "80", "40", 0);
	struct timing_plan pl = plan(12, 5, 0);
	pl.check = &chk;
	run_ok(&p, &pl, &t);
	assert_int_equal(c.rounds, 4); /* the discarded round, then 5 + 5 + 2 */
	assert_int_equal(c.calls, 17);
	assert_int_equal((int)t.checked_calls, 17);
	free_timing(&t);
	stop_pair(&p);

	struct worker_fault f;
	int cand_failed = 0;
	char *msg = NULL;
	memset(&c, 0, sizeof(c));
	c.fail_at = 2;
	memset(&t, 0, sizeof(t));
	start_pair(&p, "80", "40", 0);
	assert_int_equal(timing_run(&p.ref, &p.cand, &pl, proc_now() + 60, &t, &f, &cand_failed, &msg), 1);
	assert_int_equal(c.rounds, 2);
	free(msg);
	free_timing(&t);
	stop_pair(&p);
}

/* With fresh inputs, every fifth call from the fifth on has the seed (so the inputs) of the call two
 * before it; the others are all different. */
static void some_calls_repeat_earlier_inputs(void **state)
{
	(void)state;
	struct pair p;
	struct timing_result t = { 0 };
	start_pair(&p, "80", "40", 0);
	struct timing_plan pl = plan(15, 5, 0);
	pl.fresh = 1;
	run_ok(&p, &pl, &t);
	char *log = xstrfmt("%s/calls.log", p.dir), line[256], who[16], which[16], seed[32];
	FILE *fl = fopen(log, "r");
	assert_non_null(fl);
	char seeds[64][32];
	int n = 0, k;
	while (fgets(line, sizeof(line), fl))
		if (sscanf(line, "%15s %15s %d %31s", who, which, &k, seed) == 4 && !strcmp(who, "cand") && n < 64)
			snprintf(seeds[n++], sizeof(seeds[0]), "%s", seed);
	fclose(fl);
	free(log);
	assert_int_equal(n, 20);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++) {
			int same = !strcmp(seeds[i], seeds[j]);
			assert_int_equal(same, i >= 5 && i % 5 == 4 && j == i - 2);
		}
	assert_int_equal((int)t.repeats.n, 3); /* calls 9, 14, 19: the kept ones */
	free_timing(&t);
	stop_pair(&p);
}

/* The repeats against the fresh calls of their own round. Three rounds the machine slowed (the candidate's
 * calls 4x as long, one repeat each) and a quiet one holding four repeats: over all rounds the repeats'
 * median ratio is 4x the fresh calls' (what an honest candidate met on a loaded CI machine), while beside
 * the calls of their own rounds they cost the same. Repeats answered 8x as fast as the calls beside them
 * are 8. */
static void repeats_are_judged_within_their_round(void **state)
{
	(void)state;
	enum { N = 20 };
	double ref[N], cand[N];
	char repeat[N];
	int round[N];
	struct repeat_calls rc;
	for (int i = 0; i < N; i++) {
		round[i] = i / 5;
		repeat[i] = i % 5 == 4 || (round[i] == 3 && i != 18);
		ref[i] = 100;
		cand[i] = round[i] == 3 ? 100 : 400;
	}
	timing_repeat_summarise(&rc, ref, cand, repeat, round, N);
	assert_int_equal((int)rc.n, 7);
	assert_true(rc.ratio_repeat > 2 * rc.ratio_fresh); /* the medians over all rounds would say H11 */
	assert_true(fabs(rc.within - 1.0) < 1e-9);
	struct findings f = { 0 };
	rt_rule_repeats(rc.n, rc.within, rc.ratio_repeat, rc.ratio_fresh, &f);
	assert_int_equal((int)f.n, 0);
	/* a cache by content: the repeats cost an eighth of the fresh calls of their round */
	for (int i = 0; i < N; i++)
		cand[i] = (round[i] == 3 ? 100 : 400) / (repeat[i] ? 8.0 : 1.0);
	timing_repeat_summarise(&rc, ref, cand, repeat, round, N);
	assert_true(fabs(rc.within - 8.0) < 1e-9);
	rt_rule_repeats(rc.n, rc.within, rc.ratio_repeat, rc.ratio_fresh, &f);
	assert_int_equal((int)f.n, 1);
	assert_string_equal(f.v[0].id, "H11");
	findings_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(repeats_are_judged_within_their_round),
		cmocka_unit_test(the_candidate_is_stopped_while_the_reference_times),
		cmocka_unit_test(alternates_and_discards_the_first_round),
		cmocka_unit_test(order_bias_exposes_a_second_call_penalty),
		cmocka_unit_test(blocks_pair_call_by_call_and_absorb_a_switch_penalty),
		cmocka_unit_test(a_short_last_block_stops_at_the_pair_budget),
		cmocka_unit_test(priming_comes_before_the_block_and_sees_none_of_it),
		cmocka_unit_test(stops_once_the_ratio_is_known),
		cmocka_unit_test(a_dead_candidate_is_blamed_on_the_candidate),
		cmocka_unit_test(the_parents_clock_bounds_what_the_candidate_reports),
		cmocka_unit_test(one_honest_round_does_not_hide_the_others),
		cmocka_unit_test(work_moved_between_calls_of_a_block_is_seen_by_the_sums),
		cmocka_unit_test(moving_part_of_a_blocks_work_gains_at_most_the_cap),
		cmocka_unit_test(each_call_its_own_request_leaves_nothing_to_move),
		cmocka_unit_test(the_clock_rule_judges_only_what_it_can_resolve),
		cmocka_unit_test(rounds_that_wander_are_noise_not_a_lie),
		cmocka_unit_test(every_round_is_checked),
		cmocka_unit_test(some_calls_repeat_earlier_inputs),
	};
	return cmocka_run_group_tests_name("timing", tests, NULL, NULL);
}
