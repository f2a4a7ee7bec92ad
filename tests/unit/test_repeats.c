/* test_repeats.c - repeated evaluations: the rule that combines a verdict's own interval with the spread
 * between its evaluations (worked by hand), the bootstrap intervals of cells and pairs that carry it, and
 * the store's repeats table (written once, beside an unchanged verdict, refused for another candidate,
 * absent from a schema-1 store until a writer migrates it, copied by merge). */
#include "testutil.h"

#include <math.h>
#include <sqlite3.h>

#include "core/config.h"
#include "core/error.h"
#include "core/sha256.h"
#include "eval/verdict.h"
#include "report/metrics.h"
#include "store/store.h"

static void assert_near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("%s = %.9g, expected %.9g (within %g)", what, got, want, tol);
}

static struct metric_row pass_row(const char *agent, const char *ref, double speedup)
{
	return (struct metric_row){ .agent = agent, .problem = ref, .level = 1, .compiled = 1, .correct = 1,
				    .speedup_eager = speedup, .speedup_compiled = NAN };
}

/* ---------- the rule ---------- */

static void own_interval_alone(void **state)
{
	(void)state;
	struct metric_row r = pass_row("a", "L1/1", 2.0);
	struct metric_speed sp = { 1.6, 2.4, 0, 0, NAN };
	double below, above;
	metrics_speed_halfwidths(&r, &sp, &below, &above);
	assert_near(below, log(2.0 / 1.6), 1e-12, "below"); /* 0.2231 */
	assert_near(above, log(2.4 / 2.0), 1e-12, "above"); /* 0.1823: asymmetric, as the verdict's interval is */
	struct metric_ci ci = metrics_speed_interval(&r, &sp);
	assert_near(ci.lo, 1.6, 1e-12, "lo");
	assert_near(ci.hi, 2.4, 1e-12, "hi");
	/* nothing known: a point */
	metrics_speed_halfwidths(&r, NULL, &below, &above);
	assert_true(below == 0 && above == 0);
	/* an interval that leaves out its own point is no interval of it */
	struct metric_speed off = { 2.1, 2.4, 0, 0, NAN };
	metrics_speed_halfwidths(&r, &off, &below, &above);
	assert_true(below == 0 && above == 0);
}

static void repeats_widen_in_quadrature(void **state)
{
	(void)state;
	struct metric_row r = pass_row("a", "L1/1", 2.0);
	/* three evaluations at 2, 2e and 2e^2: ln spreads 0, 1, 2, whose deviation (n - 1) is 1 */
	double x[3] = { 2.0, 2.0 * M_E, 2.0 * M_E * M_E };
	assert_near(metrics_log_sd(x, 3), 1.0, 1e-12, "sd");
	assert_true(isnan(metrics_log_sd(x, 1)));
	struct metric_speed sp = { 1.6, 2.4, 2, 0, 0.1 }; /* between = 1.96 x 0.1 = 0.196 */
	double below, above;
	metrics_speed_halfwidths(&r, &sp, &below, &above);
	assert_near(below, sqrt(log(1.25) * log(1.25) + 0.196 * 0.196), 1e-12, "below"); /* 0.2970 */
	assert_near(above, sqrt(log(1.2) * log(1.2) + 0.196 * 0.196), 1e-12, "above");   /* 0.2677 */
	struct metric_ci ci = metrics_speed_interval(&r, &sp);
	assert_near(ci.lo, 2.0 * exp(-below), 1e-12, "lo");
	assert_near(ci.hi, 2.0 * exp(above), 1e-12, "hi");
	assert_true(ci.lo < 1.6 && ci.hi > 2.4);
	/* repeats without an own interval: the spread alone, symmetric */
	struct metric_speed bare = { NAN, NAN, 1, 0, 0.1 };
	metrics_speed_halfwidths(&r, &bare, &below, &above);
	assert_near(below, 0.196, 1e-12, "below");
	assert_near(above, 0.196, 1e-12, "above");
	/* a spread is used only with a timed repeat behind it (repeats that all failed give none) */
	struct metric_speed failed = { 1.6, 2.4, 0, 3, 0.5 };
	metrics_speed_halfwidths(&r, &failed, &below, &above);
	assert_near(below, log(1.25), 1e-12, "below");
	/* a flagged pass, a wrong answer, an untimed pass: no speed, no interval */
	struct metric_row flagged = r, wrong = r, untimed = r;
	flagged.flagged = 1;
	flagged.hack_ids = "H21";
	wrong.correct = 0;
	untimed.speedup_eager = NAN;
	const struct metric_row *none[] = { &flagged, &wrong, &untimed };
	for (int i = 0; i < 3; i++) {
		metrics_speed_halfwidths(none[i], &sp, &below, &above);
		assert_true(below == 0 && above == 0);
		assert_true(isnan(metrics_speed_interval(none[i], &sp).lo));
	}
}

/* ---------- the intervals of metrics ---------- */

static void compute(const struct metric_row *rows, size_t n, const struct metric_speed *speed, struct metrics *m)
{
	struct sb_error err = { 0 };
	struct metric_scope scope = { .denominator = METRICS_JUDGED, .speed = speed };
	if (metrics_compute(rows, n, NULL, 0, METRICS_FIRST, &scope, m, &err))
		fail_msg("%s", err.msg);
}

/* With one problem the bootstrap over problems has nothing to draw: the geometric mean's interval is that
 * problem's speed interval, as 2000 draws estimate its percentiles. */
static void one_problem_gives_its_own_interval(void **state)
{
	(void)state;
	struct metric_row rows[1] = { pass_row("a", "L1/1", 2.0) };
	struct metric_speed sp[1] = { { 1.6, 2.4, 2, 0, 0.1 } };
	struct metrics m;
	compute(rows, 1, NULL, &m);
	const struct metric_cell *c = &m.agents[0].cells[0];
	assert_near(c->geomean_eager_ci.lo, 2.0, 1e-12, "lo without speeds");
	assert_near(c->geomean_eager_ci.hi, 2.0, 1e-12, "hi without speeds");
	assert_int_equal(c->repeated, 0);
	metrics_release(&m);
	compute(rows, 1, sp, &m);
	c = &m.agents[0].cells[0];
	struct metric_ci want = metrics_speed_interval(&rows[0], &sp[0]);
	assert_near(c->geomean_eager, 2.0, 1e-12, "the point stays the verdict's");
	assert_near(c->geomean_eager_ci.lo / want.lo, 1, 0.03, "lo / the problem's");
	assert_near(c->geomean_eager_ci.hi / want.hi, 1, 0.03, "hi / the problem's");
	assert_int_equal(c->timed, 1);
	assert_int_equal(c->repeated, 1);
	assert_int_equal(c->repeats, 2);
	metrics_release(&m);
}

/* Several problems: the problems drawn are the same with or without speeds (a stream of their own draws
 * the noise), so widths of 0 change nothing and real ones only widen. fast_1 moves too: a problem at 1.05x
 * whose interval reaches below 1 is not fast in every resample. */
static void several_problems_widen(void **state)
{
	(void)state;
	struct metric_row rows[6] = { pass_row("a", "L1/1", 1.05), pass_row("a", "L1/2", 1.2), pass_row("a", "L1/3", 0.9),
				      pass_row("a", "L1/4", 1.5), pass_row("a", "L1/5", 2.0), pass_row("a", "L1/6", 1.1) };
	struct metric_speed zero[6], wide[6];
	for (int i = 0; i < 6; i++) {
		zero[i] = (struct metric_speed){ NAN, NAN, 0, 0, NAN };
		wide[i] = (struct metric_speed){ rows[i].speedup_eager * 0.9, rows[i].speedup_eager * 1.1, 3, 1, 0.2 };
	}
	struct metrics plain, z, w;
	compute(rows, 6, NULL, &plain);
	compute(rows, 6, zero, &z);
	compute(rows, 6, wide, &w);
	const struct metric_cell *p = &plain.agents[0].cells[0], *cz = &z.agents[0].cells[0], *cw = &w.agents[0].cells[0];
	assert_true(p->geomean_eager_ci.lo == cz->geomean_eager_ci.lo && p->geomean_eager_ci.hi == cz->geomean_eager_ci.hi);
	assert_true(p->fast1_ci.lo == cz->fast1_ci.lo && p->fast1_ci.hi == cz->fast1_ci.hi);
	assert_true(p->geomean_eager == cw->geomean_eager && p->fast_pct[3] == cw->fast_pct[3]);
	assert_true(cw->geomean_eager_ci.lo < p->geomean_eager_ci.lo);
	assert_true(cw->geomean_eager_ci.hi > p->geomean_eager_ci.hi);
	assert_true(cw->fast1_ci.hi - cw->fast1_ci.lo >= p->fast1_ci.hi - p->fast1_ci.lo);
	assert_true(p->correct_ci.lo == cw->correct_ci.lo && p->correct_ci.hi == cw->correct_ci.hi); /* no speed in it */
	assert_int_equal(cw->repeated, 6);
	assert_int_equal(cw->repeats, 18);
	assert_int_equal(cw->repeats_failed, 6);
	metrics_release(&plain);
	metrics_release(&z);
	metrics_release(&w);
}

/* b is 1.5x faster than a on every problem: measured once, with no spread known, the pair says so; once
 * repeats show each speedup moving by a factor of 2 between evaluations, it no longer can. */
static void pairs_carry_the_spread(void **state)
{
	(void)state;
	struct metric_row rows[8];
	struct metric_speed sp[8];
	static const char *const refs[4] = { "L1/1", "L1/2", "L1/3", "L1/4" };
	for (int i = 0; i < 4; i++) {
		rows[i] = pass_row("a", refs[i], 1.0 + 0.1 * i);
		rows[4 + i] = pass_row("b", refs[i], 1.5 * (1.0 + 0.1 * i));
	}
	for (int i = 0; i < 8; i++)
		sp[i] = (struct metric_speed){ NAN, NAN, 2, 0, log(2.0) };
	struct metrics once, repeated;
	compute(rows, 8, NULL, &once);
	compute(rows, 8, sp, &repeated);
	const struct metric_pair *p = &once.pairs[0], *q = &repeated.pairs[0];
	assert_int_equal(once.npairs, 1);
	assert_near(p->speed_ratio, 1 / 1.5, 1e-12, "ratio");
	assert_int_equal(metrics_decide(&p->speed_ci, 1), METRICS_LOWER);
	assert_int_equal(metrics_best_agent(&once), 1);
	assert_near(q->speed_ratio, 1 / 1.5, 1e-12, "the point stays");
	assert_int_equal(metrics_decide(&q->speed_ci, 1), METRICS_NO_DIFFERENCE);
	assert_int_equal(metrics_best_agent(&repeated), -1);
	assert_int_equal(p->repeats, 0);
	assert_int_equal(q->repeats, 16);
	struct strbuf note = STRBUF_INIT;
	metrics_repeats_note(&once, &note);
	assert_non_null(strstr(note.buf, "over one evaluation only"));
	strbuf_reset(&note);
	metrics_repeats_note(&repeated, &note);
	assert_non_null(strstr(note.buf, "a: 8 repeats over 4 of its 4 timed problems; b: 8 repeats over 4"));
	strbuf_release(&note);
	json_t *j = metrics_json(&repeated);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "repeats"), "speed_intervals")),
			    "own interval and repeats");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "pairs"), 0), "repeats")), 16);
	json_decref(j);
	metrics_release(&once);
	metrics_release(&repeated);
}

/* ---------- the store ---------- */

#define GPU "NVIDIA H200"
#define TORCH "2.11.0+cu130"

static json_t *make_verdict(const char *ref, const char *candidate, double speedup, int trials)
{
	struct verdict v;
	struct config cfg;
	verdict_init(&v);
	v.status = V_PASS;
	v.message = xstrdup("all trials passed");
	snprintf(v.problem, sizeof(v.problem), "%s", ref);
	sha256_hex(ref, strlen(ref), v.problem_sha256);
	sha256_hex(candidate, strlen(candidate), v.candidate_sha256);
	v.candidate_path = xstrdup(candidate);
	v.ntrials = (size_t)trials;
	v.trials = xcalloc((size_t)trials + 1, sizeof(*v.trials));
	for (int i = 0; i < trials; i++)
		v.trials[i].pass = 1;
	config_init(&cfg);
	v.settings.trials = cfg.eval.trials;
	v.settings.robust_trials = cfg.eval.robust_trials;
	v.settings.perf_trials = cfg.eval.perf_trials;
	v.settings.seed = cfg.eval.seed;
	v.settings.hash_seed = cfg.eval.hash_seed;
	snprintf(v.settings.tolerance, sizeof(v.settings.tolerance), "kernelbench");
	v.settings.identity = config_identity(&cfg);
	config_release(&cfg);
	snprintf(v.env.device, sizeof(v.env.device), "cuda:0");
	snprintf(v.env.gpu, sizeof(v.env.gpu), GPU);
	snprintf(v.env.torch, sizeof(v.env.torch), TORCH);
	json_t *j = verdict_to_json(&v);
	verdict_release(&v);
	json_object_set_new(j, "speedup", json_pack("{s:f, s:[f, f]}", "vs_eager", speedup, "vs_eager_ci95", speedup * 0.9,
						     speedup * 1.1));
	return j;
}

static struct store *fresh(const char *path)
{
	struct sb_error err = { 0 };
	struct config cfg;
	struct store_run r;
	struct store *s;
	config_init(&cfg);
	store_run_from_config(&r, "t", &cfg, "cuda:0", GPU, "90", TORCH, NULL);
	if (store_open(&s, path, STORE_WRITE, &err) || store_use_run(s, &r, &err) ||
	    store_add_agent(s, "a", "oneshot", "qwen", &err))
		fail_msg("%s", err.msg);
	store_run_release(&r);
	config_release(&cfg);
	return s;
}

struct seen {
	int n;
	double speedup[4], lo[4];
	int idx[4];
};

static int on_repeat(void *arg, const struct store_repeat_row *r, struct sb_error *err)
{
	struct seen *s = arg;
	(void)err;
	if (s->n < 4) {
		s->speedup[s->n] = r->speedup_eager;
		s->lo[s->n] = r->speedup_lo;
		s->idx[s->n] = r->idx;
	}
	s->n++;
	return 0;
}

static double speedup_of(struct store *s)
{
	struct metric_input in = { 0 };
	struct sb_error err = { 0 };
	assert_int_equal(metrics_load(s, NULL, &in, &err), 0);
	assert_int_equal(in.nrows, 1);
	double x = in.rows[0].speedup_eager;
	/* the loaded row knows its repeats */
	if (in.speed[0].repeats)
		assert_near(in.speed[0].repeat_sd, metrics_log_sd((double[]){ 2.0, 2.2, 1.8 }, 3), 1e-12, "sd");
	metric_input_release(&in);
	return x;
}

static void store_rows(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *path = xstrfmt("%s/r.db", dir), *merged = xstrfmt("%s/m", dir);
	struct sb_error err = { 0 };
	struct store *s = fresh(path);
	struct store_key k = { "a", "L1/2", 0, 0 };
	struct store_put put = { .agent = "a" };
	json_t *v = make_verdict("L1/2", "cand", 2.0, 2);
	int n = -1, last = -1;
	assert_int_equal(store_put_repeat(s, &k, 1, v, NULL, &err), SB_EINPUT); /* no verdict to repeat yet */
	assert_non_null(strstr(err.msg, "has no verdict"));
	assert_int_equal(store_put_verdict(s, &put, v, &err), 0);
	json_decref(v);
	json_t *r1 = make_verdict("L1/2", "cand", 2.2, 2), *r2 = make_verdict("L1/2", "cand", 1.8, 2);
	json_t *other = make_verdict("L1/2", "another file", 2.0, 2);
	assert_int_equal(store_put_repeat(s, &k, 1, r1, NULL, &err), 0);
	assert_int_equal(store_put_repeat(s, &k, 1, r1, NULL, &err), SB_EEXIST); /* written once */
	assert_int_equal(store_put_repeat(s, &k, 2, other, NULL, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "judged another candidate"));
	/* a repeat is judged as its verdict was: other settings are refused, naming them */
	json_object_set_new(json_object_get(other, "env"), "torch", json_string("2.5.0"));
	json_object_set_new(json_object_get(other, "candidate"), "sha256",
			    json_deep_copy(json_object_get(json_object_get(r2, "candidate"), "sha256")));
	assert_int_equal(store_put_repeat(s, &k, 2, other, NULL, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "torch"));
	assert_int_equal(store_put_repeat(s, &k, 3, r2, NULL, &err), 0);
	assert_int_equal(store_count_repeats(s, &k, &n, &last, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(last, 3);
	struct seen seen = { 0 };
	assert_int_equal(store_each_repeat(s, on_repeat, &seen, &err), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.idx[0], 1);
	assert_near(seen.speedup[0], 2.2, 1e-12, "repeat 1");
	assert_near(seen.lo[1], 1.8 * 0.9, 1e-12, "repeat 3's own interval");
	assert_near(speedup_of(s), 2.0, 1e-12, "the verdict keeps its speedup");
	assert_int_equal(store_check(s, &err), 0);
	store_close(s);

	/* merge copies them with their verdict */
	char *inputs[] = { path };
	struct store_merge_stats stats;
	struct strbuf overridden = STRBUF_INIT;
	assert_int_equal(store_merge(merged, inputs, 1, 0, &overridden, &stats, &err), 0);
	strbuf_release(&overridden);
	char *mpath = xstrfmt("%s/%s", merged, STORE_FILE);
	assert_int_equal(store_open(&s, mpath, STORE_READ, &err), 0);
	seen.n = 0;
	assert_int_equal(store_each_repeat(s, on_repeat, &seen, &err), 0);
	assert_int_equal(seen.n, 2);
	store_close(s);

	/* a store of schema 1 has no repeats table: readers read it as none; a writer migrates it */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE repeats; UPDATE schema_version SET version = 1", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(&s, path, STORE_READ, &err), 0);
	assert_int_equal(store_schema_version(s), 1);
	assert_int_equal(store_count_repeats(s, &k, &n, NULL, &err), 0);
	assert_int_equal(n, 0);
	seen.n = 0;
	assert_int_equal(store_each_repeat(s, on_repeat, &seen, &err), 0);
	assert_int_equal(seen.n, 0);
	assert_near(speedup_of(s), 2.0, 1e-12, "a schema-1 store's verdict");
	store_close(s);
	assert_int_equal(store_open(&s, path, STORE_WRITE, &err), 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA);
	assert_int_equal(store_put_repeat(s, &k, 1, r1, NULL, &err), 0);
	assert_int_equal(store_check(s, &err), 0);
	store_close(s);
	json_decref(r1);
	json_decref(r2);
	json_decref(other);
	free(mpath);
	free(merged);
	free(path);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_interval_alone),
		cmocka_unit_test(repeats_widen_in_quadrature),
		cmocka_unit_test(one_problem_gives_its_own_interval),
		cmocka_unit_test(several_problems_widen),
		cmocka_unit_test(pairs_carry_the_spread),
		cmocka_unit_test(store_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
