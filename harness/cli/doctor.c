/* doctor.c - `stitchbench doctor`: checks everything a run depends on and says, line by line,
 * what is fine, what is degraded and what to do about it. With --config, validates the file
 * and prints the resolved configuration. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/gpu.h"
#include "../core/log.h"
#include "../core/proc.h"
#include "../core/python.h"
#include "../core/suite.h"
#include "../eval/proc/proc.h"
#include "../llm/llm.h"
#include "cli.h"

const char cmd_doctor_help[] =
	"usage: stitchbench doctor [-c FILE] [--set KEY=VALUE] [--python PATH] [--kernelbench-root PATH]\n\n"
	"Checks this machine for what stitchbench needs and prints one line per check:\n"
	"  ok    works\n"
	"  warn  works in a reduced way (e.g. no GPU: CPU evaluation only), with what to do\n"
	"  fail  something a run needs is missing, with what to do\n"
	"  skip  not checked (--offline)\n"
	"Checks: CPU, NVIDIA GPUs (nvidia-smi; name, SM arch, memory, L2, driver), CUDA toolkit (nvcc),\n"
	"lib/libstitchprof.so (the CUPTI profiler), lib/libsbspawn.so (the fork server's),\n"
	"the workers' Python and its torch (version, CUDA), gnuplot, SQLite, the candidate sandbox\n"
	"(network namespace, Landlock), the problem suite and, with --config, each model's endpoint.\n\n"
	"Options:\n"
	"   -c, --config FILE       validate FILE, probe each model's endpoint (GET /models latency; replay\n"
	"                           cassettes are counted) and print the resolved configuration (YAML;\n"
	"                           a secret-looking header's value is shown as [REDACTED]). A model fails\n"
	"                           when the variable its api_key_env or headers_env names is not set (give\n"
	"                           api_key_env: null for an endpoint that takes no key) or when nothing\n"
	"                           listens at its api_base (refused, unknown host); any other probe\n"
	"                           failure (HTTP error, timeout, missing cassette) is a warning\n"
	"   --offline               do not contact the endpoints (their lines say skip); the key\n"
	"                           variables are still checked\n"
	"   --set KEY=VALUE         override one config key (repeatable), e.g. --set eval.trials=10\n"
	"   --python PATH           use this interpreter for the workers (same as --set python=PATH)\n"
	"   --kernelbench-root PATH check this suite or KernelBench checkout instead of the bundled one\n\n"
	"Python is chosen in this order: --python / config python:, $STITCHBENCH_PYTHON, then the\n"
	"first of python3 on PATH and /usr/bin/python3 that imports torch.\n"
	"Exit codes: 0 no check failed, 2 invalid configuration, 3 a check failed.\n";

struct tally {
	int ok, warn, fail;
};

__attribute__((format(printf, 4, 5)))
static void line(struct tally *t, const char *status, const char *what, const char *fmt, ...)
{
	va_list ap;
	if (!strcmp(status, "ok"))
		t->ok++;
	else if (!strcmp(status, "warn"))
		t->warn++;
	else
		t->fail++;
	printf("%-5s %-9s ", status, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void check_cpu(struct tally *t)
{
	char model[256] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char buf[512];
		while (fgets(buf, sizeof(buf), f))
			if (starts_with(buf, "model name")) {
				char *c = strchr(buf, ':');
				if (c) {
					snprintf(model, sizeof(model), "%s", c + 2);
					model[strcspn(model, "\n")] = '\0';
				}
				break;
			}
		fclose(f);
	}
	line(t, "ok", "cpu", "%s, %ld cores online", model, sysconf(_SC_NPROCESSORS_ONLN));
}

static void check_gpus(struct tally *t, struct gpu_list *g)
{
	gpu_query(g);
	if (!g->n) {
		line(t, "warn", "gpu", "%s: candidates are evaluated on the CPU only (no CUDA timing)",
		     g->note ? g->note : "no GPU");
		return;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct gpu_info *d = &g->v[i];
		char l2[32] = "L2 unknown", bw[48] = "";
		if (d->l2_bytes)
			snprintf(l2, sizeof(l2), "L2 %.0f MiB", d->l2_bytes / 1048576.0);
		if (d->peak_bw_gbs > 0)
			snprintf(bw, sizeof(bw), ", %.0f GB/s theoretical", d->peak_bw_gbs);
		line(t, "ok", "gpu", "%d: %s, sm_%s, %.1f GiB, %s%s%s%d SMs, driver %s", d->index, d->name, d->sm,
		     d->memory_bytes / 1073741824.0, l2, bw, d->multiprocessors ? ", " : "", d->multiprocessors, d->driver);
	}
}

/* Runs `prog args...` and returns its first output line, or NULL. */
static char *first_line_of(const char *prog, const char *arg)
{
	const char *argv[] = { prog, arg, NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 20000 };
	struct proc_result r;
	char *res = NULL;
	proc_result_init(&r);
	if (proc_run(&o, &r) == 0 && proc_ok(&r)) {
		struct strbuf *src = r.out.len ? &r.out : &r.err;
		strbuf_trim(src);
		res = xstrndup(src->buf, strcspn(src->buf, "\n"));
	}
	proc_result_release(&r);
	return res;
}

static void check_cuda_toolkit(struct tally *t, int have_gpu)
{
	char *nvcc = proc_which("nvcc");
	if (!nvcc && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
		nvcc = xstrdup("/usr/local/cuda/bin/nvcc");
	if (!nvcc) {
		line(t, have_gpu ? "fail" : "warn", "cuda", "nvcc not found: CUDA candidates cannot be built; "
		     "install the CUDA toolkit or put its bin/ on PATH");
		return;
	}
	const char *argv[] = { nvcc, "--version", NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 20000 };
	struct proc_result r;
	proc_result_init(&r);
	const char *rel = NULL;
	if (proc_run(&o, &r) == 0 && proc_ok(&r))
		rel = strstr(r.out.buf, "release ");
	if (rel) {
		size_t n = strcspn(rel + 8, ",\n");
		line(t, "ok", "cuda", "nvcc %.*s at %s", (int)n, rel + 8, nvcc);
	} else {
		line(t, "warn", "cuda", "%s --version failed: check the CUDA installation", nvcc);
	}
	proc_result_release(&r);
	free(nvcc);
}

static void check_python(struct tally *t, const struct sb_ctx *ctx, const struct config *cfg, int have_gpu)
{
	struct python_info py;
	struct sb_error err = { 0 };
	struct strbuf tried = STRBUF_INIT;
	char *probe = xstrfmt("%s/harness/worker/probe.py", ctx->home);
	if (python_discover(cfg->python, probe, NULL, &py, &tried, &err)) {
		line(t, "fail", "python", "%s", err.msg);
		if (tried.len)
			printf("                %s", tried.buf);
	} else {
		line(t, "ok", "python", "%s (Python %s, chosen by %s)", py.path, py.version ? py.version : "?", py.source);
		if (py.cuda_available) {
			line(t, "ok", "torch", "%s, CUDA %s, %zu device%s visible", py.torch_version,
			     py.torch_cuda ? py.torch_cuda : "?", py.ndevices, py.ndevices == 1 ? "" : "s");
		} else {
			line(t, have_gpu ? "fail" : "warn", "torch", "%s, CUDA not available (%s): %s", py.torch_version,
			     py.torch_cuda ? "a CUDA build that sees no device" : "a CPU-only build",
			     have_gpu ? "install a CUDA build of torch to evaluate on the GPU" : "CPU evaluation only");
		}
		char why[96];
		if (python_torch_compile(&py, why, sizeof(why)))
			line(t, "ok", "compile", "torch.compile is available (the torch-compile baseline, speedups vs compiled)");
		else
			line(t, "warn", "compile", "%s: run skips the torch-compile baseline (its samples end as unavailable) "
			     "and speedups vs torch.compile are n/a", why);
		python_info_release(&py);
	}
	strbuf_release(&tried);
	free(probe);
}

/* libstitchprof (docs/profile.md): without it verdicts carry no profile and `profile` cannot run. */
static void check_profiler(struct tally *t, const struct sb_ctx *ctx, int have_gpu)
{
	const char *env = getenv("STITCHBENCH_PROF_LIB");
	char *lib = env && *env ? xstrdup(env) : xstrfmt("%s/lib/libstitchprof.so", ctx->home);
	void *h = access(lib, R_OK) == 0 ? dlopen(lib, RTLD_LAZY | RTLD_LOCAL) : NULL;
	if (h)
		line(t, "ok", "profiler", "%s (CUPTI) loads", lib);
	else if (access(lib, R_OK) != 0)
		line(t, "warn", "profiler", "%s is missing: %s; build it with make where the CUDA toolkit's CUPTI headers "
		     "are", lib, have_gpu ? "verdicts carry no profile and `stitchbench profile` cannot run" : "GPU runs would "
		     "have no profile");
	else
		line(t, "warn", "profiler", "%s does not load: %s (is libcupti of the CUDA toolkit installed?)", lib, dlerror());
	if (h)
		dlclose(h);
	free(lib);
}

/* libsbspawn (docs/worker.md "The fork server"): without it every candidate worker imports torch itself. */
static void check_spawn_lib(struct tally *t, const struct sb_ctx *ctx, const struct config *cfg)
{
	char *lib = forkserver_lib(ctx->home);
	void *h = access(lib, R_OK) == 0 ? dlopen(lib, RTLD_LAZY | RTLD_LOCAL) : NULL;
	if (!cfg->eval.fork_server)
		line(t, "ok", "forking", "off (eval.fork_server): each candidate worker starts Python itself");
	else if (h && dlsym(h, "sbspawn_child"))
		line(t, "ok", "forking", "%s loads: candidate workers are forked from one process that imported torch", lib);
	else
		line(t, "warn", "forking", "%s %s: each candidate worker starts Python and imports torch itself (1.6-5 s "
		     "more per evaluation); build it with make", lib, h ? "has no sbspawn_child" : "is missing or does not load");
	if (h)
		dlclose(h);
	free(lib);
}

static void check_gnuplot(struct tally *t)
{
	char *v = first_line_of("gnuplot", "--version");
	if (v)
		line(t, "ok", "gnuplot", "%s", v);
	else
		line(t, "warn", "gnuplot", "not found: 'report' draws its plots with it (or writes tables only with --no-plots); "
		     "install gnuplot-nox (scripts/setup.sh)");
	free(v);
}

static void check_sandbox(struct tally *t)
{
	struct sandbox_caps c;
	sandbox_probe(&c);
	if (c.netns)
		line(t, "ok", "netns", "candidates run without network (network namespace%s)",
		     c.netns_needs_userns ? " inside a user namespace" : "");
	else
		line(t, "warn", "netns", "%s: candidates keep network access; run as root or enable user namespaces",
		     c.netns_why);
	if (c.landlock_abi)
		line(t, "ok", "landlock", "ABI %d: candidates can write only inside their directory", c.landlock_abi);
	else
		line(t, "warn", "landlock", "%s: candidates are confined by rlimits and a private directory only",
		     c.landlock_why);
}

static void check_suite(struct tally *t, const struct sb_ctx *ctx, const struct config *cfg)
{
	struct suite s;
	struct sb_error err = { 0 };
	if (suite_load(&s, ctx->home, cfg->problems.root, &err)) {
		line(t, "fail", "suite", "%s", err.msg);
		return;
	}
	size_t per[4] = { 0 };
	for (size_t i = 0; i < s.nproblems; i++)
		per[s.problems[i].level - 1]++;
	line(t, s.nproblems ? (s.nskipped ? "warn" : "ok") : "fail", "suite",
	     "%s: %zu problems (L1 %zu, L2 %zu, L3 %zu, L4 %zu)%s", s.root, s.nproblems, per[0], per[1], per[2], per[3],
	     s.nskipped ? "; some files were skipped, see 'stitchbench problems'" : "");
	suite_release(&s);
}

/* One line per configured model. What stops a run with it is a fail: an API key variable that is not
 * set (a run refuses to start; --offline still checks it, as it needs no network), a headers_env
 * variable that is not set, and nothing listening at the endpoint (a run's calls fail at once and it
 * stops). Any other probe failure is a warning: a slow server, a gateway without GET /models, or a
 * cassette a later step makes. */
static void check_llm(struct tally *t, const struct config *cfg, int offline)
{
	for (size_t i = 0; i < cfg->nmodels; i++) {
		const struct model_cfg *m = &cfg->models[i];
		struct sb_error err = { 0 };
		if (llm_check_key(m, &err)) {
			line(t, "fail", "llm", "%s: %s", m->name, err.msg);
			continue;
		}
		if (offline && strcmp(m->provider, "replay")) {
			printf("%-5s %-9s %s: %s not probed (--offline)\n", "skip", "llm", m->name, m->api_base);
			continue;
		}
		struct strbuf d = STRBUF_INIT;
		double lat;
		int down, rc = llm_check_reach(m, &lat, &down, &d, &err);
		if (rc && down)
			line(t, "fail", "llm", "%s: %s; nothing answers there (a run's calls would fail at once): start "
			     "the server, or point models.%s.api_base at one that answers", m->name, err.msg, m->name);
		else if (rc == SB_EINPUT && strcmp(m->provider, "replay"))
			line(t, "fail", "llm", "%s: %s", m->name, err.msg);
		else if (rc)
			line(t, "warn", "llm", "%s: %s", m->name, err.msg);
		else if (!strcmp(m->provider, "replay"))
			line(t, "ok", "llm", "%s: %s", m->name, d.buf);
		else
			line(t, "ok", "llm", "%s: %s %.0f ms, %s", m->name, m->api_base, lat * 1e3, d.buf);
		strbuf_release(&d);
	}
}

int cmd_doctor(int argc, char **argv, struct sb_ctx *ctx)
{
	struct doctor_args a;
	struct sb_error err = { 0 };
	struct config cfg;
	struct tally t = { 0 };
	struct gpu_list gpus;
	int rc = doctor_parse_args(argc, argv, &a, &err);

	config_init(&cfg);
	if (rc == 0 && a.help) {
		fputs(cmd_doctor_help, stdout);
		config_release(&cfg);
		config_opts_release(&a.cfg);
		return 0;
	}
	if (rc == 0)
		rc = config_resolve(&a.cfg, &cfg, &err);
	if (rc) {
		config_release(&cfg);
		config_opts_release(&a.cfg);
		return cli_fail(ctx, &err);
	}
	printf("stitchbench doctor (home %s)\n", ctx->home);
	check_cpu(&t);
	check_gpus(&t, &gpus);
	check_cuda_toolkit(&t, gpus.n > 0);
	check_python(&t, ctx, &cfg, gpus.n > 0);
	check_profiler(&t, ctx, gpus.n > 0);
	check_spawn_lib(&t, ctx, &cfg);
	check_gnuplot(&t);
	line(&t, "ok", "sqlite", "%s (linked statically)", sqlite3_libversion());
	check_sandbox(&t);
	check_suite(&t, ctx, &cfg);
	check_llm(&t, &cfg, a.offline);
	printf("summary: %d ok, %d warn, %d fail\n", t.ok, t.warn, t.fail);
	if (a.cfg.config_path) {
		struct strbuf yaml = STRBUF_INIT;
		config_dump(&cfg, CONFIG_DUMP_PUBLIC, &yaml);
		printf("\n# resolved configuration from %s (defaults filled in)\n%s", a.cfg.config_path, yaml.buf);
		strbuf_release(&yaml);
	}
	gpu_list_release(&gpus);
	config_release(&cfg);
	config_opts_release(&a.cfg);
	return t.fail ? SB_EXIT_ENV : SB_EXIT_OK;
}
