/* run.c - `stitchbench run`: runs the configured agents over the selected problems and samples, or
 * resumes a run, with a signal thread that turns the first Ctrl-C (or SIGTERM) into a clean stop. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libgen.h>

#include "../agents/session.h"
#include "../core/config_schema.h"
#include "../core/log.h"
#include "../core/suite.h"
#include "../report/report.h"
#include "../run/halt.h"
#include "../run/run.h"
#include "cli.h"

const char cmd_run_help[] =
	"usage: stitchbench run -c EXP.yaml [--agents A,B] [--problems L1/1-10,L3/*] [--samples N]\n"
	"                       [--run-id ID] [--jobs N] [--shard I/N] [--gpus 0,1,...|all] [options]\n"
	"       stitchbench run --resume RUN [--set KEY=VALUE ...]\n\n"
	"Runs each agent of the experiment on each selected problem, each sample an independent trajectory\n"
	"(docs/agents.md): stitchcuda (planner, coder stages, verifier feedback, replanner), oneshot,\n"
	"best-of-n, refine, cudaforge, kevin, torch-eager, torch-compile and samples. LLM calls run in\n"
	"parallel up to each model's max_concurrent; candidates wait on the evaluation queue `eval --samples`\n"
	"and `serve` also use, are built ahead on the cores and judged one at a time on the device\n"
	"(eval.device), or one at a time on each GPU of --gpus. Everything\n"
	"goes to "
	"<output.dir>/RUN_ID/: config.yaml, run.json, hardware.json, results.db (docs/store.md),\n"
	"transcripts/ and prompts/ of every LLM call, candidates/ of every attempt, samples/ (plans,\n"
	"summary.json per sample), best/ (the best solution per agent, problem and sample) and run.log; with\n"
	"output.report (the default) the run's report goes to reports/RUN_ID beside output.dir at the end, as\n"
	"'stitchbench report' writes it. With run.repeats K, a run that was not stopped first judges each\n"
	"problem's best clean pass per agent K more times, stored as repeats beside the verdicts (which do not\n"
	"change): metrics and reports widen every speed interval by the spread between evaluations.\n"
	"With checks.rubric and checks.judge_model set, a judge model also scores each attempt that has\n"
	"code against the rubric (verdict fields rubric and reward; transcripts/judge.AGENT/; docs/checks.md).\n\n"
	"Ctrl-C or SIGTERM stops within seconds: no sample starts an LLM call or an evaluation after it, the\n"
	"evaluations in flight are killed and their attempts left unjudged, LLM calls in flight finish and\n"
	"their answers are kept; the progress line says what the run waits for. A second Ctrl-C ends at once:\n"
	"the answers of calls still in flight are lost (--resume asks again). --resume continues a stopped or\n"
	"killed run: finished samples are skipped, every LLM call the run recorded is served from its\n"
	"transcript (never sent again), every stored attempt is read back, not judged again, and an attempt\n"
	"left unjudged is judged.\n\n"
	"A run refuses to start (exit 3, before it makes a folder or a call) when a model that a selected agent\n"
	"or the rubric judge uses names an API key variable (api_key_env) that is not set or empty; give\n"
	"api_key_env: null for an endpoint that takes no key. Agents without an LLM (torch-eager,\n"
	"torch-compile, samples) and replay models need no key.\n\n"
	"An agent this environment cannot run (torch-compile under a torch without torch.compile, < 2.0) is\n"
	"skipped with one line: its samples end as \"unavailable\" with no attempts, and metrics and report\n"
	"show it as unavailable, not as 0%.\n\n"
	"Options:\n"
	"   --agents A,B             only these agents (by name; default every agent of the config)\n"
	"   --problems SEL,...       problem selectors: L1/19, L1/1-10, L3/*, L2 (default problems.select)\n"
	"   --samples N              samples per agent and problem (default each agent's samples)\n"
	"   --run-id ID              the run directory's name (output.run_id; default <name>-<date>-<time>)\n"
	"   --resume RUN             continue RUN (an id under output.dir, or a run directory); its own\n"
	"                            config.yaml and selection are used, --set and the options above override;\n"
	"                            of models. and agents., --set may change only how an endpoint is reached:\n"
	"                            models.NAME.api_base, api_key_env, headers, timeout_s, max_concurrent,\n"
	"                            requests_per_minute, cassette (docs/agents.md \"Resume\")\n"
	"   --jobs N                 samples worked on at once (default: the models' max_concurrent summed,\n"
	"                            plus one per evaluation slot: one, or one per GPU of --gpus)\n"
	"   --device cpu|cuda|cuda:N where candidates run (eval.device)\n"
	"   --gpus 0,1,...|all       one evaluation slot per listed GPU (all: every GPU torch sees, after\n"
	"                            CUDA_VISIBLE_DEVICES), each candidate judged on its slot's GPU; builds\n"
	"                            share one CPU pool, LLM calls keep their own limits\n"
	"   --shard I/N              run only shard I of N (1 <= I <= N): item k of the run's order (problem,\n"
	"                            agent, sample) belongs to shard k mod N + 1. The run id becomes\n"
	"                            <id>-shardIofN (<id>: --run-id, output.run_id, else the config's name);\n"
	"                            'stitchbench merge OUT' joins the N shard runs. On --resume the run's\n"
	"                            own shard applies (docs/scaleout.md)\n"
	"   -c, --config FILE        the experiment (docs/config.md); not with --resume\n"
	"   --set KEY=VALUE          override one config key; --kernelbench-root PATH, --python PATH\n\n"
	"A progress line (samples, attempts, passes, hacks, each agent's best speedup, ETA) is redrawn on a\n"
	"terminal; otherwise one line per attempt and per sample goes to stderr. Both go to RUN/run.log. A\n"
	"closed output (run ... | head) does not stop the run: it goes on, stores everything and writes its\n"
	"lines to RUN/run.log only.\n"
	"A problem whose reference fails (raises) leaves its samples unfinished, recorded as the problem's\n"
	"failure (results.db table reference_failures), and the run goes on; --resume tries them again.\n"
	"A call to an LLM endpoint with nothing listening (connection refused, unknown host) is not retried;\n"
	"after 3 such calls in a row the run stops cleanly and says how to continue once it answers.\n"
	"Exit codes: 0 every sample ended (whatever its results), 1 some samples are unfinished (stopped, the\n"
	"LLM gave no answer, or the reference failed: --resume continues them), 2 usage or input error, 3\n"
	"environment error (an unset API key variable, no usable Python).\n"
	"A run that ends with every sample ended writes RUN/complete (scripts/slurm/submit.sh skips those); after\n"
	"a narrowed resume (--agents, --problems, --samples) only when the samples outside it have ended too.\n"
	"On --resume a sample has ended when its summary.json exists and results.db holds its attempts; a\n"
	"missing or empty results.db is made anew, one that cannot be read stops with how to move it aside.\n";

struct run_args {
	struct config_opts cfg;
	struct run_request rq;
	const char *resume;
	int help;
};

enum { OPT_AGENTS = 1000, OPT_PROBLEMS, OPT_SAMPLES, OPT_RESUME, OPT_RUN_ID, OPT_JOBS, OPT_DEVICE, OPT_SHARD, OPT_GPUS };

static int positive(const char *opt, const char *v, int *out, struct sb_error *err)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (*end || end == v || n < 1 || n > 100000)
		return sb_error_set(err, SB_EINPUT, "run: %s %s: expected a whole number from 1", opt, v);
	*out = (int)n;
	return 0;
}

static int parse_args(int argc, char **argv, struct run_args *a, struct sb_error *err)
{
	static const struct option longopts[] = {
		CLI_CONFIG_LONGOPTS,
		{ "help", no_argument, NULL, 'h' }, { "agents", required_argument, NULL, OPT_AGENTS },
		{ "problems", required_argument, NULL, OPT_PROBLEMS }, { "samples", required_argument, NULL, OPT_SAMPLES },
		{ "resume", required_argument, NULL, OPT_RESUME }, { "run-id", required_argument, NULL, OPT_RUN_ID },
		{ "jobs", required_argument, NULL, OPT_JOBS }, { "device", required_argument, NULL, OPT_DEVICE },
		{ "shard", required_argument, NULL, OPT_SHARD }, { "gpus", required_argument, NULL, OPT_GPUS },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:h", longopts, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		switch (c) {
		case 'h': a->help = 1; break;
		case OPT_AGENTS:
			if ((rc = cli_list_arg("run", "--agents", optarg, "stitchcuda,oneshot", &a->rq.agents, err)))
				return rc;
			break;
		case OPT_PROBLEMS:
			if ((rc = cli_list_arg("run", "--problems", optarg, CLI_SELECTOR_EXAMPLE, &a->rq.problems, err)))
				return rc;
			break;
		case OPT_SAMPLES:
			if ((rc = positive("--samples", optarg, &a->rq.samples, err)))
				return rc;
			break;
		case OPT_RESUME: a->resume = optarg; break;
		case OPT_RUN_ID: a->rq.run_id = optarg; break;
		case OPT_JOBS:
			if ((rc = positive("--jobs", optarg, &a->rq.jobs, err)))
				return rc;
			break;
		case OPT_DEVICE: strvec_pushf(&a->cfg.sets, "eval.device=%s", optarg); break;
		case OPT_SHARD:
			if ((rc = shard_parse(optarg, &a->rq.shard, err)))
				return rc;
			break;
		case OPT_GPUS:
			a->rq.gpus = optarg;
			strvec_push(&a->cfg.sets, "eval.device=cuda"); /* the first slot's GPU replaces it */
			break;
		default:
			return sb_error_set(err, SB_EINPUT, "run: option '%s' %s; see 'stitchbench help run'", argv[optind - 1],
					    c == ':' ? "needs a value" : "is not known");
		}
	}
	if (a->help)
		return 0;
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "run: unexpected argument '%s'; see 'stitchbench help run'", argv[optind]);
	if (a->resume && a->cfg.config_path)
		return sb_error_set(err, SB_EINPUT, "run: --resume uses the run's own config.yaml; drop -c (change keys with --set)");
	if (a->resume && a->rq.shard.count)
		return sb_error_set(err, SB_EINPUT, "run: --resume keeps the shard the run records in run.json; drop --shard");
	if (a->resume && a->rq.run_id)
		return sb_error_set(err, SB_EINPUT, "run: --resume names the run already; drop --run-id");
	if (!a->resume && !a->cfg.config_path)
		return sb_error_set(err, SB_EINPUT, "run: which experiment? give -c EXP.yaml (configs/example.yaml is one), "
				    "or --resume RUN");
	return 0;
}

/* The first SIGINT/SIGTERM asks for a clean stop (run.c ends the evaluations in flight); the second ends
 * the process the default way, after killing the processes below it, which would otherwise finish what
 * they were doing before they noticed. */
struct sigwatch {
	sigset_t set;
	atomic_int *stop;
	const struct sb_ctx *ctx;
};

static void *signal_thread(void *arg)
{
	struct sigwatch *w = arg;
	for (;;) {
		int sig;
		if (sigwait(&w->set, &sig) != 0)
			continue;
		if (sig == SIGUSR1) /* run_execute returned: nothing left to stop */
			return NULL;
		if (!(atomic_fetch_or(w->stop, RUN_STOP_SIGNAL) & RUN_STOP_SIGNAL)) {
			sb_warn(w->ctx, "%s: stopping: nothing new starts; evaluations in flight are killed (--resume judges "
				"their attempts again); LLM calls in flight finish and their answers are kept; signal "
				"again to end at once (the answers of calls still in flight are lost; --resume asks again)",
				sig == SIGINT ? "interrupt" : "terminated");
			continue;
		}
		halt_descendants(NULL);
		signal(sig, SIG_DFL);
		pthread_sigmask(SIG_UNBLOCK, &w->set, NULL);
		raise(sig);
	}
}

/* On --resume, the model keys that say how an endpoint is reached may change: the run goes on after a
 * lost endpoint, a new key or a slower server. Every other models. and agents. key changes what the
 * run measures, which its config.yaml fixed when it began (the store refuses eval., checks. and problem
 * settings that change the numbers in the same spirit: docs/store.md). */
static const char *const resume_model_keys[] = { "api_base", "api_key_env", "headers", "headers_env", "timeout_s",
						 "max_concurrent", "requests_per_minute", "cassette", NULL };

static int resume_set_allowed(const char *run, const char *assignment, struct sb_error *err)
{
	size_t klen = strcspn(assignment, "=");
	int models = !strncmp(assignment, "models.", 7), agents = !strncmp(assignment, "agents.", 7);
	if (!models && !agents)
		return 0;
	const char *field = memrchr(assignment, '.', klen);
	size_t flen = (size_t)(assignment + klen - field - 1);
	for (int i = 0; models && field > assignment + 6 && resume_model_keys[i]; i++)
		if (strlen(resume_model_keys[i]) == flen && !strncmp(field + 1, resume_model_keys[i], flen))
			return 0;
	return sb_error_set(err, SB_EINPUT, "--resume %s: --set %.*s changes what the run measures, which its config.yaml "
			    "fixed when it began; on a resume only how an endpoint is reached may change (models.NAME."
			    "api_base, api_key_env, headers, timeout_s, max_concurrent, requests_per_minute, cassette); start "
			    "a new run with -c for the rest", run, (int)klen, assignment);
}

static int resolve_config(struct run_args *a, struct config *cfg, struct sb_error *err)
{
	if (!a->resume)
		return config_resolve(&a->cfg, cfg, err);
	/* where the run is: output.dir from --set (or its default); the other keys may name entries that only
	 * the run's own config.yaml has (models.NAME.api_base), so they are applied on top of it */
	struct config_opts where = CONFIG_OPTS_INIT;
	for (size_t i = 0; i < a->cfg.sets.nr; i++)
		if (!strncmp(a->cfg.sets.v[i], "output.dir=", 11))
			strvec_push(&where.sets, a->cfg.sets.v[i]);
	int rc = config_resolve(&where, cfg, err);
	config_opts_release(&where);
	for (size_t i = 0; !rc && i < a->cfg.sets.nr; i++)
		rc = resume_set_allowed(a->resume, a->cfg.sets.v[i], err);
	if (rc)
		return rc;
	char *dir = run_dir_for(cfg->output.dir, a->resume);
	char *path = xstrfmt("%s/config.yaml", dir);
	config_release(cfg);
	config_init(cfg);
	a->cfg.config_path = path;
	rc = config_resolve(&a->cfg, cfg, err);
	if (rc && access(path, R_OK) != 0)
		sb_error_set(err, SB_EINPUT, "--resume %s: %s is not readable; is %s a run directory?", a->resume, path, dir);
	a->rq.run_id = a->resume;
	a->rq.resume = 1;
	free(dir);
	return rc;
}

/* output.report: the run's report, as 'stitchbench report RUN' writes it, in reports/RUN_ID beside the
 * run's output.dir (results/RUN_ID -> reports/RUN_ID). A report that cannot be written is a warning:
 * the run's results are there whatever the report does. */
static void write_report(const struct sb_ctx *ctx, const struct run_result *r)
{
	char *copy = xstrdup(r->run_dir);
	char *parent = dirname(dirname(copy));
	char *dir = strcmp(parent, ".") ? xstrfmt("%s/reports/%s", parent, r->run_id) : xstrfmt("reports/%s", r->run_id);
	char *runs[] = { r->run_dir };
	struct report_opts o = { .runs = runs, .nruns = 1, .out_dir = dir, .by = METRICS_FIRST };
	struct report_result res;
	struct sb_error err = { 0 };
	if (report_write(&o, &res, &err) == 0)
		printf("report:   %s and %s (%zu plots; output.report)\n", res.md_path, res.html_path, res.plots_drawn);
	else
		sb_warn(ctx, "output.report: %s; the run's results are unaffected ('stitchbench report %s --no-plots' writes "
			"the tables without gnuplot; output.report: false leaves the report out)", err.msg, r->run_dir);
	report_result_release(&res);
	free(dir);
	free(copy);
}

/* run.repeats: each problem's best clean pass per agent judged again (the representatives of --by first
 * and --by best alike, since how the run will be read is not known yet), before the report, which then
 * uses them. A failure is a warning: the run's verdicts are stored whatever the repeats do. */
static void run_repeats(struct sb_ctx *ctx, const struct run_result *r, int k, const atomic_int *stop)
{
	struct sb_error err = { 0 };
	char *runs[] = { r->run_dir };
	if (cli_repeats(ctx, runs, 1, k, 1, 1, stop, &err))
		sb_warn(ctx, "run.repeats: %s; the run's results are unaffected ('stitchbench metrics %s --repeats %d' "
			"judges the repeats later)", err.msg, r->run_dir, k);
}

/* Hardware metrics cost a passing evaluation about 8 s on an H100 (BENCHMARKS.md), so they are off by
 * default; the agents whose Verifier or Judge reads them (stitchcuda's feedback, cudaforge's Judge) get
 * them unless the configuration says otherwise. The run's config.yaml keeps the value, so a resume agrees. */
static void metrics_for_agents_that_read_them(struct config *cfg)
{
	if (config_is_given(cfg, "eval.profile_metrics"))
		return;
	for (size_t i = 0; i < cfg->nagents; i++) {
		const char *kind = cfg->agents[i].kind;
		if (kind && (!strcmp(kind, "stitchcuda") || !strcmp(kind, "cudaforge")))
			cfg->eval.profile_metrics = PM_CUPTI;
	}
}

int cmd_run(int argc, char **argv, struct sb_ctx *ctx)
{
	struct run_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite s = { 0 };
	atomic_int stop = 0;
	memset(&a, 0, sizeof(a));
	config_init(&cfg);
	int rc = parse_args(argc, argv, &a, &err);
	char *resume_cfg = NULL;
	if (rc == 0 && a.help) {
		fputs(cmd_run_help, stdout);
		goto out;
	}
	if (!rc) {
		rc = resolve_config(&a, &cfg, &err);
		if (a.resume)
			resume_cfg = (char *)a.cfg.config_path; /* allocated by resolve_config */
	}
	if (!rc)
		metrics_for_agents_that_read_them(&cfg);
	if (rc || (rc = suite_load(&s, ctx->home, cfg.problems.root, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}

	/* A reader that goes away (run | head) must not end the run: writes to it fail with EPIPE, the
	 * progress stops writing there, and the run goes on, storing everything and logging to run.log.
	 * Child processes get the default back before exec (proc.c). */
	signal(SIGPIPE, SIG_IGN);
	/* every thread inherits the blocked set; only the signal thread receives them */
	struct sigwatch w = { .stop = &stop, .ctx = ctx };
	sigemptyset(&w.set);
	sigaddset(&w.set, SIGINT);
	sigaddset(&w.set, SIGTERM);
	sigaddset(&w.set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &w.set, NULL);
	pthread_t sigthr;
	pthread_create(&sigthr, NULL, signal_thread, &w);

	a.rq.ctx = ctx;
	a.rq.cfg = &cfg;
	a.rq.suite = &s;
	a.rq.stop = &stop;
	struct run_result r;
	rc = run_execute(&a.rq, &r, &err);
	/* while a signal still asks for a clean stop: a Ctrl-C here keeps what was judged and starts nothing */
	if (!rc && cfg.run.repeats > 0 && !r.stopped && !atomic_load(&stop))
		run_repeats(ctx, &r, cfg.run.repeats, &stop);
	pthread_kill(sigthr, SIGUSR1);
	pthread_join(sigthr, NULL);
	pthread_sigmask(SIG_UNBLOCK, &w.set, NULL);
	if (rc) {
		rc = cli_fail(ctx, &err);
	} else {
		char unavail[48] = "";
		if (r.unavailable) /* ended unrun, not failed: they do not change the exit code */
			snprintf(unavail, sizeof(unavail), " (%zu unavailable)", r.unavailable);
		printf("run %s: %zu of %zu samples ended%s, %zu unfinished%s; %zu attempts in this session, %zu pass\n",
		       r.run_id, r.finished, r.samples, unavail, r.unfinished, r.stopped ? " (stopped)" : "", r.attempts, r.pass);
		if (r.ref_failed)
			printf("reference failed: %s: %zu samples could not be judged (run.log says why); --resume tries them "
			       "again\n", r.ref_failed_problems, r.ref_failed);
		printf("results: %s/ (results.db, config.yaml, run.json, hardware.json, run.log, transcripts/, prompts/, "
		       "candidates/, samples/, best/)\n", r.run_dir);
		if (r.outside)
			printf("the run is not complete: %zu of its samples outside this selection have not ended\n", r.outside);
		if (atomic_load(&stop) & RUN_STOP_ENDPOINT)
			sb_warn(ctx, "run %s stopped: an LLM endpoint has nothing listening (refused or unknown host on "
				"several calls in a row; the sample lines above and run.log name the model and URL). Start "
				"it, or point the model at one that answers with --set models.NAME.api_base=URL, then "
				"continue with: stitchbench run --resume %s", r.run_id, r.run_dir);
		if (r.unfinished || r.outside)
			printf("continue: stitchbench run --resume %s\n", r.run_dir);
		printf("table:    stitchbench metrics %s\n", r.run_dir);
		if (cfg.output.report)
			write_report(ctx, &r);
		rc = r.unfinished ? SB_EXIT_FAILED : SB_EXIT_OK;
	}
	run_result_release(&r);
out:
	suite_release(&s);
	config_release(&cfg);
	strvec_clear(&a.rq.agents);
	strvec_clear(&a.rq.problems);
	config_opts_release(&a.cfg);
	free(resume_cfg);
	return rc;
}
