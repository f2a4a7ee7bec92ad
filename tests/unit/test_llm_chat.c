/* test_llm_chat.c - one LLM call against a real local HTTP server: what goes on the wire (OpenAI and
 * Anthropic flavours, headers, token-limit fields), how answers and defective answers are typed,
 * the transcript every call leaves, the 5 MB answer, and the doctor's endpoint probe. */
#include "fake_llm.h"

#define KEY "sk-test-visible-only-to-the-server"

static void success_fills_text_usage_cost_and_transcript(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'content': '__global__ void relu() {}', 'prompt_tokens': 1000, "
			"'completion_tokens': 200}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	assert_int_equal(x->r.kind, LLM_OK);
	assert_string_equal(x->r.text, "__global__ void relu() {}");
	assert_int_equal(x->r.text_len, strlen(x->r.text));
	assert_string_equal(x->r.finish_reason, "stop");
	assert_int_equal(x->r.prompt_tokens, 1000);
	assert_int_equal(x->r.completion_tokens, 200);
	assert_true(x->r.cost_usd > 0.003999 && x->r.cost_usd < 0.004001); /* 1000*2/1e6 + 200*10/1e6 */
	assert_int_equal(x->r.attempts, 1);
	assert_int_equal(x->r.http_status, 200);
	assert_true(x->r.latency_s > 0 && x->r.wall_s >= x->r.latency_s);

	/* the transcript is on disk when llm_chat returns, at the documented path, as valid JSON */
	char *want = xstrfmt("%s/transcripts/a/L1_19/s0/call-0000.json", x->run);
	assert_string_equal(x->r.transcript_path, want);
	json_t *t = load_json(want);
	assert_string_equal(json_string_value(json_object_get(t, "format")), "stitchbench-transcript/1");
	json_t *key = json_object_get(t, "key");
	assert_string_equal(json_string_value(json_object_get(key, "problem")), "L1/19");
	assert_int_equal(json_integer_value(json_object_get(key, "call")), 0);
	json_t *msgs = json_object_get(json_object_get(t, "request"), "messages");
	assert_int_equal(json_array_size(msgs), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
			    "Write a ReLU kernel.");
	json_t *resp = json_object_get(t, "response");
	assert_string_equal(json_string_value(json_object_get(resp, "text")), "__global__ void relu() {}");
	assert_non_null(strstr(json_string_value(json_object_get(resp, "raw")), "chatcmpl-fake"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(t, "usage"), "completion_tokens")), 200);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(t, "timing"), "attempts")), 1);
	assert_true(json_is_null(json_object_get(t, "error")));
	assert_int_equal(strlen(json_string_value(json_object_get(t, "request_hash"))), 64);
	json_decref(t);
	free(want);
	fixture_stop(x);
}

static void openai_request_carries_auth_config_headers_and_params(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'content': 'a'}, {'content': 'b'}]");
	struct header_kv h[] = { { (char *)"X-Team", (char *)"kernels" } };
	x->m.headers = h;
	x->m.nheaders = 1;
	assert_int_equal(fixture_chat(x, 0), 0);
	json_t *log = fake_llm_log(&x->srv);
	json_t *req = json_array_get(json_object_get(log, "requests"), 0);
	assert_string_equal(json_string_value(json_object_get(req, "path")), "/v1/chat/completions");
	char *auth = fake_llm_header(log, 0, "Authorization"), *team = fake_llm_header(log, 0, "X-Team");
	assert_string_equal(auth, "Bearer " KEY);
	assert_string_equal(team, "kernels");
	json_t *body = fake_llm_body(log, 0);
	assert_string_equal(json_string_value(json_object_get(body, "model")), "fake-model-1");
	assert_true(json_real_value(json_object_get(body, "temperature")) == 0.25);
	assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 64);
	assert_null(json_object_get(body, "max_completion_tokens"));
	assert_null(json_object_get(body, "reasoning_effort")); /* sent only when set */
	json_t *first = json_array_get(json_object_get(body, "messages"), 0);
	assert_string_equal(json_string_value(json_object_get(first, "role")), "system");
	free(auth);
	free(team);
	json_decref(log);
	fixture_stop(x);
}

static void reasoning_models_get_max_completion_tokens_and_effort(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'content': 'a'}]");
	x->m.max_completion_tokens = 4096;
	x->m.reasoning_effort = (char *)"high";
	assert_int_equal(fixture_chat(x, 0), 0);
	json_t *log = fake_llm_log(&x->srv);
	json_t *body = fake_llm_body(log, 0);
	assert_int_equal(json_integer_value(json_object_get(body, "max_completion_tokens")), 4096);
	assert_null(json_object_get(body, "max_tokens"));
	assert_string_equal(json_string_value(json_object_get(body, "reasoning_effort")), "high");
	json_decref(log);
	fixture_stop(x);
}

static void anthropic_flavour_on_the_wire_and_back(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("anthropic", KEY,
			"[{'format': 'anthropic', 'content': 'ok', 'prompt_tokens': 7, "
			"'completion_tokens': 3}, {'format': 'anthropic', 'content': 'cut', "
			"'finish_reason': 'length'}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	assert_string_equal(x->r.text, "ok");
	assert_string_equal(x->r.finish_reason, "stop"); /* end_turn, normalised */
	assert_int_equal(x->r.prompt_tokens, 7);
	assert_int_equal(x->r.completion_tokens, 3);
	json_t *log = fake_llm_log(&x->srv);
	json_t *req = json_array_get(json_object_get(log, "requests"), 0);
	assert_string_equal(json_string_value(json_object_get(req, "path")), "/v1/messages");
	char *k = fake_llm_header(log, 0, "x-api-key"), *v = fake_llm_header(log, 0, "anthropic-version");
	char *bearer = fake_llm_header(log, 0, "Authorization");
	assert_string_equal(k, KEY);
	assert_string_equal(v, "2023-06-01");
	assert_null(bearer);
	json_t *body = fake_llm_body(log, 0);
	assert_string_equal(json_string_value(json_object_get(body, "system")), "You write CUDA kernels.");
	assert_int_equal(json_array_size(json_object_get(body, "messages")), 1); /* the system turn moved out */
	assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 64);
	free(k);
	free(v);
	json_decref(log);

	assert_int_equal(fixture_chat(x, 1), SB_EENV);
	assert_int_equal(x->r.kind, LLM_ERR_TRUNCATED); /* stop_reason max_tokens */
	assert_string_equal(x->r.text, "cut");
	fixture_stop(x);
}

/* Defective 200 answers are typed, not retried, and still transcribed. */
static void defective_answers_are_typed_and_not_retried(void **state)
{
	(void)state;
	static const struct {
		const char *script;
		enum llm_errkind kind;
		const char *says;
	} cases[] = {
		{ "[{'body': '{\\\"choices\\\": [oops'}]", LLM_ERR_BAD_JSON, "not valid JSON" },
		{ "[{'body': {'object': 'chat.completion'}}]", LLM_ERR_MISSING_FIELD, "no choices[0]" },
		{ "[{'body': {'error': {'message': 'model overloaded'}}}]", LLM_ERR_MISSING_FIELD, "model overloaded" },
		{ "[{'content': ''}]", LLM_ERR_EMPTY, "no text" },
		{ "[{'content': null}]", LLM_ERR_EMPTY, "no text" },
		{ "[{'content': 'half a kern', 'finish_reason': 'length', 'completion_tokens': 64}]", LLM_ERR_TRUNCATED,
		  "finish_reason=length, 64 completion tokens" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct llm_fixture *x = fixture_start("openai", KEY, cases[i].script);
		int rc = fixture_chat(x, 0);
		if (rc != SB_EENV || x->r.kind != cases[i].kind || !strstr(x->err.msg, cases[i].says))
			fail_msg("case %zu: rc %d kind %s: %s", i, rc, llm_errkind_name(x->r.kind), x->err.msg);
		assert_int_equal(fake_llm_nrequests(&x->srv), 1);
		assert_non_null(strstr(x->err.msg, x->srv.base));
		json_t *t = load_json(x->r.transcript_path);
		assert_string_equal(json_string_value(json_object_get(json_object_get(t, "error"), "kind")),
				    llm_errkind_name(cases[i].kind));
		json_decref(t);
		if (cases[i].kind == LLM_ERR_TRUNCATED)
			assert_string_equal(x->r.text, "half a kern");
		fixture_stop(x);
	}
}

static void five_megabyte_answer_arrives_whole(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[{'content_bytes': 5242880}]");
	assert_int_equal(fixture_chat(x, 0), 0);
	assert_int_equal(x->r.text_len, 5242880);
	assert_int_equal(strlen(x->r.text), 5242880);
	assert_memory_equal(x->r.text, "0123456789abcdefghijklmnopqrstuvwxyz-stitchbench-fake-llm\n0123", 62);
	json_t *t = load_json(x->r.transcript_path);
	json_t *text = json_object_get(json_object_get(t, "response"), "text");
	assert_int_equal(json_string_length(text), 5242880);
	assert_memory_equal(json_string_value(text), x->r.text, 5242880);
	json_decref(t);

	/* a cap below the body size stops the transfer with a typed error */
	llm_client_free(x->c);
	x->c = NULL;
	x->o.max_response_bytes = 1 << 20;
	fake_llm_stop(&x->srv);
	fake_llm_start(&x->srv, "[{'content_bytes': 2000000}]");
	x->m.api_base = x->srv.base;
	assert_int_equal(fixture_chat(x, 1), SB_EENV);
	assert_int_equal(x->r.kind, LLM_ERR_TOO_LARGE);
	assert_int_equal(fake_llm_nrequests(&x->srv), 1);
	fixture_stop(x);
}

static void invalid_requests_are_refused_before_sending(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY, "[]");
	assert_int_equal(llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err), 0);
	struct llm_request req = test_request(0);
	req.problem = NULL;
	assert_int_equal(llm_chat(x->c, &req, &x->r, &x->err), SB_EINPUT);
	assert_int_equal(x->r.kind, LLM_ERR_INVALID);
	req = test_request(0);
	req.nmessages = 0;
	assert_int_equal(llm_chat(x->c, &req, &x->r, &x->err), SB_EINPUT);
	struct llm_message bad[] = { { "user", "\xff\xfe not utf-8" } };
	req = test_request(0);
	req.messages = bad;
	req.nmessages = 1;
	assert_int_equal(llm_chat(x->c, &req, &x->r, &x->err), SB_EINPUT);
	assert_non_null(strstr(x->err.msg, "UTF-8"));
	assert_int_equal(fake_llm_nrequests(&x->srv), 0);
	fixture_stop(x);
}

static void doctor_probe_reports_latency_and_models(void **state)
{
	(void)state;
	struct llm_fixture *x = fixture_start("openai", KEY,
			"[{'body': {'object': 'list', 'data': [{'id': 'other'}, {'id': 'fake-model-1'}]}},"
			" {'status': 401, 'body': {'error': 'bad key'}}]");
	double lat = -1;
	struct strbuf d = STRBUF_INIT;
	assert_int_equal(llm_check_endpoint(&x->m, &lat, &d, &x->err), 0);
	assert_true(lat > 0 && lat < 5);
	assert_string_equal(d.buf, "2 models listed, including fake-model-1");
	json_t *log = fake_llm_log(&x->srv);
	json_t *req = json_array_get(json_object_get(log, "requests"), 0);
	assert_string_equal(json_string_value(json_object_get(req, "method")), "GET");
	assert_string_equal(json_string_value(json_object_get(req, "path")), "/v1/models");
	json_decref(log);
	strbuf_reset(&d);
	assert_int_equal(llm_check_endpoint(&x->m, &lat, &d, &x->err), SB_EENV);
	assert_non_null(strstr(x->err.msg, "HTTP 401"));
	assert_non_null(strstr(x->err.msg, "/v1/models"));

	assert_null(llm_missing_key_env(&x->m));
	unsetenv("SBTEST_LLM_KEY");
	assert_string_equal(llm_missing_key_env(&x->m), "SBTEST_LLM_KEY");

	/* nothing listening: an error naming the URL, quickly */
	x->m.api_base = (char *)"http://127.0.0.1:9/v1";
	assert_int_equal(llm_check_endpoint(&x->m, &lat, &d, &x->err), SB_EENV);
	assert_non_null(strstr(x->err.msg, "GET http://127.0.0.1:9/v1/models"));
	strbuf_release(&d);
	fixture_stop(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_fills_text_usage_cost_and_transcript),
		cmocka_unit_test(openai_request_carries_auth_config_headers_and_params),
		cmocka_unit_test(reasoning_models_get_max_completion_tokens_and_effort),
		cmocka_unit_test(anthropic_flavour_on_the_wire_and_back),
		cmocka_unit_test(defective_answers_are_typed_and_not_retried),
		cmocka_unit_test(five_megabyte_answer_arrives_whole),
		cmocka_unit_test(invalid_requests_are_refused_before_sending),
		cmocka_unit_test(doctor_probe_reports_latency_and_models),
	};
	return cmocka_run_group_tests_name("llm_chat", tests, NULL, NULL);
}
