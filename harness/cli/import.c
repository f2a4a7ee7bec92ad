/* import.c - `stitchbench import`: stores verdict JSONL (what `eval --samples -o` writes) in a run's
 * results store, so generations judged elsewhere or before a run existed can be merged and scored. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
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
	"Stores verdicts (JSONL, one schema-1 verdict per line, as 'eval --samples -o FILE' writes them) in\n"
	"RUN_DIR/results.db, creating the run directory, its store and its config.yaml when missing; the\n"
	"run id is RUN_DIR's last component. Each verdict is keyed (agent, problem, sample, 0): the sample\n"
	"number comes from the candidate's file name (candidate.path must end in\n"
	"level_L_problem_ID_sample_S_kernel.py), the problem from the verdict. A key already stored is\n"
	"counted as already there and left as it was, so importing a file twice changes nothing.\n\n"
	"The run's settings that change numbers (eval.trials, perf_trials, seed, tolerance, device, GPU,\n"
	"torch) are taken from the first verdict; a verdict made with other settings, or for a problem whose\n"
	"file hash differs from the run's, is refused with FILE:LINE. checks.policy is recorded from the\n"
	"configuration (-c, --set), which should be the one the verdicts were judged with. Problem names are\n"
	"taken from the suite when its file has the same sha256. Lines before a refused one stay stored (one\n"
	"transaction per verdict); fix the line and import again.\n\n"
	"Options:\n"
	"   --agent NAME             the agent the verdicts belong to (default samples, kind samples)\n"
	"   --model NAME             the model that wrote the candidates, recorded with the agent\n"
	"   -c, --config FILE        experiment YAML (its checks.policy is recorded; saved as config.yaml)\n"
	"   --set KEY=VALUE          override one config key\n"
	"   --kernelbench-root PATH  the suite the problem names are read from\n\n"
	"Exit codes: 0 imported, 2 usage error or a refused line, 3 a read or write failed.\n";

struct import_args {
	struct config_opts cfg;
	const char *dir, *agent, *model;
	char **files;
	int nfiles, help;
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
		case OPT_AGENT: a->agent = optarg; break;
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
	size_t added, present;
};

/* The first verdict fixes the run's settings: open (or create) the run directory then. */
static int open_run(struct importer *im, json_t *v, struct sb_error *err)
{
	char *copy = xstrdup(im->a->dir);
	struct store_run run;
	int rc = run_id_check(basename(copy), err);
	if (!rc && !(rc = store_run_from_verdict(&run, basename(copy), v, im->cfg, err))) {
		if (!(rc = rundir_open(&im->s, im->a->dir, im->cfg, &run, err)))
			rc = store_add_agent(im->s, im->a->agent, "samples", im->a->model, err);
		store_run_release(&run);
	}
	free(copy);
	return rc;
}

static int import_one(struct importer *im, json_t *v, struct sb_error *err)
{
	const char *path = json_string_value(json_object_get(json_object_get(v, "candidate"), "path"));
	const char *ref = json_string_value(json_object_get(json_object_get(v, "problem"), "ref"));
	const char *sha = json_string_value(json_object_get(json_object_get(v, "problem"), "sha256"));
	const char *base = path ? strrchr(path, '/') : NULL;
	int level, id, sample, used = 0, plevel, pid, rc;
	base = base ? base + 1 : path;
	if (!base || sscanf(base, "level_%d_problem_%d_sample_%d_kernel.py%n", &level, &id, &sample, &used) != 3 ||
	    (size_t)used != strlen(base))
		return sb_error_set(err, SB_EINPUT, "candidate.path %s is not named level_L_problem_ID_sample_S_kernel.py, "
				    "so its sample number is unknown", path ? path : "(missing)");
	if (!ref || !sha || problem_ref_parse(ref, &plevel, &pid, err))
		return sb_error_set(err, SB_EINPUT, "problem.ref and problem.sha256 are required (docs/verdict.md)");
	if (plevel != level || pid != id)
		return sb_error_set(err, SB_EINPUT, "the file name %s says L%d/%d but the verdict is for %s", base, level, id, ref);
	if (!im->s && (rc = open_run(im, v, err)))
		return rc;
	const struct problem *p = im->suite ? suite_find(im->suite, level, id) : NULL;
	if ((rc = store_add_problem(im->s, ref, p && !strcmp(p->sha256, sha) ? p->name : NULL, sha, err)))
		return rc;
	struct store_put put = { .agent = im->a->agent, .sample = sample, .attempt = 0 };
	rc = store_put_verdict(im->s, &put, v, err);
	im->added += rc == 0;
	im->present += rc == SB_EEXIST;
	return rc == SB_EEXIST ? 0 : rc;
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
		else if ((rc = import_one(im, v, err)))
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
	struct importer im = { &a, &cfg, NULL, NULL, 0, 0 };
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
	store_close(im.s);
out:
	suite_release(&suite);
	config_release(&cfg);
	config_opts_release(&a.cfg);
	return rc ? cli_fail(ctx, &err) : 0;
}
