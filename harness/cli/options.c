/* options.c - parsing shared by the commands: global options, and the config options
 * (-c, --set, --kernelbench-root, --python) that resolve into one struct config. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../eval/evaluate.h"
#include "../eval/sweep.h"
#include "../sched/gpus.h"
#include "cli.h"

void config_opts_release(struct config_opts *o)
{
	strvec_clear(&o->sets);
}

int config_resolve(const struct config_opts *o, struct config *cfg, struct sb_error *err)
{
	int rc;
	if (o->config_path && (rc = config_load_file(cfg, o->config_path, err)))
		return rc;
	for (size_t i = 0; i < o->sets.nr; i++)
		if ((rc = config_set(cfg, o->sets.v[i], err)))
			return rc;
	/* Dedicated flags are shorthands for --set and win over it, as the last word on the line. */
	if (o->kernelbench_root) {
		free(cfg->problems.root);
		cfg->problems.root = xstrdup(o->kernelbench_root);
	}
	if (o->python) {
		free(cfg->python);
		cfg->python = xstrdup(o->python);
	}
	/* A test control, not an interface: the equivalence test runs the same candidates with and without
	 * the fast paths, and this is the one place that reads it. */
	const char *plain = getenv("STITCHBENCH_TEST_PLAIN_PATHS");
	if (plain && !strcmp(plain, "1") && (rc = config_plain_paths(cfg, err)))
		return rc;
	return config_validate(cfg, err);
}

int global_parse_args(int argc, char **argv, struct global_args *g, struct sb_error *err)
{
	int i;
	memset(g, 0, sizeof(*g));
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			g->help = 1;
		else if (!strcmp(a, "--version"))
			g->version = 1;
		else if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
			g->verbose++;
		else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			g->quiet = 1;
		else
			return sb_error_set(err, SB_EINPUT, "unknown option '%s' (global options: -v, -q, --version, --help)", a);
	}
	return i;
}

/* getopt_long keeps its state in libc globals; restart it for every parse (tests parse many times). */
static void getopt_reset(void)
{
	optind = 0;
	opterr = 0;
}

enum { OPT_JSON = 1000, OPT_LEVEL, OPT_PROBLEMS, OPT_OFFLINE };

#define CONFIG_LONGOPTS CLI_CONFIG_LONGOPTS, { "help", no_argument, NULL, 'h' }

int cli_config_option(int c, struct config_opts *o)
{
	switch (c) {
	case 'c': o->config_path = optarg; return 1;
	case CLI_OPT_SET: strvec_push(&o->sets, optarg); return 1;
	case CLI_OPT_KB_ROOT: o->kernelbench_root = optarg; return 1;
	case CLI_OPT_PYTHON: o->python = optarg; return 1;
	default: return 0;
	}
}

int cli_list_arg(const char *cmd, const char *opt, const char *value, const char *example, struct strvec *out,
		 struct sb_error *err)
{
	char *copy = xstrdup(value), *save = NULL;
	size_t n = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save), n++)
		if (out)
			strvec_push(out, t);
	free(copy);
	if (!n)
		return sb_error_set(err, SB_EINPUT, "%s: %s \"%s\" names nothing; give one or more, like %s, or leave the "
				    "option out for the default", cmd, opt, value, example);
	return 0;
}

/* getopt returns ':' for a missing value (the optstring starts with "+:"), '?' for an unknown option. */
static int bad_option(const char *cmd, int c, char **argv, struct sb_error *err)
{
	const char *opt = argv[optind - 1];
	return sb_error_set(err, SB_EINPUT, "%s: option '%s' %s; see 'stitchbench help %s'", cmd, opt,
			    c == ':' ? "needs a value" : "is not known", cmd);
}

static int parse_levels(const char *s, int levels[4], struct sb_error *err)
{
	char *copy = xstrdup(s), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(t, &end, 10);
		if (*end || end == t || v < 1 || v > 4) {
			rc = sb_error_set(err, SB_EINPUT, "--level %s: expected 1, 2, 3 or 4 (or a list like 1,3)", s);
			break;
		}
		levels[v - 1] = 1;
	}
	free(copy);
	return rc;
}

int problems_parse_args(int argc, char **argv, struct problems_args *a, struct sb_error *err)
{
	static const struct option longopts[] = {
		CONFIG_LONGOPTS,
		{ "json", no_argument, NULL, OPT_JSON },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "problems", required_argument, NULL, OPT_PROBLEMS },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "+:c:h", longopts, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		switch (c) {
		case 'h': a->help = 1; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_LEVEL:
			if ((rc = parse_levels(optarg, a->levels, err)))
				return rc;
			break;
		case OPT_PROBLEMS:
			if ((rc = cli_list_arg("problems", "--problems", optarg, CLI_SELECTOR_EXAMPLE, &a->selectors, err)))
				return rc;
			break;
		default:
			return bad_option("problems", c, argv, err);
		}
	}
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "problems: unexpected argument '%s'; see 'stitchbench help problems'",
				    argv[optind]);
	return 0;
}

void problems_args_release(struct problems_args *a)
{
	config_opts_release(&a->cfg);
	strvec_clear(&a->selectors);
}

int doctor_parse_args(int argc, char **argv, struct doctor_args *a, struct sb_error *err)
{
	static const struct option longopts[] = { CONFIG_LONGOPTS, { "offline", no_argument, NULL, OPT_OFFLINE },
						  { NULL, 0, NULL, 0 } };
	int c;
	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "+:c:h", longopts, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		if (c == 'h')
			a->help = 1;
		else if (c == OPT_OFFLINE)
			a->offline = 1;
		else
			return bad_option("doctor", c, argv, err);
	}
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "doctor: unexpected argument '%s'; see 'stitchbench help doctor'",
				    argv[optind]);
	return 0;
}

void cli_eval_claim(const struct sb_ctx *ctx, const struct eval_env *e, int n, struct eval_claim *c)
{
	struct strbuf warn = STRBUF_INIT;
	struct sb_error err = { 0 };
	if (eval_claim_begin(c, e[0].cache_root, &err))
		sb_warn(ctx, "%s; work folders left by ended processes are not swept", err.msg);
	else if (c->swept)
		sb_info(ctx, "removed %zu work folders and temporary entries that ended processes left in %s", c->swept,
			e[0].cache_root);
	for (int i = 0; i < n; i++) {
		err = (struct sb_error){ 0 };
		if (eval_claim_device(c, e[i].cache_root, e[i].device, &warn, &err))
			sb_warn(ctx, "%s; other processes timing on %s are not noticed", err.msg, e[i].device);
	}
	for (const char *p = warn.buf; *p;) {
		size_t len = strcspn(p, "\n");
		sb_warn(ctx, "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
	}
	strbuf_release(&warn);
}

int cli_eval_slots(const struct sb_ctx *ctx, const char *gpus, struct eval_env *base, struct eval_env **envs, int *n,
		   struct sb_error *err)
{
	if (!gpus) {
		*envs = base;
		*n = 1;
		return 0;
	}
	int rc = gpus_resolve(gpus, base, ctx->home, envs, n, err);
	if (!rc)
		gpus_use_first(base, &(*envs)[0]);
	return rc;
}
