/* audit.c - runs one problem's reference for the audit (several seeds, the same seed twice, the same
 * inputs twice, signed inputs; docs/audit.md), judges the outputs with audit_rules.c and caches the
 * findings by the problem file's sha256, where `eval` finds them for its verdicts. */
#include "audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../eval/ref/ref.h"
#include "../eval/timing/timing.h"

/* ---------- the report ---------- */

void audit_report_release(struct audit_report *r)
{
	findings_release(&r->findings);
	free(r->failed);
	memset(r, 0, sizeof(*r));
}

json_t *audit_report_json(const struct audit_report *r)
{
	json_t *f = json_array();
	for (size_t i = 0; i < r->findings.n; i++)
		json_array_append_new(f, json_pack("{s:s, s:s}", "id", r->findings.v[i].id, "message", r->findings.v[i].message));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b}", "problem", r->problem, "name", r->name, "sha256",
			 r->sha256, "device", r->device, "torch", r->torch, "findings", f, "failed",
			 r->failed ? json_string(r->failed) : json_null(), "cached", r->cached);
}

/* ---------- the cache (read by eval/auditcache.c) ---------- */

static void cache_write(const char *root, const struct audit_report *r)
{
	char *dir = xstrfmt("%s/audit", root), *path = audit_cache_path(root, r->sha256);
	char *tmp = xstrfmt("%s.tmp-%d", path, (int)getpid()), stamp[32];
	time_t now = time(NULL);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	json_t *j = audit_report_json(r);
	json_object_del(j, "cached");
	json_object_set_new(j, "format", json_integer(AUDIT_FORMAT));
	json_object_set_new(j, "audited", json_string(stamp));
	fs_mkdirs(dir, 0700);
	/* written aside and renamed: `eval` never reads half an entry; a failed write costs a rerun only */
	if (json_dump_file(j, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 && rename(tmp, path) != 0)
		unlink(tmp);
	json_decref(j);
	free(dir);
	free(path);
	free(tmp);
}

static void from_cache(json_t *c, struct audit_report *r)
{
	size_t i;
	json_t *f;
	snprintf(r->device, sizeof(r->device), "%s", json_string_value(json_object_get(c, "device")) ?: "");
	snprintf(r->torch, sizeof(r->torch), "%s", json_string_value(json_object_get(c, "torch")) ?: "");
	json_array_foreach(json_object_get(c, "findings"), i, f)
		findings_add(&r->findings, json_string_value(json_object_get(f, "id")) ?: "?", "%s",
			  json_string_value(json_object_get(f, "message")) ?: "");
	if (json_is_string(json_object_get(c, "failed")))
		r->failed = xstrdup(json_string_value(json_object_get(c, "failed")));
	r->cached = 1;
}

/* ---------- the runs ---------- */

/* The files of one audit: outputs per seed, the same seed again, the same inputs again, signed inputs. */
struct runs {
	struct st_file out[AUDIT_SEEDS], in[AUDIT_SEEDS], rerun, again, sout[2], sin[2];
	json_t *inputs;            /* the first seed's input fingerprints: [sum, sumsq, numel, dtype, shape, ...] */
};

static void runs_close(struct runs *x)
{
	for (int k = 0; k < AUDIT_SEEDS; k++) {
		st_close(&x->out[k]);
		st_close(&x->in[k]);
	}
	for (int k = 0; k < 2; k++) {
		st_close(&x->sout[k]);
		st_close(&x->sin[k]);
	}
	st_close(&x->rerun);
	st_close(&x->again);
	json_decref(x->inputs);
}

static int run_one(struct refworker *w, const char *dir, const char *tag, uint32_t seed, int sign, int again,
		   struct st_file *out, struct st_file *in, struct st_file *out2, json_t **inputs, struct sb_error *err)
{
	char *o = xstrfmt("%s/%s_out.safetensors", dir, tag), *i = xstrfmt("%s/%s_in.safetensors", dir, tag);
	char *a = xstrfmt("%s/%s_again.safetensors", dir, tag), stage[64];
	json_t *req = json_pack("{s:s, s:I, s:s, s:s, s:b}", "cmd", "run", "seed", (json_int_t)seed, "out", o,
				"inputs_out", i, "signed", sign), *reply;
	if (again)
		json_object_set_new(req, "again_out", json_string(a));
	snprintf(stage, sizeof(stage), "running %s", tag);
	int rc = refworker_ask(w, req, &reply, stage, err);
	if (rc == 0) {
		if (inputs)
			*inputs = json_incref(json_object_get(reply, "inputs_before"));
		json_decref(reply);
		rc = st_open(o, out, err) || (in && st_open(i, in, err)) || (again && st_open(a, out2, err)) ? SB_EIO : 0;
	}
	free(o);
	free(i);
	free(a);
	return rc;
}

static int run_all(struct refworker *w, const struct eval_env *e, const struct config *cfg, const struct problem *p,
		   struct runs *x, struct sb_error *err)
{
	json_t *reply;
	uint32_t seeds[AUDIT_SEEDS];
	for (int k = 0; k < AUDIT_SEEDS; k++)
		seeds[k] = trial_seed((uint32_t)cfg->eval.seed, 3000 + k);
	int rc = refworker_ask(w, json_pack("{s:s, s:s, s:s, s:i}", "cmd", "load", "problem", p->path, "device", e->device,
					    "seed", cfg->eval.seed), &reply, "loading the problem", err);
	if (rc)
		return rc;
	json_decref(reply);
	for (int k = 0; k < AUDIT_SEEDS && !rc; k++) {
		char tag[16];
		snprintf(tag, sizeof(tag), "seed%d", k);
		rc = run_one(w, w->dir, tag, seeds[k], 0, k == 0, &x->out[k], &x->in[k], &x->again, k ? NULL : &x->inputs, err);
	}
	if (!rc)
		rc = run_one(w, w->dir, "rerun", seeds[0], 0, 0, &x->rerun, NULL, NULL, NULL, err);
	for (int k = 0; k < 2 && !rc; k++) {
		char tag[16];
		snprintf(tag, sizeof(tag), "signed%d", k);
		rc = run_one(w, w->dir, tag, seeds[k], 1, 0, &x->sout[k], &x->sin[k], NULL, NULL, err);
	}
	return rc;
}

/* ---------- judging ---------- */

static const struct tolerance exact = { 0, 0 };

static int all_same(const struct st_file *a, const struct st_file *b)
{
	if (a->ntensors != b->ntensors)
		return 0;
	for (size_t j = 0; j < a->ntensors; j++)
		if (!audit_rule_same(&a->tensors[j], &b->tensors[j], exact))
			return 0;
	return 1;
}

/* Largest |x| and largest spread across seeds of output j, for messages. */
static void spread(const struct runs *x, size_t j, double *maxabs, double *range)
{
	*maxabs = *range = 0;
	for (int64_t i = 0; i < x->out[0].tensors[j].numel; i++) {
		double lo = INFINITY, hi = -INFINITY;
		for (int k = 0; k < AUDIT_SEEDS; k++) {
			double v = st_value(&x->out[k].tensors[j], i);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			*maxabs = fabs(v) > *maxabs ? fabs(v) : *maxabs;
		}
		*range = hi - lo > *range ? hi - lo : *range;
	}
}

/* Measures what the runs show of the problem; checks/rules_audit.c decides what is a flaw. */
static void find_flaws(const struct config *cfg, struct runs *x, struct audit_report *r)
{
	size_t i, nin = json_array_size(x->inputs);
	json_t *fp;
	const char **dtypes = xcalloc(nin + 1, sizeof(*dtypes));
	json_array_foreach(x->inputs, i, fp)
		dtypes[i] = json_string_value(json_array_get(fp, 3));
	size_t nout = x->out[0].ntensors;
	for (int k = 1; k < AUDIT_SEEDS; k++)
		nout = x->out[k].ntensors < nout ? x->out[k].ntensors : nout;
	struct audit_output *o = xcalloc(nout + 1, sizeof(*o));
	for (size_t j = 0; j < nout; j++) {
		const struct st_tensor *outs[AUDIT_SEEDS], *souts[2];
		for (int k = 0; k < AUDIT_SEEDS; k++)
			outs[k] = &x->out[k].tensors[j];
		int signed_ok = x->sout[0].ntensors > j && x->sout[1].ntensors > j;
		for (int k = 0; signed_ok && k < 2; k++)
			souts[k] = &x->sout[k].tensors[j];
		struct tolerance tol = tolerance_for(cfg->eval.tolerance, outs[0]->dtype);
		o[j].signed_ran = signed_ok;
		o[j].atol = tol.atol;
		o[j].equals_input = -1;
		spread(x, j, &o[j].maxabs, &o[j].range);
		if ((o[j].zero = audit_rule_zero(outs, AUDIT_SEEDS, tol)))
			o[j].zero_signed = signed_ok && audit_rule_zero(souts, 2, tol);
		else if ((o[j].constant = audit_rule_constant(outs, AUDIT_SEEDS, tol)))
			o[j].constant_signed = signed_ok && audit_rule_constant(souts, 2, tol);
		for (size_t in = 0; in < x->in[0].ntensors; in++) {
			int eq = 1, seq = signed_ok && x->sin[0].ntensors > in && x->sin[1].ntensors > in;
			for (int k = 0; eq && k < AUDIT_SEEDS; k++)
				eq = in < x->in[k].ntensors && audit_rule_same(outs[k], &x->in[k].tensors[in], tol);
			for (int k = 0; eq && seq && k < 2; k++)
				seq = audit_rule_same(souts[k], &x->sin[k].tensors[in], tol);
			if (eq) {
				o[j].equals_input = (long)in;
				o[j].equals_input_signed = seq;
				break;
			}
		}
	}
	int rerun_differs = !all_same(&x->out[0], &x->rerun);
	struct audit_facts f = {
		.seeds = AUDIT_SEEDS, .input_dtypes = dtypes, .ninputs = nin, .rerun_differs = rerun_differs,
		.again_differs = !rerun_differs && !all_same(&x->out[0], &x->again), .outputs = o, .noutputs = nout,
	};
	rules_audit(&f, &r->findings);
	free(o);
	free(dtypes);
}

int audit_problem(const struct eval_env *e, const struct config *cfg, const struct problem *p, int use_cache,
		  struct audit_report *r, struct sb_error *err)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->problem, sizeof(r->problem), "L%d/%d", p->level, p->id);
	snprintf(r->name, sizeof(r->name), "%s", p->name);
	memcpy(r->sha256, p->sha256, 65);
	json_t *c = use_cache ? audit_cache_read(e->cache_root, p->sha256) : NULL;
	if (c) {
		from_cache(c, r);
		json_decref(c);
		return 0;
	}
	snprintf(r->device, sizeof(r->device), "%s", e->device);
	snprintf(r->torch, sizeof(r->torch), "%s", e->torch);
	struct refworker w;
	struct runs x;
	memset(&x, 0, sizeof(x));
	int rc = refworker_start(&w, e, "audit", err);
	if (rc == 0) {
		struct sb_error why = { 0 };
		if ((rc = run_all(&w, e, cfg, p, &x, &why)) == SB_EINPUT || rc == SB_EIO) {
			/* the reference itself fails, or wrote what cannot be read: a finding about the problem */
			r->failed = xstrdup(why.msg);
			rc = 0;
		} else if (rc) {
			sb_error_set(err, rc, "%s", why.msg);
		} else {
			find_flaws(cfg, &x, r);
		}
	}
	runs_close(&x);
	refworker_stop(&w);
	if (rc == 0)
		cache_write(e->cache_root, r);
	return rc;
}
