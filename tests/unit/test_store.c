/* test_store.c - the results store: schema version and WAL, the written-once key, settings checks, a verdict's
 * all-or-nothing transaction under SIGKILL at every statement and in a loop, LLM calls, merging, and the
 * robust outcome read back from a stored verdict. */
#include "testutil.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>

#include "core/config.h"
#include "core/error.h"
#include "core/sha256.h"
#include "eval/verdict.h"
#include "store/store.h"

#define GPU "NVIDIA H200"
#define TORCH "2.11.0+cu130"

/* A verdict as the evaluator writes it, serialised by the real verdict_to_json(). */
static json_t *make_verdict(const char *ref, const char *candidate, int trials, int findings)
{
	struct verdict v;
	verdict_init(&v);
	v.status = findings ? V_REJECTED : V_PASS;
	v.message = xstrdup("all trials passed");
	snprintf(v.problem, sizeof(v.problem), "%s", ref);
	sha256_hex(ref, strlen(ref), v.problem_sha256);
	sha256_hex(candidate, strlen(candidate), v.candidate_sha256); /* stands in for the file's hash */
	v.candidate_path = xstrdup(candidate);
	v.ntrials = (size_t)trials;
	v.trials = xcalloc((size_t)trials + 1, sizeof(*v.trials));
	for (int i = 0; i < trials; i++) {
		v.trials[i].seed = 100u + (unsigned)i;
		v.trials[i].pass = 1;
	}
	for (int i = 0; i < findings; i++)
		findings_add(&v.findings, "H10", "inputs changed")->severity = SEV_REJECT;
	struct config cfg;
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
	return j;
}

/* Opens (creating) dir/name with run "t" selected and agent "a" added. */
static struct store *fresh(const char *dir, const char *name)
{
	struct sb_error err = { 0 };
	struct config cfg;
	struct store_run r;
	struct store *s;
	char *path = xstrfmt("%s/%s", dir, name);
	config_init(&cfg);
	store_run_from_config(&r, "t", &cfg, "cuda:0", GPU, "90", TORCH, NULL);
	if (store_open(&s, path, STORE_WRITE, &err) || store_use_run(s, &r, &err) ||
	    store_add_agent(s, "a", "oneshot", "qwen", &err))
		fail_msg("%s", err.msg);
	store_run_release(&r);
	config_release(&cfg);
	free(path);
	return s;
}

static int put(struct store *s, const char *ref, int sample, int attempt, const char *cand, struct sb_error *err)
{
	json_t *v = make_verdict(ref, cand, 2, 0);
	struct store_put p = { .agent = "a", .sample = sample, .attempt = attempt };
	int rc = store_put_verdict(s, &p, v, err);
	json_decref(v);
	return rc;
}

static void schema_version_and_wal(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *path = xstrfmt("%s/r.db", dir);
	struct sb_error err = { 0 };
	struct store *s;
	assert_int_equal(store_open(&s, path, STORE_WRITE, &err), 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA);
	store_close(s);
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal"); /* WAL is a property of the file */
	sqlite3_finalize(st);
	/* reopening reads the version it wrote; a newer schema is refused, saying so */
	assert_int_equal(store_open(&s, path, STORE_READ, &err), 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA);
	assert_int_equal(store_check(s, &err), 0);
	store_close(s);
	sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL);
	sqlite3_close(db);
	assert_int_equal(store_open(&s, path, STORE_WRITE, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "schema 99, newer than"));
	/* an SQLite file that is something else is not taken for a store */
	char *other = xstrfmt("%s/other.db", dir);
	sqlite3_open(other, &db);
	sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL, NULL);
	sqlite3_close(db);
	assert_int_equal(store_open(&s, other, STORE_WRITE, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "not a stitchbench results store"));
	char *missing = xstrfmt("%s/none/results.db", dir);
	assert_int_equal(store_open(&s, missing, STORE_READ, &err), SB_EINPUT);
	free(missing);
	free(other);
	free(path);
	tmpdir_remove(dir);
}

static void key_written_once(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct store *s = fresh(dir, "r.db");
	struct sb_error err = { 0 };
	char sha[65];
	struct store_key k = { "a", "L1/2", 0, 1 };
	assert_int_equal(store_lookup(s, &k, sha, &err), 0);
	assert_int_equal(put(s, "L1/2", 0, 1, "/c/x.py", &err), 0);
	assert_int_equal(store_lookup(s, &k, sha, &err), 1);
	assert_int_equal(put(s, "L1/2", 0, 1, "/c/x.py", &err), SB_EEXIST);
	assert_non_null(strstr(err.msg, "a L1/2 sample 0 attempt 1 is already stored (the same candidate)"));
	assert_int_equal(put(s, "L1/2", 0, 1, "/c/another.py", &err), SB_EEXIST);
	assert_non_null(strstr(err.msg, "with another candidate"));
	/* the next attempt, sample or problem is another key */
	assert_int_equal(put(s, "L1/2", 0, 2, "/c/x.py", &err), 0);
	assert_int_equal(put(s, "L1/2", 1, 1, "/c/x.py", &err), 0);
	assert_int_equal(put(s, "L1/3", 0, 1, "/c/x.py", &err), 0);
	assert_int_equal(store_check(s, &err), 0);
	/* an agent that was never added is a programming error, not a stored row */
	json_t *v = make_verdict("L1/2", "/c/x.py", 1, 0);
	struct store_put p = { .agent = "ghost" };
	assert_int_equal(store_put_verdict(s, &p, v, &err), SB_EINTERNAL);
	json_decref(v);
	store_close(s);
	tmpdir_remove(dir);
}

static void settings_are_checked(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct store *s = fresh(dir, "r.db");
	struct sb_error err = { 0 };
	struct store_put p = { .agent = "a" };
	/* a verdict judged with 3 trials does not belong to a run of 5; one written before verdicts carried
	 * their identity says so in its settings alone */
	json_t *v = make_verdict("L1/2", "/c/x.py", 2, 0);
	json_object_set_new(json_object_get(v, "settings"), "trials", json_integer(3));
	json_object_del(json_object_get(v, "settings"), "identity");
	assert_int_equal(store_put_verdict(s, &p, v, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "eval.trials: 5 in its run vs 3 in the verdict"));
	json_decref(v);
	/* every public and hidden key is part of the identity; an internal one is not; a verdict's checks
	 * keys are not its run's (the reference agents are judged with the checks off) */
	v = make_verdict("L1/2", "/c/x.py", 2, 0);
	json_t *id = json_object_get(json_object_get(v, "settings"), "identity");
	json_object_set_new(id, "eval.tf32", json_true());
	json_object_set_new(id, "eval.timing_block", json_integer(32));
	json_object_set_new(id, "checks.static", json_false());
	assert_int_equal(store_put_verdict(s, &p, v, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "eval.tf32: false in its run vs true in the verdict"));
	assert_non_null(strstr(err.msg, "eval.timing_block: 10 in its run vs 32 in the verdict"));
	assert_null(strstr(err.msg, "checks.static"));
	assert_null(json_object_get(id, "eval.fork_server"));
	json_decref(v);
	/* runs are compared on them */
	struct config cc;
	struct store_run ra, rb;
	struct strbuf diff = STRBUF_INIT;
	config_init(&cc);
	store_run_from_config(&ra, "t", &cc, "cuda:0", GPU, "90", TORCH, NULL);
	assert_int_equal(config_set(&cc, "checks.static=false", &err), 0);
	assert_int_equal(config_set(&cc, "eval.fork_server=false", &err), 0);
	store_run_from_config(&rb, "t", &cc, "cuda:1", GPU, "90", TORCH, NULL);
	assert_int_equal(store_run_diff(&ra, "A", &rb, "B", STORE_DIFF_ALL, &diff), 1);
	assert_string_equal(diff.buf, "  checks.static: true in A vs false in B\n");
	strbuf_release(&diff);
	store_run_release(&ra);
	store_run_release(&rb);
	config_release(&cc);
	/* another GPU index is the same device kind; another GPU model is not */
	v = make_verdict("L1/2", "/c/x.py", 2, 0);
	json_object_set_new(json_object_get(v, "env"), "device", json_string("cuda:3"));
	assert_int_equal(store_put_verdict(s, &p, v, &err), 0);
	json_decref(v);
	v = make_verdict("L1/2", "/c/x.py", 2, 0);
	json_object_set_new(json_object_get(v, "env"), "gpu", json_string("NVIDIA A100"));
	p.sample = 1;
	assert_int_equal(store_put_verdict(s, &p, v, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "gpu: \"NVIDIA H200\" in its run vs \"NVIDIA A100\" in the verdict"));
	json_decref(v);
	/* the problem file changed under the run */
	v = make_verdict("L1/2", "/c/x.py", 2, 0);
	json_object_set_new(json_object_get(v, "problem"), "sha256", json_string("ffff"));
	assert_int_equal(store_put_verdict(s, &p, v, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "problem L1/2 has sha256 ffff"));
	json_decref(v);
	/* a malformed verdict says what it lacks */
	v = json_pack("{s:i, s:s}", "schema", 1, "status", "great");
	assert_int_equal(store_put_verdict(s, &p, v, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "status \"great\" is not one of"));
	json_decref(v);
	/* resuming a run with other settings is refused, naming them */
	struct config cfg;
	struct store_run r;
	config_init(&cfg);
	cfg.eval.seed = 7;
	store_run_from_config(&r, "t", &cfg, "cuda:0", GPU, "90", TORCH, NULL);
	assert_int_equal(store_use_run(s, &r, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "eval.seed: 42 in the stored run vs 7 in this invocation"));
	store_run_release(&r);
	config_release(&cfg);
	store_close(s);
	tmpdir_remove(dir);
}

/* ---------- crashes ---------- */

static void kill_at(void *arg, int step)
{
	if (step == *(int *)arg)
		raise(SIGKILL);
}

/* Fork a child that opens the store, and writes with `hook` armed (or in a loop); the parent reaps it. */
static void child_writes(const char *path, int kill_step, int loop)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sb_error err = { 0 };
		struct config cfg;
		struct store_run r;
		struct store *s;
		config_init(&cfg);
		store_run_from_config(&r, "t", &cfg, "cuda:0", GPU, "90", TORCH, NULL);
		if (store_open(&s, path, STORE_WRITE, &err) || store_use_run(s, &r, &err))
			_exit(3);
		if (!loop) {
			store_set_step_hook(s, kill_at, &kill_step);
			json_t *v = make_verdict("L1/5", "/c/crash.py", 3, 2);
			struct store_put p = { .agent = "a", .sample = 100 + kill_step };
			store_put_verdict(s, &p, v, &err);
			_exit(4); /* the hook should have killed us */
		}
		for (int i = 0;; i++) {
			json_t *v = make_verdict("L1/6", "/c/loop.py", 4, i % 3);
			struct store_put p = { .agent = "a", .sample = i };
			if (store_put_verdict(s, &p, v, &err))
				_exit(5);
			json_decref(v);
		}
	}
	if (loop) {
		struct timespec ts = { 0, 150 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("the writer was not killed (status %d)", status);
}

static int count_row(void *arg, const struct store_verdict_row *row, struct sb_error *err)
{
	(void)err;
	int *n = arg;
	if (!strcmp(row->problem, "L1/6") && row->sample != *n)
		fail_msg("verdict of sample %d after %d others: the loop's verdicts are not a prefix", row->sample, *n);
	(*n)++;
	return 0;
}

static void a_killed_writer_leaves_whole_verdicts(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *path = xstrfmt("%s/r.db", dir);
	struct sb_error err = { 0 };
	struct store *s = fresh(dir, "r.db");
	store_close(s);
	/* 3 trials and 2 findings: step 0 begun, 1 sample, 2 attempt, 3 verdict, 4-6 trials, 7-8 findings;
	 * after step 8 comes the commit (a child that is not killed fails the test) */
	for (int step = 0; step <= 8; step++) {
		child_writes(path, step, 0);
		assert_int_equal(store_open(&s, path, STORE_WRITE, &err), 0);
		if (store_check(s, &err))
			fail_msg("killed at step %d: %s", step, err.msg);
		struct store_key k = { "a", "L1/5", 100 + step, 0 };
		assert_int_equal(store_lookup(s, &k, NULL, &err), 0); /* nothing of it, not a part */
		store_close(s);
	}
	/* killed at any moment of a loop of writes: every verdict there is whole, and they are a prefix */
	child_writes(path, 0, 1);
	s = fresh(dir, "r.db");
	if (store_check(s, &err))
		fail_msg("%s", err.msg);
	int n = 0;
	assert_int_equal(store_each_verdict(s, count_row, &n, &err), 0);
	assert_true(n > 0);
	print_message("%d verdicts were whole when the writer was killed\n", n);
	/* and the store takes the next verdict */
	assert_int_equal(put(s, "L1/6", n, 0, "/c/after.py", &err), 0);
	assert_int_equal(store_check(s, &err), 0);
	store_close(s);
	free(path);
	tmpdir_remove(dir);
}

/* ---------- LLM calls and merging ---------- */

static int sum_tokens(void *arg, const struct store_llm_call *c, struct sb_error *err)
{
	(void)err;
	*(long *)arg += c->prompt_tokens + c->completion_tokens;
	return 0;
}

static void llm_calls_and_merge(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *out = xstrfmt("%s/merged", dir), *out2 = xstrfmt("%s/merged2", dir);
	struct sb_error err = { 0 };
	struct store *a = fresh(dir, "a.db"), *b = fresh(dir, "b.db");
	struct store_llm_call c = { .agent = "a", .problem = "L1/2", .sample = 0, .attempt = 0, .call = 0,
				    .model = "qwen", .prompt_tokens = 100, .completion_tokens = 50, .cost_usd = 0.01 };
	assert_int_equal(store_put_llm_call(a, &c, &err), SB_EINPUT); /* its problem is not stored yet */
	assert_int_equal(put(a, "L1/2", 0, 0, "/c/a.py", &err), 0);
	assert_int_equal(store_put_llm_call(a, &c, &err), 0);
	assert_int_equal(store_put_llm_call(a, &c, &err), SB_EEXIST);
	c.call = 1;
	assert_int_equal(store_put_llm_call(a, &c, &err), 0);
	assert_int_equal(put(b, "L1/3", 0, 0, "/c/b.py", &err), 0);
	assert_int_equal(put(b, "L1/2", 1, 0, "/c/b.py", &err), 0);
	store_close(a);
	store_close(b);

	char *in[] = { xstrfmt("%s/a.db", dir), xstrfmt("%s/b.db", dir) };
	struct strbuf over = STRBUF_INIT;
	struct store_merge_stats st;
	assert_int_equal(store_merge(out, in, 2, 0, &over, &st, &err), 0);
	assert_int_equal(st.runs, 2);
	assert_int_equal(st.verdicts, 3);
	assert_int_equal(st.calls, 2);
	assert_int_equal(over.len, 0);
	char *db = xstrfmt("%s/results.db", out);
	struct store *m;
	long tokens = 0;
	assert_int_equal(store_open(&m, db, STORE_READ, &err), 0);
	assert_int_equal(store_each_llm_call(m, sum_tokens, &tokens, &err), 0);
	assert_int_equal(tokens, 300);
	assert_int_equal(store_check(m, &err), 0);
	store_close(m);
	/* merging into an existing store, or the same shard twice, is refused and leaves nothing */
	assert_int_equal(store_merge(out, in, 2, 0, &over, &st, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "exists"));
	char *twice[] = { in[0], in[0] };
	assert_int_equal(store_merge(out2, twice, 2, 1, &over, &st, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "a L1/2 sample 0 attempt 0 is in both"));
	char *db2 = xstrfmt("%s/results.db", out2), *partial = xstrfmt("%s/results.db.partial", out2);
	assert_int_not_equal(access(db2, F_OK), 0);
	assert_int_not_equal(access(partial, F_OK), 0);
	strbuf_release(&over);
	free(db);
	free(db2);
	free(partial);
	free(in[0]);
	free(in[1]);
	free(out);
	free(out2);
	tmpdir_remove(dir);
}

static int collect_unavailable(void *arg, const char *agent, const char *reason, struct sb_error *err)
{
	(void)err;
	strbuf_addf(arg, "%s: %s\n", agent, reason);
	return 0;
}

/* An agent the run could not run is recorded with why, read back, kept by merge; a store without the
 * table has none. */
static void unavailable_agents_and_merge(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *out = xstrfmt("%s/merged", dir);
	struct sb_error err = { 0 };
	struct strbuf got = STRBUF_INIT;
	struct store *a = fresh(dir, "a.db"), *b = fresh(dir, "b.db");
	assert_int_equal(store_each_unavailable(a, collect_unavailable, &got, &err), 0);
	assert_int_equal(got.len, 0);
	assert_int_not_equal(store_put_unavailable(b, "tc", "no torch.compile", &err), 0); /* not a stored agent */
	assert_int_equal(store_add_agent(b, "tc", "torch-compile", NULL, &err), 0);
	assert_int_equal(store_put_unavailable(b, "tc", "torch 1.13.0a0 has no torch.compile", &err), 0);
	assert_int_equal(store_each_unavailable(b, collect_unavailable, &got, &err), 0);
	assert_string_equal(got.buf, "tc: torch 1.13.0a0 has no torch.compile\n");
	assert_int_equal(put(a, "L1/2", 0, 0, "/c/a.py", &err), 0);
	store_close(a);
	store_close(b);

	char *in[] = { xstrfmt("%s/a.db", dir), xstrfmt("%s/b.db", dir) };
	struct strbuf over = STRBUF_INIT;
	struct store_merge_stats st;
	assert_int_equal(store_merge(out, in, 2, 0, &over, &st, &err), 0);
	char *db = xstrfmt("%s/results.db", out);
	struct store *m;
	strbuf_reset(&got);
	assert_int_equal(store_open(&m, db, STORE_READ, &err), 0);
	assert_int_equal(store_each_unavailable(m, collect_unavailable, &got, &err), 0);
	assert_string_equal(got.buf, "tc: torch 1.13.0a0 has no torch.compile\n");
	assert_int_equal(store_check(m, &err), 0);
	store_close(m);
	strbuf_release(&got);
	strbuf_release(&over);
	free(db);
	free(in[0]);
	free(in[1]);
	free(out);
	tmpdir_remove(dir);
}

/* robust_failed per problem, as store_each_verdict reads it from the stored JSON. */
static int robust_row(void *arg, const struct store_verdict_row *row, struct sb_error *err)
{
	(void)err;
	int *failed = arg;
	failed[row->problem_id] = row->robust_failed;
	return 0;
}

/* A verdict's robust outcome comes from its stored JSON, not a column: only robust.passed false is a
 * failure; true, null (not run, not applicable) and a verdict from before the field are not. */
static void robust_outcome_is_read_from_the_json(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct store *s = fresh(dir, "r.db");
	struct sb_error err = { 0 };
	/* a verdict whose robust trials never ran: {"trials": 0, "passed": null, "note": null, "max_abs_err": null} */
	json_t *fresh_v = make_verdict("L1/1", "/c/x.py", 2, 0), *r = json_object_get(fresh_v, "robust");
	assert_int_equal(json_object_size(r), 4);
	assert_int_equal(json_integer_value(json_object_get(r, "trials")), 0);
	assert_true(json_is_null(json_object_get(r, "passed")) && json_is_null(json_object_get(r, "note")) &&
		    json_is_null(json_object_get(r, "max_abs_err")));
	json_decref(fresh_v);
	json_t *passed[] = { json_true(), json_false(), json_null(), NULL };
	for (int i = 0; i < 4; i++) {
		char ref[8];
		snprintf(ref, sizeof(ref), "L1/%d", i + 1);
		json_t *v = make_verdict(ref, "/c/x.py", 2, 0);
		if (passed[i])
			json_object_set_new(json_object_get(v, "robust"), "passed", passed[i]);
		else
			json_object_del(v, "robust");
		struct store_put p = { .agent = "a" };
		assert_int_equal(store_put_verdict(s, &p, v, &err), 0);
		json_decref(v);
	}
	int failed[5] = { -1, -1, -1, -1, -1 };
	assert_int_equal(store_each_verdict(s, robust_row, failed, &err), 0);
	assert_int_equal(failed[1], 0);
	assert_int_equal(failed[2], 1);
	assert_int_equal(failed[3], 0);
	assert_int_equal(failed[4], 0);
	store_close(s);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schema_version_and_wal),
		cmocka_unit_test(key_written_once),
		cmocka_unit_test(settings_are_checked),
		cmocka_unit_test(a_killed_writer_leaves_whole_verdicts),
		cmocka_unit_test(llm_calls_and_merge),
		cmocka_unit_test(unavailable_agents_and_merge),
		cmocka_unit_test(robust_outcome_is_read_from_the_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
