/* eval.c - `stitchbench eval`: judge one candidate file against a problem, or every file of a
 * KernelBench generations folder (`--samples DIR`), printing or storing the verdicts. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "../core/log.h"
#include "../core/suite.h"
#include "../agents/judge.h"
#include "../eval/evaluate.h"
#include "../eval/seeds.h"
#include "../profile/session.h"
#include "../store/store.h"
#include "../eval/sweep.h"
#include "../sched/sched.h"
#include "cli.h"

const char cmd_eval_help[] =
	"usage: stitchbench eval CANDIDATE.py --problem L1/3 [options]\n"
	"       stitchbench eval --samples DIR [-o FILE.jsonl] [options]\n\n"
	"Judges a candidate (one Python file defining ModelNew) against a problem: static checks, the\n"
	"reference's outputs (cached), the candidate in a fresh sandboxed process (build, K correctness\n"
	"trials on fresh seeds), then paired, interleaved timing against eager PyTorch and torch.compile.\n"
	"The workers are forked from one process that imports torch once per invocation (each candidate's\n"
	"still a fresh process in its own sandbox; docs/worker.md).\n"
	"A call is timed end to end: the host's launch of the whole call is inside the timed interval\n"
	"(KernelBench's evaluator hides a launch shorter than its L2 fill). On a GPU the GPU-only time\n"
	"(10 calls per side queued behind a device-side wait) is in the verdict beside it as a diagnostic,\n"
	"timing.gpu_only; eval.timing_lead_us=-1 times the GPU only instead. On a GPU the reference is also\n"
	"timed in the candidate's worker before the candidate loads (eval.process_factor): for a launch-heavy\n"
	"reference the speedup vs eager is divided by that factor, for any other its interval spans it.\n"
	"Each timed call is a request of its own to the candidate's worker, carrying only that call's inputs\n"
	"(with checks.runtime off, one request carries a block of calls). The parent's own clock around\n"
	"each block of timed calls, and the blocks' sums, bound what the\n"
	"candidate's process reports (H08); a verdict that they alone reject is judged again, whole, in fresh\n"
	"worker processes, and the second verdict stands (timing.trusted_clock.retimed; each evaluation has\n"
	"its own --timeout).\n"
	"eval.preset picks whose protocol judges:\n"	"stitchbench (the default: paired calls, medians, strict policy), kernelbench (5 and 100 trials, each\n"
	"side's calls in blocks, the mean over the mean, its strict rules reject and its warnings flag) or\n"
	"stitchcuda (its verifier's 5 and 10 trials); docs/config.md \"Presets\".\n"
	"Once the correctness trials pass, eval.robust_trials (default 2) more run on the same draws made\n"
	"signed and scaled (3(2x-1) for floats): failing them is the finding H17, a flag by default, and the\n"
	"status stays what the correctness trials decided (verdict field robust).\n"
	"Prints the verdict, or with --json the verdict JSON (docs/verdict.md).\n\n"
	"With --samples DIR, evaluates a KernelBench generations folder (files named\n"
	"level_1_problem_19_sample_0_kernel.py) on the evaluation queue `serve` also uses: the candidates\n"
	"build in order on the cores and are evaluated one at a time per device (--gpus: one per GPU), on\n"
	"a GPU each as soon as its build has ended (on the CPU builds and evaluations take turns, so no\n"
	"compiler shares the cores with timed calls), the candidates of one problem against the same\n"
	"reference worker\n"
	"kept alive, the next two candidates' workers (and the next problem's reference worker) starting\n"
	"while the current one runs its trials; one verdict per\n"
	"line goes to the JSONL file (-o; default <output.dir>/eval-<time>.jsonl). Files already judged in\n"
	"that file (same candidate hash and problem) are skipped, so an interrupted run continues where it\n"
	"stopped. Before judging, its lines are compared with this invocation's settings as `import` compares\n"
	"a verdict with its run's (the eval keys that change verdicts or numbers, as a verdict's\n"
	"settings.identity records them, the device's kind, the GPU, torch), and on the checks keys of the\n"
	"identity too; checks.policy is in no verdict, so keep it the same. When the newest line of any file,\n"
	"in DIR or not, differs, nothing is judged, and exit 2 names the first such line and each setting with\n"
	"both values. Write to another file then, or pass --rejudge: the files of DIR whose newest line has\n"
	"other settings are judged again and their new lines appended; the old lines stay, and the newest\n"
	"line of a file is the one a rerun goes by (a file whose newest line has these settings is skipped).\n"
	"Such a file mixes settings: `import` of it stores the lines before the first of other settings,\n"
	"then refuses that one with FILE:LINE; for verdicts to import, judge into a new file instead.\n"
	"With --run RUN_ID (or output.run_id) the verdicts also go to the run's store\n"
	"<output.dir>/RUN_ID/results.db (docs/store.md; agent 'samples', sample from the file name, attempt\n"
	"0), and files the run already holds are skipped.\n\n"
	"Options:\n"
	"   --problem L<l>/<id>      the problem (required for a single file)\n"
	"   --device cpu|cuda|cuda:N where to run (eval.device; default auto: the first GPU if any)\n"
	"   --trials K               correctness trials (eval.trials, default 5)\n"
	"   --perf-trials N          timed rounds at most (eval.perf_trials, default 100; 0 = no timing)\n"
	"   --tolerance kernelbench|kernelbench-v0\n"
	"                            fp32 1e-4 and fp16/bf16 1e-2, or 1e-2 everywhere (eval.tolerance)\n"
	"   --timeout S              wall-clock limit per evaluation (eval.timeout_s, default 1800)\n"
	"   --no-compile             skip the torch.compile side of the timing (eval.compile=false)\n"
	"   --seeds VERDICT|SECRET   replay an evaluation: the input seeds of a verdict JSON file (its\n"
	"                            seeds.secret) or that secret itself; otherwise every evaluation draws\n"
	"                            a fresh secret from the kernel's CSPRNG, and the verdict records it\n"
	"   --json                   print the verdict JSON instead of the text\n"
	"   -o, --output FILE        --samples: the JSONL file to append verdicts to\n"
	"   --run RUN_ID             --samples: also store the verdicts in run RUN_ID (output.run_id)\n"
	"   --rejudge                --samples: judge again the files whose newest line in the output file\n"
	"                            was judged with other settings, appending new lines (otherwise exit 2)\n"
	"   --gpus 0,1,...|all       --samples: judge on each listed GPU at once, one file per GPU (all: every\n"
	"                            GPU torch sees, after CUDA_VISIBLE_DEVICES; one GPU model)\n"
	"   --keep-workdir           keep the work folders under the cache for inspection, with every output\n"
	"                            file in them (otherwise each goes once it is compared; with outputs\n"
	"                            shared on a GPU there are none)\n"
	"   --kernelbench-root PATH  problems from this suite or KernelBench checkout\n"
	"   -c, --config FILE        experiment YAML (its eval: and checks: sections apply)\n"
	"   --set KEY=VALUE          override one config key; --python PATH the workers' interpreter\n\n"
	"Runtime hack checks run with every evaluation (checks.runtime; docs/checks.md; eval.extra_shapes adds\n"
	"a run at the problem's shape constants halved, H18). On the CPU they include the record of the ATen\n"
	"operators the candidate's calls ran (field runtime.operators): H01 when PyTorch's own compute\n"
	"operators ran for half of the calls' time (a flag from 35%), H08 when the record was switched off,\n"
	"closed or flooded; eval.profile=false turns the record off. A problem that `stitchbench audit`\n"
	"flagged is marked in the verdict (field audit). With checks.rubric and checks.judge_model set, a\n"
	"judge model also scores each candidate against the rubric (field rubric), and the verdict's reward\n"
	"combines the scores with its speedup (field reward; checks.reward_lambda).\n\n"
	"Outputs reach the comparison as files on the CPU, and on a GPU shared with the reference worker,\n"
	"which compares them on the device (docs/worker.md); both give the same verdict.\n"
	"Caches live in $STITCHBENCH_CACHE (default ~/.cache/stitchbench): ref/ (expected outputs; meta only\n"
	"when shared), ext/ (builds, keyed by source hash, arch and torch version), work/ (per-evaluation\n"
	"folders, named with their process's pid; those of a process that died are removed when the next\n"
	"one starts), locks/ (who owns which folders, who times on which GPU: a second process timing on\n"
	"the same GPU gets a warning that the timings of both will interfere).\n"
	"A candidate whose code only a GPU runs (a __global__ kernel, cuda_sources, Triton), evaluated on the\n"
	"CPU, is cannot_judge: nothing is built or run, it is not counted for or against anyone, a rerun with\n"
	"the same output file judges it again (on a GPU with --rejudge when the file holds verdicts made on\n"
	"the CPU, which are then judged again on the GPU), and neither --run nor `import` stores it.\n"
	"Exit codes: 0 the candidate passed (--samples: every file was judged), 1 it did not pass (--samples:\n"
	"a file ended as harness_error, the harness's failure, which a rerun tries again),\n"
	"2 usage or input error (--samples: the output file holds verdicts of other settings and no\n"
	"--rejudge), 3 environment error (no Python with torch, no GPU when one was asked, a cannot_judge\n"
	"candidate).\n";

struct eval_args {
	struct config_opts cfg;
	const char *candidate, *problem, *samples, *output, *run, *seeds, *gpus;
	int json, keep, help, rejudge;
};

enum { OPT_JSON = 1000, OPT_PROBLEM, OPT_DEVICE, OPT_TRIALS, OPT_PERF,
       OPT_TOL, OPT_TIMEOUT, OPT_SAMPLES, OPT_KEEP, OPT_NO_COMPILE, OPT_RUN, OPT_SEEDS, OPT_REJUDGE, OPT_GPUS };

static int parse_args(int argc, char **argv, struct eval_args *a, struct sb_error *err)
{
	static const struct option longopts[] = {
		CLI_CONFIG_LONGOPTS,
		{ "help", no_argument, NULL, 'h' }, { "json", no_argument, NULL, OPT_JSON },
		{ "problem", required_argument, NULL, OPT_PROBLEM }, { "device", required_argument, NULL, OPT_DEVICE },
		{ "trials", required_argument, NULL, OPT_TRIALS }, { "perf-trials", required_argument, NULL, OPT_PERF },
		{ "tolerance", required_argument, NULL, OPT_TOL }, { "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "samples", required_argument, NULL, OPT_SAMPLES }, { "output", required_argument, NULL, 'o' },
		{ "keep-workdir", no_argument, NULL, OPT_KEEP }, { "no-compile", no_argument, NULL, OPT_NO_COMPILE },
		{ "run", required_argument, NULL, OPT_RUN }, { "seeds", required_argument, NULL, OPT_SEEDS },
		{ "rejudge", no_argument, NULL, OPT_REJUDGE }, { "gpus", required_argument, NULL, OPT_GPUS },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:ho:", longopts, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		switch (c) {
		case 'h': a->help = 1; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_PROBLEM: a->problem = optarg; break;
		case OPT_DEVICE: strvec_pushf(&a->cfg.sets, "eval.device=%s", optarg); break;
		case OPT_TRIALS: strvec_pushf(&a->cfg.sets, "eval.trials=%s", optarg); break;
		case OPT_PERF: strvec_pushf(&a->cfg.sets, "eval.perf_trials=%s", optarg); break;
		case OPT_TOL: strvec_pushf(&a->cfg.sets, "eval.tolerance=%s", optarg); break;
		case OPT_TIMEOUT: strvec_pushf(&a->cfg.sets, "eval.timeout_s=%s", optarg); break;
		case OPT_SAMPLES: a->samples = optarg; break;
		case 'o': a->output = optarg; break;
		case OPT_KEEP: a->keep = 1; break;
		case OPT_NO_COMPILE: strvec_push(&a->cfg.sets, "eval.compile=false"); break;
		case OPT_RUN: a->run = optarg; strvec_pushf(&a->cfg.sets, "output.run_id=%s", optarg); break;
		case OPT_SEEDS: a->seeds = optarg; break;
		case OPT_REJUDGE: a->rejudge = 1; break;
		case OPT_GPUS: a->gpus = optarg; break;
		default:
			return sb_error_set(err, SB_EINPUT, "eval: option '%s' %s; see 'stitchbench help eval'", argv[optind - 1],
					    c == ':' ? "needs a value" : "is not known");
		}
	}
	if (a->help)
		return 0;
	if (optind < argc)
		a->candidate = argv[optind++];
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "eval: unexpected argument '%s'", argv[optind]);
	if (!a->candidate == !a->samples)
		return sb_error_set(err, SB_EINPUT, "eval: give either CANDIDATE.py --problem L<l>/<id>, or --samples DIR");
	if (a->gpus && !a->samples)
		return sb_error_set(err, SB_EINPUT, "eval: --gpus spreads the files of --samples over GPUs; a single file "
				    "is judged on one device (--device cuda:N)");
	if (a->run && !a->samples)
		return sb_error_set(err, SB_EINPUT, "eval: --run stores the verdicts of --samples; a single file's verdict is "
				    "printed (--json for JSON)");
	if (a->candidate && !a->problem)
		return sb_error_set(err, SB_EINPUT, "eval: which problem? add --problem L<level>/<id>, e.g. --problem L1/19");
	if (a->rejudge && !a->samples)
		return sb_error_set(err, SB_EINPUT, "eval: --rejudge judges the files of --samples DIR again; a single file "
				    "is judged every time");
	if (a->seeds && a->samples)
		return sb_error_set(err, SB_EINPUT, "eval: --seeds replays one evaluation: give it with one CANDIDATE.py");
	return 0;
}

/* --seeds: a verdict JSON file (its seeds.secret) or the secret itself, into secret[33]. */
static int replay_secret(const char *arg, char *secret, struct sb_error *err)
{
	struct eval_seeds s;
	const char *text = arg;
	json_t *j = NULL;
	struct stat st;
	if (stat(arg, &st) == 0) {
		json_error_t jerr;
		if (!(j = json_load_file(arg, 0, &jerr)))
			return sb_error_set(err, SB_EINPUT, "eval --seeds %s:%d:%d: %s", arg, jerr.line, jerr.column, jerr.text);
		text = json_string_value(json_object_get(json_object_get(j, "seeds"), "secret"));
		if (!text) {
			json_decref(j);
			return sb_error_set(err, SB_EINPUT, "eval --seeds %s: the verdict has no seeds.secret (verdicts record it "
					    "since the seeds are drawn per evaluation)", arg);
		}
	}
	int rc = eval_seeds_parse(&s, text, err);
	if (rc == 0)
		eval_seeds_hex(&s, secret);
	else
		sb_error_prefix(err, "eval --seeds");
	json_decref(j);
	return rc;
}

/* ---------- one file ---------- */

static int eval_one(struct sb_ctx *ctx, struct eval_args *a, const struct config *cfg, const struct suite *s)
{
	struct sb_error err = { 0 };
	struct eval_env env;
	struct verdict v;
	int level, id;
	struct stat st;

	if (problem_ref_parse(a->problem, &level, &id, &err))
		return cli_fail(ctx, &err);
	const struct problem *p = suite_find(s, level, id);
	if (!p) {
		sb_error_set(&err, SB_EINPUT, "no problem %s in %s ('stitchbench problems' lists them)", a->problem, s->root);
		return cli_fail(ctx, &err);
	}
	if (stat(a->candidate, &st) != 0 || !S_ISREG(st.st_mode)) {
		sb_error_set(&err, SB_EINPUT, "%s: %s", a->candidate, stat(a->candidate, &st) ? strerror(errno) : "not a file");
		return cli_fail(ctx, &err);
	}
	struct judge judge;
	if (judge_open(&judge, cfg, ctx->home, NULL, &err))
		return cli_fail(ctx, &err);
	if (eval_env_init(&env, cfg, ctx->home, &err)) {
		judge_close(&judge);
		return cli_fail(ctx, &err);
	}
	env.keep_workdirs = a->keep;
	env.profile = prof_candidate;
	if (a->seeds && replay_secret(a->seeds, env.replay_seeds, &err)) {
		eval_env_release(&env);
		judge_close(&judge);
		return cli_fail(ctx, &err);
	}
	struct eval_claim claim = EVAL_CLAIM_INIT;
	cli_eval_claim(ctx, &env, 1, &claim);
	char *abs = realpath(a->candidate, NULL);
	int rc = eval_candidate(&env, cfg, p, abs, NULL, &v, &err);
	free(abs);
	if (rc) {
		verdict_release(&v);
		eval_claim_release(&claim);
		eval_env_release(&env);
		judge_close(&judge);
		return cli_fail(ctx, &err);
	}
	judge_rubric(&judge, p, "judge", 0, 0, &v);
	judge_close(&judge);
	if (a->json) {
		json_t *j = verdict_to_json(&v);
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(text);
		free(text);
		json_decref(j);
	} else {
		struct strbuf out = STRBUF_INIT;
		verdict_print(&v, &out);
		fputs(out.buf, stdout);
		strbuf_release(&out);
	}
	rc = v.status == V_PASS ? SB_EXIT_OK : v.status == V_CANNOT_JUDGE ? SB_EXIT_ENV : SB_EXIT_FAILED;
	verdict_release(&v);
	eval_claim_release(&claim);
	eval_env_release(&env);
	return rc;
}

/* ---------- a generations folder ---------- */

struct sample {
	char *path;
	const struct problem *problem;
	int sample;
	char sha[65];
	int skip;              /* already judged (in the JSONL file or the run) */
};

static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	if (a->problem != b->problem)
		return a->problem->level != b->problem->level ? a->problem->level - b->problem->level
							      : a->problem->id - b->problem->id;
	return a->sample - b->sample;
}

/* level_1_problem_19_sample_0_kernel.py */
static size_t collect_samples(struct sb_ctx *ctx, const char *dir, const struct suite *s, struct sample **out)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	*out = NULL;
	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d));) {
		int level, id, sample;
		if (de->d_name[0] == '.' || !ends_with(de->d_name, ".py"))
			continue;
		if (!suite_sample_name_parse(de->d_name, &level, &id, &sample)) {
			sb_warn(ctx, "skipped %s/%s: not named level_L_problem_ID_sample_S_kernel.py", dir, de->d_name);
			continue;
		}
		const struct problem *p = suite_find(s, level, id);
		if (!p) {
			sb_warn(ctx, "skipped %s/%s: no problem L%d/%d in %s", dir, de->d_name, level, id, s->root);
			continue;
		}
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		struct sample *x = &(*out)[n++];
		memset(x, 0, sizeof(*x));
		char *rel = xstrfmt("%s/%s", dir, de->d_name);
		x->path = realpath(rel, NULL);
		free(rel);
		x->problem = p;
		x->sample = sample;
		sha256_file_hex(x->path, x->sha);
	}
	closedir(d);
	if (n)
		qsort(*out, n, sizeof(**out), cmp_sample);
	return n;
}

/* What the JSONL file judged already: per problem and candidate hash, the newest line that judged it. */
struct judged_line {
	char *key;             /* "REF SHA256" */
	long lineno;           /* of the newest such line: the one a rerun goes by */
	char *diff;            /* how its settings differ from this invocation's, one per line; NULL: they agree */
	int in_dir;            /* a file of the folder has its key */
};

struct judged {
	struct judged_line *v;
	size_t n;
	size_t differ;         /* keys whose newest line has other settings */
	const struct judged_line *first_differ; /* the first of them in the file */
};

/* How a line's settings differ from this invocation's, by the comparison `import` and a resumed run make:
 * store_run_diff over what a verdict carries (the eval keys of its identity, the device's kind, the GPU,
 * torch). Its checks keys are compared here too: store_run_from_verdict takes them from the configuration,
 * as a run's reference agents are judged with the checks off, but every line of this file is a candidate's
 * verdict, judged with the checks as configured. checks.policy is in no verdict, so no line can tell it.
 * NULL when they agree. */
static char *settings_diff(json_t *line, const struct store_run *mine, json_t *mine_identity, const struct config *cfg)
{
	struct store_run theirs;
	struct strbuf out = STRBUF_INIT;
	struct sb_error err = { 0 };
	json_t *identity = json_object_get(json_object_get(line, "settings"), "identity"), *v;
	const char *key;
	if (store_run_from_verdict(&theirs, "samples", line, cfg, &err))
		strbuf_addf(&out, "  settings: %s\n", err.msg);
	else
		store_run_diff(&theirs, "that line", mine, "this invocation", STORE_DIFF_VERDICT, &out);
	store_run_release(&theirs);
	json_object_foreach(mine_identity, key, v) {
		json_t *was = json_object_get(identity, key);
		if (strncmp(key, "checks.", 7) || !was || json_equal(was, v))
			continue;
		char *a = json_dumps(was, JSON_ENCODE_ANY), *b = json_dumps(v, JSON_ENCODE_ANY);
		strbuf_addf(&out, "  %s: %s in that line vs %s in this invocation\n", key, a, b);
		free(a);
		free(b);
	}
	if (!out.len) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out, NULL);
}

static int cmp_judged(const void *x, const void *y)
{
	const struct judged_line *a = x, *b = y;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->lineno > b->lineno) - (a->lineno < b->lineno);
}

static int cmp_judged_key(const void *key, const void *x)
{
	return strcmp(key, ((const struct judged_line *)x)->key);
}

/* Reads the JSONL file once, keeping the newest line of each key. A harness_error or a cannot_judge line
 * judged nothing, so its file is tried again (on another machine, for the latter) and its settings do not
 * matter. Consecutive lines mostly share their settings, so a line whose settings and env are the
 * previous one's reuses its comparison. */
static void judged_in_file(const char *jsonl, const struct store_run *mine, json_t *mine_identity,
			   const struct config *cfg, struct judged *out)
{
	FILE *f = fopen(jsonl, "r");
	char *line = NULL, *last = NULL, *last_diff = NULL;
	size_t cap = 0, alloc = 0;
	memset(out, 0, sizeof(*out));
	if (!f)
		return;
	for (long lineno = 1; getline(&line, &cap, f) > 0; lineno++) {
		json_t *j = json_loads(line, 0, NULL);
		const char *p = json_string_value(json_object_get(json_object_get(j, "problem"), "ref"));
		const char *c = json_string_value(json_object_get(json_object_get(j, "candidate"), "sha256"));
		const char *st = json_string_value(json_object_get(j, "status"));
		if (p && c && !(st && (!strcmp(st, "harness_error") || !strcmp(st, "cannot_judge")))) {
			json_t *both = json_pack("[O?, O?]", json_object_get(j, "settings"), json_object_get(j, "env"));
			char *text = json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(both);
			if (!last || !text || strcmp(text, last)) {
				free(last_diff);
				last_diff = settings_diff(j, mine, mine_identity, cfg);
				free(last);
				last = text;
			} else {
				free(text);
			}
			if (out->n == alloc)
				out->v = xrealloc(out->v, (alloc = alloc ? 2 * alloc : 64) * sizeof(*out->v));
			out->v[out->n++] = (struct judged_line){ xstrfmt("%s %s", p, c), lineno,
								 last_diff ? xstrdup(last_diff) : NULL, 0 };
		}
		json_decref(j);
	}
	free(line);
	free(last);
	free(last_diff);
	fclose(f);
	/* by key, then line: the last of each run of a key is its newest */
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_judged);
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (i + 1 < out->n && !strcmp(out->v[i].key, out->v[i + 1].key)) {
			free(out->v[i].key);
			free(out->v[i].diff);
			continue;
		}
		out->v[k++] = out->v[i];
	}
	out->n = k;
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].diff && (out->differ++, !out->first_differ || out->v[i].lineno < out->first_differ->lineno))
			out->first_differ = &out->v[i];
}

static void judged_release(struct judged *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->v[i].key);
		free(j->v[i].diff);
	}
	free(j->v);
	memset(j, 0, sizeof(*j));
}

/* The newest line that judged the file, or NULL. */
static struct judged_line *already_judged(struct judged *judged, const char *problem, const char *sha)
{
	char *key = xstrfmt("%s %s", problem, sha);
	struct judged_line *x = judged->n ? bsearch(key, judged->v, judged->n, sizeof(*judged->v), cmp_judged_key) : NULL;
	free(key);
	return x;
}

/* One line, flushed and synced: a crash later never costs a verdict already written. */
static int append_verdict(FILE *f, const json_t *verdict)
{
	char *text = json_dumps(verdict, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rc = fprintf(f, "%s\n", text) < 0 || fflush(f) != 0 || fsync(fileno(f)) != 0 ? -1 : 0;
	free(text);
	return rc;
}

/* ---------- the run store (--run or output.run_id; docs/store.md) ---------- */

/* <output.dir>/<run_id>, where the run's LLM transcripts go; NULL without a run id. */
static char *run_dir_of(const struct config *cfg)
{
	return cfg->output.run_id ? xstrfmt("%s/%s", cfg->output.dir, cfg->output.run_id) : NULL;
}

/* <output.dir>/<run_id>/results.db with the agent "samples"; *st stays NULL without a run id. */
static int run_store_open(struct store **st, const struct config *cfg, const struct eval_env *env,
			  const struct suite *s, struct sb_error *err)
{
	struct store_run run;
	int rc;
	*st = NULL;
	if (!cfg->output.run_id || (rc = run_id_check(cfg->output.run_id, err)))
		return cfg->output.run_id ? rc : 0;
	char *dir = xstrfmt("%s/%s", cfg->output.dir, cfg->output.run_id);
	store_run_from_config(&run, cfg->output.run_id, cfg, env->device, env->gpu, env->sm, env->torch, s->root);
	if ((rc = rundir_open(st, dir, cfg, &run, err)) == 0)
		rc = store_add_agent(*st, "samples", "samples", NULL, err);
	store_run_release(&run);
	free(dir);
	return rc;
}

/* A key is written once: a file whose key the run holds is not judged again, even if it changed. */
static int run_store_has(struct sb_ctx *ctx, struct store *st, const struct sample *x, const char *ref)
{
	char sha[65];
	struct store_key k = { "samples", ref, x->sample, 0 };
	if (!st || store_lookup(st, &k, sha, NULL) != 1)
		return 0;
	if (strcmp(sha, x->sha))
		sb_warn(ctx, "%s: the run holds a verdict for another version of this file (%.12s...); it is not judged "
			"again (use a new --run to judge it)", x->path, sha);
	return 1;
}

static int run_store_put(struct store *st, const struct sample *x, const struct verdict *v, json_t *verdict,
			 struct sb_error *err)
{
	if (!st)
		return 0;
	struct store_put put = { .agent = "samples", .sample = x->sample };
	int rc = store_add_problem(st, v->problem, x->problem->name, x->problem->sha256, err);
	if (rc == 0)
		rc = store_put_verdict(st, &put, verdict, err);
	return rc == SB_EEXIST ? 0 : rc;
}

/* Where the evaluation queue's verdicts go (its callbacks, with lock held): the JSONL file and the run. */
struct samples_sink {
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* a verdict was written, or writing failed */
	const struct sb_ctx *ctx;
	const struct config *cfg;
	struct judge *judge;
	struct sample *pending;   /* the queue's candidate k is pending[k - 1] */
	size_t np, done;
	FILE *f;
	const char *output;
	struct store *run;
	size_t counts[V_NSTATUS];
	int failed;               /* a write failed: nothing more is written, the queue stops */
	struct sb_error err;
};

static void sink_score(void *owner, int64_t id, const struct problem *p, struct verdict *v)
{
	struct samples_sink *k = owner;
	judge_rubric(k->judge, p, "judge", k->pending[id - 1].sample, 0, v);
}

static void sink_judged(void *owner, int64_t id, const struct problem *p, const char *path, struct verdict *v)
{
	struct samples_sink *k = owner;
	const struct sample *x = &k->pending[id - 1];
	(void)p;
	(void)path;
	if (k->failed)
		return;
	k->counts[v->status]++;
	k->done++;
	/* one JSON for both sinks: the line and the store row are the same verdict's bytes; the run store
	 * keeps verdicts on candidates only, so neither a harness_error (the trusted side failed: a later run
	 * tries the file again) nor a cannot_judge line goes there */
	json_t *vj = verdict_to_json(v);
	if (append_verdict(k->f, vj)) {
		sb_error_set(&k->err, SB_EIO, "writing %s: %s", k->output, strerror(errno));
		k->failed = 1;
	} else if (v->status != V_HARNESS_ERROR && v->status != V_CANNOT_JUDGE && run_store_put(k->run, x, v, vj, &k->err)) {
		k->failed = 1;
	}
	json_decref(vj);
	if (!k->failed) {
		char speed[48] = "";
		if (v->timing.ran)
			snprintf(speed, sizeof(speed), ", speedup %.3fx", v->timing.speedup_eager);
		sb_info(k->ctx, "[%zu/%zu] %s sample %d: %s%s (%.1f s%s)", k->done, k->np, v->problem, x->sample,
			verdict_status_name(v->status), speed, v->seconds.total,
			v->timing.trusted.first_finding ? "; judged twice: the timing's clocks alone rejected the first" : "");
	}
	pthread_cond_broadcast(&k->changed);
}

static void sink_built(void *owner, int64_t id, const char *path, const struct prebuild *pb)
{
	struct samples_sink *k = owner;
	sb_info(k->ctx, "built %lld/%zu: %s: %s", (long long)id, k->np, path, pb->ok ? "ok" : pb->msg ? pb->msg : "failed");
}

static const struct sched_ops samples_ops = { sink_score, sink_judged, sink_built };

static int eval_samples(struct sb_ctx *ctx, struct eval_args *a, const struct config *cfg, const struct suite *s)
{
	struct sb_error err = { 0 };
	struct eval_env env;
	struct sample *items;
	size_t n = collect_samples(ctx, a->samples, s, &items);
	struct stat st;
	if (stat(a->samples, &st) != 0 || !S_ISDIR(st.st_mode)) {
		sb_error_set(&err, SB_EINPUT, "--samples %s: not a folder", a->samples);
		return cli_fail(ctx, &err);
	}
	if (!n) {
		sb_error_set(&err, SB_EINPUT, "--samples %s: no level_L_problem_ID_sample_S_kernel.py files", a->samples);
		return cli_fail(ctx, &err);
	}
	char *output = NULL;
	if (a->output) {
		output = xstrdup(a->output);
	} else {
		char stamp[32];
		time_t now = time(NULL);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
		fs_mkdirs(cfg->output.dir, 0755);
		output = xstrfmt("%s/eval-%s.jsonl", cfg->output.dir, stamp);
	}
	if (eval_env_init(&env, cfg, ctx->home, &err)) {
		free(output);
		return cli_fail(ctx, &err);
	}
	struct eval_env *slots;
	int nslots;
	if (cli_eval_slots(ctx, a->gpus, &env, &slots, &nslots, &err)) {
		free(output);
		eval_env_release(&env);
		return cli_fail(ctx, &err);
	}
	/* the settings this invocation's verdicts record, against those of the lines already in the file */
	struct judged judged;
	struct store_run mine;
	json_t *mine_identity = config_identity(cfg);
	store_run_from_config(&mine, "samples", cfg, env.device, env.gpu, env.sm, env.torch, s->root);
	judged_in_file(output, &mine, mine_identity, cfg, &judged);
	store_run_release(&mine);
	json_decref(mine_identity);
	if (judged.differ && !a->rejudge) {
		const struct judged_line *x = judged.first_differ;
		char more[80] = "";
		if (judged.differ > 1)
			snprintf(more, sizeof(more), " (the first of %zu such lines, one per file)", judged.differ);
		sb_error_set(&err, SB_EINPUT, "eval --samples: %s:%ld was judged with other settings than this "
			     "invocation's%s:\n%s  a verdict of other settings is neither reused nor mixed with new ones "
			     "unasked: write to another file (-o), or pass --rejudge to judge such files again with these "
			     "settings, appending new lines (the old lines stay, the newest line of a file is the one a rerun "
			     "goes by, and `import` refuses a file that mixes settings)", output, x->lineno, more, x->diff);
		judged_release(&judged);
		free(output);
		if (slots != &env)
			free(slots);
		eval_env_release(&env);
		return cli_fail(ctx, &err);
	}
	for (int i = 0; i < nslots; i++) {
		slots[i].keep_workdirs = a->keep;
		slots[i].profile = prof_candidate;
	}
	env.keep_workdirs = a->keep;
	env.profile = prof_candidate;
	struct eval_claim claim = EVAL_CLAIM_INIT;
	cli_eval_claim(ctx, slots, nslots, &claim);
	struct store *run;
	struct judge judge = { 0 };
	char *run_dir = run_dir_of(cfg);
	if (run_store_open(&run, cfg, &env, s, &err) || judge_open(&judge, cfg, ctx->home, run_dir, &err)) {
		judged_release(&judged);
		free(run_dir);
		store_close(run);
		free(output);
		eval_claim_release(&claim);
		if (slots != &env)
			free(slots);
		eval_env_release(&env);
		return cli_fail(ctx, &err);
	}
	free(run_dir);
	size_t todo = 0, unstored = 0, rejudged = 0, elsewhere = 0;
	for (size_t i = 0; i < n; i++) {
		char ref[16];
		snprintf(ref, sizeof(ref), "L%d/%d", items[i].problem->level, items[i].problem->id);
		struct judged_line *line = already_judged(&judged, ref, items[i].sha);
		/* with --rejudge, a line of other settings judged nothing this invocation can reuse */
		int in_file = line && !line->diff, in_run = run_store_has(ctx, run, &items[i], ref);
		if (line)
			line->in_dir = 1;
		rejudged += line && line->diff && !in_run;
		unstored += run && in_file && !in_run;
		if (in_file || in_run)
			items[i].skip = 1;
		else
			todo++;
	}
	for (size_t i = 0; i < judged.n; i++)
		elsewhere += judged.v[i].diff && !judged.v[i].in_dir;
	judged_release(&judged);
	if (unstored)
		sb_warn(ctx, "%zu verdicts already in %s are not in run %s; 'stitchbench import %s/%s %s' adds them", unstored,
			output, cfg->output.run_id, cfg->output.dir, cfg->output.run_id, output);
	if (elsewhere)
		sb_warn(ctx, "%zu file%s not in %s %s judged in %s with other settings; %s, and the file mixes "
			"settings until %s judged again into it", elsewhere, elsewhere == 1 ? "" : "s", a->samples,
			elsewhere == 1 ? "was" : "were", output, elsewhere == 1 ? "its line stays" : "their lines stay",
			elsewhere == 1 ? "it is" : "they are");
	sb_info(ctx, "%zu candidates in %s, %zu already judged in %s", n, a->samples, n - todo, output);
	if (rejudged)
		sb_info(ctx, "%zu judged before with other settings, judged again (--rejudge)", rejudged);

	/* the workers below are forked from it: its import of torch starts now */
	eval_fork_server(&env);
	struct sample *pending = xcalloc(todo ? todo : 1, sizeof(*pending));
	size_t np = 0;
	for (size_t i = 0; i < n; i++)
		if (!items[i].skip)
			pending[np++] = items[i];
	struct samples_sink k = { .lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER, .ctx = ctx,
				  .cfg = cfg, .judge = &judge, .pending = pending, .np = np, .output = output, .run = run };
	int rc = 0;
	if (!(k.f = fopen(output, "a"))) {
		sb_error_set(&err, SB_EIO, "cannot open %s: %s", output, strerror(errno));
		rc = cli_fail(ctx, &err);
		np = 0;
	}
	/* The evaluation queue (sched.h) builds the files in order on the cores and judges each, in order, as
	 * soon as its build has ended, one at a time per device slot; the candidates of one problem against
	 * the same reference worker kept alive, the next evaluations' workers started ahead. */
	struct sched_opts so = { .ctx = ctx, .cfg = cfg, .envs = slots, .nenvs = nslots, .lock = &k.lock,
				 .ops = &samples_ops, .owner = &k };
	struct sched *q = np ? sched_start(&so, &err) : NULL;
	if (np && !q)
		rc = cli_fail(ctx, &err);
	pthread_mutex_lock(&k.lock);
	for (size_t i = 0; q && i < np; i++)
		sched_add(q, (int64_t)i + 1, 0, pending[i].problem, pending[i].path);
	while (q && !k.failed && k.done < np)
		pthread_cond_wait(&k.changed, &k.lock);
	pthread_mutex_unlock(&k.lock);
	/* after a failed write nothing new starts; evaluations in flight end, their verdicts dropped */
	sched_stop(q);
	if (k.f)
		fclose(k.f);
	if (k.failed)
		rc = cli_fail(ctx, &k.err);
	size_t *counts = k.counts;
	if (!rc)
		printf("%zu judged: %zu pass, %zu incorrect, %zu compile_error, %zu runtime_error, %zu timeout, %zu rejected, "
		       "%zu format_error, %zu cannot_judge, %zu harness_error; verdicts in %s\n",
		       np - counts[V_HARNESS_ERROR] - counts[V_CANNOT_JUDGE], counts[V_PASS], counts[V_INCORRECT],
		       counts[V_COMPILE_ERROR], counts[V_RUNTIME_ERROR], counts[V_TIMEOUT], counts[V_REJECTED],
		       counts[V_FORMAT_ERROR], counts[V_CANNOT_JUDGE], counts[V_HARNESS_ERROR], output);
	if (!rc && counts[V_CANNOT_JUDGE])
		sb_warn(ctx, "%zu file%s not judged (cannot_judge: code this machine cannot run, e.g. CUDA without a "
			"GPU); the same command on a machine with a GPU judges %s (with this output file, add --rejudge "
			"when it holds verdicts made here: the files judged on this device are judged again on that one)",
			counts[V_CANNOT_JUDGE], counts[V_CANNOT_JUDGE] == 1 ? " was" : "s were",
			counts[V_CANNOT_JUDGE] == 1 ? "it" : "them");
	if (!rc && counts[V_HARNESS_ERROR])
		sb_warn(ctx, "%zu file%s not judged (harness_error: the harness failed, not the candidate); running the "
			"same command again tries %s again", counts[V_HARNESS_ERROR], counts[V_HARNESS_ERROR] == 1 ? " was" : "s were",
			counts[V_HARNESS_ERROR] == 1 ? "it" : "them");
	if (!rc && run)
		printf("stored in run %s: %s/%s/%s\n", cfg->output.run_id, cfg->output.dir, cfg->output.run_id, STORE_FILE);
	if (!rc) /* the harness's failure first: a rerun here may fix it, not so a missing GPU */
		rc = counts[V_HARNESS_ERROR] ? SB_EXIT_FAILED : counts[V_CANNOT_JUDGE] ? SB_EXIT_ENV : SB_EXIT_OK;
	store_close(run);
	judge_close(&judge);
	for (size_t i = 0; i < n; i++)
		free(items[i].path);
	free(items);
	free(pending);
	free(output);
	eval_prestart_drain(); /* before the env it points to goes */
	eval_claim_release(&claim);
	if (slots != &env)
		free(slots);
	eval_env_release(&env);
	return rc;
}

int cmd_eval(int argc, char **argv, struct sb_ctx *ctx)
{
	struct eval_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite s = { 0 };
	int rc = parse_args(argc, argv, &a, &err);

	config_init(&cfg);
	if (rc == 0 && a.help) {
		fputs(cmd_eval_help, stdout);
	} else if (rc || (rc = config_resolve(&a.cfg, &cfg, &err)) || (rc = suite_load(&s, ctx->home, cfg.problems.root, &err))) {
		rc = cli_fail(ctx, &err);
	} else {
		rc = a.samples ? eval_samples(ctx, &a, &cfg, &s) : eval_one(ctx, &a, &cfg, &s);
	}
	suite_release(&s);
	config_release(&cfg);
	config_opts_release(&a.cfg);
	return rc;
}
