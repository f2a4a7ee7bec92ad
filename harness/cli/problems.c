/* problems.c - `stitchbench problems`: lists a suite's problems with their ids and hashes, and
 * reports every file that was skipped and why, so a broken checkout is obvious at a glance. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../core/suite.h"
#include "cli.h"

const char cmd_problems_help[] =
	"usage: stitchbench problems [--level N[,N]] [--problems SEL[,SEL]] [--json]\n"
	"                            [--kernelbench-root PATH] [-c FILE] [--set KEY=VALUE]\n\n"
	"Lists the problems of the bundled suite (kernelbench/suite/) or, with --kernelbench-root,\n"
	"of an upstream KernelBench checkout (the folder holding level1/, or the checkout holding\n"
	"KernelBench/level1/). Files that are not usable problems are listed on stderr with the\n"
	"reason and skipped.\n\n"
	"Options:\n"
	"   --level N[,N]           only these levels (default: the config's problems.levels, all)\n"
	"   --problems SEL[,SEL]    only these problems: L1/19, L1/1-10, L3/*, L2\n"
	"   --json                  one JSON object: root, problems[], skipped[]\n"
	"   --kernelbench-root PATH read problems from PATH (same as --set problems.root=PATH)\n"
	"   -c, --config FILE       experiment YAML (its problems: section applies)\n"
	"   --set KEY=VALUE         override one config key, e.g. --set problems.levels=1,2\n\n"
	"Columns: problem id (L<level>/<id>), name, the first 12 hex digits of the file's sha256, path.\n"
	"Exit codes: 0 listed (even if some files were skipped), 2 bad option, selector or root.\n";

static void print_json(const struct suite *s, const struct problem **sel, size_t n)
{
	json_t *root = json_object(), *arr = json_array(), *skipped = json_array();
	json_object_set_new(root, "root", json_string(s->root));
	for (size_t i = 0; i < n; i++) {
		char ref[32];
		snprintf(ref, sizeof(ref), "L%d/%d", sel[i]->level, sel[i]->id);
		json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:s, s:s, s:s}", "ref", ref, "level", sel[i]->level,
						     "id", sel[i]->id, "name", sel[i]->name, "path", sel[i]->path,
						     "sha256", sel[i]->sha256));
	}
	for (size_t i = 0; i < s->nskipped; i++)
		json_array_append_new(skipped, json_pack("{s:s, s:s}", "path", s->skipped[i].path,
							 "reason", s->skipped[i].reason));
	json_object_set_new(root, "problems", arr);
	json_object_set_new(root, "skipped", skipped);
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(text);
	free(text);
	json_decref(root);
}

/* The path relative to the suite root reads better than a long absolute path. */
static const char *short_path(const struct suite *s, const char *path)
{
	size_t n = strlen(s->root);
	return !strncmp(path, s->root, n) && path[n] == '/' ? path + n + 1 : path;
}

static void print_table(const struct suite *s, const struct problem **sel, size_t n)
{
	size_t per_level[4] = { 0 };
	printf("%-8s %-40s %-12s %s\n", "problem", "name", "sha256", "path");
	for (size_t i = 0; i < n; i++) {
		char ref[32];
		snprintf(ref, sizeof(ref), "L%d/%d", sel[i]->level, sel[i]->id);
		printf("%-8s %-40s %.12s %s\n", ref, sel[i]->name, sel[i]->sha256, short_path(s, sel[i]->path));
		per_level[sel[i]->level - 1]++;
	}
	printf("%zu problem%s (", n, n == 1 ? "" : "s");
	for (int l = 0, first = 1; l < 4; l++)
		if (per_level[l]) {
			printf("%sL%d: %zu", first ? "" : ", ", l + 1, per_level[l]);
			first = 0;
		}
	printf("%s) in %s\n", n ? "" : "none", s->root);
}

int cmd_problems(int argc, char **argv, struct sb_ctx *ctx)
{
	struct problems_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite s = { 0 };
	const struct problem **sel = NULL;
	size_t n = 0;
	int rc;

	config_init(&cfg);
	rc = problems_parse_args(argc, argv, &a, &err);
	if (rc == 0 && a.help) {
		fputs(cmd_problems_help, stdout);
		goto out;
	}
	if (rc == 0)
		rc = config_resolve(&a.cfg, &cfg, &err);
	if (rc)
		goto out;
	if ((rc = suite_load(&s, ctx->home, cfg.problems.root, &err)) == 0) {
		static const int all_levels[4] = { 1, 1, 1, 1 };
		int cli_levels = a.levels[0] | a.levels[1] | a.levels[2] | a.levels[3];
		/* --problems on the command line names its own levels unless --level narrows them */
		const int *levels = cli_levels ? a.levels : a.selectors.nr ? all_levels : cfg.problems.levels;
		char *const *selv = a.selectors.nr ? (char *const *)a.selectors.v : cfg.problems.select;
		size_t seln = a.selectors.nr ? a.selectors.nr : cfg.problems.nselect;
		rc = suite_select(&s, levels, selv, seln, &sel, &n, &err);
	}
	if (rc == 0) {
		for (size_t i = 0; i < s.nskipped; i++)
			sb_warn(ctx, "skipped %s: %s", short_path(&s, s.skipped[i].path), s.skipped[i].reason);
		if (a.json)
			print_json(&s, sel, n);
		else
			print_table(&s, sel, n);
	}
out:
	free(sel);
	suite_release(&s);
	config_release(&cfg);
	problems_args_release(&a);
	return rc ? cli_fail(ctx, &err) : 0;
}
