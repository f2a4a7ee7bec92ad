/* test_llm_secrets.c - the API key never reaches a file, a log line or an error message: a run with
 * successes, failures, servers that echo the key back and a key inside the URL, then replayed and
 * exported, and every byte under the run directory and on stderr searched for the key. */
#include <dirent.h>
#include <fcntl.h>

#include "fake_llm.h"

static void random_key(char out[48])
{
	unsigned char raw[16];
	int fd = open("/dev/urandom", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, raw, sizeof(raw)), (ssize_t)sizeof(raw));
	close(fd);
	strcpy(out, "sk-");
	for (int i = 0; i < 16; i++)
		sprintf(out + 3 + 2 * i, "%02x", raw[i]);
}

/* Counts files below dir and the ones containing needle. */
static void grep_tree(const char *dir, const char *needle, int *files, int *hits)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = xstrfmt("%s/%s", dir, e->d_name);
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			grep_tree(p, needle, files, hits);
		} else {
			struct strbuf sb = STRBUF_INIT;
			assert_int_equal(strbuf_read_file(&sb, p, 0), 0);
			(*files)++;
			if (memmem(sb.buf, sb.len, needle, strlen(needle))) {
				fprintf(stderr, "the key is in %s\n", p);
				(*hits)++;
			}
			strbuf_release(&sb);
		}
		free(p);
	}
	closedir(d);
}

/* Every call's error text is kept, to be searched as well. */
static void call(struct llm_client *c, int n, struct strbuf *errors)
{
	struct llm_request req = test_request(n);
	struct llm_response r;
	struct sb_error err = { 0 };
	if (llm_chat(c, &req, &r, &err))
		strbuf_addf(errors, "%s\n", err.msg);
	if (r.text)
		strbuf_add(errors, r.text, r.text_len);
	llm_response_release(&r);
}

static void no_file_or_message_ever_holds_the_key(void **state)
{
	(void)state;
	char key[48];
	random_key(key);
	char *script = xstrfmt("[{'content': 'fine'},"
			       " {'status': 500, 'echo_headers': true, 'repeat': 2},"
			       " {'status': 401, 'echo_headers': true},"
			       " {'content': 'you sent me %s, which I repeat', 'finish_reason': 'length'},"
			       " {'status': 403, 'echo_headers': true},"
			       " {'status': 400, 'echo_headers': true}]", key);
	struct llm_fixture *x = fixture_start("openai", key, script);
	char *root = x->run;  /* everything the run writes goes below here */
	char *run = xstrfmt("%s/run", root), *run2 = xstrfmt("%s/replayed", root);
	struct strbuf errors = STRBUF_INIT;

	/* stderr goes to a file under the root for the length of the run */
	fflush(stderr);
	int saved = dup(2);
	char *errpath = xstrfmt("%s/stderr.txt", root);
	int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(efd >= 0);
	dup2(efd, 2);
	close(efd);

	struct llm_accounts *acc = llm_accounts_new();
	x->o.accounts = acc;
	x->o.max_attempts = 2;
	assert_int_equal(llm_client_new(&x->m, run, &x->o, &x->c, &x->err), 0);
	for (int i = 0; i < 4; i++)
		call(x->c, i, &errors);
	llm_client_free(x->c);
	x->c = NULL;

	/* the Anthropic flavour sends the key in another header */
	x->m.provider = (char *)"anthropic";
	assert_int_equal(llm_client_new(&x->m, run, &x->o, &x->c, &x->err), 0);
	call(x->c, 4, &errors);
	llm_client_free(x->c);
	x->c = NULL;

	/* the doctor's probe, with a server echoing the key */
	x->m.provider = (char *)"openai";
	double lat;
	struct strbuf d = STRBUF_INIT;
	struct sb_error perr = { 0 };
	llm_check_endpoint(&x->m, &lat, &d, &perr);
	strbuf_addf(&errors, "%s\n%s\n", perr.msg, d.buf);
	strbuf_release(&d);

	/* a key inside the URL (some gateways take it as a path or query part) and nothing listening */
	char *base = xstrfmt("http://127.0.0.1:9/%s/v1?key=%s", key, key);
	x->m.api_base = base;
	assert_int_equal(llm_client_new(&x->m, run, &x->o, &x->c, &x->err), 0);
	call(x->c, 5, &errors);
	llm_client_free(x->c);
	x->c = NULL;

	/* replay the run into another directory, export a cassette and the accounts */
	struct model_cfg rm;
	test_model(&rm, "replay", NULL);
	rm.cassette = run;
	assert_int_equal(llm_client_new(&rm, run2, NULL, &x->c, &x->err), 0);
	for (int i = 0; i < 6; i++)
		call(x->c, i, &errors);
	char *jsonl = xstrfmt("%s/cassette.jsonl", root);
	assert_int_equal(llm_cassette_write(run, jsonl, &x->err), 0);
	struct strbuf totals = STRBUF_INIT;
	llm_accounts_json(acc, &totals);
	llm_accounts_format(acc, &totals);
	write_file(root, "accounts.txt", totals.buf);
	write_file(root, "errors.txt", errors.buf);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);

	int files = 0, hits = 0;
	grep_tree(root, key, &files, &hits);
	assert_int_equal(hits, 0);
	assert_true(files >= 12 + 3); /* 6 + 6 transcripts, stderr, cassette, accounts, errors */
	assert_non_null(strstr(errors.buf, "[REDACTED]"));

	/* the test can fail: the key did travel, to the endpoint, whose log is outside the root */
	struct strbuf srvlog = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&srvlog, x->srv.log, 0), 0);
	assert_non_null(strstr(srvlog.buf, key));

	strbuf_release(&srvlog);
	strbuf_release(&totals);
	strbuf_release(&errors);
	llm_accounts_free(acc);
	free(jsonl);
	free(base);
	free(errpath);
	free(run);
	free(run2);
	free(script);
	fixture_stop(x);
}

/* Credentials given as headers are secrets too: a headers_env value and a secret-looking literal header
 * reach the endpoint and nothing else, even from a server that echoes every header back. A redacted header
 * (what a run's config.yaml stores) is refused with what to set, and headers_env gives it again. */
static void header_credentials_never_reach_a_file(void **state)
{
	(void)state;
	char env_value[48], literal[48];
	random_key(env_value);
	random_key(literal);
	struct llm_fixture *x = fixture_start("openai", "sk-unused",
					      "[{'status': 500, 'echo_headers': true}, {'status': 400, 'echo_headers': true},"
					      " {'content': 'fine'}]");
	struct header_kv headers[] = { { (char *)"X-Secret-Token", literal }, { (char *)"X-Team", (char *)"blue" },
				       { (char *)"X-Api-Key", (char *)"replaced by headers_env" } };
	struct header_kv from_env[] = { { (char *)"x-api-key", (char *)"SBTEST_HDR" } };
	x->m.headers = headers;
	x->m.nheaders = 3;
	x->m.headers_env = from_env;
	x->m.nheaders_env = 1;
	setenv("SBTEST_HDR", env_value, 1);
	x->o.max_attempts = 2;
	assert_int_equal(fixture_chat(x, 0), SB_EENV); /* 500, then 400: both bodies hold the headers */
	assert_null(strstr(x->err.msg, env_value));
	assert_null(strstr(x->err.msg, literal));
	assert_non_null(strstr(x->err.msg, "[REDACTED]"));
	assert_int_equal(fixture_chat(x, 1), 0);
	int files = 0, hits = 0;
	grep_tree(x->run, env_value, &files, &hits);
	grep_tree(x->run, literal, &files, &hits);
	assert_int_equal(hits, 0);
	assert_true(files >= 4); /* two transcripts, searched twice */
	json_t *log = fake_llm_log(&x->srv);
	char *sent_env = fake_llm_header(log, 0, "X-Api-Key"), *sent_lit = fake_llm_header(log, 0, "X-Secret-Token");
	char *team = fake_llm_header(log, 0, "X-Team");
	assert_string_equal(sent_env, env_value); /* headers_env wins over the literal of the same name */
	assert_string_equal(sent_lit, literal);
	assert_string_equal(team, "blue");
	free(sent_env), free(sent_lit), free(team);
	json_decref(log);
	llm_client_free(x->c);
	x->c = NULL;

	/* resumed from a stored config.yaml: the redacted value is refused, and headers_env replaces it */
	struct header_kv redacted[] = { { (char *)"Authorization", (char *)"[REDACTED]" } };
	struct header_kv auth_env[] = { { (char *)"Authorization", (char *)"SBTEST_HDR" } };
	x->m.headers = redacted;
	x->m.nheaders = 1;
	x->m.headers_env = NULL;
	x->m.nheaders_env = 0;
	assert_int_equal(llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err), SB_EINPUT);
	assert_non_null(strstr(x->err.msg, "--set models.fake.headers_env=Authorization:VARIABLE"));
	x->m.headers_env = auth_env;
	x->m.nheaders_env = 1;
	assert_int_equal(llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err), 0);
	llm_client_free(x->c);
	x->c = NULL;
	/* a variable that is not set is named */
	unsetenv("SBTEST_HDR");
	assert_int_equal(llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err), SB_EINPUT);
	assert_non_null(strstr(x->err.msg, "headers_env.Authorization names $SBTEST_HDR, which is not set"));
	x->m.headers = NULL;
	x->m.nheaders = 0;
	x->m.headers_env = NULL;
	x->m.nheaders_env = 0;
	fixture_stop(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_file_or_message_ever_holds_the_key),
		cmocka_unit_test(header_credentials_never_reach_a_file),
	};
	return cmocka_run_group_tests_name("llm_secrets", tests, NULL, NULL);
}
