/* profile.c - `stitchbench profile`: the kernels a candidate (or a problem's reference) runs on the GPU,
 * recorded by libstitchprof, as a table by total time or JSON; optionally Nsight Compute metrics. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/suite.h"
#include "../eval/evaluate.h"
#include "../profile/kclass.h"
#include "../profile/ncu.h"
#include "../profile/refprof.h"
#include "../profile/session.h"
#include "../eval/sweep.h"
#include "cli.h"

const char cmd_profile_help[] =
	"usage: stitchbench profile CANDIDATE.py --problem L2/7 [options]\n"
	"       stitchbench profile --reference --problem L2/7 [options]\n"
	"       stitchbench profile --trace FILE [--json] [--rows N]\n\n"
	"Records with CUPTI (lib/libstitchprof.so, docs/trace.md) every kernel, memcpy and memset of a few\n"
	"timed calls and prints the kernels by total time: shortened name, calls, total us, share, mean us,\n"
	"stream, custom or library (aten, cuBLAS, cuDNN, CUTLASS, triton, cub, ...), grid x block; per call,\n"
	"the kernel time (sum) and span (first kernel start to last kernel end, any stream) beside the CUDA-\n"
	"event time; for the top kernel, its achieved bandwidth where its bytes are known; and the runtime\n"
	"findings (H01, H04, H05, H06; docs/profile.md). Then one more call under CUPTI's range profiler gives\n"
	"each kernel its DRAM, L2, L1 and SM throughput, achieved occupancy and tensor-pipe use (% of peak), its\n"
	"bound class (memory, compute, latency, launch), limiter and % of roofline; --set\n"
	"eval.profile_metrics=off leaves that out.\n\n"
	"A candidate runs as `eval` runs it (sandboxed, built, one correctness trial against the reference)\n"
	"but without static checks and without paired timing; a candidate that fails correctness is not\n"
	"profiled. --reference profiles the problem's Model.forward in a trusted worker; that profile is cached\n"
	"in $STITCHBENCH_CACHE/refprof, keyed by problem hash, GPU, torch version, seed and call count.\n\n"
	"Options:\n"
	"   --problem L<l>/<id>      the problem (required)\n"
	"   --reference              profile the reference instead of a candidate\n"
	"   --calls N                profiled calls (eval.profile_trials, default 10)\n"
	"   --rows N                 rows of the table (default 15; --json lists 20 at most)\n"
	"   --json                   print JSON: problem, subject, profile (docs/verdict.md), findings, ncu\n"
	"   --ncu                    where Nsight Compute exists: SM throughput, DRAM throughput and achieved\n"
	"                            occupancy of the top custom kernel (the top kernel for --reference), with\n"
	"                            --clock-control none; the program runs under ncu outside the sandbox\n"
	"   --trace-out FILE         keep the candidate's raw trace as FILE and its calls as FILE.calls\n"
	"                            (how recorded test fixtures are made; docs/profile.md)\n"
	"   --refresh                --reference: measure again even if cached\n"
	"   --trace FILE             read a kept trace (and FILE.calls when it exists) instead of profiling;\n"
	"                            works without a GPU (docs/trace.md)\n"
	"   --device cuda|cuda:N     the GPU (eval.device)\n"
	"   --kernelbench-root PATH, -c FILE, --set KEY=VALUE, --python PATH   as for the other commands\n"
	"Exit codes: 0 profiled, 1 the candidate did not reach profiling (it failed to build or was wrong),\n"
	"2 usage or input error, 3 environment error (profiling needs a CUDA GPU and lib/libstitchprof.so;\n"
	"CUPTI refused; --ncu without ncu or without access to the GPU's counters).\n";

struct profile_args {
	struct config_opts cfg;
	const char *candidate, *problem, *trace_out, *trace;
	int reference, json, ncu, refresh, rows, help;
};

enum { O_JSON = 1000, O_PROBLEM, O_REFERENCE, O_CALLS, O_ROWS, O_TRACE_OUT, O_NCU, O_DEVICE, O_REFRESH, O_TRACE };

static int parse(int argc, char **argv, struct profile_args *a, struct sb_error *err)
{
	static const struct option lo[] = {
		CLI_CONFIG_LONGOPTS,
		{ "help", no_argument, NULL, 'h' }, { "json", no_argument, NULL, O_JSON },
		{ "problem", required_argument, NULL, O_PROBLEM }, { "reference", no_argument, NULL, O_REFERENCE },
		{ "calls", required_argument, NULL, O_CALLS }, { "rows", required_argument, NULL, O_ROWS },
		{ "trace-out", required_argument, NULL, O_TRACE_OUT }, { "ncu", no_argument, NULL, O_NCU },
		{ "device", required_argument, NULL, O_DEVICE }, { "refresh", no_argument, NULL, O_REFRESH },
		{ "trace", required_argument, NULL, O_TRACE }, { NULL, 0, NULL, 0 },
	};
	int c;
	memset(a, 0, sizeof(*a));
	a->rows = 15;
	/* a profile, not a verdict: one correctness trial, no paired timing, no static checks (--set wins) */
	strvec_push(&a->cfg.sets, "eval.trials=1");
	strvec_push(&a->cfg.sets, "eval.perf_trials=0");
	strvec_push(&a->cfg.sets, "checks.static=false");
	strvec_push(&a->cfg.sets, "eval.profile_metrics=cupti");
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:h", lo, NULL)) != -1) {
		if (cli_config_option(c, &a->cfg))
			continue;
		switch (c) {
		case 'h': a->help = 1; break;
		case O_JSON: a->json = 1; break;
		case O_PROBLEM: a->problem = optarg; break;
		case O_REFERENCE: a->reference = 1; break;
		case O_CALLS: strvec_pushf(&a->cfg.sets, "eval.profile_trials=%s", optarg); break;
		case O_ROWS: a->rows = atoi(optarg); break;
		case O_TRACE_OUT: a->trace_out = optarg; break;
		case O_NCU: a->ncu = 1; break;
		case O_DEVICE: strvec_pushf(&a->cfg.sets, "eval.device=%s", optarg); break;
		case O_REFRESH: a->refresh = 1; break;
		case O_TRACE: a->trace = optarg; break;
		default:
			return sb_error_set(err, SB_EINPUT, "profile: option '%s' %s; see 'stitchbench help profile'",
					    argv[optind - 1], c == ':' ? "needs a value" : "is not known");
		}
	}
	if (a->help)
		return 0;
	if (optind < argc)
		a->candidate = argv[optind++];
	if (optind < argc)
		return sb_error_set(err, SB_EINPUT, "profile: unexpected argument '%s'", argv[optind]);
	if (a->rows < 1)
		return sb_error_set(err, SB_EINPUT, "profile: --rows needs a positive number");
	if (a->trace) {
		if (a->candidate || a->reference || a->ncu || a->trace_out)
			return sb_error_set(err, SB_EINPUT, "profile: --trace reads a kept trace; it takes no candidate, "
					    "--reference, --ncu or --trace-out");
		return 0;
	}
	if (!a->candidate == !a->reference)
		return sb_error_set(err, SB_EINPUT, "profile: give CANDIDATE.py or --reference (and --problem L<l>/<id>)");
	if (!a->problem)
		return sb_error_set(err, SB_EINPUT, "profile: which problem? add --problem L<level>/<id>, e.g. --problem L2/7");
	if (a->trace_out && a->reference)
		return sb_error_set(err, SB_EINPUT, "profile: --trace-out keeps a candidate's trace; the reference's is in "
				    "$STITCHBENCH_CACHE/refprof");
	return 0;
}

/* The kernel --ncu measures: the top custom kernel, else (a reference) the top kernel. */
static const struct prof_row *ncu_target(const struct prof_report *r)
{
	const struct prof_row *any = NULL;
	for (size_t i = 0; i < r->nrows; i++) {
		if (r->rows[i].kind != 'k')
			continue;
		if (r->rows[i].custom)
			return &r->rows[i];
		if (!any)
			any = &r->rows[i];
	}
	return any;
}

struct outcome {
	const char *subject;
	int cached;
	const struct verdict *v;     /* candidates */
	struct ncu_result ncu;
	int ncu_ran;
	char ncu_error[SB_ERR_MAX];
};

static void print_json(const struct profile_args *a, const struct eval_env *env, const struct prof_report *r,
		       const struct outcome *o)
{
	json_t *j = json_object(), *findings = json_array();
	json_object_set_new(j, "problem", json_string(a->problem));
	json_object_set_new(j, "subject", json_string(o->subject));
	json_object_set_new(j, "path", o->v ? json_string(o->v->candidate_path) : json_null());
	json_object_set_new(j, "gpu", json_string(env->gpu));
	json_object_set_new(j, "device", json_string(env->device));
	json_object_set_new(j, "cached", json_boolean(o->cached));
	json_object_set_new(j, "profile", prof_report_json(r, 20));
	for (size_t i = 0; o->v && i < o->v->findings.n; i++) {
		const struct finding *f = &o->v->findings.v[i];
		json_array_append_new(findings, json_pack("{s:s, s:s, s:s}", "id", f->id, "severity", severity_name(f->severity),
							  "message", f->message));
	}
	json_object_set_new(j, "findings", findings);
	if (o->ncu_ran)
		json_object_set_new(j, "ncu", json_pack("{s:s, s:o, s:o, s:o}", "kernel", o->ncu.kernel,
						       "sm_throughput_pct", o->ncu.found & 1 ? json_real(o->ncu.sm_pct) : json_null(),
						       "dram_throughput_pct", o->ncu.found & 2 ? json_real(o->ncu.dram_pct) : json_null(),
						       "achieved_occupancy_pct", o->ncu.found & 4 ? json_real(o->ncu.occupancy_pct) : json_null()));
	else
		json_object_set_new(j, "ncu", o->ncu_error[0] ? json_pack("{s:s}", "error", o->ncu_error) : json_null());
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(text);
	free(text);
	json_decref(j);
}

static void print_text(const struct profile_args *a, const struct eval_env *env, const struct prof_report *r,
		       const struct outcome *o)
{
	struct strbuf out = STRBUF_INIT;
	strbuf_addf(&out, "%s %s%s%s on %s (%s), %zu profiled calls%s\n", a->problem, o->subject, o->v ? " " : "",
		    o->v ? o->v->candidate_path : "", env->gpu, env->device, r->ntrials, o->cached ? " (cached)" : "");
	prof_report_table(r, (size_t)a->rows, &out);
	for (size_t i = 0; o->v && i < o->v->findings.n; i++)
		strbuf_addf(&out, "finding %s (%s): %s\n", o->v->findings.v[i].id, severity_name(o->v->findings.v[i].severity),
			    o->v->findings.v[i].message);
	if (o->ncu_ran) {
		char *s = kname_short(o->ncu.kernel, 60);
		strbuf_addf(&out, "ncu (%s, --clock-control none):", s);
		if (o->ncu.found & 1)
			strbuf_addf(&out, " SM throughput %.1f%%", o->ncu.sm_pct);
		if (o->ncu.found & 2)
			strbuf_addf(&out, ", DRAM throughput %.1f%%", o->ncu.dram_pct);
		if (o->ncu.found & 4)
			strbuf_addf(&out, ", achieved occupancy %.1f%%", o->ncu.occupancy_pct);
		strbuf_addch(&out, '\n');
		free(s);
	}
	fputs(out.buf, stdout);
	strbuf_release(&out);
}

/* --trace: a kept trace, read and judged as the evaluator would; no GPU involved. */
static int show_trace(struct profile_args *a, const struct config *cfg, struct sb_error *err)
{
	struct prof_report r;
	struct findings fs = { 0 };
	prof_report_init(&r);
	int rc = prof_report_from_kept(a->trace, &r, err);
	if (rc)
		return rc;
	prof_findings(&r, &fs);
	policy_apply(cfg->checks.policy, fs.v, fs.n);
	const struct finding *f = fs.v;
	size_t n = fs.n;
	if (a->json) {
		json_t *j = json_pack("{s:s, s:s, s:o}", "trace", a->trace, "subject", "trace", "profile", prof_report_json(&r, 20));
		json_t *found = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(found, json_pack("{s:s, s:s, s:s}", "id", f[i].id, "severity",
							       severity_name(f[i].severity), "message", f[i].message));
		json_object_set_new(j, "findings", found);
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(text);
		free(text);
		json_decref(j);
	} else {
		struct strbuf out = STRBUF_INIT;
		strbuf_addf(&out, "%s: %zu calls\n", a->trace, r.ntrials);
		prof_report_table(&r, (size_t)a->rows, &out);
		for (size_t i = 0; i < n; i++)
			strbuf_addf(&out, "finding %s (%s): %s\n", f[i].id, severity_name(f[i].severity), f[i].message);
		fputs(out.buf, stdout);
		strbuf_release(&out);
	}
	findings_release(&fs);
	prof_report_release(&r);
	return 0;
}

static int profile_candidate(struct profile_args *a, struct eval_env *env, const struct config *cfg,
			     const struct problem *p, struct verdict *v, struct sb_error *err)
{
	char *abs = realpath(a->candidate, NULL);
	env->profile_only = 1;
	env->profile = prof_candidate;
	env->keep_trace = a->trace_out;
	int rc = eval_candidate(env, cfg, p, abs, NULL, v, err);
	free(abs);
	return rc;
}

int cmd_profile(int argc, char **argv, struct sb_ctx *ctx)
{
	struct profile_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct suite s = { 0 };
	struct eval_env env = { 0 };
	struct verdict v;
	struct prof_report ref;
	struct outcome o = { .subject = "candidate" };
	int level, id, have_env = 0, rc = parse(argc, argv, &a, &err);
	struct eval_claim claim = EVAL_CLAIM_INIT;
	const struct problem *p = NULL;
	const struct prof_report *r = NULL;

	verdict_init(&v);
	prof_report_init(&ref);
	config_init(&cfg);
	if (rc == 0 && a.help) {
		fputs(cmd_profile_help, stdout);
		goto out;
	}
	if (rc == 0 && a.trace) {
		if ((rc = config_resolve(&a.cfg, &cfg, &err)) == 0)
			rc = show_trace(&a, &cfg, &err);
		goto out;
	}
	if (rc || (rc = config_resolve(&a.cfg, &cfg, &err)) || (rc = suite_load(&s, ctx->home, cfg.problems.root, &err)) ||
	    (rc = problem_ref_parse(a.problem, &level, &id, &err)))
		goto out;
	if (!(p = suite_find(&s, level, id))) {
		rc = sb_error_set(&err, SB_EINPUT, "no problem %s in %s ('stitchbench problems' lists them)", a.problem, s.root);
		goto out;
	}
	struct stat st;
	errno = 0;
	if (a.candidate && (stat(a.candidate, &st) != 0 || !S_ISREG(st.st_mode))) {
		rc = sb_error_set(&err, SB_EINPUT, "%s: %s", a.candidate, errno ? strerror(errno) : "not a file");
		goto out;
	}
	if ((rc = eval_env_init(&env, &cfg, ctx->home, &err)))
		goto out;
	have_env = 1;
	cli_eval_claim(ctx, &env, 1, &claim);
	if (!strcmp(env.device, "cpu")) {
		rc = sb_error_set(&err, SB_EENV, "profiling needs a CUDA GPU: torch sees none here (eval.device=%s); run it "
				  "on a GPU node", cfg.eval.device);
		goto out;
	}
	cfg.eval.profile = 1;
	if (a.reference) {
		o.subject = "reference";
		if ((rc = refprof_get(&env, &cfg, p, a.refresh, &ref, &o.cached, &err)))
			goto out;
		r = &ref;
	} else {
		if ((rc = profile_candidate(&a, &env, &cfg, p, &v, &err)))
			goto out;
		o.v = &v;
		if (!v.profile) {
			fprintf(stderr, "stitchbench: %s did not reach profiling: %s: %s\n", a.candidate,
				verdict_status_name(v.status), v.message ? v.message : "");
			if (v.detail && *v.detail)
				fprintf(stderr, "%.4000s\n", v.detail);
			rc = SB_EXIT_FAILED;
			goto done;
		}
		if (!v.profile->available) {
			rc = sb_error_set(&err, SB_EENV, "no profile was recorded: %s", v.profile->reason);
			goto out;
		}
		r = v.profile;
	}
	const struct prof_row *target = a.ncu ? ncu_target(r) : NULL;
	if (a.ncu && !target)
		snprintf(o.ncu_error, sizeof(o.ncu_error), "no kernel ran, so there is nothing for ncu to measure");
	if (target) {
		struct sb_error nerr = { 0 };
		if (ncu_measure(&env, &cfg, p, a.reference ? NULL : v.candidate_path, target->mangled, &o.ncu, &nerr) == 0)
			o.ncu_ran = 1;
		else
			snprintf(o.ncu_error, sizeof(o.ncu_error), "%s", nerr.msg);
	}
	if (a.json)
		print_json(&a, &env, r, &o);
	else
		print_text(&a, &env, r, &o);
	if (o.ncu_error[0]) {
		rc = sb_error_set(&err, SB_EENV, "--ncu: %s", o.ncu_error);
		goto out;
	}
	rc = 0;
	goto done;
out:
	if (rc)
		rc = cli_fail(ctx, &err);
done:
	verdict_release(&v);
	prof_report_release(&ref);
	eval_claim_release(&claim);
	if (have_env)
		eval_env_release(&env);
	suite_release(&s);
	config_release(&cfg);
	config_opts_release(&a.cfg);
	return rc;
}
