/* audit.c - `stitchbench audit`: flaws of the problems themselves (constant output, output below the
 * tolerance, output equal to an input, randomness in forward, integer inputs; docs/audit.md), cached for
 * `eval`'s verdicts and optionally stored in a run for its report. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../audit/audit.h"
#include "../core/fs.h"
#include "../core/log.h"
#include "../core/suite.h"
#include "../store/store.h"
#include "../eval/sweep.h"
#include "cli.h"

const char cmd_audit_help[] =
	"usage: stitchbench audit [--level N[,N]] [--problems SEL[,SEL]] [--device cpu|cuda:N] [--json]\n"
	"                         [--run RUN_ID] [--rerun] [--kernelbench-root PATH] [-c FILE] [--set KEY=VALUE]\n\n"
	"Runs each selected problem's reference (trusted worker, no candidate involved) on 3 seeds, on the\n"
	"first seed twice, on the same inputs twice, and on signed inputs (each floating-point input element\n"
	"times a seeded random sign), and reports flaws of the problem that let a candidate pass without\n"
	"doing the work (docs/audit.md):\n"
	"   H15  the output is within tolerance of one constant on every seed\n"
	"   H16  an all-zero output is within tolerance (the output is below the tolerance)\n"
	"   H17  an output equals an input on this problem's input distribution (identity on [0,1), say)\n"
	"   nondeterministic  forward draws random numbers (same inputs, different outputs), or is not\n"
	"                     reproducible even under a seed\n"
	"   integer_inputs    an input is an integer (index) tensor\n"
	"Results are cached by the problem file's sha256 in $STITCHBENCH_CACHE/audit, where `eval` finds\n"
	"them: its verdicts then carry the problem's audit (docs/verdict.md, field audit). A problem already\n"
	"audited is read from the cache unless --rerun.\n\n"
	"Options:\n"
	"   --level N[,N]           levels (default: the config's problems.levels)\n"
	"   --problems SEL[,SEL]    problems: L1/19, L1/1-10, L3/*\n"
	"   --device cpu|cuda|cuda:N   where the references run (eval.device; default auto)\n"
	"   --json                  one JSON object: problems[] with their findings\n"
	"   --run RUN_ID            also record the audit in <output.dir>/RUN_ID/results.db (table audit,\n"
	"                           docs/store.md), which `stitchbench report` shows\n"
	"   --rerun                 run every reference again even when the cache has its audit\n"
	"   --kernelbench-root PATH, -c FILE, --set KEY=VALUE, --python PATH   as for the other commands\n"
	"Exit codes: 0 every problem was audited (whatever it found), 1 a reference could not run,\n"
	"2 usage or input error, 3 environment error (no Python with torch, no GPU when one was asked).\n";

enum { O_LEVEL = 1000, O_PROBLEMS, O_DEVICE, O_JSON, O_RUN, O_RERUN };

struct audit_args {
	struct config_opts cfg;
	const char *run;
	int json, rerun, help;
};

static int parse(int argc, char **argv, struct audit_args *a, struct sb_error *err)
{
	static const struct option lo[] = {
		CLI_CONFIG_LONGOPTS,
		{ "level", required_argument, NULL, O_LEVEL }, { "problems", required_argument, NULL, O_PROBLEMS },
		{ "device", required_argument, NULL, O_DEVICE }, { "json", no_argument, NULL, O_JSON },
		{ "run", required_argument, NULL, O_RUN }, { "rerun", no_argument, NULL, O_RERUN },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:h", lo, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		switch (c) {
		case O_LEVEL: strvec_pushf(&a->cfg.sets, "problems.levels=%s", optarg); break;
		case O_PROBLEMS:
			if (cli_list_arg("audit", "--problems", optarg, CLI_SELECTOR_EXAMPLE, NULL, err))
				return SB_EINPUT;
			strvec_pushf(&a->cfg.sets, "problems.select=%s", optarg);
			break;
		case O_DEVICE: strvec_pushf(&a->cfg.sets, "eval.device=%s", optarg); break;
		case O_JSON: a->json = 1; break;
		case O_RUN: a->run = optarg; break;
		case O_RERUN: a->rerun = 1; break;
		case 'h': a->help = 1; break;
		default:
			return sb_error_set(err, SB_EINPUT, "audit: option '%s' %s; see 'stitchbench help audit'",
					    argv[optind - 1], c == ':' ? "needs a value" : "is not known");
		}
	}
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "audit: unexpected argument '%s'", argv[optind]);
	return 0;
}

/* <output.dir>/RUN/results.db, created when missing (an audit may come before any verdict). */
static int open_run(const struct config *cfg, const char *run, struct store **st, struct sb_error *err)
{
	int rc = run_id_check(run, err);
	if (rc)
		return rc;
	char *dir = xstrfmt("%s/%s", cfg->output.dir, run);
	char *path = xstrfmt("%s/%s", dir, STORE_FILE);
	if ((rc = fs_mkdirs(dir, 0755)) != 0)
		rc = sb_error_set(err, SB_EIO, "cannot create %s (output.dir)", dir);
	else
		rc = store_open(st, path, STORE_WRITE, err);
	free(dir);
	free(path);
	return rc;
}

static void print_row(const struct audit_report *r)
{
	if (r->failed) {
		printf("%-8s %-32s FAILED: %s\n", r->problem, r->name, r->failed);
		return;
	}
	if (!r->findings.n)
		printf("%-8s %-32s -\n", r->problem, r->name);
	for (size_t i = 0; i < r->findings.n; i++)
		printf("%-8s %-32s %s: %s\n", i ? "" : r->problem, i ? "" : r->name, r->findings.v[i].id, r->findings.v[i].message);
}

int cmd_audit(int argc, char **argv, struct sb_ctx *ctx)
{
	struct audit_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite s = { 0 };
	struct eval_env env = { 0 };
	struct store *run = NULL;
	const struct problem **sel = NULL;
	size_t n = 0, flagged = 0, failed = 0;
	json_t *all = json_array();
	int rc = parse(argc, argv, &a, &err), have_env = 0;
	struct eval_claim claim = EVAL_CLAIM_INIT;

	config_init(&cfg);
	if (rc == 0 && a.help) {
		fputs(cmd_audit_help, stdout);
		goto out;
	}
	if (rc || (rc = config_resolve(&a.cfg, &cfg, &err)) || (rc = suite_load(&s, ctx->home, cfg.problems.root, &err)) ||
	    (rc = suite_select(&s, cfg.problems.levels, cfg.problems.select, cfg.problems.nselect, &sel, &n, &err)) ||
	    (rc = eval_env_init(&env, &cfg, ctx->home, &err)))
		goto out;
	have_env = 1;
	cli_eval_claim(ctx, &env, 1, &claim);
	if (a.run && (rc = open_run(&cfg, a.run, &run, &err)))
		goto out;
	if (!a.json)
		printf("%-8s %-32s %s\n", "problem", "name", "findings");
	for (size_t i = 0; i < n; i++) {
		struct audit_report r;
		if ((rc = audit_problem(&env, &cfg, sel[i], !a.rerun, &r, &err))) {
			sb_error_prefix(&err, "L%d/%d", sel[i]->level, sel[i]->id);
			goto out;
		}
		sb_info(ctx, "audited %zu/%zu: %s%s", i + 1, n, r.problem, r.cached ? " (cached)" : "");
		flagged += r.findings.n > 0;
		failed += r.failed != NULL;
		json_t *j = audit_report_json(&r);
		if (run && !r.failed && (rc = store_put_audit(run, r.problem, r.name, r.sha256, json_object_get(j, "findings"),
							    &err))) {
			json_decref(j);
			audit_report_release(&r);
			goto out;
		}
		if (a.json)
			json_array_append_new(all, j);
		else
			json_decref(j);
		if (!a.json) {
			print_row(&r);
			fflush(stdout);
		}
		audit_report_release(&r);
	}
	if (a.json) {
		json_t *o = json_pack("{s:s, s:s, s:O}", "root", s.root, "device", env.device, "problems", all);
		char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(text);
		free(text);
		json_decref(o);
	} else {
		printf("%zu problem%s audited on %s: %zu with findings, %zu failed; cached in %s/audit%s%s\n", n,
		       n == 1 ? "" : "s", env.device, flagged, failed, env.cache_root, run ? "; stored in run " : "",
		       run ? a.run : "");
	}
out:
	json_decref(all);
	store_close(run);
	free(sel);
	eval_claim_release(&claim);
	if (have_env)
		eval_env_release(&env);
	suite_release(&s);
	config_release(&cfg);
	config_opts_release(&a.cfg);
	if (rc)
		return cli_fail(ctx, &err);
	return failed ? SB_EXIT_FAILED : SB_EXIT_OK;
}
