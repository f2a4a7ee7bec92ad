/* test_serve_api.c - serve's request reading (harness/serve/api.c), its clients and tokens (clients.c) and
 * its journal (journal.c): strict bodies with the status each refusal gets, bearer tokens, and what the
 * journal keeps across a reopen (a candidate once, a failure on the items that waited, usage charged). */
#include "testutil.h"

#include "serve/api.h"
#include "serve/clients.h"
#include "serve/journal.h"

static struct problem problems[] = {
	{ 1, 2, "ReLU", "/nonexistent/2_ReLU.py", "aa" },
	{ 1, 19, "Tanh", "/nonexistent/19_Tanh.py", "bb" },
};
static const struct suite suite = { "/nonexistent", problems, 2, NULL, 0 };
static const struct api_limits lim = { &suite, "stitchbench", REWARD_STITCHCUDA, 0.5, 3, 64 };

static int parse(const char *body, struct serve_request *r, struct api_error *e)
{
	memset(e, 0, sizeof(*e));
	return api_parse_request(body, strlen(body), &lim, r, e);
}

static void refused(const char *body, int status, const char *says)
{
	struct serve_request r;
	struct api_error e;
	assert_int_equal(parse(body, &r, &e), -1);
	if (e.status != status || !strstr(e.msg, says))
		fail_msg("%s: got %d '%s', want %d '%s'", body, e.status, e.msg, status, says);
	serve_request_release(&r);
}

static void bodies_read_strictly(void **state)
{
	(void)state;
	refused("", 400, "empty body");
	refused("{\"candidates\": [", 400, "not JSON: line 1");
	refused("[1]", 400, "JSON object");
	refused("{\"candidate\": []}", 400, "unknown key 'candidate'");
	refused("{\"candidates\": []}", 400, "non-empty array");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\", \"sorce\": 1}]}", 400, "candidates[0]: unknown key");
	refused("{\"candidates\": [{\"problem\": \"L1/99\", \"source\": \"x\"}]}", 422, "no problem L1/99");
	refused("{\"candidates\": [{\"problem\": \"nineteen\", \"source\": \"x\"}]}", 400, "not a problem id");
	refused("{\"candidates\": [{\"problem\": \"L1/2\"}]}", 400, "candidates[0].source");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\"}], \"preset\": \"kernelbench\"}", 422,
		"preset 'stitchbench'");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\", \"reward\": \"fast\"}]}", 400, "reward");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\"}], \"lambda\": 11}", 400, "lambda");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\", \"request_id\": \"\"}]}", 400, "request_id");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\"}, {\"problem\": \"L1/2\", \"source\": \"y\"},"
		" {\"problem\": \"L1/2\", \"source\": \"z\"}, {\"problem\": \"L1/2\", \"source\": \"w\"}]}", 400, "--max-batch");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \""
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}]}", 413, "at most 64");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"a\\u0000b\"}]}", 400, "NUL");
	refused("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"x\"}], \"candidates\": []}", 400, "not JSON");
}

static void defaults_and_overrides(void **state)
{
	(void)state;
	struct serve_request r;
	struct api_error e;
	assert_int_equal(parse("{\"candidates\": [{\"problem\": \"l1/19\", \"source\": \"abc\", \"request_id\": \"r1\"},"
			       " {\"problem\": \"L1/2\", \"source\": \"abc\", \"reward\": \"pass\", \"lambda\": 2}],"
			       " \"reward\": \"speedup\", \"priority\": -3, \"verdicts\": \"summary\"}", &r, &e), 0);
	assert_int_equal(r.n, 2);
	assert_ptr_equal(r.v[0].problem, &problems[1]);
	assert_string_equal(r.v[0].ref, "L1/19");
	/* sha256("abc") */
	assert_string_equal(r.v[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_string_equal(r.v[0].request_id, "r1");
	assert_int_equal(r.v[0].reward, REWARD_SPEEDUP);
	assert_true(r.v[0].lambda == 0.5);
	assert_int_equal(r.v[1].reward, REWARD_PASS);
	assert_true(r.v[1].lambda == 2);
	assert_null(r.v[1].request_id);
	assert_int_equal(r.priority, -3);
	assert_int_equal(r.full, 0);
	assert_false(r.has_wait);
	serve_request_release(&r);
	assert_int_equal(parse("{\"candidates\": [{\"problem\": \"L1/2\", \"source\": \"\"}]}", &r, &e), 0);
	assert_int_equal(r.priority, SERVE_PRIORITY_CLIENT);
	assert_int_equal(r.full, 1);
	assert_true(r.wait_s < 0);
	serve_request_release(&r);
}

static void tokens(void **state)
{
	(void)state;
	struct serve_clients c = { 0 };
	struct sb_error err = { 0 };
	setenv("SB_TEST_TOKEN_A", "secret-a", 1);
	setenv("SB_TEST_TOKEN_B", "secret-b", 1);
	unsetenv("SB_TEST_TOKEN_UNSET");
	assert_int_equal(clients_add(&c, "trainer:SB_TEST_TOKEN_A:10:3600", &err), 0);
	assert_int_equal(clients_add(&c, "eval:SB_TEST_TOKEN_B", &err), 0);
	assert_int_equal(clients_add(&c, "x:SB_TEST_TOKEN_UNSET", &err), SB_EENV);
	assert_non_null(strstr(err.msg, "$SB_TEST_TOKEN_UNSET is not set"));
	assert_int_equal(clients_add(&c, "y:SB_TEST_TOKEN_A", &err), SB_EINPUT); /* the same token twice */
	assert_int_equal(clients_add(&c, "trainer:SB_TEST_TOKEN_B", &err), SB_EINPUT);
	assert_int_equal(clients_add(&c, "bad name:SB_TEST_TOKEN_B", &err), SB_EINPUT);
	assert_int_equal(clients_add(&c, "z:SB_TEST_TOKEN_B:high", &err), SB_EINPUT);
	assert_true(clients_need_token(&c));
	const struct serve_client *t = clients_auth(&c, "Bearer secret-a");
	assert_non_null(t);
	assert_string_equal(t->name, "trainer");
	assert_int_equal(t->priority, 10);
	assert_true(t->budget_s == 3600);
	assert_string_equal(clients_auth(&c, "bearer secret-b ")->name, "eval");
	assert_null(clients_auth(&c, NULL));
	assert_null(clients_auth(&c, "Bearer secret"));
	assert_null(clients_auth(&c, "Bearer secret-aa"));
	assert_null(clients_auth(&c, "Bearer "));
	assert_null(clients_auth(&c, "Basic secret-a"));
	clients_release(&c);

	/* an open server has one anonymous client, whatever the header */
	clients_add_open(&c, 0, 5);
	assert_false(clients_need_token(&c));
	assert_string_equal(clients_auth(&c, NULL)->name, "anonymous");
	assert_string_equal(clients_auth(&c, "Bearer anything")->name, "anonymous");
	clients_release(&c);
}

static void journal_keeps_state(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *path = xstrfmt("%s/serve.db", dir);
	struct journal *j;
	struct sb_error err = { 0 };
	int64_t a, b;
	assert_int_equal(journal_open(&j, path, &err), 0);
	assert_int_equal(journal_begin(j, &err), 0);
	assert_int_equal(journal_add_job(j, "job1", "trainer", "req1", "digest1", &err), 0);
	assert_int_equal(journal_add_candidate(j, "L1/2", "sha-a", "/x/a.py", 0, "trainer", &a, &err), 0);
	assert_int_equal(journal_add_candidate(j, "L1/2", "sha-b", "/x/b.py", 5, "trainer", &b, &err), 0);
	assert_int_equal(journal_add_item(j, "job1", 0, a, "ra", "stitchcuda", 0.5, 0, &err), 0);
	assert_int_equal(journal_add_item(j, "job1", 1, b, NULL, "pass", 0.5, 0, &err), 0);
	assert_int_equal(journal_bind_request(j, "trainer", "ra", a, &err), 0);
	assert_int_equal(journal_commit(j, &err), 0);
	/* a candidate is one row: adding it again fails, as the server looks it up first */
	assert_int_not_equal(journal_add_candidate(j, "L1/2", "sha-a", "/x/a.py", 0, "trainer", &a, &err), 0);
	assert_int_equal(journal_finish(j, a, CAND_DONE, NULL, NULL, 2.5, &err), 0);
	assert_int_equal(journal_finish(j, b, CAND_FAILED, "harness_error", "the reference failed", 1, &err), 0);
	journal_close(j);

	assert_int_equal(journal_open(&j, path, &err), 0);
	char job[33], digest[65], client[64], created[32];
	assert_int_equal(journal_find_job(j, "trainer", "req1", job, digest, &err), 1);
	assert_string_equal(job, "job1");
	assert_string_equal(digest, "digest1");
	assert_int_equal(journal_find_job(j, "other", "req1", job, digest, &err), 0);
	int64_t bound;
	assert_int_equal(journal_find_request(j, "trainer", "ra", &bound, &err), 1);
	assert_true(bound == a);
	struct journal_item *items;
	size_t n, pending;
	assert_int_equal(journal_get_job(j, "job1", client, created, &items, &n, &err), 1);
	assert_int_equal(n, 2);
	assert_int_equal(items[0].cand.state, CAND_DONE);
	assert_string_equal(items[0].fail_status, "");
	assert_string_equal(items[1].fail_status, "harness_error");
	assert_string_equal(items[1].fail_message, "the reference failed");
	journal_items_free(items, n);
	assert_int_equal(journal_job_pending(j, "job1", &pending, &err), 0);
	assert_int_equal(pending, 0);
	double used;
	assert_int_equal(journal_usage(j, "trainer", &used, &err), 0);
	assert_true(used == 2.5); /* a failure is not charged */
	size_t counts[3];
	assert_int_equal(journal_counts(j, counts, &err), 0);
	assert_int_equal(counts[CAND_DONE], 1);
	assert_int_equal(counts[CAND_FAILED], 1);

	/* asked again, the failed one is queued again; the old item keeps its failure */
	assert_int_equal(journal_requeue(j, b, 1, "eval", &err), 0);
	struct journal_cand c;
	assert_int_equal(journal_find_candidate(j, "L1/2", "sha-b", &c, &err), 1);
	assert_int_equal(c.state, CAND_QUEUED);
	assert_string_equal(c.client, "eval");
	journal_cand_release(&c);
	assert_int_equal(journal_get_job(j, "job1", client, created, &items, &n, &err), 1);
	assert_string_equal(items[1].fail_status, "harness_error");
	journal_items_free(items, n);
	assert_int_equal(journal_get_job(j, "nojob", client, created, &items, &n, &err), 0);
	journal_close(j);
	free(path);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bodies_read_strictly),
		cmocka_unit_test(defaults_and_overrides),
		cmocka_unit_test(tokens),
		cmocka_unit_test(journal_keeps_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
