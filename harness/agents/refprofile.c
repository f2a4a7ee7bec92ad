/* refprofile.c - the reference's kernel profile as the StitchCUDA Planner reads it: which kernels
 * PyTorch runs for the reference, their share of the time, their launch shapes and, where measured,
 * what bounds each. A plan that knows the GEMM takes 85% of the time and the three elementwise kernels
 * 5% each, memory-bound, is a better plan. */
#include "refprofile.h"

#include <math.h>
#include <string.h>

#include "../profile/refprof.h"

static void add_dims(struct strbuf *out, const int32_t d[3])
{
	if (d[1] == 1 && d[2] == 1)
		strbuf_addf(out, "%d", d[0]);
	else
		strbuf_addf(out, "(%d,%d,%d)", d[0], d[1], d[2]);
}

void refprofile_text(const struct prof_report *r, const char *gpu, const struct bound_hints *hints,
		     struct strbuf *out)
{
	size_t ncalls = r->ntrials ? r->ntrials : 1, kernels = 0, shown = 0;
	struct bound_notes notes;
	for (size_t i = 0; i < r->nrows; i++)
		kernels += r->rows[i].kind == 'k';
	strbuf_addf(out, "Measured with CUPTI on %s over %zu calls of the reference. One call: %.1f us between "
		    "CUDA events, %.1f us of kernel time, %.1f us from the first kernel's start to the last one's end.\n",
		    gpu && *gpu ? gpu : "this GPU", r->ntrials, r->event_us, r->kernel_sum_us, r->span_us);
	if (!kernels) {
		strbuf_addstr(out, "No kernel ran in the profiled calls.\n");
		return;
	}
	strbuf_addstr(out, "Kernels and copies by share of the time (library or custom, per call, mean, grid x block):\n");
	bound_notes_init(&notes);
	for (size_t i = 0; i < r->nrows && shown < REFPROFILE_MAX_KERNELS; i++, shown++) {
		const struct prof_row *row = &r->rows[i];
		strbuf_addf(out, "- %.90s: %.1f%%", row->short_name ? row->short_name : row->name, 100 * row->share);
		if (row->kind == 'k') {
			strbuf_addf(out, ", %s, %.3g per call, mean %.1f us, ", row->library ? row->library : "custom",
				    (double)row->calls / (double)ncalls, row->mean_us);
			add_dims(out, row->grid);
			strbuf_addstr(out, " x ");
			add_dims(out, row->block);
			if (row->regs)
				strbuf_addf(out, ", %u registers per thread", row->regs);
			bound_metrics_line(&row->hw, out);
			bound_notes_add(&notes, row->short_name ? row->short_name : row->name, &row->hw);
		} else {
			strbuf_addf(out, ", %.3g per call, mean %.1f us", (double)row->calls / (double)ncalls, row->mean_us);
		}
		strbuf_addch(out, '\n');
	}
	if (r->nrows > shown) {
		double rest = 0;
		for (size_t i = shown; i < r->nrows; i++)
			rest += r->rows[i].share;
		strbuf_addf(out, "(%zu more, %.1f%% of the time together)\n", r->nrows - shown, 100 * rest);
	}
	bound_notes_write(&notes, hints, out);
	bound_notes_release(&notes);
}

/* The measurement, on a device slot of the run's evaluation queue. */
struct refprof_job {
	const struct config *cfg;
	const struct problem *p;
	struct prof_report *r;
	const struct eval_env *env; /* the slot's, once it ran */
	int cached, rc;
	struct sb_error err;
};

static void refprof_on_slot(const struct eval_env *env, void *arg)
{
	struct refprof_job *j = arg;
	j->env = env;
	j->rc = refprof_get(env, j->cfg, j->p, 0, j->r, &j->cached, &j->err);
}

void refprofile_for_planner(const struct run_shared *sh, const struct problem *p, const struct bound_hints *hints,
			    struct strbuf *out)
{
	if (!sh->env || strncmp(sh->env->device, "cuda", 4) != 0) {
		strbuf_addstr(out, "None: this run is on the CPU, where there are no kernels to profile; reason from "
			      "the source and the hardware.");
		return;
	}
	struct prof_report r;
	struct sb_error err = { 0 };
	int rc = 0;
	const struct eval_env *e = sh->env;
	prof_report_init(&r);
	/* the cache first: every sample of the problem after the first reads it without waiting for a GPU */
	if (refprof_lookup(e, sh->cfg, p, &r) != 0) {
		/* a measurement runs the reference on the GPU: one at a time per device, like an evaluation
		 * (the pool is shared state with its own lock; the session's view of the run is const otherwise) */
		struct refprof_job j = { .cfg = sh->cfg, .p = p, .r = &r };
		pthread_mutex_lock((pthread_mutex_t *)&sh->sched_mu);
		rc = sched_device_task(sh->sched, refprof_on_slot, &j);
		pthread_mutex_unlock((pthread_mutex_t *)&sh->sched_mu);
		if (rc)
			sb_error_set(&err, SB_EINTERNAL, "the run stopped before the reference could be profiled");
		else if ((rc = j.rc))
			err = j.err;
		if (j.env)
			e = j.env;
	}
	if (rc) {
		strbuf_addf(out, "Not available in this run (%s); reason from the source and the hardware.", err.msg);
	} else {
		refprofile_text(&r, e->gpu, hints, out);
	}
	prof_report_release(&r);
}
