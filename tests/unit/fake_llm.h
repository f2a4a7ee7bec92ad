/* fake_llm.h - starts tests/fake_llm/server.py (a real HTTP server on 127.0.0.1, scripted per test),
 * reads back what it received, and stops it; plus a model config and fast retry options for tests. */
#ifndef SB_TEST_FAKE_LLM_H
#define SB_TEST_FAKE_LLM_H

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/wait.h>

#include "testutil.h"
#include "core/config.h"
#include "llm/llm.h"

struct fake_llm {
	pid_t pid;
	int port;
	char *dir;   /* script and request log; kept apart from any run directory the test greps */
	char *log;
	char base[64]; /* http://127.0.0.1:PORT/v1 */
};

/* Starts the server with a JSON script (see server.py). Single quotes in the script are turned into
 * double quotes, so tests can write "[{'status': 429}]". */
static inline void fake_llm_start(struct fake_llm *f, const char *script)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	char *server = xstrfmt("%s/tests/fake_llm/server.py", root ? root : ".");
	char *text = xstrdup(script);
	for (char *p = text; *p; p++)
		if (*p == '\'')
			*p = '"';
	memset(f, 0, sizeof(*f));
	/* libcurl honours http_proxy; a proxy on a CI machine must not stand between client and server */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	f->dir = tmpdir_make();
	f->log = xstrfmt("%s/requests.json", f->dir);
	write_file(f->dir, "script.json", text);
	char *script_path = xstrfmt("%s/script.json", f->dir);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", server, script_path, f->log, (char *)NULL);
		perror("exec python3");
		_exit(127);
	}
	close(fds[1]);
	char line[64] = "";
	size_t n = 0;
	struct pollfd pfd = { fds[0], POLLIN, 0 };
	while (n + 1 < sizeof(line) && !strchr(line, '\n') && poll(&pfd, 1, 15000) > 0) {
		ssize_t got = read(fds[0], line + n, sizeof(line) - 1 - n);
		if (got <= 0)
			break;
		n += (size_t)got;
		line[n] = '\0';
	}
	close(fds[0]);
	if (sscanf(line, "PORT %d", &f->port) != 1)
		fail_msg("fake_llm did not start (got '%s')", line);
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%d/v1", f->port);
	free(server);
	free(text);
	free(script_path);
}

static inline void fake_llm_stop(struct fake_llm *f)
{
	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		while (waitpid(f->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(f->log);
	tmpdir_remove(f->dir);
	memset(f, 0, sizeof(*f));
}

/* What the server received: {"requests": [{method, path, headers, body}], "max_in_flight": n}. */
static inline json_t *fake_llm_log(const struct fake_llm *f)
{
	json_error_t jerr;
	json_t *log = json_load_file(f->log, 0, &jerr);
	if (!log)
		fail_msg("fake_llm log %s: %s", f->log, jerr.text);
	return log;
}

static inline size_t fake_llm_nrequests(const struct fake_llm *f)
{
	json_t *log = fake_llm_log(f);
	size_t n = json_array_size(json_object_get(log, "requests"));
	json_decref(log);
	return n;
}

/* Request i's header (the server keeps the client's spelling; looked up case-insensitively). */
static inline char *fake_llm_header(json_t *log, size_t i, const char *name)
{
	json_t *h = json_object_get(json_array_get(json_object_get(log, "requests"), i), "headers");
	const char *k;
	json_t *v;
	json_object_foreach(h, k, v)
		if (!strcasecmp(k, name))
			return xstrdup(json_string_value(v));
	return NULL;
}

static inline json_t *fake_llm_body(json_t *log, size_t i)
{
	return json_object_get(json_array_get(json_object_get(log, "requests"), i), "body");
}

/* A model pointing at the fake server; the strings are literals, so never config_release() it. */
static inline void test_model(struct model_cfg *m, const char *provider, const char *api_base)
{
	memset(m, 0, sizeof(*m));
	m->name = (char *)"fake";
	m->provider = (char *)provider;
	m->api_base = (char *)api_base;
	m->model = (char *)"fake-model-1";
	m->api_key_env = (char *)"SBTEST_LLM_KEY";
	m->temperature = 0.25;
	m->max_tokens = 64;
	m->timeout_s = 10;
	m->max_concurrent = 4;
	m->price_prompt_per_mtok = 2.0;
	m->price_completion_per_mtok = 10.0;
}

/* Retries in milliseconds instead of seconds, so the whole suite stays fast. */
static inline struct llm_opts test_opts(void)
{
	struct llm_opts o = LLM_OPTS_INIT;
	o.backoff_base_s = 0.005;
	o.backoff_cap_s = 0.02;
	o.max_attempts = 3;
	o.timeout_ms = 5000;
	return o;
}

static const struct llm_message test_messages[] = {
	{ "system", "You write CUDA kernels." },
	{ "user", "Write a ReLU kernel." },
};

/* A request keyed (agent "a", problem "L1/19", sample 0, call). */
static inline struct llm_request test_request(int call)
{
	struct llm_request r = { test_messages, 2, "a", "L1/19", 0, call, 0 };
	return r;
}

/* One server, one model pointing at it, a run directory and a client created on first use (so a
 * test can adjust m and o first). The key is put in $SBTEST_LLM_KEY. */
struct llm_fixture {
	struct fake_llm srv;
	struct model_cfg m;
	struct llm_opts o;
	char *run;
	struct llm_client *c;
	struct llm_response r;
	struct sb_error err;
};

static inline struct llm_fixture *fixture_start(const char *provider, const char *key, const char *script)
{
	struct llm_fixture *x = xcalloc(1, sizeof(*x));
	fake_llm_start(&x->srv, script);
	test_model(&x->m, provider, x->srv.base);
	x->o = test_opts();
	x->run = tmpdir_make();
	setenv("SBTEST_LLM_KEY", key, 1);
	return x;
}

/* Makes call `call` of test_request() into x->r; returns llm_chat's code. */
static inline int fixture_chat(struct llm_fixture *x, int call)
{
	if (!x->c && llm_client_new(&x->m, x->run, &x->o, &x->c, &x->err))
		fail_msg("llm_client_new: %s", x->err.msg);
	struct llm_request req = test_request(call);
	llm_response_release(&x->r);
	return llm_chat(x->c, &req, &x->r, &x->err);
}

static inline void fixture_stop(struct llm_fixture *x)
{
	llm_response_release(&x->r);
	llm_client_free(x->c);
	fake_llm_stop(&x->srv);
	tmpdir_remove(x->run);
	free(x);
}

static inline json_t *load_json(const char *path)
{
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	if (!j)
		fail_msg("%s is not valid JSON: %s", path ? path : "(null)", jerr.text);
	return j;
}

#endif
