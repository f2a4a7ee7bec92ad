/* main.c - stitchbench's entry point: global options, the one context struct, and git-style
 * dispatch to harness/cli/<command>.c. Nothing below cli/ calls exit(). */
#include <curl/curl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "cli/cli.h"
#include "core/log.h"

#ifndef SB_VERSION
#define SB_VERSION "0.0.0"
#endif
#ifndef SB_GIT
#define SB_GIT "unknown"
#endif

static void print_version(void)
{
	printf("stitchbench %s (%s)\n", SB_VERSION, SB_GIT);
	printf("libyaml %s, jansson %s, SQLite %s (static); libcurl %s\n", yaml_get_version_string(), JANSSON_VERSION,
	       sqlite3_libversion(), curl_version_info(CURLVERSION_NOW)->version);
}

int main(int argc, char **argv)
{
	struct sb_ctx ctx = { .argv0 = argv[0], .stdout_tty = isatty(1) };
	struct global_args g;
	struct sb_error err = { 0 };
	int first = global_parse_args(argc, argv, &g, &err);

	if (first < 0)
		return cli_fail(&ctx, &err);
	ctx.verbose = g.verbose;
	ctx.quiet = g.quiet;
	if (g.version) {
		print_version();
		return 0;
	}
	if (g.help || first >= argc) {
		print_main_usage(g.help ? stdout : stderr);
		return g.help ? 0 : SB_EXIT_USAGE;
	}
	const struct cmd *c = cmd_lookup(argv[first]);
	if (!c) {
		sb_error(&ctx, "'%s' is not a stitchbench command; 'stitchbench --help' lists them", argv[first]);
		return SB_EXIT_USAGE;
	}
	if (ctx_find_home(&ctx, &err))
		return cli_fail(&ctx, &err);
	int rc = c->fn(argc - first, argv + first, &ctx);
	free(ctx.home);
	return rc;
}
