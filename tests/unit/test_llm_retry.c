/* test_llm_retry.c - a flaky endpoint must not lose work: 429 with Retry-After, 5xx then success,
 * timeouts, no retry on other 4xx, the final error's wording, and the concurrency and rate limits,
 * all against a real local HTTP server with backoffs shrunk to milliseconds. */
#include <pthread.h>

#include "fake_llm.h"
#include "llm/retry.h"

#define KEY "sk-retry-test-key-0123456789"

static double now(void)
{
	return retry_now();
}

static void retry_after_is_a_floor_on_the_wait(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'status': 429, 'headers': {'Retry-After': '1'}, 'body': {'error': 'slow down'}},"
			" {'content': 'done'}]");
	double t0 = now();
	assert_int_equal(fixture_chat(x, 0), 0);
	double elapsed = now() - t0;
	assert_true(elapsed >= 1.0); /* the backoff alone would be <= 5 ms */
	assert_true(elapsed < 3.0);
	assert_string_equal(x->r.text, "done");
	assert_int_equal(x->r.attempts, 2);
	assert_int_equal(fake_llm_nrequests(&x->srv), 2);
	json_t *t = load_json(x->r.transcript_path);
	json_t *log = json_object_get(json_object_get(t, "timing"), "attempt_log");
	assert_int_equal(json_array_size(log), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(log, 0), "status")), 429);
	assert_true(json_real_value(json_object_get(json_array_get(log, 0), "retry_after_s")) == 1.0);
	assert_true(json_real_value(json_object_get(json_array_get(log, 0), "backoff_s")) >= 1.0);
	json_decref(t);
	fixture_stop(x);
}

static void server_error_then_success(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'status': 500, 'body': 'internal'}, {'status': 502, 'body': ''}, {'content': 'ok'}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	assert_string_equal(x->r.text, "ok");
	assert_int_equal(x->r.attempts, 3);
	assert_int_equal(x->r.http_status, 200);
	assert_int_equal(fake_llm_nrequests(&x->srv), 3);
	fixture_stop(x);
}

static void slower_than_the_timeout_fails_typed_after_every_attempt(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'delay': 1.0, 'content': 'late', 'repeat': 2}]");
	x->o.timeout_ms = 250;
	x->o.max_attempts = 2;
	double t0 = now();
	assert_int_equal(fixture_chat(x, 0), SB_EENV);
	assert_int_equal(x->r.kind, LLM_ERR_TIMEOUT);
	assert_int_equal(x->r.attempts, 2);
	assert_true(now() - t0 < 0.9); /* gave up at the timeout, did not wait for the answers */
	assert_non_null(strstr(x->err.msg, "no complete response within 250 ms"));
	assert_non_null(strstr(x->err.msg, "after 2 attempts"));
	fixture_stop(x);
}

static void timeout_then_success_on_retry(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'delay': 1.0, 'content': 'late'}, {'content': 'on time'}]");
	x->o.timeout_ms = 250;
	assert_int_equal(fixture_chat(x, 0), 0);
	assert_string_equal(x->r.text, "on time");
	assert_int_equal(x->r.attempts, 2);
	fixture_stop(x);
}

static void other_client_errors_are_not_retried(void **state)
{
	(void)state;
	static const long statuses[] = { 400, 401, 404 };
	for (size_t i = 0; i < 3; i++) {
		char *script = xstrfmt("[{'status': %ld, 'body': {'error': 'no'}}, {'content': 'never'}]", statuses[i]);
		struct llm_fixture *x = fixture_start("openai", KEY, script);
		assert_int_equal(fixture_chat(x, 0), SB_EENV);
		assert_int_equal(x->r.kind, LLM_ERR_HTTP);
		assert_int_equal(x->r.http_status, statuses[i]);
		assert_int_equal(x->r.attempts, 1);
		assert_int_equal(fake_llm_nrequests(&x->srv), 1);
		fixture_stop(x);
		free(script);
	}
	/* 408 is a timeout in HTTP clothing: retried */
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'status': 408}, {'content': 'ok'}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	assert_int_equal(x->r.attempts, 2);
	fixture_stop(x);
}

static void final_error_names_endpoint_model_status_and_never_the_key(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'status': 503, 'body': {'error': 'overloaded, try later'}, 'repeat': 3}]");
	assert_int_equal(fixture_chat(x, 0), SB_EENV);
	char *url = xstrfmt("POST %s/chat/completions", x->srv.base);
	assert_non_null(strstr(x->err.msg, url));
	assert_non_null(strstr(x->err.msg, "model fake-model-1"));
	assert_non_null(strstr(x->err.msg, "HTTP 503"));
	assert_non_null(strstr(x->err.msg, "overloaded, try later"));
	assert_non_null(strstr(x->err.msg, "after 3 attempts"));
	free(url);
	fixture_stop(x);

	/* a server that echoes the request headers (as some proxies' error pages do) */
	x = fixture_start("openai", KEY, "[{'status': 401, 'echo_headers': true}]");
	assert_int_equal(fixture_chat(x, 0), SB_EENV);
	assert_non_null(strstr(x->err.msg, "HTTP 401"));
	assert_non_null(strstr(x->err.msg, "Bearer [REDACTED]"));
	assert_non_null(strstr(x->err.msg, "check the key in $SBTEST_LLM_KEY"));
	assert_null(strstr(x->err.msg, KEY));
	fixture_stop(x);
}

/* Nothing listening fails the call at once, without backoff (the next attempt would find the same), and
 * the third such call in a row says the endpoint is down. */
static void nothing_listening_fails_fast_and_marks_the_endpoint_down(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[]");
	x->m.api_base = (char *)"http://127.0.0.1:9/v1";
	x->o.backoff_base_s = x->o.backoff_cap_s = 2; /* a retry would show in the time taken */
	for (int call = 0; call < 3; call++) {
		double t0 = retry_now();
		assert_int_equal(fixture_chat(x, call), SB_EENV);
		assert_true(retry_now() - t0 < 1.5);
		assert_int_equal(x->r.kind, LLM_ERR_CONNECT);
		assert_int_equal(x->r.attempts, 1);
		assert_int_equal(x->r.http_status, 0);
		assert_non_null(strstr(x->err.msg, "http://127.0.0.1:9/v1/chat/completions"));
		assert_int_equal(x->r.endpoint_down, call == 2);
	}
	assert_non_null(strstr(x->err.msg, "nothing answered 3 calls in a row there: the endpoint is down"));
	fixture_stop(x);
	/* the count: unreachable calls in a row; any answer, even an error, starts it again */
	struct endpoint_health h = { 0 };
	assert_false(retry_note_call(&h, 1, 2));
	assert_false(retry_note_call(&h, 0, 2));
	assert_false(retry_note_call(&h, 1, 2));
	assert_true(retry_note_call(&h, 1, 2));
	assert_true(retry_note_call(&h, 1, 2));
	assert_false(retry_note_call(&h, 1, 0)); /* down_after 0: never down */
}

struct worker {
	struct llm_client *c;
	int call, rc;
	char text[32];
};

static void *one_call(void *arg)
{
	struct worker *w = arg;
	struct llm_request req = test_request(w->call);
	struct llm_response r;
	struct sb_error err = { 0 };
	w->rc = llm_chat(w->c, &req, &r, &err);
	snprintf(w->text, sizeof(w->text), "%s", r.text ? r.text : "");
	llm_response_release(&r);
	return NULL;
}

/* n threads, one call each, against max_concurrent slots; returns the server's max in flight. */
static long run_threads(int n, int max_concurrent)
{
	char *script = xstrfmt("[{'delay': 0.3, 'content': 'parallel', 'repeat': %d}]", n);
	struct llm_fixture *x = fixture_start("openai", KEY, script);
	struct worker w[16];
	pthread_t th[16];
	x->m.max_concurrent = max_concurrent;
	assert_int_equal(llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err), 0);
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){ x->c, i, -1, "" };
		assert_int_equal(pthread_create(&th[i], NULL, one_call, &w[i]), 0);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].rc, 0);
		assert_string_equal(w[i].text, "parallel");
	}
	json_t *log = fake_llm_log(&x->srv);
	long max = (long)json_integer_value(json_object_get(log, "max_in_flight"));
	assert_int_equal(json_array_size(json_object_get(log, "requests")), n);
	json_decref(log);
	free(script);
	fixture_stop(x);
	return max;
}

static void concurrency_limit_holds_and_is_used(void **state)
{
	(void)state;
	assert_int_equal(run_threads(8, 2), 2);
	/* the server can see parallel requests: the limit above is the client's doing */
	assert_int_equal(run_threads(4, 4), 4);
}

static void requests_per_minute_spaces_requests(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'content': 'r', 'repeat': 4}]");
	x->m.requests_per_minute = 600; /* one every 100 ms, no burst */
	double t0 = now();
	for (int i = 0; i < 4; i++)
		assert_int_equal(fixture_chat(x, i), 0);
	double elapsed = now() - t0;
	assert_true(elapsed >= 0.29);
	assert_true(elapsed < 2.0);
	fixture_stop(x);
}

static void backoff_policy_bounds_and_retry_after_forms(void **state)
{
	(void)state;
	struct retry_policy p = { 1.0, 60.0, 300.0, 6 };
	uint64_t rng = 42;
	double max_seen = 0;
	for (int attempt = 1; attempt <= 10; attempt++)
		for (int i = 0; i < 200; i++) {
			double w = retry_backoff_s(&p, attempt, -1, &rng);
			double ceiling = attempt >= 7 ? 60.0 : (double)(1 << (attempt - 1));
			assert_true(w >= 0 && w <= ceiling);
			if (attempt == 10 && w > max_seen)
				max_seen = w;
		}
	assert_true(max_seen > 30); /* jitter spans the range, not a constant */
	assert_true(retry_backoff_s(&p, 1, 7.0, &rng) >= 7.0);
	assert_true(retry_backoff_s(&p, 1, 5000.0, &rng) == 300.0); /* capped */

	time_t t = 1700000000;
	assert_true(retry_after_parse("5", t) == 5.0);
	assert_true(retry_after_parse(" 2\r\n", t) == 2.0);
	assert_true(retry_after_parse("Tue, 14 Nov 2023 22:13:30 GMT", t) == 10.0);
	assert_true(retry_after_parse("Tue, 14 Nov 2023 22:13:00 GMT", t) == 0.0); /* in the past */
	assert_true(retry_after_parse("soon", t) < 0);
	assert_true(retry_after_parse("5s", t) < 0);

	assert_true(retry_status_is_transient(429) && retry_status_is_transient(500) && retry_status_is_transient(408));
	assert_false(retry_status_is_transient(400) || retry_status_is_transient(401));
	assert_false(retry_status_is_transient(200));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(retry_after_is_a_floor_on_the_wait),
		cmocka_unit_test(server_error_then_success),
		cmocka_unit_test(slower_than_the_timeout_fails_typed_after_every_attempt),
		cmocka_unit_test(timeout_then_success_on_retry),
		cmocka_unit_test(other_client_errors_are_not_retried),
		cmocka_unit_test(final_error_names_endpoint_model_status_and_never_the_key),
		cmocka_unit_test(nothing_listening_fails_fast_and_marks_the_endpoint_down),
		cmocka_unit_test(concurrency_limit_holds_and_is_used),
		cmocka_unit_test(requests_per_minute_spaces_requests),
		cmocka_unit_test(backoff_policy_bounds_and_retry_after_forms),
	};
	return cmocka_run_group_tests_name("llm_retry", tests, NULL, NULL);
}
