/* merge.c - `stitchbench merge`: combines run stores (Slurm shards, pieces of one experiment) into a new
 * run, refusing inputs whose numbers would not be comparable (the rules are in store_merge.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../core/log.h"
#include "../store/store.h"
#include "cli.h"

const char cmd_merge_help[] =
	"usage: stitchbench merge OUT RUN... [--force]\n\n"
	"Copies every run, problem, agent, verdict and LLM call of the RUNs (run directories or results.db\n"
	"files) into a new store OUT/results.db; OUT must not hold one yet. Each input is integrity-checked\n"
	"first. The new store is written as OUT/results.db.partial and renamed when complete, so a failed\n"
	"merge leaves no store behind. Verdicts keep their run, key and creation time.\n\n"
	"It refuses, naming each difference with both values, inputs that differ in a setting that changes\n"
	"the numbers: eval.trials, eval.perf_trials, eval.seed, eval.tolerance, the device kind (cpu or cuda;\n"
	"cuda:0 and cuda:3 are the same kind), the GPU name, the torch version, checks.policy, the sha256 of a\n"
	"problem present in two inputs, and an agent name used for two kinds or models.\n"
	"A key (agent, problem, sample, attempt), or an LLM call, stored in two inputs is always an error.\n\n"
	"Options:\n"
	"   --force   merge despite differing settings (they are listed as warnings); the merged store\n"
	"             keeps each run's own settings, and a problem's first sha256\n\n"
	"Exit codes: 0 merged, 2 usage error, differing settings, overlapping keys, or an input that is not a\n"
	"sound results store, 3 a read or write failed.\n";

int cmd_merge(int argc, char **argv, struct sb_ctx *ctx)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct sb_error err = { 0 };
	int c, force = 0, help = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			help = 1;
		else if (c == 'f')
			force = 1;
		else {
			sb_error_set(&err, SB_EINPUT, "merge: option '%s' is not known; see 'stitchbench help merge'",
				     argv[optind - 1]);
			return cli_fail(ctx, &err);
		}
	}
	if (help) {
		fputs(cmd_merge_help, stdout);
		return 0;
	}
	if (argc - optind < 2) {
		sb_error_set(&err, SB_EINPUT, "merge: give the new run directory and at least one run: merge OUT RUN...");
		return cli_fail(ctx, &err);
	}
	struct strbuf overridden = STRBUF_INIT;
	struct store_merge_stats st;
	const char *out = argv[optind];
	int rc = store_merge(out, argv + optind + 1, (size_t)(argc - optind - 1), force, &overridden, &st, &err);
	if (overridden.len)
		sb_warn(ctx, "merging despite settings that change the numbers (--force):\n%s", overridden.buf);
	if (!rc)
		printf("merged %d input%s (%zu run%s): %zu verdicts, %zu LLM calls into %s/%s\n", argc - optind - 1,
		       argc - optind - 1 == 1 ? "" : "s", st.runs, st.runs == 1 ? "" : "s", st.verdicts, st.calls, out,
		       STORE_FILE);
	strbuf_release(&overridden);
	return rc ? cli_fail(ctx, &err) : 0;
}
