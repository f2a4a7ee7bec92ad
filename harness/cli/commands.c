/* commands.c - the list of subcommands, the top-level usage text and help lookup.
 * A command is listed here only once it works end to end. */
#include <stdio.h>
#include <string.h>

#include "../core/log.h"
#include "cli.h"

const struct cmd commands[] = {
	{ "baseline", cmd_baseline, "time the references and write KernelBench's baseline timing JSON", cmd_baseline_help },
	{ "doctor", cmd_doctor, "check this machine: GPUs, CUDA, Python and torch, gnuplot, SQLite, sandbox", cmd_doctor_help },
	{ "eval", cmd_eval, "judge a candidate (or a generations folder): correctness, hacks, paired timing", cmd_eval_help },
	{ "export", cmd_export, "write a run's verdicts as JSONL or CSV", cmd_export_help },
	{ "import", cmd_import, "store verdict JSONL (from eval --samples) in a run's results store", cmd_import_help },
	{ "merge", cmd_merge, "merge run stores (shards) into a new run, refusing incomparable settings", cmd_merge_help },
	{ "metrics", cmd_metrics, "the results table: correct %, fast_p, geomean speedups per agent and level", cmd_metrics_help },
	{ "profile", cmd_profile, "the kernels a candidate or a reference runs (CUPTI): a table by total time", cmd_profile_help },
	{ "problems", cmd_problems, "list the problems of the bundled suite or a KernelBench checkout", cmd_problems_help },
	{ "report", cmd_report, "write a run's report: Markdown and one self-contained HTML page with gnuplot plots", cmd_report_help },
	{ "compare", cmd_compare, "per-problem regressions between two runs, noise-aware; exit 1 when something regressed", cmd_compare_help },
	{ "run", cmd_run, "run agents over problems (stitchcuda and baselines), resumable; everything persisted", cmd_run_help },
	{ "audit", cmd_audit, "find flawed problems: constant or tiny outputs, identity ops, randomness, integer inputs", cmd_audit_help },
	{ "serve", cmd_serve, "judge candidates sent over HTTP: verdicts and rewards for an RL trainer", cmd_serve_help },
	{ "help", cmd_help, "show the help of a command", cmd_help_help },
	{ NULL, NULL, NULL, NULL },
};

const struct cmd *cmd_lookup(const char *name)
{
	for (const struct cmd *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void print_main_usage(FILE *out)
{
	fputs("usage: stitchbench [-v | -q] [--version] [--help] <command> [<options>]\n\n"
	      "A benchmark harness for LLM agents that write CUDA: runs agents over KernelBench\n"
	      "problems, judges every candidate (correctness, reward hacks, speed) and reports.\n\n"
	      "Commands:\n", out);
	for (const struct cmd *c = commands; c->name; c++)
		fprintf(out, "   %-10s %s\n", c->name, c->summary);
	fputs("\nGlobal options:\n"
	      "   -v, --verbose   more detail on stderr\n"
	      "   -q, --quiet     only errors on stderr\n"
	      "   --version       print the version and the versions of the linked libraries\n"
	      "   -h, --help      this text\n\n"
	      "Run 'stitchbench help <command>' for the options of a command.\n"
	      "Exit codes: 0 success, 1 evaluated but failed, 2 usage or input error, 3 environment error.\n",
	      out);
}

void print_cmd_help(const struct cmd *c, FILE *out)
{
	fputs(c->help, out);
}

const char cmd_help_help[] =
	"usage: stitchbench help [<command>]\n\n"
	"Shows the help of <command>, or the list of commands.\n";

int cmd_help(int argc, char **argv, struct sb_ctx *ctx)
{
	if (argc < 2) {
		print_main_usage(stdout);
		return 0;
	}
	const struct cmd *c = cmd_lookup(argv[1]);
	if (!c) {
		sb_error(ctx, "'%s' is not a stitchbench command; 'stitchbench --help' lists them", argv[1]);
		return 2;
	}
	print_cmd_help(c, stdout);
	return 0;
}

int cli_fail(const struct sb_ctx *ctx, const struct sb_error *err)
{
	sb_error(ctx, "%s", err->msg);
	return sb_exit_code_for(err->code);
}
