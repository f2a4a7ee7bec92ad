/* ncu.c - runs Nsight Compute on harness/worker/ncu_target.py for one kernel and reads the three
 * metrics back from its CSV (columns found by header name, so column order does not matter). */
#include "ncu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/proc.h"
#include "../core/strbuf.h"

static const char *const metrics[3] = {
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
};

char *ncu_find(void)
{
	char *p = proc_which("ncu");
	if (p)
		return p;
	const char *home = getenv("CUDA_HOME");
	char *guess = xstrfmt("%s/bin/ncu", home && *home ? home : "/usr/local/cuda");
	if (access(guess, X_OK) == 0)
		return guess;
	free(guess);
	return NULL;
}

/* Splits one CSV line ("a","b,c",d) into at most max fields, unquoting in place. */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;
	while (*p && n < max) {
		char *out = p;
		f[n++] = out;
		if (*p == '"') {
			p++;
			while (*p && !(*p == '"' && p[1] != '"')) {
				if (*p == '"')
					p++; /* "" inside quotes */
				*out++ = *p++;
			}
			if (*p == '"')
				p++;
		} else {
			while (*p && *p != ',')
				*out++ = *p++;
		}
		char *next = *p == ',' ? p + 1 : p + strlen(p);
		*out = '\0';
		p = next;
	}
	return n;
}

static double number(const char *s)
{
	char buf[64];
	size_t n = 0;
	for (; *s && n + 1 < sizeof(buf); s++)
		if (*s != ',') /* thousands separators */
			buf[n++] = *s;
	buf[n] = '\0';
	return strtod(buf, NULL);
}

int ncu_parse_csv(const char *text, struct ncu_result *out, struct sb_error *err)
{
	char *copy = xstrdup(text), *save = NULL, *f[64];
	int name_col = -1, value_col = -1, kernel_col = -1;
	char first_error[256] = "";
	out->found = 0;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (starts_with(line, "==ERROR==") || (starts_with(line, "==WARNING==") && strstr(line, "No kernels"))) {
			if (!first_error[0])
				snprintf(first_error, sizeof(first_error), "%s", line);
			continue;
		}
		if (line[0] != '"')
			continue;
		int n = csv_split(line, f, 64);
		if (name_col < 0) {
			for (int i = 0; i < n; i++) {
				if (!strcmp(f[i], "Metric Name"))
					name_col = i;
				else if (!strcmp(f[i], "Metric Value"))
					value_col = i;
				else if (!strcmp(f[i], "Kernel Name"))
					kernel_col = i;
			}
			continue;
		}
		if (name_col >= n || value_col >= n || value_col < 0)
			continue;
		for (int m = 0; m < 3; m++) {
			if (strcmp(f[name_col], metrics[m]) || (out->found & (1 << m)))
				continue;
			double v = number(f[value_col]);
			*(m == 0 ? &out->sm_pct : m == 1 ? &out->dram_pct : &out->occupancy_pct) = v;
			out->found |= 1 << m;
			if (kernel_col >= 0 && kernel_col < n && !out->kernel[0])
				snprintf(out->kernel, sizeof(out->kernel), "%s", f[kernel_col]);
		}
	}
	free(copy);
	if (out->found)
		return 0;
	return sb_error_set(err, SB_EENV, "ncu measured nothing: %s", first_error[0] ? first_error
			    : "its output has no metric rows (was the kernel launched?)");
}

/* ncu's --kernel-name regex:, with the name's regex characters escaped. */
static char *name_regex(const char *mangled)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "regex:^");
	for (const char *s = mangled; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s))
			strbuf_addch(&sb, '\\');
		strbuf_addch(&sb, *s);
	}
	strbuf_addch(&sb, '$');
	return strbuf_detach(&sb, NULL);
}

int ncu_measure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate,
		const char *mangled, struct ncu_result *out, struct sb_error *err)
{
	memset(out, 0, sizeof(*out));
	char *ncu = ncu_find();
	if (!ncu)
		return sb_error_set(err, SB_EENV, "--ncu: Nsight Compute (ncu) is not on PATH nor in $CUDA_HOME/bin; install "
				    "it with the CUDA toolkit or drop --ncu");
	struct strvec argv = STRVEC_INIT;
	char *target = xstrdup(e->worker_script);
	char *slash = strrchr(target, '/');
	char *script = xstrfmt("%.*s/ncu_target.py", slash ? (int)(slash - target) : 1, slash ? target : ".");
	char *regex = name_regex(mangled), *metric_list = xstrfmt("%s,%s,%s", metrics[0], metrics[1], metrics[2]);
	strvec_push(&argv, ncu);
	strvec_push(&argv, "--clock-control");
	strvec_push(&argv, "none");
	strvec_push(&argv, "--target-processes");
	strvec_push(&argv, "all");
	strvec_push(&argv, "--kernel-name-base");
	strvec_push(&argv, "mangled");
	strvec_push(&argv, "--kernel-name");
	strvec_push(&argv, regex);
	strvec_push(&argv, "--launch-skip");
	strvec_push(&argv, "2");
	strvec_push(&argv, "--launch-count");
	strvec_push(&argv, "1");
	strvec_push(&argv, "--metrics");
	strvec_push(&argv, metric_list);
	strvec_push(&argv, "--csv");
	strvec_push(&argv, e->python);
	strvec_push(&argv, "-u");
	strvec_push(&argv, script);
	strvec_push(&argv, "--problem");
	strvec_push(&argv, p->path);
	strvec_push(&argv, "--device");
	strvec_push(&argv, e->device);
	strvec_pushf(&argv, "--seed=%d", cfg->eval.seed);
	strvec_pushf(&argv, "--flush-bytes=%lld", eval_flush_bytes(e));
	if (candidate) {
		strvec_push(&argv, "--candidate");
		strvec_push(&argv, candidate);
		strvec_pushf(&argv, "--ext-dir=%s/ext", e->cache_root);
	}
	struct proc_opts o = { .argv = argv.v, .timeout_ms = 600 * 1000, .out_cap = 4 << 20, .err_cap = 1 << 20 };
	struct proc_result r;
	proc_result_init(&r);
	int rc = proc_run(&o, &r);
	if (rc)
		rc = sb_error_set(err, SB_EENV, "cannot run %s", ncu);
	else if (r.timed_out)
		rc = sb_error_set(err, SB_EENV, "ncu did not finish within 600 s");
	else {
		struct strbuf all = STRBUF_INIT;
		strbuf_addf(&all, "%s\n%s", r.out.buf, r.err.buf);
		rc = ncu_parse_csv(all.buf, out, err);
		strbuf_release(&all);
	}
	if (!out->kernel[0])
		snprintf(out->kernel, sizeof(out->kernel), "%s", mangled);
	proc_result_release(&r);
	strvec_clear(&argv);
	free(ncu);
	free(target);
	free(script);
	free(regex);
	free(metric_list);
	return rc;
}
