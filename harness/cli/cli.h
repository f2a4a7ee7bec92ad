/* cli.h - the command table and the helpers every subcommand shares (git's builtin.h idea):
 * one file per command in harness/cli/, each exporting cmd_NAME() and its help text. */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdatomic.h>

#include "../core/config.h"
#include "../core/context.h"
#include "../core/error.h"
#include "../core/strbuf.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct sb_ctx *ctx);
	const char *summary;  /* one line for `stitchbench --help` */
	const char *help;     /* the full text for `stitchbench help NAME` and `NAME --help` */
};

extern const struct cmd commands[];
const struct cmd *cmd_lookup(const char *name);
void print_main_usage(FILE *out);
void print_cmd_help(const struct cmd *c, FILE *out);

int cmd_doctor(int argc, char **argv, struct sb_ctx *ctx);
int cmd_problems(int argc, char **argv, struct sb_ctx *ctx);
int cmd_help(int argc, char **argv, struct sb_ctx *ctx);
int cmd_eval(int argc, char **argv, struct sb_ctx *ctx);
int cmd_baseline(int argc, char **argv, struct sb_ctx *ctx);
int cmd_export(int argc, char **argv, struct sb_ctx *ctx);
int cmd_import(int argc, char **argv, struct sb_ctx *ctx);
int cmd_merge(int argc, char **argv, struct sb_ctx *ctx);
int cmd_metrics(int argc, char **argv, struct sb_ctx *ctx);
int cmd_report(int argc, char **argv, struct sb_ctx *ctx);
int cmd_compare(int argc, char **argv, struct sb_ctx *ctx);
extern const char cmd_doctor_help[], cmd_problems_help[], cmd_help_help[], cmd_eval_help[],
	cmd_baseline_help[];
extern const char cmd_export_help[], cmd_import_help[], cmd_merge_help[], cmd_metrics_help[];
int cmd_profile(int argc, char **argv, struct sb_ctx *ctx);
extern const char cmd_profile_help[];
extern const char cmd_report_help[], cmd_compare_help[];
int cmd_run(int argc, char **argv, struct sb_ctx *ctx);
extern const char cmd_run_help[];
int cmd_audit(int argc, char **argv, struct sb_ctx *ctx);
extern const char cmd_audit_help[];
int cmd_serve(int argc, char **argv, struct sb_ctx *ctx);
extern const char cmd_serve_help[];

/* Options that every config-reading command takes; applied in this order: file, --set, flags. */
struct config_opts {
	const char *config_path;       /* -c / --config */
	struct strvec sets;            /* --set KEY=VALUE, in order */
	const char *kernelbench_root;  /* --kernelbench-root PATH = problems.root */
	const char *python;            /* --python PATH = python */
};
#define CONFIG_OPTS_INIT { NULL, STRVEC_INIT, NULL, NULL }
void config_opts_release(struct config_opts *o);

/* getopt_long entries for -c/--config, --set, --kernelbench-root and --python, shared by every
 * command that reads a config; cli_config_option() handles them (returns 1 when `c` was one). */
enum { CLI_OPT_SET = 900, CLI_OPT_KB_ROOT, CLI_OPT_PYTHON };
#define CLI_CONFIG_LONGOPTS                                              \
	{ "config", required_argument, NULL, 'c' },                      \
	{ "set", required_argument, NULL, CLI_OPT_SET },                 \
	{ "kernelbench-root", required_argument, NULL, CLI_OPT_KB_ROOT }, \
	{ "python", required_argument, NULL, CLI_OPT_PYTHON }
int cli_config_option(int c, struct config_opts *o);
/* A comma-separated option value (--problems L1/1-3,L2, --agents a,b) split into out (NULL: only
 * checked). A value without any item ("", ",") is an error naming the option, since leaving the option
 * out is how every item is chosen; example shows what to pass. */
#define CLI_SELECTOR_EXAMPLE "L1/19, L1/1-10,L3/* or L2"
int cli_list_arg(const char *cmd, const char *opt, const char *value, const char *example, struct strvec *out,
		 struct sb_error *err);
/* Fills an initialised (config_init) cfg: file, then --set, then flags, then validation.
 * Returns 0 or a negative code with err filled; cfg always needs config_release(). */
int config_resolve(const struct config_opts *o, struct config *cfg, struct sb_error *err);

/* Parsed arguments of the commands that have options, exposed for the unit tests. */
struct problems_args {
	struct config_opts cfg;
	int levels[4];        /* all zero: every level the config enables */
	struct strvec selectors;
	int json;
	int help;
};
int problems_parse_args(int argc, char **argv, struct problems_args *a, struct sb_error *err);
void problems_args_release(struct problems_args *a);

struct doctor_args {
	struct config_opts cfg;
	int offline;          /* --offline: do not contact LLM endpoints */
	int help;
};
int doctor_parse_args(int argc, char **argv, struct doctor_args *a, struct sb_error *err);

/* Global options before the command name. Returns the index of the command word (argc if none). */
struct global_args {
	int help, version, verbose, quiet;
};
int global_parse_args(int argc, char **argv, struct global_args *g, struct sb_error *err);

/* What an evaluating command (eval, baseline, audit, profile, serve) claims once its environments are
 * known: its work folders' owner lock, the sweep of ended processes' leftovers, the lock of each of its
 * n slots' devices (eval/sweep.h); says what it swept and warns when another process times on the same
 * GPU. A failure to lock is a warning: the command can evaluate without it. Release with
 * eval_claim_release(). */
struct eval_env;
struct eval_claim;
void cli_eval_claim(const struct sb_ctx *ctx, const struct eval_env *e, int n, struct eval_claim *c);

/* The device slots of `--gpus SPEC` (sched/gpus.h), one environment each, the first also made base's
 * device; without --gpus (NULL) the one slot is base itself. Free *envs only when it is not base. */
int cli_eval_slots(const struct sb_ctx *ctx, const char *gpus, struct eval_env *base, struct eval_env **envs, int *n,
		   struct sb_error *err);

/* --repeats K of metrics and report, and run.repeats (cli/metrics.c): judges each problem's representative
 * clean pass of every agent of each RUN until its store holds K repeats (run/repeats.h), the
 * representatives of --by first, of --by best or of both. Progress and a summary per RUN go to stderr. */
#define CLI_REPEATS_MAX 1000
int cli_repeats(struct sb_ctx *ctx, char *const *runs, size_t n, int k, int by_first, int by_best,
		const atomic_int *stop, struct sb_error *err);
/* Parses --repeats's count (0 to CLI_REPEATS_MAX) for command cmd. */
int cli_repeats_arg(const char *cmd, const char *v, int *k, struct sb_error *err);

/* Prints "stitchbench: error: ..." and returns the exit code for err->code. */
int cli_fail(const struct sb_ctx *ctx, const struct sb_error *err);

#endif
