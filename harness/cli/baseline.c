/* baseline.c - `stitchbench baseline`: times every selected reference (eager and torch.compile) and
 * writes KernelBench's baseline JSON layout, so its tools and ours can read the same tables. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fs.h"
#include "../core/log.h"
#include "../core/suite.h"
#include "../eval/ref/ref.h"
#include "../eval/sweep.h"
#include "cli.h"

const char cmd_baseline_help[] =
	"usage: stitchbench baseline [--level N[,N]] [--problems SEL[,SEL]] [--device cpu|cuda:N]\n"
	"                            [--perf-trials N] [--no-compile] [-o DIR] [--kernelbench-root PATH]\n"
	"                            [-c FILE] [--set KEY=VALUE]\n\n"
	"Times each selected problem's reference on its own (after warm-up, eval.perf_trials calls) and\n"
	"writes KernelBench's baseline timing files:\n"
	"   DIR/baseline_time_torch.json                          eager\n"
	"   DIR/baseline_time_torch_compile_inductor_default.json torch.compile (GPU only)\n"
	"laid out as {\"level1\": {\"19_ReLU.py\": {\"mean\", \"std\", \"min\", \"max\" (ms), \"num_trials\",\n"
	"\"hardware\", \"device\"}}}. Existing files are updated entry by entry, other entries are kept.\n"
	"Timings are cached ($STITCHBENCH_CACHE/reftime), keyed by problem hash, device, torch version and\n"
	"settings. These numbers are for baseline tables: candidate speedups always come from `eval`'s\n"
	"paired, interleaved timing.\n\n"
	"Options:\n"
	"   --level N[,N]           levels (default: the config's problems.levels)\n"
	"   --problems SEL[,SEL]    problems: L1/19, L1/1-10, L3/*\n"
	"   --device cpu|cuda|cuda:N   (eval.device; default auto)\n"
	"   --perf-trials N         timed calls per problem (eval.perf_trials, default 100)\n"
	"   --no-compile            skip torch.compile (eval.compile=false)\n"
	"   -o, --output DIR        where the files go (default <output.dir>/timing/<hardware>)\n"
	"   --kernelbench-root PATH, -c FILE, --set KEY=VALUE   as for the other commands\n"
	"Exit codes: 0 written, 2 usage or input error, 3 environment error or a reference failed.\n";

enum { O_LEVEL = 1000, O_PROBLEMS, O_DEVICE, O_PERF, O_NOCOMP };

struct baseline_args {
	struct problems_args sel;   /* levels, selectors, config options */
	const char *output;
};

static int parse(int argc, char **argv, struct baseline_args *a, struct sb_error *err)
{
	static const struct option lo[] = {
		CLI_CONFIG_LONGOPTS,
		{ "level", required_argument, NULL, O_LEVEL }, { "problems", required_argument, NULL, O_PROBLEMS },
		{ "device", required_argument, NULL, O_DEVICE }, { "perf-trials", required_argument, NULL, O_PERF },
		{ "no-compile", no_argument, NULL, O_NOCOMP }, { "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:o:h", lo, NULL)) != -1) {
		if (cli_config_option(c, &a->sel.cfg))
			continue;
		switch (c) {
		case O_LEVEL: strvec_pushf(&a->sel.cfg.sets, "problems.levels=%s", optarg); break;
		case O_PROBLEMS:
			if (cli_list_arg("baseline", "--problems", optarg, CLI_SELECTOR_EXAMPLE, NULL, err))
				return SB_EINPUT;
			strvec_pushf(&a->sel.cfg.sets, "problems.select=%s", optarg);
			break;
		case O_DEVICE: strvec_pushf(&a->sel.cfg.sets, "eval.device=%s", optarg); break;
		case O_PERF: strvec_pushf(&a->sel.cfg.sets, "eval.perf_trials=%s", optarg); break;
		case O_NOCOMP: strvec_push(&a->sel.cfg.sets, "eval.compile=false"); break;
		case 'o': a->output = optarg; break;
		case 'h': a->sel.help = 1; break;
		default:
			return sb_error_set(err, SB_EINPUT, "baseline: option '%s' %s; see 'stitchbench help baseline'",
					    argv[optind - 1], c == ':' ? "needs a value" : "is not known");
		}
	}
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "baseline: unexpected argument '%s'", argv[optind]);
	return 0;
}

/* KernelBench's entry: milliseconds, population of the timed calls. */
static json_t *entry(const struct sample_stats *s, const char *hardware, const char *device)
{
	double sd = s->stdev / 1000.0;
	return json_pack("{s:f, s:f, s:f, s:f, s:I, s:s, s:s}", "mean", s->mean / 1000.0, "std", isfinite(sd) ? sd : 0.0,
			 "min", s->min / 1000.0, "max", s->max / 1000.0, "num_trials", (json_int_t)s->n, "hardware", hardware,
			 "device", device);
}

static int write_table(const char *path, json_t *updates, struct sb_error *err)
{
	json_t *t = json_load_file(path, 0, NULL);
	if (!json_is_object(t)) {
		json_decref(t);
		t = json_object();
	}
	const char *level;
	json_t *entries;
	json_object_foreach(updates, level, entries) {
		json_t *dst = json_object_get(t, level);
		if (!json_is_object(dst)) {
			dst = json_object();
			json_object_set_new(t, level, dst);
		}
		json_object_update(dst, entries);
	}
	char *tmp = xstrfmt("%s.tmp", path);
	int rc = json_dump_file(t, tmp, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6)) || rename(tmp, path);
	free(tmp);
	json_decref(t);
	return rc ? sb_error_set(err, SB_EIO, "cannot write %s", path) : 0;
}

static void add(json_t *table, const struct problem *p, json_t *e)
{
	char level[16];
	snprintf(level, sizeof(level), "level%d", p->level);
	json_t *l = json_object_get(table, level);
	if (!l) {
		l = json_object();
		json_object_set_new(table, level, l);
	}
	const char *base = strrchr(p->path, '/');
	json_object_set_new(l, base ? base + 1 : p->path, e);
}

int cmd_baseline(int argc, char **argv, struct sb_ctx *ctx)
{
	struct baseline_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite s = { 0 };
	struct eval_env env = { 0 };
	const struct problem **sel = NULL;
	size_t n = 0;
	json_t *eager = json_object(), *comp = json_object();
	char *dir = NULL;
	int rc = parse(argc, argv, &a, &err), have_env = 0;
	struct eval_claim claim = EVAL_CLAIM_INIT;

	config_init(&cfg);
	if (rc == 0 && a.sel.help) {
		fputs(cmd_baseline_help, stdout);
		goto out;
	}
	if (rc || (rc = config_resolve(&a.sel.cfg, &cfg, &err)) || (rc = suite_load(&s, ctx->home, cfg.problems.root, &err)) ||
	    (rc = suite_select(&s, cfg.problems.levels, cfg.problems.select, cfg.problems.nselect, &sel, &n, &err)) ||
	    (rc = eval_env_init(&env, &cfg, ctx->home, &err)))
		goto out;
	have_env = 1;
	cli_eval_claim(ctx, &env, 1, &claim);
	const char *hardware = env.gpu[0] ? env.gpu : "cpu";
	if (a.output) {
		dir = xstrdup(a.output);
	} else {
		dir = xstrfmt("%s/timing/%s", cfg.output.dir, hardware);
		for (char *c = dir + strlen(cfg.output.dir); *c; c++)
			if (*c == ' ')
				*c = '_';
	}
	if (fs_mkdirs(dir, 0755)) {
		rc = sb_error_set(&err, SB_EIO, "cannot create %s", dir);
		goto out;
	}
	printf("%-8s %-36s %12s %12s %8s\n", "problem", "name", "eager ms", "compiled ms", "cached");
	for (size_t i = 0; i < n; i++) {
		struct reftime t;
		if ((rc = reftime_measure(&env, &cfg, sel[i], &t, &err))) {
			sb_error_prefix(&err, "L%d/%d", sel[i]->level, sel[i]->id);
			goto out;
		}
		add(eager, sel[i], entry(&t.eager, hardware, env.device));
		if (t.compiled_available)
			add(comp, sel[i], entry(&t.compiled, hardware, env.device));
		char ref[16], cm[32] = "n/a";
		snprintf(ref, sizeof(ref), "L%d/%d", sel[i]->level, sel[i]->id);
		if (t.compiled_available)
			snprintf(cm, sizeof(cm), "%.4f", t.compiled.mean / 1000.0);
		printf("%-8s %-36s %12.4f %12s %8s\n", ref, sel[i]->name, t.eager.mean / 1000.0, cm, t.cached ? "yes" : "no");
		fflush(stdout);
	}
	char *p1 = xstrfmt("%s/baseline_time_torch.json", dir);
	rc = write_table(p1, eager, &err);
	printf("wrote %s\n", p1);
	free(p1);
	if (!rc && json_object_size(comp)) {
		char *p2 = xstrfmt("%s/baseline_time_torch_compile_inductor_default.json", dir);
		rc = write_table(p2, comp, &err);
		printf("wrote %s\n", p2);
		free(p2);
	}
out:
	json_decref(eager);
	json_decref(comp);
	free(dir);
	free(sel);
	eval_claim_release(&claim);
	if (have_env)
		eval_env_release(&env);
	suite_release(&s);
	config_release(&cfg);
	problems_args_release(&a.sel);
	return rc ? cli_fail(ctx, &err) : 0;
}
