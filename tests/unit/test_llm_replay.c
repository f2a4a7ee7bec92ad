/* test_llm_replay.c - a recorded run reproduces without its endpoint: record-then-replay gives the
 * same answers byte for byte (from a run directory and from a JSONL cassette, the 5 MB one included),
 * a replayed run is itself replayable, strict replay catches changed prompts, a miss names its key;
 * and the accounting of tokens, latency and cost per agent and problem. */
#include <pthread.h>

#include "fake_llm.h"

#define KEY "sk-replay-test-key-abcdef"

static const char *const RECORDED = "[{'content': 'first answer', 'prompt_tokens': 100, 'completion_tokens': 20},"
				    " {'content': 'cut sho', 'finish_reason': 'length', 'completion_tokens': 64},"
				    " {'status': 500, 'body': 'boom', 'repeat': 3},"
				    " {'content_bytes': 5242880, 'completion_tokens': 1300000}]";
#define NRECORDED 4

/* Records calls 0..3 of RECORDED into x->run and keeps copies of the responses. */
static struct llm_fixture *record(struct llm_response *got)
{
	struct llm_fixture *x = fixture_start("openai", KEY, RECORDED);
	for (int i = 0; i < NRECORDED; i++) {
		fixture_chat(x, i);
		got[i] = x->r;
		memset(&x->r, 0, sizeof(x->r));
	}
	assert_int_equal(got[0].kind, LLM_OK);
	assert_int_equal(got[1].kind, LLM_ERR_TRUNCATED);
	assert_int_equal(got[2].kind, LLM_ERR_HTTP);
	assert_int_equal(got[3].kind, LLM_OK);
	return x;
}

static struct model_cfg replay_model(const char *cassette, int strict)
{
	struct model_cfg m;
	test_model(&m, "replay", NULL);
	m.cassette = (char *)cassette;
	m.strict = strict;
	return m;
}

static void assert_same_response(const struct llm_response *a, const struct llm_response *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->text_len, b->text_len);
	if (a->text || b->text)
		assert_memory_equal(a->text, b->text, a->text_len);
	if (a->finish_reason || b->finish_reason)
		assert_string_equal(a->finish_reason, b->finish_reason);
	assert_int_equal(a->prompt_tokens, b->prompt_tokens);
	assert_int_equal(a->completion_tokens, b->completion_tokens);
	assert_true(a->cost_usd == b->cost_usd);
	assert_int_equal(a->http_status, b->http_status);
}

/* Replays calls 0..3 from cassette into a fresh run directory; returns that directory. */
static char *replay_all(const char *cassette, const struct llm_response *want)
{
	struct model_cfg m = replay_model(cassette, 1);
	struct llm_client *c;
	struct sb_error err = { 0 };
	char *run = tmpdir_make();
	if (llm_client_new(&m, run, NULL, &c, &err))
		fail_msg("%s", err.msg);
	for (int i = 0; i < NRECORDED; i++) {
		struct llm_request req = test_request(i);
		struct llm_response r;
		int rc = llm_chat(c, &req, &r, &err);
		assert_int_equal(rc, want[i].kind == LLM_OK ? 0 : SB_EENV);
		assert_same_response(&r, &want[i]);
		assert_int_equal(r.replayed, 1);
		assert_int_equal(r.attempts, 0);
		json_t *t = load_json(r.transcript_path);
		assert_string_equal(json_string_value(json_object_get(t, "replayed_from")), cassette);
		json_decref(t);
		if (i == 2)
			assert_non_null(strstr(err.msg, "HTTP 500")); /* the recorded error, word for word */
		llm_response_release(&r);
	}
	llm_client_free(c);
	return run;
}

static void record_then_replay_is_identical(void **state)
{
	(void)state;
	struct llm_response got[NRECORDED];
	struct llm_fixture *x = record(got);
	size_t served = fake_llm_nrequests(&x->srv);

	char *run2 = replay_all(x->run, got);          /* from the run directory */
	char *run3 = replay_all(run2, got);            /* a replayed run is replayable too */
	char *jsonl = xstrfmt("%s/cassette.jsonl", run3);
	struct sb_error err = { 0 };
	assert_int_equal(llm_cassette_write(x->run, jsonl, &err), 0);
	char *run4 = replay_all(jsonl, got);           /* from a JSONL cassette */
	assert_int_equal(fake_llm_nrequests(&x->srv), served); /* the endpoint was never asked again */

	/* the doctor counts what a cassette holds */
	struct model_cfg m = replay_model(jsonl, 0);
	double lat;
	struct strbuf d = STRBUF_INIT;
	assert_int_equal(llm_check_endpoint(&m, &lat, &d, &err), 0);
	assert_non_null(strstr(d.buf, "4 recorded calls"));
	strbuf_reset(&d);
	m.cassette = x->run;
	assert_int_equal(llm_check_endpoint(&m, &lat, &d, &err), 0);
	assert_non_null(strstr(d.buf, "4 recorded calls"));
	strbuf_release(&d);

	for (int i = 0; i < NRECORDED; i++)
		llm_response_release(&got[i]);
	tmpdir_remove(run4);
	free(jsonl);
	tmpdir_remove(run3);
	tmpdir_remove(run2);
	fixture_stop(x);
}

static int replay_one(const char *cassette, int strict, struct llm_request *req, const char *run,
		      struct llm_response *r, struct sb_error *err)
{
	struct model_cfg m = replay_model(cassette, strict);
	struct llm_client *c;
	assert_int_equal(llm_client_new(&m, run, NULL, &c, err), 0);
	int rc = llm_chat(c, req, r, err);
	llm_client_free(c);
	return rc;
}

static void strict_replay_detects_a_changed_request(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'content': 'recorded'}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	char *run = tmpdir_make();
	struct llm_response r;
	struct sb_error err = { 0 };
	struct llm_request req = test_request(0);
	assert_int_equal(replay_one(x->run, 1, &req, run, &r, &err), 0);
	assert_string_equal(r.text, "recorded");
	llm_response_release(&r);

	struct llm_message changed[] = { { "system", "You write CUDA kernels." }, { "user", "Write a GELU kernel." } };
	req.messages = changed;
	assert_int_equal(replay_one(x->run, 1, &req, run, &r, &err), SB_EINPUT);
	assert_int_equal(r.kind, LLM_ERR_REPLAY_MISMATCH);
	assert_null(r.text);
	assert_non_null(strstr(err.msg, "agent=a problem=L1/19 sample=0 call=0"));
	assert_non_null(strstr(err.msg, x->run));
	llm_response_release(&r);

	req = test_request(0);
	req.max_tokens = 100; /* per-call parameters count too */
	assert_int_equal(replay_one(x->run, 1, &req, run, &r, &err), SB_EINPUT);
	assert_int_equal(r.kind, LLM_ERR_REPLAY_MISMATCH);
	llm_response_release(&r);

	/* not strict: served anyway, and the new transcript says the request differed */
	req.messages = changed;
	assert_int_equal(replay_one(x->run, 0, &req, run, &r, &err), 0);
	assert_string_equal(r.text, "recorded");
	json_t *t = load_json(r.transcript_path);
	assert_true(json_is_string(json_object_get(t, "recorded_request_hash")));
	char hash[65];
	llm_request_hash(&req, hash);
	assert_string_equal(json_string_value(json_object_get(t, "request_hash")), hash);
	json_decref(t);
	llm_response_release(&r);
	tmpdir_remove(run);
	fixture_stop(x);
}

static void a_miss_is_typed_and_names_the_key(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'content': 'only call 0'}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	char *run = tmpdir_make();
	struct llm_response r;
	struct sb_error err = { 0 };
	struct llm_request req = test_request(7);
	assert_int_equal(replay_one(x->run, 0, &req, run, &r, &err), SB_EINPUT);
	assert_int_equal(r.kind, LLM_ERR_REPLAY_MISS);
	assert_non_null(strstr(err.msg, "no recorded call for agent=a problem=L1/19 sample=0 call=7"));
	json_t *t = load_json(r.transcript_path); /* the miss is on record in the new run */
	assert_string_equal(json_string_value(json_object_get(json_object_get(t, "error"), "kind")), "replay_miss");
	json_decref(t);
	llm_response_release(&r);
	/* a key whose file name collides with another's is a miss, not the other's answer */
	req = test_request(0);
	req.problem = "L1_19";
	assert_int_equal(replay_one(x->run, 0, &req, run, &r, &err), SB_EINPUT);
	assert_int_equal(r.kind, LLM_ERR_REPLAY_MISS);
	llm_response_release(&r);

	/* cassettes that cannot serve fail when the client is made */
	struct model_cfg m = replay_model("/nonexistent/run", 0);
	struct llm_client *c = NULL;
	assert_int_equal(llm_client_new(&m, run, NULL, &c, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/run"));
	write_file(run, "bad.jsonl",
		   "{\"key\": {\"agent\": \"a\", \"problem\": \"p\", \"sample\": 0, \"call\": 0}}\n\nnot json\n");
	char *bad = xstrfmt("%s/bad.jsonl", run);
	m.cassette = bad;
	assert_int_equal(llm_client_new(&m, run, NULL, &c, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "bad.jsonl:3: not a recorded call"));
	free(bad);
	tmpdir_remove(run);
	fixture_stop(x);
}

static void accounting_sums_per_agent_and_problem(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'content': 'a', 'prompt_tokens': 1000, 'completion_tokens': 100},"
			" {'content': 'b', 'prompt_tokens': 2000, 'completion_tokens': 300},"
			" {'status': 400, 'body': 'bad'}]");
	struct llm_accounts *acc = llm_accounts_new();
	x->o.accounts = acc;
	struct llm_request req = test_request(0);
	struct sb_error err;
	assert_int_equal(fixture_chat(x, 0), 0);
	llm_response_release(&x->r);
	req.problem = "L2/3";
	assert_int_equal(llm_chat(x->c, &req, &x->r, &err), 0);
	llm_response_release(&x->r);
	req.agent = "b";
	assert_int_equal(llm_chat(x->c, &req, &x->r, &err), SB_EENV);

	struct llm_totals t = llm_accounts_total(acc, "a", NULL);
	assert_int_equal(t.calls, 2);
	assert_int_equal(t.failed, 0);
	assert_int_equal(t.prompt_tokens, 3000);
	assert_int_equal(t.completion_tokens, 400);
	assert_true(t.cost_usd > 0.00999 && t.cost_usd < 0.01001); /* 3000*2/1e6 + 400*10/1e6 */
	assert_true(t.latency_s > 0);
	t = llm_accounts_total(acc, "a", "L1/19");
	assert_int_equal(t.prompt_tokens, 1000);
	t = llm_accounts_total(acc, NULL, "L2/3");
	assert_int_equal(t.calls, 2);
	assert_int_equal(t.failed, 1);

	struct strbuf out = STRBUF_INIT;
	llm_accounts_format(acc, &out);
	assert_non_null(strstr(out.buf, "agent"));
	assert_non_null(strstr(out.buf, "L2/3"));
	strbuf_reset(&out);
	llm_accounts_json(acc, &out);
	json_t *j = json_loads(out.buf, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "entries")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "total"), "calls")), 3);
	json_decref(j);
	strbuf_release(&out);
	llm_accounts_free(acc);
	fixture_stop(x);
}

static void *add_many(void *arg)
{
	struct llm_response r = { .kind = LLM_OK, .prompt_tokens = 3, .completion_tokens = 1, .cost_usd = 0.5 };
	for (int i = 0; i < 1000; i++)
		llm_accounts_add(arg, i % 2 ? "x" : "y", "L1/1", &r);
	return NULL;
}

static void accounting_is_thread_safe(void **state)
{
	(void)state;
	struct llm_accounts *acc = llm_accounts_new();
	pthread_t th[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, add_many, acc);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	struct llm_totals t = llm_accounts_total(acc, NULL, NULL);
	assert_int_equal(t.calls, 8000);
	assert_int_equal(t.prompt_tokens, 24000);
	assert_true(t.cost_usd == 4000.0);
	assert_int_equal(llm_accounts_total(acc, "x", NULL).calls, 4000);
	llm_accounts_free(acc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_then_replay_is_identical),
		cmocka_unit_test(strict_replay_detects_a_changed_request),
		cmocka_unit_test(a_miss_is_typed_and_names_the_key),
		cmocka_unit_test(accounting_sums_per_agent_and_problem),
		cmocka_unit_test(accounting_is_thread_safe),
	};
	return cmocka_run_group_tests_name("llm_replay", tests, NULL, NULL);
}
