/* serve.c - `stitchbench serve`: verdicts and rewards over HTTP for a trainer (docs/serve.md). It wires the
 * evaluator, the run's results store and serve's journal to harness/serve/, and stops on a signal. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agents/judge.h"
#include "../core/fs.h"
#include "../core/log.h"
#include "../core/suite.h"
#include "../eval/evaluate.h"
#include "../eval/sweep.h"
#include "../profile/session.h"
#include "../run/halt.h"
#include "../serve/api.h"
#include "../serve/http.h"
#include "../serve/journal.h"
#include "../serve/queue.h"
#include "../store/store.h"
#include "cli.h"

const char cmd_serve_help[] =
	"usage: stitchbench serve [--listen HOST] [--port N] [--run RUN_ID] [--token-env VAR | --client SPEC...]\n"
	"                         [options]\n\n"
	"Judges candidates sent over HTTP and answers with their verdicts and a reward, for an RL trainer or\n"
	"any batch client (docs/serve.md). Each candidate is judged by the same evaluator and trust boundary\n"
	"as `eval` (static checks, the sandboxed worker, correctness trials, paired timing, runtime checks),\n"
	"one at a time on each of this server's devices (--gpus: one per GPU), while the next ones build on\n"
	"the cores (on the CPU, builds wait while a candidate is timed); the server process never runs\n"
	"candidate code.\n\n"
	"Endpoints:\n"
	"   POST /v1/evaluate   {\"candidates\": [{\"problem\": \"L1/19\", \"source\": \"...\", \"request_id\": ...,\n"
	"                       \"reward\": \"stitchcuda\"|\"speedup\"|\"pass\", \"lambda\": 0.5}], \"preset\": ...,\n"
	"                       \"request_id\": ..., \"priority\": N, \"verdicts\": \"full\"|\"summary\", \"wait\": S}:\n"
	"                       waits for the verdicts (or S seconds, then 202 with the job) and answers them\n"
	"   POST /v1/jobs       the same body without wait: 202 with a job id at once\n"
	"   GET /v1/jobs/ID     the job; ?wait=S long-polls up to S seconds (600 at most) for it to end\n"
	"   GET /v1/health      up, the device and the preset (no token needed)\n"
	"   GET /v1/metrics     queue depth, verdicts per hour, the evaluator's idle share, clients' usage\n\n"
	"A candidate is a problem and a source's bytes (sha256): it is judged once, whoever asks and however\n"
	"often; a request id, per candidate or per request, names what was asked, so a retried request is\n"
	"answered without judging anything again, and a request id reused for other candidates is 409.\n"
	"Every verdict goes to the run's results store <output.dir>/RUN_ID/results.db (agent 'serve', sample =\n"
	"the candidate's number), and what was asked to serve.db beside it, before it is answered: a server\n"
	"started again on the same run answers finished jobs from the store, marks done what was stored before\n"
	"it stopped, and queues the rest again, saying how many of each. cannot_judge and harness_error are\n"
	"answered (reward null) but not stored, as `eval --samples` keeps them out; a new request judges them\n"
	"again.\n\n"
	"Rewards (per request or candidate, default --reward): stitchcuda, (min(s,5)+0.3)(1+lambda(r-0.5))\n"
	"with s the speedup vs eager and r the rubric judge's total (0.5 without checks.rubric); speedup, s;\n"
	"pass, 1 or 0. Any reject is 0. A pass with a flag finding earns no speedup: speedup 0, stitchcuda\n"
	"the base 0.3(1+lambda(r-0.5)) only, pass 1.\n\n"
	"Options:\n"
	"   --listen HOST            IPv4 address to listen on (default 127.0.0.1; 0.0.0.0: every interface,\n"
	"                            then give a token)\n"
	"   --port N                 port (default 8470; 0: a free one, printed and written to --port-file)\n"
	"   --port-file FILE         write the endpoint URL here once listening (scripts/serve/ reads it)\n"
	"   --run RUN_ID             the run directory under output.dir (default serve); a run started with\n"
	"                            other settings is refused, as `run --resume` refuses it\n"
	"   --token-env VAR          require 'Authorization: Bearer $VAR' (the client 'default')\n"
	"   --client NAME:VAR[:PRIORITY[:BUDGET_S]]\n"
	"                            a client whose token is $VAR, its priority (higher is judged first; a\n"
	"                            request may ask for less) and its budget in seconds of evaluation (0: no\n"
	"                            limit; once spent, requests that need a new evaluation are 403); repeatable\n"
	"   --budget S               the budget of the one client of --token-env, or of an open server\n"
	"   --queue-max N            candidates queued or running at most (default 1024); a request that\n"
	"                            would pass it is 429 with Retry-After\n"
	"   --max-batch N            candidates per request (default 256)\n"
	"   --max-body BYTES         request body limit, K and M suffixes allowed (default 64M); larger is 413\n"
	"   --max-source BYTES       one candidate's source limit (default 1M)\n"
	"   --connections N          connections at once (default 64); each waiting /v1/evaluate holds one\n"
	"   --idle-timeout S         close a connection idle this long (default 60; slow clients)\n"
	"   --reward KIND            the default reward: stitchcuda (default), speedup or pass\n"
	"   --gpus 0,1,...|all       judge on each listed GPU at once, one candidate per GPU (all: every GPU\n"
	"                            torch sees, after CUDA_VISIBLE_DEVICES; one GPU model); default: the\n"
	"                            one device of eval.device\n"
	"   --device, --trials, --perf-trials, --tolerance, --timeout, --no-compile\n"
	"                            as for `eval`\n"
	"   -c, --config FILE        experiment YAML (its eval: and checks: sections apply; checks.reward_lambda\n"
	"                            is the default lambda)\n"
	"   --set KEY=VALUE, --kernelbench-root PATH, --python PATH\n\n"
	"Without --token-env or --client the server is open (anyone who reaches the port may submit): keep it\n"
	"on 127.0.0.1 then. A token variable that is unset or empty stops the start (exit 3).\n"
	"The first SIGINT or SIGTERM stops it: no new request is accepted, the evaluation in flight is killed\n"
	"and its candidate stays queued for the next start, waiting requests are answered 503 with their job\n"
	"id. Exit codes: 0 stopped by a signal, 2 usage or input error, 3 environment error (a port in use,\n"
	"no Python with torch, a token variable unset).\n";

struct serve_args {
	struct config_opts cfg;
	const char *listen, *port_file, *token_env, *reward, *gpus;
	struct strvec clients;
	unsigned port, connections, idle_timeout;
	size_t queue_max, max_batch, max_body, max_source;
	double budget;
	int has_budget, help;
};

enum { OPT_LISTEN = 1000, OPT_PORT, OPT_PORT_FILE, OPT_RUN, OPT_TOKEN_ENV, OPT_CLIENT, OPT_BUDGET, OPT_QUEUE_MAX,
       OPT_MAX_BATCH, OPT_MAX_BODY, OPT_MAX_SOURCE, OPT_CONNECTIONS, OPT_IDLE, OPT_REWARD, OPT_DEVICE, OPT_TRIALS,
       OPT_PERF, OPT_TOL, OPT_TIMEOUT, OPT_NO_COMPILE, OPT_GPUS };

/* A count or a size: digits, with K or M for sizes. */
static int parse_size(const char *opt, const char *s, int suffixes, size_t lo, size_t hi, size_t *out,
		      struct sb_error *err)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (suffixes && (*end == 'K' || *end == 'k'))
		v <<= 10, end++;
	else if (suffixes && (*end == 'M' || *end == 'm'))
		v <<= 20, end++;
	if (end == s || *end || errno || *s == '-' || v < lo || v > hi)
		return sb_error_set(err, SB_EINPUT, "serve: %s '%s': a whole number from %zu to %zu%s", opt, s, lo, hi,
				    suffixes ? " (K and M suffixes allowed)" : "");
	*out = (size_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct serve_args *a, struct sb_error *err)
{
	static const struct option longopts[] = {
		CLI_CONFIG_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, OPT_LISTEN }, { "port", required_argument, NULL, OPT_PORT },
		{ "port-file", required_argument, NULL, OPT_PORT_FILE }, { "run", required_argument, NULL, OPT_RUN },
		{ "token-env", required_argument, NULL, OPT_TOKEN_ENV }, { "client", required_argument, NULL, OPT_CLIENT },
		{ "budget", required_argument, NULL, OPT_BUDGET }, { "queue-max", required_argument, NULL, OPT_QUEUE_MAX },
		{ "max-batch", required_argument, NULL, OPT_MAX_BATCH }, { "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "max-source", required_argument, NULL, OPT_MAX_SOURCE },
		{ "connections", required_argument, NULL, OPT_CONNECTIONS },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE }, { "reward", required_argument, NULL, OPT_REWARD },
		{ "device", required_argument, NULL, OPT_DEVICE }, { "trials", required_argument, NULL, OPT_TRIALS },
		{ "perf-trials", required_argument, NULL, OPT_PERF }, { "tolerance", required_argument, NULL, OPT_TOL },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT }, { "no-compile", no_argument, NULL, OPT_NO_COMPILE },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;
	size_t n;
	memset(a, 0, sizeof(*a));
	a->listen = "127.0.0.1";
	a->port = 8470;
	a->reward = "stitchcuda";
	a->connections = 64;
	a->idle_timeout = 60;
	a->queue_max = 1024;
	a->max_batch = 256;
	a->max_body = 64u << 20;
	a->max_source = 1u << 20;
	optind = 0;
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, ":c:h", longopts, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		switch (c) {
		case 'h': a->help = 1; break;
		case OPT_LISTEN: a->listen = optarg; break;
		case OPT_PORT:
			if (!(rc = parse_size("--port", optarg, 0, 0, 65535, &n, err)))
				a->port = (unsigned)n;
			break;
		case OPT_PORT_FILE: a->port_file = optarg; break;
		case OPT_RUN: strvec_pushf(&a->cfg.sets, "output.run_id=%s", optarg); break;
		case OPT_TOKEN_ENV: a->token_env = optarg; break;
		case OPT_CLIENT: strvec_push(&a->clients, optarg); break;
		case OPT_BUDGET: {
			char *end;
			a->budget = strtod(optarg, &end);
			a->has_budget = 1;
			if (end == optarg || *end || !(a->budget >= 0))
				rc = sb_error_set(err, SB_EINPUT, "serve: --budget '%s': seconds of evaluation >= 0 (0: no limit)",
						  optarg);
			break;
		}
		case OPT_QUEUE_MAX: rc = parse_size("--queue-max", optarg, 0, 1, 1000000, &a->queue_max, err); break;
		case OPT_MAX_BATCH: rc = parse_size("--max-batch", optarg, 0, 1, 100000, &a->max_batch, err); break;
		case OPT_MAX_BODY: rc = parse_size("--max-body", optarg, 1, 1024, (size_t)1 << 32, &a->max_body, err); break;
		case OPT_MAX_SOURCE: rc = parse_size("--max-source", optarg, 1, 64, (size_t)1 << 30, &a->max_source, err); break;
		case OPT_CONNECTIONS:
			if (!(rc = parse_size("--connections", optarg, 0, 2, 10000, &n, err)))
				a->connections = (unsigned)n;
			break;
		case OPT_IDLE:
			if (!(rc = parse_size("--idle-timeout", optarg, 0, 1, 86400, &n, err)))
				a->idle_timeout = (unsigned)n;
			break;
		case OPT_REWARD: a->reward = optarg; break;
		case OPT_DEVICE: strvec_pushf(&a->cfg.sets, "eval.device=%s", optarg); break;
		case OPT_TRIALS: strvec_pushf(&a->cfg.sets, "eval.trials=%s", optarg); break;
		case OPT_PERF: strvec_pushf(&a->cfg.sets, "eval.perf_trials=%s", optarg); break;
		case OPT_TOL: strvec_pushf(&a->cfg.sets, "eval.tolerance=%s", optarg); break;
		case OPT_TIMEOUT: strvec_pushf(&a->cfg.sets, "eval.timeout_s=%s", optarg); break;
		case OPT_NO_COMPILE: strvec_push(&a->cfg.sets, "eval.compile=false"); break;
		case OPT_GPUS: a->gpus = optarg; break;
		default:
			rc = sb_error_set(err, SB_EINPUT, "serve: option '%s' %s; see 'stitchbench help serve'", argv[optind - 1],
					  c == ':' ? "needs a value" : "is not known");
		}
	}
	if (rc || a->help)
		return rc;
	enum reward_kind k;
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "serve: unexpected argument '%s'", argv[optind]);
	if (reward_kind_parse(a->reward, &k))
		return sb_error_set(err, SB_EINPUT, "serve: --reward '%s': stitchcuda, speedup or pass", a->reward);
	if (a->token_env && a->clients.nr)
		return sb_error_set(err, SB_EINPUT, "serve: give --token-env (one client) or --client (several), not both");
	if (a->has_budget && a->clients.nr)
		return sb_error_set(err, SB_EINPUT, "serve: --budget is the one client's; with --client give each its "
				    "budget as NAME:VAR:PRIORITY:BUDGET_S");
	return 0;
}

/* The URL others reach this server at: the host name when it listens on every interface. */
static char *endpoint_url(const char *listen, unsigned port)
{
	char host[256] = "";
	if (!strcmp(listen, "0.0.0.0") && gethostname(host, sizeof(host) - 1) == 0 && host[0])
		return xstrfmt("http://%s:%u", host, port);
	return xstrfmt("http://%s:%u", listen, port);
}

/* Everything the server holds open, released in one place. */
struct server {
	struct config cfg;
	struct suite suite;
	struct serve_clients clients;
	struct eval_env env;
	int env_ok;
	struct eval_env *slots;   /* one per device slot: &env, or --gpus's */
	int nslots;
	struct eval_claim claim;
	struct store *store;
	struct judge judge;
	int judge_ok;
	struct journal *journal;
	struct serve_queue *queue;
	struct http_server *http;
	char *run_dir;
	atomic_int stop;
};

static void server_release(struct server *s)
{
	if (s->queue)
		queue_stop(s->queue);
	http_stop(s->http);
	queue_close(s->queue);
	journal_close(s->journal);
	if (s->judge_ok)
		judge_close(&s->judge);
	store_close(s->store);
	if (s->env_ok) {
		eval_prestart_drain();
		eval_claim_release(&s->claim);
		if (s->slots != &s->env)
			free(s->slots);
		eval_env_release(&s->env);
	}
	clients_release(&s->clients);
	free(s->run_dir);
	suite_release(&s->suite);
	config_release(&s->cfg);
}

static int server_setup(struct sb_ctx *ctx, struct serve_args *a, struct server *s, struct sb_error *err)
{
	int rc;
	for (size_t i = 0; i < a->clients.nr; i++)
		if ((rc = clients_add(&s->clients, a->clients.v[i], err)))
			return rc;
	if (a->token_env) {
		const char *token = getenv(a->token_env);
		if (!token || !*token)
			return sb_error_set(err, SB_EENV, "serve: --token-env %s: the variable is %s; export the token in it "
					    "before starting the server (a server that would accept anyone by mistake is refused)",
					    a->token_env, token ? "empty" : "not set");
		char *spec = xstrfmt("default:%s:0:%.17g", a->token_env, a->budget);
		rc = clients_add(&s->clients, spec, err);
		free(spec);
		if (rc)
			return rc;
	}
	if (!s->clients.n)
		clients_add_open(&s->clients, 0, a->budget);

	const char *run_id = s->cfg.output.run_id ? s->cfg.output.run_id : "serve";
	if ((rc = run_id_check(run_id, err)))
		return rc;
	if ((rc = eval_env_init(&s->env, &s->cfg, ctx->home, err)))
		return rc;
	s->env_ok = 1;
	s->env.profile = prof_candidate;
	s->slots = &s->env;
	s->nslots = 1;
	if ((rc = cli_eval_slots(ctx, a->gpus, &s->env, &s->slots, &s->nslots, err)))
		return rc;
	s->claim = (struct eval_claim)EVAL_CLAIM_INIT;
	cli_eval_claim(ctx, s->slots, s->nslots, &s->claim);

	s->run_dir = xstrfmt("%s/%s", s->cfg.output.dir, run_id);
	struct store_run run;
	store_run_from_config(&run, run_id, &s->cfg, s->env.device, s->env.gpu, s->env.sm, s->env.torch, s->suite.root);
	rc = rundir_open(&s->store, s->run_dir, &s->cfg, &run, err);
	store_run_release(&run);
	if (!rc)
		rc = store_add_agent(s->store, SERVE_AGENT, "serve", NULL, err);
	if (!rc && !(rc = judge_open(&s->judge, &s->cfg, ctx->home, s->run_dir, err)))
		s->judge_ok = 1;
	if (!rc) {
		char *path = xstrfmt("%s/%s", s->run_dir, JOURNAL_FILE);
		rc = journal_open(&s->journal, path, err);
		free(path);
	}
	if (rc)
		return rc;
	struct serve_queue_opts qo = {
		.ctx = ctx, .cfg = &s->cfg, .suite = &s->suite, .envs = s->slots, .nenvs = s->nslots, .judge = &s->judge, .store = s->store,
		.journal = s->journal, .run_dir = s->run_dir, .queue_max = a->queue_max, .stop = &s->stop,
	};
	return queue_open(&s->queue, &qo, err);
}

static int write_port_file(const char *path, const char *url, struct sb_error *err)
{
	char *text = xstrfmt("%s\n", url);
	int e = fs_write_atomic(path, text, strlen(text));
	free(text);
	return e ? sb_error_set(err, SB_EIO, "--port-file %s: %s", path, strerror(-e)) : 0;
}

int cmd_serve(int argc, char **argv, struct sb_ctx *ctx)
{
	struct serve_args a;
	struct sb_error err = { 0 };
	struct server s;
	memset(&s, 0, sizeof(s));
	config_init(&s.cfg);
	int rc = parse_args(argc, argv, &a, &err);
	if (rc == 0 && a.help) {
		fputs(cmd_serve_help, stdout);
		goto out;
	}
	if (rc || (rc = config_resolve(&a.cfg, &s.cfg, &err)) ||
	    (rc = suite_load(&s.suite, ctx->home, s.cfg.problems.root, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	/* a client that goes away must not end the server; children get the default back before exec */
	signal(SIGPIPE, SIG_IGN);
	/* every thread started below inherits the blocked set; only sigwait() here receives them */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if ((rc = server_setup(ctx, &a, &s, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	enum reward_kind kind = REWARD_STITCHCUDA;
	reward_kind_parse(a.reward, &kind);
	struct api_limits lim = {
		.suite = &s.suite, .preset = preset_name(s.cfg.eval.preset), .reward = kind,
		.lambda = s.cfg.checks.reward_lambda, .max_batch = a.max_batch, .max_source = a.max_source,
	};
	struct http_opts ho = {
		.host = a.listen, .port = a.port, .max_body = a.max_body, .connections = a.connections,
		.idle_timeout_s = a.idle_timeout, .ctx = ctx, .queue = s.queue, .clients = &s.clients, .limits = &lim,
	};
	eval_fork_server(&s.env); /* its import of torch starts now */
	if ((rc = queue_start(s.queue, &err)) || (rc = http_start(&s.http, &ho, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	char *url = endpoint_url(a.listen, http_port(s.http));
	if (a.port_file && (rc = write_port_file(a.port_file, url, &err))) {
		free(url);
		rc = cli_fail(ctx, &err);
		goto out;
	}
	struct strbuf devs = STRBUF_INIT;
	for (int i = 0; i < s.nslots; i++)
		strbuf_addf(&devs, "%s%s", i ? "," : "", s.slots[i].device);
	printf("stitchbench serve: listening on %s (device%s %s, preset %s, %s; run %s)\n", url, s.nslots > 1 ? "s" : "",
	       devs.buf, lim.preset, clients_need_token(&s.clients) ? "bearer token required" : "open: no token", s.run_dir);
	fflush(stdout);
	free(url);
	strbuf_release(&devs);
	if (!clients_need_token(&s.clients) && strcmp(a.listen, "127.0.0.1"))
		sb_warn(ctx, "serve: listening on %s without a token: anyone who reaches the port may submit code to judge; "
			"give --token-env", a.listen);

	int sig = 0;
	while (sigwait(&set, &sig) != 0)
		;
	sb_info(ctx, "serve: %s: stopping: no new request is accepted, the evaluation in flight is killed and stays "
		"queued for the next start", sig == SIGINT ? "interrupt" : "terminated");
	atomic_store(&s.stop, 1);
	/* the candidate's workers run in sessions of their own: a signal to this process does not reach them */
	halt_descendants(NULL);
	queue_stop(s.queue);
	halt_descendants(NULL); /* what the evaluation started while it was being stopped */
	rc = SB_EXIT_OK;
out:
	server_release(&s);
	strvec_clear(&a.clients);
	config_opts_release(&a.cfg);
	return rc;
}
