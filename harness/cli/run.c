/* run.c - `stitchbench run`: runs the configured agents over the selected problems and samples, or
 * resumes a run, with a signal thread that turns the first Ctrl-C (or SIGTERM) into a clean stop. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agents/session.h"
#include "../core/log.h"
#include "../core/suite.h"
#include "../run/run.h"
#include "cli.h"

const char cmd_run_help[] =
	"usage: stitchbench run -c EXP.yaml [--agents A,B] [--problems L1/1-10,L3/*] [--samples N]\n"
	"                       [--run-id ID] [--jobs N] [--shard I/N] [--gpus 0,1,...|all] [options]\n"
	"       stitchbench run --resume RUN [--set KEY=VALUE ...]\n\n"
	"Runs each agent of the experiment on each selected problem, each sample an independent trajectory\n"
	"(docs/agents.md): stitchcuda (planner, coder stages, verifier feedback, replanner), oneshot,\n"
	"best-of-n, refine, torch-eager, torch-compile and samples. LLM calls run in parallel up to each\n"
	"model's max_concurrent; candidates are judged one at a time on the device (eval.device), or one\n"
	"at a time on each GPU of --gpus, builds ahead of them on a GPU. Everything goes to\n"
	"<output.dir>/RUN_ID/: config.yaml, run.json, hardware.json, results.db (docs/store.md),\n"
	"transcripts/ and prompts/ of every LLM call, candidates/ of every attempt, samples/ (plans,\n"
	"summary.json per sample), best/ (the best solution per agent, problem and sample) and run.log.\n"
	"With checks.rubric and checks.judge_model set, a judge model also scores each attempt that has\n"
	"code against the rubric (verdict field rubric; transcripts/judge.AGENT/; docs/checks.md).\n\n"
	"Ctrl-C or SIGTERM stops cleanly: calls and evaluations in flight finish and are stored, nothing new\n"
	"starts (a second Ctrl-C ends at once). --resume continues a stopped or killed run: finished samples\n"
	"are skipped, every LLM call the run recorded is served from its transcript (never sent again) and\n"
	"every stored attempt is read back, not judged again.\n\n"
	"An agent this environment cannot run (torch-compile under a torch without torch.compile, < 2.0) is\n"
	"skipped with one line: its samples end as \"unavailable\" with no attempts, and metrics and report\n"
	"show it as unavailable, not as 0%.\n\n"
	"Options:\n"
	"   --agents A,B             only these agents (by name; default every agent of the config)\n"
	"   --problems SEL,...       problem selectors: L1/19, L1/1-10, L3/*, L2 (default problems.select)\n"
	"   --samples N              samples per agent and problem (default each agent's samples)\n"
	"   --run-id ID              the run directory's name (output.run_id; default <name>-<date>-<time>)\n"
	"   --resume RUN             continue RUN (an id under output.dir, or a run directory); its own\n"
	"                            config.yaml and selection are used, --set and the options above override\n"
	"   --jobs N                 samples worked on at once (default: the models' max_concurrent summed,\n"
	"                            plus one per evaluation slot: one, or one per GPU of --gpus)\n"
	"   --device cpu|cuda|cuda:N where candidates run (eval.device)\n"
	"   --gpus 0,1,...|all       one evaluation slot per listed GPU (all: every GPU torch sees, after\n"
	"                            CUDA_VISIBLE_DEVICES), each candidate judged on its slot's GPU; builds\n"
	"                            share one CPU pool (eval.build_jobs), LLM calls keep their own limits\n"
	"   --shard I/N              run only shard I of N (1 <= I <= N): item k of the run's order (problem,\n"
	"                            agent, sample) belongs to shard k mod N + 1. The run id becomes\n"
	"                            <id>-shardIofN (<id>: --run-id, output.run_id, else the config's name);\n"
	"                            'stitchbench merge OUT' joins the N shard runs. On --resume the run's\n"
	"                            own shard applies (docs/scaleout.md)\n"
	"   -c, --config FILE        the experiment (docs/config.md); not with --resume\n"
	"   --set KEY=VALUE          override one config key; --kernelbench-root PATH, --python PATH\n\n"
	"A progress line (samples, attempts, passes, hacks, each agent's best speedup, ETA) is redrawn on a\n"
	"terminal; otherwise one line per attempt and per sample goes to stderr. Both go to RUN/run.log.\n"
	"A call to an LLM endpoint with nothing listening (connection refused, unknown host) is not retried;\n"
	"after 3 such calls in a row the run stops cleanly and says how to continue once it answers.\n"
	"Exit codes: 0 every sample ended (whatever its results), 1 some samples are unfinished (stopped, or\n"
	"the LLM gave no answer: --resume continues them), 2 usage or input error, 3 environment error.\n"
	"A run that ends with every sample ended writes RUN/complete (scripts/slurm/submit.sh skips those).\n";

struct run_args {
	struct config_opts cfg;
	struct run_request rq;
	const char *resume;
	int help;
};

enum { OPT_AGENTS = 1000, OPT_PROBLEMS, OPT_SAMPLES, OPT_RESUME, OPT_RUN_ID, OPT_JOBS, OPT_DEVICE, OPT_SHARD, OPT_GPUS };

static void split_into(const char *list, struct strvec *out)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		strvec_push(out, t);
	free(copy);
}

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
		case OPT_AGENTS: split_into(optarg, &a->rq.agents); break;
		case OPT_PROBLEMS: split_into(optarg, &a->rq.problems); break;
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

/* The first SIGINT/SIGTERM asks for a clean stop; the second ends the process the default way. */
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
			sb_warn(w->ctx, "%s: stopping cleanly: LLM calls and evaluations in flight finish and are stored; "
				"signal again to end at once (their results are lost; --resume repeats them)",
				sig == SIGINT ? "interrupt" : "terminated");
			continue;
		}
		signal(sig, SIG_DFL);
		pthread_sigmask(SIG_UNBLOCK, &w->set, NULL);
		raise(sig);
	}
}

static int resolve_config(struct run_args *a, struct config *cfg, struct sb_error *err)
{
	if (!a->resume)
		return config_resolve(&a->cfg, cfg, err);
	/* where the run is: output.dir from --set (or its default), then the run's own configuration */
	int rc = config_resolve(&a->cfg, cfg, err);
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
	if (rc || (rc = suite_load(&s, ctx->home, cfg.problems.root, &err))) {
		rc = cli_fail(ctx, &err);
		goto out;
	}

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
		printf("results: %s/ (results.db, config.yaml, run.json, hardware.json, run.log, transcripts/, prompts/, "
		       "candidates/, samples/, best/)\n", r.run_dir);
		if (atomic_load(&stop) & RUN_STOP_ENDPOINT)
			sb_warn(ctx, "run %s stopped: an LLM endpoint has nothing listening (refused or unknown host on "
				"several calls in a row; the sample lines above and run.log name the model and URL). Start "
				"it, or point the model at one that answers with --set models.NAME.api_base=URL, then "
				"continue with: stitchbench run --resume %s", r.run_id, r.run_dir);
		if (r.unfinished)
			printf("continue: stitchbench run --resume %s\n", r.run_dir);
		printf("table:    stitchbench metrics %s\n", r.run_dir);
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
