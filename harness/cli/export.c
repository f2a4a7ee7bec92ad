/* export.c - `stitchbench export`: a run's verdicts as JSONL (each with its key, the verdict exactly as
 * stored) or as CSV (RFC 4180) for spreadsheets and pandas, in the store's stable order. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "cli.h"
#include "export.h"

const char cmd_export_help[] =
	"usage: stitchbench export RUN [--format jsonl|csv|kernelbench] [--agent NAME] [--level L] [-o FILE]\n\n"
	"Writes every verdict of a run, ordered by agent, level, problem, sample and attempt. RUN is a run\n"
	"directory (results/RUN_ID) or its results.db file.\n\n"
	"   jsonl   one JSON object per verdict and line: its key and stage, then the verdict exactly as\n"
	"           stored (docs/verdict.md): {\"agent\", \"problem\", \"sample\", \"attempt\", \"stage\",\n"
	"           \"verdict\"}; the default\n"
	"   csv     RFC 4180 (CRLF line ends, fields quoted when needed), a header line, then one row per\n"
	"           verdict: run_id, agent, agent_kind, model, problem, level, sample, attempt, stage,\n"
	"           status, compiled, correct, hack (0/1), speedup_eager, speedup_eager_ci95_lo,\n"
	"           speedup_eager_ci95_hi, speedup_compiled, speedup_eager_mean_method, candidate_sha256,\n"
	"           problem_sha256, created, message. Missing numbers are empty fields.\n"
	"   kernelbench\n"
	"           one agent's verdicts on one level as KernelBench's eval_results.json, which its analysis\n"
	"           script reads with a baseline timing file ('stitchbench baseline' writes one):\n"
	"           {\"PROBLEM_ID\": [{\"sample_id\", \"compiled\", \"correctness\", \"metadata\", \"runtime\",\n"
	"           \"runtime_stats\"}]}, times in ms (the candidate's mean per call and its spread). A sample is\n"
	"           its best attempt, ranked as 'metrics' ranks them. KernelBench has no hack verdict: a\n"
	"           candidate with a hack finding (rejected or flagged) is exported as not correct, metadata\n"
	"           saying why; metadata also names the GPU, the status, the attempt and its stage\n\n"
	"Options:\n"
	"   --format jsonl|csv|kernelbench   the format (default jsonl)\n"
	"   --agent NAME         kernelbench: the agent (needed when the run has several)\n"
	"   --level L            kernelbench: the level (needed when the agent's verdicts span several)\n"
	"   -o, --output FILE    write to FILE instead of standard output\n\n"
	"Exit codes: 0 written, 2 usage error or RUN is not a results store, 3 a read or write failed.\n";

struct export_args {
	const char *run, *output, *agent;
	int csv, kernelbench, level, help;
};

enum { OPT_FORMAT = 1000, OPT_AGENT, OPT_LEVEL };

static int parse_args(int argc, char **argv, struct export_args *a, struct sb_error *err)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT }, { "output", required_argument, NULL, 'o' },
		{ "agent", required_argument, NULL, OPT_AGENT }, { "level", required_argument, NULL, OPT_LEVEL },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		if (c == 'h')
			a->help = 1;
		else if (c == 'o')
			a->output = optarg;
		else if (c == OPT_FORMAT && (!strcmp(optarg, "jsonl") || !strcmp(optarg, "csv") || !strcmp(optarg, "kernelbench"))) {
			a->csv = !strcmp(optarg, "csv");
			a->kernelbench = !strcmp(optarg, "kernelbench");
		} else if (c == OPT_FORMAT)
			return sb_error_set(err, SB_EINPUT, "export: --format %s: use jsonl, csv or kernelbench", optarg);
		else if (c == OPT_AGENT)
			a->agent = optarg;
		else if (c == OPT_LEVEL && (a->level = atoi(optarg)) >= 1 && a->level <= 3 && !optarg[1])
			;
		else if (c == OPT_LEVEL)
			return sb_error_set(err, SB_EINPUT, "export: --level %s: give 1, 2 or 3", optarg);
		else
			return sb_error_set(err, SB_EINPUT, "export: option '%s' %s; see 'stitchbench help export'",
					    argv[optind - 1], c == ':' ? "needs a value" : "is not known");
	}
	if (a->help)
		return 0;
	if ((a->agent || a->level) && !a->kernelbench)
		return sb_error_set(err, SB_EINPUT, "export: --agent and --level go with --format kernelbench (jsonl and csv "
				    "hold every verdict)");
	if (optind >= argc)
		return sb_error_set(err, SB_EINPUT, "export: which run? give a run directory or a results.db file");
	a->run = argv[optind++];
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "export: unexpected argument '%s' (one run at a time; 'stitchbench merge' "
				    "combines runs)", argv[optind]);
	return 0;
}

/* RFC 4180: quote a field holding a comma, a quote or a line break; double the quotes inside. */
static void csv_field(struct strbuf *out, const char *s, int last)
{
	if (s && strpbrk(s, ",\"\r\n")) {
		strbuf_addch(out, '"');
		for (; *s; s++) {
			if (*s == '"')
				strbuf_addch(out, '"');
			strbuf_addch(out, *s);
		}
		strbuf_addch(out, '"');
	} else if (s) {
		strbuf_addstr(out, s);
	}
	strbuf_addstr(out, last ? "\r\n" : ",");
}

/* The shortest text that reads back as the same double; empty for a missing number. */
static void csv_number(struct strbuf *out, double x)
{
	char buf[40] = "";
	for (int prec = 6; isfinite(x) && prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	csv_field(out, buf, 0);
}

static void csv_int(struct strbuf *out, long long x)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%lld", x);
	csv_field(out, buf, 0);
}

static const char csv_header[] =
	"run_id,agent,agent_kind,model,problem,level,sample,attempt,stage,status,compiled,correct,hack,speedup_eager,"
	"speedup_eager_ci95_lo,speedup_eager_ci95_hi,speedup_compiled,speedup_eager_mean_method,candidate_sha256,"
	"problem_sha256,created,message\r\n";

static double jnum(json_t *j)
{
	return json_is_number(j) ? json_number_value(j) : NAN;
}

struct export_ctx {
	FILE *f;
	int csv;
	size_t n;
	struct strbuf line;
};

static int export_row(void *arg, const struct store_verdict_row *r, struct sb_error *err)
{
	struct export_ctx *x = arg;
	struct strbuf *out = &x->line;
	strbuf_reset(out);
	if (!x->csv) {
		/* the key as its own JSON, the stored verdict spliced in as text: byte for byte what was stored */
		json_t *key = json_pack("{s:s, s:s, s:i, s:i, s:s?}", "agent", r->agent, "problem", r->problem, "sample",
					r->sample, "attempt", r->attempt, "stage", r->stage);
		char *text = key ? json_dumps(key, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(key);
		if (!text)
			return sb_error_set(err, SB_EINPUT, "the key of a verdict of %s %s is not valid UTF-8; the store is "
					    "damaged", r->agent, r->problem);
		text[strlen(text) - 1] = '\0'; /* its closing brace: the verdict comes last */
		strbuf_addf(out, "%s,\"verdict\":%s}\n", text, r->json);
		free(text);
	} else {
		json_t *v = json_loads(r->json, 0, NULL), *sp = json_object_get(v, "speedup");
		json_t *ci = json_object_get(sp, "vs_eager_ci95");
		const char *fields[] = { r->run_id, r->agent, r->agent_kind, r->model, r->problem };
		for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
			csv_field(out, fields[i], 0);
		csv_int(out, r->level);
		csv_int(out, r->sample);
		csv_int(out, r->attempt);
		csv_field(out, r->stage, 0);
		csv_field(out, r->status, 0);
		csv_int(out, strcmp(r->status, "compile_error") && strcmp(r->status, "format_error"));
		csv_int(out, !strcmp(r->status, "pass"));
		csv_int(out, r->hack);
		csv_number(out, r->speedup_eager);
		csv_number(out, jnum(json_array_get(ci, 0)));
		csv_number(out, jnum(json_array_get(ci, 1)));
		csv_number(out, r->speedup_compiled);
		csv_number(out, jnum(json_object_get(sp, "vs_eager_mean_method")));
		csv_field(out, r->candidate_sha256, 0);
		csv_field(out, r->problem_sha256, 0);
		csv_field(out, r->created, 0);
		csv_field(out, json_string_value(json_object_get(v, "message")), 1);
		json_decref(v);
	}
	x->n++;
	if (fwrite(out->buf, 1, out->len, x->f) != out->len)
		return sb_error_set(err, SB_EIO, "writing the export: %s", strerror(errno));
	return 0;
}

int cmd_export(int argc, char **argv, struct sb_ctx *ctx)
{
	struct export_args a;
	struct sb_error err = { 0 };
	struct store *s = NULL;
	int rc = parse_args(argc, argv, &a, &err);
	if (rc == 0 && a.help) {
		fputs(cmd_export_help, stdout);
		return 0;
	}
	if (rc)
		return cli_fail(ctx, &err);
	char *path = store_path_for(a.run);
	rc = store_open(&s, path, STORE_READ, &err);
	free(path);
	if (rc)
		return cli_fail(ctx, &err);
	struct export_ctx x = { stdout, a.csv, 0, STRBUF_INIT };
	if (a.output && !(x.f = fopen(a.output, "w")))
		rc = sb_error_set(&err, SB_EIO, "cannot write %s: %s", a.output, strerror(errno));
	if (!rc && a.csv && fputs(csv_header, x.f) < 0)
		rc = sb_error_set(&err, SB_EIO, "writing the export: %s", strerror(errno));
	if (!rc && a.kernelbench)
		rc = export_kernelbench(s, a.agent, a.level, x.f, &err);
	else if (!rc)
		rc = store_each_verdict(s, export_row, &x, &err);
	if (x.f && x.f != stdout && fclose(x.f) != 0 && !rc)
		rc = sb_error_set(&err, SB_EIO, "writing %s: %s", a.output, strerror(errno));
	if (x.f == stdout && fflush(stdout) != 0 && !rc)
		rc = sb_error_set(&err, SB_EIO, "writing the export: %s", strerror(errno));
	strbuf_release(&x.line);
	store_close(s);
	return rc ? cli_fail(ctx, &err) : 0;
}
