/* import.c - `stitchbench import`: stores verdict JSONL (what `eval --samples -o` writes, or the keyed rows
 * of `export --format jsonl`) in a run's results store, so verdicts judged elsewhere, before a run existed
 * or in another run can be merged and scored. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../core/suite.h"
#include "../store/store.h"
#include "cli.h"

const char cmd_import_help[] =
	"usage: stitchbench import RUN_DIR FILE.jsonl... [--agent NAME] [--model NAME]\n"
	"                          [-c FILE] [--set KEY=VALUE] [--kernelbench-root PATH]\n\n"
	"Stores verdicts in RUN_DIR/results.db, creating the run directory, its store and its config.yaml\n"
	"when missing; the run id is RUN_DIR's last component. A file is JSONL with two kinds of line, which\n"
	"may be mixed:\n"
	"   a bare schema-1 verdict, as 'eval --samples -o FILE' writes them: keyed (agent, problem,\n"
	"      sample, 0), the agent from --agent, the sample number from the candidate's file name\n"
	"      (candidate.path must end in level_L_problem_ID_sample_S_kernel.py), the problem from the\n"
	"      verdict, no stage;\n"
	"   a row of 'export --format jsonl': {\"agent\", \"problem\", \"sample\", \"attempt\", \"stage\",\n"
	"      \"verdict\"}, keyed and staged as the row says (--agent, when given, replaces its agent); an\n"
	"      agent new to the store is recorded with kind imported, one already there keeps its kind.\n"
	"A key already stored is counted as already there and left as it was, so importing a file twice\n"
	"changes nothing. A harness_error line (the harness failed, nothing was judged) is counted and left\n"
	"out; a cannot_judge line (code the judging machine could not run, CUDA without a GPU) is left out\n"
	"and listed apart, problem and file, to be judged where it can run.\n\n"
	"The run's settings that change numbers (eval.trials, perf_trials, seed, tolerance, device, GPU,\n"
	"torch) are taken from the first verdict; a verdict made with other settings, or for a problem whose\n"
	"file hash differs from the run's, is refused with FILE:LINE. checks.policy is recorded from the\n"
	"configuration (-c, --set), which should be the one the verdicts were judged with. Problem names are\n"
	"taken from the suite when its file has the same sha256. Lines before a refused one stay stored (one\n"
	"transaction per verdict); fix the line and import again.\n\n"
	"Options:\n"
	"   --agent NAME             the agent the verdicts belong to (default: samples, of kind samples,\n"
	"                            for bare verdicts; the row's agent for export rows)\n"
	"   --model NAME             the model that wrote the candidates, recorded with the agent\n"
	"   -c, --config FILE        experiment YAML (its checks.policy is recorded; saved as config.yaml)\n"
	"   --set KEY=VALUE          override one config key\n"
	"   --kernelbench-root PATH  the suite the problem names are read from\n\n"
	"Exit codes: 0 imported, 2 usage error or a refused line, 3 a read or write failed.\n";

struct import_args {
	struct config_opts cfg;
	const char *dir, *agent, *model;
	char **files;
	int nfiles, help, agent_given;
};

enum { OPT_SET = 1000, OPT_KB_ROOT, OPT_AGENT, OPT_MODEL };

static int parse_args(int argc, char **argv, struct import_args *a, struct sb_error *err)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' }, { "set", required_argument, NULL, OPT_SET },
		{ "kernelbench-root", required_argument, NULL, OPT_KB_ROOT }, { "agent", required_argument, NULL, OPT_AGENT },
		{ "model", required_argument, NULL, OPT_MODEL }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof(*a));
	a->agent = "samples";
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': a->cfg.config_path = optarg; break;
		case OPT_SET: strvec_push(&a->cfg.sets, optarg); break;
		case OPT_KB_ROOT: a->cfg.kernelbench_root = optarg; break;
		case OPT_AGENT: a->agent = optarg; a->agent_given = 1; break;
		case OPT_MODEL: a->model = optarg; break;
		case 'h': a->help = 1; break;
		default:
			return sb_error_set(err, SB_EINPUT, "import: option '%s' %s; see 'stitchbench help import'",
					    argv[optind - 1], c == ':' ? "needs a value" : "is not known");
		}
	}
	if (a->help)
		return 0;
	if (argc - optind < 2)
		return sb_error_set(err, SB_EINPUT, "import: give the run directory and at least one JSONL file: "
				    "import RUN_DIR FILE.jsonl...");
	a->dir = argv[optind];
	a->files = argv + optind + 1;
	a->nfiles = argc - optind - 1;
	return 0;
}

struct importer {
	struct import_args *a;
	const struct config *cfg;
	const struct suite *suite;
	struct store *s;
	size_t added, present, harness_errors;
	struct strvec cannot_judge;   /* "PROBLEM PATH" of each cannot_judge line */
	struct strvec agents;         /* the agents stored or checked by this import */
};

static int agent_known(const struct importer *im, const char *name)
{
	for (size_t i = 0; i < im->agents.nr; i++)
		if (!strcmp(im->agents.v[i], name))
			return 1;
	return 0;
}

/* The first verdict fixes the run's settings: open (or create) the run directory then. Agents are added
 * as their first line comes. */
static int open_run(struct importer *im, json_t *v, struct sb_error *err)
{
	char *copy = xstrdup(im->a->dir);
	struct store_run run;
	int rc = run_id_check(basename(copy), err);
	if (!rc && !(rc = store_run_from_verdict(&run, basename(copy), v, im->cfg, err))) {
		rc = rundir_open(&im->s, im->a->dir, im->cfg, &run, err);
		store_run_release(&run);
	}
	free(copy);
	return rc;
}

/* The agent of an export row, stored once: with its stored kind and model when the store has it, else as
 * kind imported (the row does not say what made it). */
static int use_agent(struct importer *im, const char *name, struct sb_error *err)
{
	struct store_agent *stored = NULL;
	size_t n = 0;
	if (agent_known(im, name))
		return 0;
	int rc = store_load_agents(im->s, &stored, &n, err), found = 0;
	for (size_t i = 0; !rc && i < n && !found; i++)
		found = !strcmp(stored[i].name, name);
	free(stored);
	if (!rc && !found)
		rc = store_add_agent(im->s, name, "imported", im->a->model, err);
	if (!rc)
		strvec_push(&im->agents, name);
	return rc;
}

/* Stores one verdict under its key, adding its problem (named from the suite when the hashes agree). */
static int store_one(struct importer *im, const struct store_put *put, json_t *v, const char *ref, const char *sha,
		     struct sb_error *err)
{
	int level, id, rc = problem_ref_parse(ref, &level, &id, err);
	if (rc)
		return rc;
	const struct problem *p = im->suite ? suite_find(im->suite, level, id) : NULL;
	if ((rc = store_add_problem(im->s, ref, p && !strcmp(p->sha256, sha) ? p->name : NULL, sha, err)))
		return rc;
	rc = store_put_verdict(im->s, put, v, err);
	im->added += rc == 0;
	im->present += rc == SB_EEXIST;
	return rc == SB_EEXIST ? 0 : rc;
}

/* A row of `export --format jsonl`: the key and stage from the row, the verdict inside it. */
static int import_row(struct importer *im, json_t *row, struct sb_error *err)
{
	json_t *v = json_object_get(row, "verdict"), *stage = json_object_get(row, "stage");
	const char *agent = json_string_value(json_object_get(row, "agent"));
	const char *problem = json_string_value(json_object_get(row, "problem"));
	json_t *sample = json_object_get(row, "sample"), *attempt = json_object_get(row, "attempt");
	const char *ref = json_string_value(json_object_get(json_object_get(v, "problem"), "ref"));
	const char *sha = json_string_value(json_object_get(json_object_get(v, "problem"), "sha256"));
	int rc;
	if (!agent || !*agent || !problem || !json_is_integer(sample) || json_integer_value(sample) < 0 ||
	    json_integer_value(sample) > INT32_MAX || !json_is_integer(attempt) || json_integer_value(attempt) < 0 ||
	    json_integer_value(attempt) > INT32_MAX || (stage && !json_is_null(stage) && !json_is_string(stage)))
		return sb_error_set(err, SB_EINPUT, "an export row needs agent and problem (strings), sample and attempt "
				    "(integers from 0) and stage (a string or null) beside its verdict (docs/store.md, "
				    "\"Exports\")");
	if (!ref || !sha)
		return sb_error_set(err, SB_EINPUT, "the row's verdict lacks problem.ref and problem.sha256 (docs/verdict.md)");
	if (strcmp(ref, problem))
		return sb_error_set(err, SB_EINPUT, "the row says problem %s but its verdict is for %s", problem, ref);
	if (im->a->agent_given)
		agent = im->a->agent;
	if (!im->s && (rc = open_run(im, v, err)))
		return rc;
	if ((rc = use_agent(im, agent, err)))
		return rc;
	struct store_put put = { .agent = agent, .sample = (int)json_integer_value(sample),
				 .attempt = (int)json_integer_value(attempt), .stage = json_string_value(stage) };
	return store_one(im, &put, v, ref, sha, err);
}

static int import_one(struct importer *im, json_t *v, struct sb_error *err)
{
	const char *path = json_string_value(json_object_get(json_object_get(v, "candidate"), "path"));
	const char *ref = json_string_value(json_object_get(json_object_get(v, "problem"), "ref"));
	const char *sha = json_string_value(json_object_get(json_object_get(v, "problem"), "sha256"));
	const char *base = path ? strrchr(path, '/') : NULL;
	int level, id, sample, plevel, pid, rc;
	base = base ? base + 1 : path;
	if (!base || !suite_sample_name_parse(base, &level, &id, &sample))
		return sb_error_set(err, SB_EINPUT, "candidate.path %s is not named level_L_problem_ID_sample_S_kernel.py, "
				    "so its sample number is unknown", path ? path : "(missing)");
	if (!ref || !sha || problem_ref_parse(ref, &plevel, &pid, err))
		return sb_error_set(err, SB_EINPUT, "problem.ref and problem.sha256 are required (docs/verdict.md)");
	if (plevel != level || pid != id)
		return sb_error_set(err, SB_EINPUT, "the file name %s says L%d/%d but the verdict is for %s", base, level, id, ref);
	if (!im->s && (rc = open_run(im, v, err)))
		return rc;
	if (!agent_known(im, im->a->agent)) {
		if ((rc = store_add_agent(im->s, im->a->agent, "samples", im->a->model, err)))
			return rc;
		strvec_push(&im->agents, im->a->agent);
	}
	struct store_put put = { .agent = im->a->agent, .sample = sample, .attempt = 0 };
	return store_one(im, &put, v, ref, sha, err);
}

/* A line eval --samples wrote for a file it could not judge (harness_error, cannot_judge): no verdict on
 * the candidate to store. Returns the status, or NULL for a verdict. */
static const char *unjudged_status(json_t *line)
{
	json_t *v = json_is_object(json_object_get(line, "verdict")) ? json_object_get(line, "verdict") : line;
	const char *st = json_string_value(json_object_get(v, "status"));
	return st && (!strcmp(st, "harness_error") || !strcmp(st, "cannot_judge")) ? st : NULL;
}

static void note_cannot_judge(struct importer *im, json_t *line)
{
	json_t *v = json_is_object(json_object_get(line, "verdict")) ? json_object_get(line, "verdict") : line;
	const char *p = json_string_value(json_object_get(json_object_get(v, "problem"), "ref"));
	const char *c = json_string_value(json_object_get(json_object_get(v, "candidate"), "path"));
	strvec_pushf(&im->cannot_judge, "%.32s %.400s", p ? p : "?", c ? c : "?");
}

static int import_file(struct importer *im, const char *file, struct sb_error *err)
{
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	if (!f)
		return sb_error_set(err, SB_EINPUT, "%s: %s", file, strerror(errno));
	for (long lineno = 1; !rc && getline(&line, &cap, f) > 0; lineno++) {
		json_error_t jerr;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		json_t *v = json_loads(line, 0, &jerr);
		if (!v)
			rc = sb_error_set(err, SB_EINPUT, "%s:%ld:%d: not JSON: %s", file, lineno, jerr.column, jerr.text);
		else if (!json_is_object(v))
			rc = sb_error_set(err, SB_EINPUT, "%s:%ld: not a JSON object: a line is a verdict or a row of "
					  "'export --format jsonl'", file, lineno);
		else if (unjudged_status(v) && !strcmp(unjudged_status(v), "harness_error"))
			im->harness_errors++;
		else if (unjudged_status(v))
			note_cannot_judge(im, v);
		else if ((rc = json_is_object(json_object_get(v, "verdict")) ? import_row(im, v, err)
									      : import_one(im, v, err)))
			sb_error_prefix(err, "%s:%ld", file, lineno);
		json_decref(v);
	}
	if (!rc && ferror(f))
		rc = sb_error_set(err, SB_EIO, "reading %s: %s", file, strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

int cmd_import(int argc, char **argv, struct sb_ctx *ctx)
{
	struct import_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite suite = { 0 };
	int rc = parse_args(argc, argv, &a, &err);
	config_init(&cfg);
	if (rc == 0 && a.help) {
		fputs(cmd_import_help, stdout);
		goto out;
	}
	if (rc || (rc = config_resolve(&a.cfg, &cfg, &err)))
		goto out;
	struct importer im = { &a, &cfg, NULL, NULL, 0, 0, 0, STRVEC_INIT, STRVEC_INIT };
	struct sb_error serr = { 0 };
	if (suite_load(&suite, ctx->home, cfg.problems.root, &serr) == 0)
		im.suite = &suite;
	else
		sb_warn(ctx, "problem names are left empty: %s", serr.msg);
	for (int i = 0; i < a.nfiles && !rc; i++)
		rc = import_file(&im, a.files[i], &err);
	if (!im.s && !rc)
		printf("no verdicts in the given files; %s is unchanged\n", a.dir);
	else if (im.s)
		printf("imported %zu verdict%s into %s/%s (%zu already there)\n", im.added, im.added == 1 ? "" : "s", a.dir,
		       STORE_FILE, im.present);
	if (rc == 0 && im.harness_errors)
		printf("left out %zu harness_error line%s: nothing was judged there (run eval --samples again to judge "
		       "%s)\n", im.harness_errors, im.harness_errors == 1 ? "" : "s", im.harness_errors == 1 ? "it" : "them");
	if (rc == 0 && im.cannot_judge.nr) {
		printf("left out %zu cannot_judge line%s: code the judging machine could not run; judge %s where it "
		       "can run (eval --samples on a GPU) and import that:\n", im.cannot_judge.nr,
		       im.cannot_judge.nr == 1 ? "" : "s", im.cannot_judge.nr == 1 ? "it" : "them");
		for (size_t i = 0; i < im.cannot_judge.nr; i++)
			printf("  %s\n", im.cannot_judge.v[i]);
	}
	store_close(im.s);
	strvec_clear(&im.agents);
	strvec_clear(&im.cannot_judge);
out:
	suite_release(&suite);
	config_release(&cfg);
	config_opts_release(&a.cfg);
	return rc ? cli_fail(ctx, &err) : 0;
}
