/* exchange.c - outputs as files or shared with the reference worker (check.h). */
#include "check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/log.h"
#include "../eval_int.h"

int xchg_shared_on(const struct config *cfg, const char *device)
{
	if (cfg->eval.exchange == XCHG_AUTO)
		return strcmp(device, "cpu") != 0;
	return cfg->eval.exchange == XCHG_SHARED;
}

int xchg_shared(const struct eval_ctx *c)
{
	return xchg_shared_on(c->cfg, c->e->device);
}

void xchg_mark(const struct eval_ctx *c, json_t *req, int trusted)
{
	if (xchg_shared(c))
		json_object_set_new(req, "exchange", json_string(trusted ? "hold" : "share"));
}

static int held(const struct eval_ctx *c, const char *key)
{
	for (size_t i = 0; i < c->held.nr; i++)
		if (!strcmp(c->held.v[i], key))
			return 1;
	return 0;
}

static void forget(struct eval_ctx *c, const char *key)
{
	for (size_t i = 0; i < c->held.nr; i++)
		if (!strcmp(c->held.v[i], key)) {
			free((char *)c->held.v[i]);
			memmove(&c->held.v[i], &c->held.v[i + 1], (c->held.nr - i) * sizeof(char *)); /* and the NULL */
			c->held.nr--;
			return;
		}
}

int xchg_take(struct eval_ctx *c, json_t *shared, const char *key, char *why, size_t whylen, struct sb_error *err)
{
	return xchg_take_from(c, &c->cand, shared, key, why, whylen, err);
}

int xchg_take_from(struct eval_ctx *c, struct worker *from, json_t *shared, const char *key, char *why, size_t whylen,
		   struct sb_error *err)
{
	if (!xchg_shared(c))
		return 0;
	forget(c, key);
	int fd = worker_take_fd(from);
	if (fd < 0 || !json_is_object(shared)) {
		if (fd >= 0)
			close(fd);
		snprintf(why, whylen, "the candidate's worker shared no outputs (no %s came with its reply)",
			 fd < 0 ? "descriptor" : "description");
		return 1;
	}
	json_t *req = json_pack("{s:s, s:s, s:O, s:I}", "cmd", "take", "key", key, "shared", shared, "max_bytes",
				(json_int_t)evalctx_max_output(c)), *reply = NULL;
	struct worker_fault f;
	int rc = worker_send_fds(&c->ref, req, &fd, 1, &f);
	json_decref(req);
	close(fd); /* the reference worker has its own copy now */
	if (rc == 0)
		rc = worker_receive(&c->ref, &reply, proc_now() + REF_TIMEOUT_S, &f);
	if (rc)
		return sb_error_set(err, SB_EENV, "the reference worker failed while taking the candidate's outputs: %s", f.what);
	if (!json_is_true(json_object_get(reply, "ok"))) {
		/* what the candidate's worker handed over cannot be mapped or does not match its description */
		snprintf(why, whylen, "the candidate's shared outputs are unusable: %.300s", jstr_or(reply, "message", "?"));
		json_decref(reply);
		return 1;
	}
	json_decref(reply);
	strvec_push(&c->held, key);
	return 0;
}

int xchg_expect_begin(struct eval_ctx *c, uint32_t seed, const char *key, unsigned flags, struct sb_error *err)
{
	json_t *req = json_pack("{s:s, s:I, s:s, s:b}", "cmd", "run", "seed", (json_int_t)seed, "out", key, "fingerprint",
				(flags & XCHG_FACTS) != 0);
	if (flags & XCHG_SHIFT) {
		json_object_set_new(req, "shift", json_true());
		json_object_set_new(req, "nonfinite", json_true());
	}
	xchg_mark(c, req, 1);
	struct worker_fault f;
	int rc = worker_send(&c->ref, req, &f);
	json_decref(req);
	if (rc)
		return sb_error_set(err, SB_EENV, "the reference worker failed while computing the expected outputs: %s", f.what);
	return 0;
}

int xchg_expect_end(struct eval_ctx *c, const char *key, json_t **reply, struct sb_error *err)
{
	json_t *r;
	if (eval_ref_reply(&c->ref, &r, "computing the expected outputs", err))
		return -1;
	if (reply)
		*reply = r;
	else
		json_decref(r);
	if (xchg_shared(c)) {
		forget(c, key);
		strvec_push(&c->held, key);
	}
	return 0;
}

int xchg_expect(struct eval_ctx *c, uint32_t seed, const char *key, unsigned flags, json_t **reply,
		struct sb_error *err)
{
	if (reply)
		*reply = NULL;
	if (xchg_expect_begin(c, seed, key, flags, err))
		return -1;
	return xchg_expect_end(c, key, reply, err);
}

/* ---------- a `compare` reply ---------- */

static double num(json_t *v)
{
	if (json_is_string(v)) /* inf, -inf, nan: JSON has no literal for them */
		return strtod(json_string_value(v), NULL);
	return json_number_value(v);
}

static int shape_of(json_t *a, int64_t *dims, int *ndim)
{
	size_t i;
	json_t *d;
	if (!json_is_array(a) || json_array_size(a) > ST_MAX_DIMS)
		return -1;
	json_array_foreach(a, i, d) dims[i] = json_integer_value(d);
	*ndim = (int)json_array_size(a);
	return 0;
}

/* An element as compare.c writes it: integers exactly, floats to 6 digits. */
static void value_text(json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%" PRId64, (int64_t)json_integer_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, len, "%.6g", num(v));
}

static int parse_output(json_t *o, enum tolerance_preset preset, struct output_check *oc, int *zero_e, int *zero_a)
{
	struct compare_result *r = &oc->cmp;
	const char *name = json_string_value(json_object_get(o, "name"));
	memset(r, 0, sizeof(*r));
	r->worst_index = -1;
	snprintf(oc->name, sizeof(oc->name), "%s", name ? name : "?");
	*zero_e = json_is_true(json_object_get(o, "zero_expected"));
	if (json_is_true(json_object_get(o, "missing"))) {
		snprintf(r->detail, sizeof(r->detail), "output %s is missing", oc->name);
		return 0;
	}
	*zero_a = json_is_true(json_object_get(o, "zero_actual"));
	int64_t es[ST_MAX_DIMS], as[ST_MAX_DIMS];
	int en = 0, an = 0;
	const char *edt = jstr_or(o, "dtype", "?"), *adt = jstr_or(o, "actual_dtype", "?");
	if (shape_of(json_object_get(o, "shape"), es, &en) || shape_of(json_object_get(o, "actual_shape"), as, &an))
		return -1;
	oc->ndim = an;
	r->dtype_mismatch = strcmp(edt, adt) != 0;
	r->shape_mismatch = en != an || memcmp(es, as, sizeof(int64_t) * (size_t)en);
	if (r->dtype_mismatch || r->shape_mismatch) {
		compare_describe_mismatch(r, adt, edt, an, as, en, es);
		return 0;
	}
	enum st_dtype dt;
	if (st_dtype_parse(edt, &dt))
		return -1;
	struct tolerance tol = tolerance_for(preset, dt);
	r->n_mismatched = json_integer_value(json_object_get(o, "n_mismatched"));
	r->n_nan_actual = json_integer_value(json_object_get(o, "n_nan"));
	r->n_inf_actual = json_integer_value(json_object_get(o, "n_inf"));
	r->max_abs = num(json_object_get(o, "max_abs"));
	r->max_rel = num(json_object_get(o, "max_rel"));
	r->worst_index = json_integer_value(json_object_get(o, "worst_index"));
	r->pass = r->n_mismatched == 0;
	int64_t numel = json_integer_value(json_object_get(o, "numel"));
	char ev[32] = "", av[32] = "";
	if (r->worst_index >= 0 && r->worst_index < numel) {
		compare_worst_coord(r, en, es);
		json_t *we = json_object_get(o, "worst_expected"), *wa = json_object_get(o, "worst_actual");
		r->worst_expected = json_is_boolean(we) ? json_is_true(we) : num(we);
		r->worst_actual = json_is_boolean(wa) ? json_is_true(wa) : num(wa);
		value_text(we, ev, sizeof(ev));
		value_text(wa, av, sizeof(av));
	} else {
		r->worst_index = -1;
	}
	compare_describe(r, en, es, numel, ev, av, tol);
	return 0;
}

int xchg_parse_stats(json_t *reply, enum tolerance_preset tol, struct outputs_cmp *r)
{
	json_t *outs = json_object_get(reply, "outputs");
	memset(r, 0, sizeof(*r));
	if (!json_is_array(outs))
		return -1;
	size_t n = json_array_size(outs), count = (size_t)json_integer_value(json_object_get(reply, "count"));
	r->readable = 1;
	r->pass = 1;
	r->bitwise = json_is_true(json_object_get(reply, "bitwise"));
	r->digest_expected = strtoull(jstr_or(reply, "digest_expected", "0"), NULL, 16);
	r->digest_actual = strtoull(jstr_or(reply, "digest_actual", "0"), NULL, 16);
	if (count != n) {
		r->pass = 0;
		snprintf(r->error, sizeof(r->error), "the candidate returned %zu output%s, the reference %zu", count,
			 count == 1 ? "" : "s", n);
	}
	r->outputs = xcalloc(n ? n : 1, sizeof(*r->outputs));
	r->zero_expected = xcalloc(n ? n : 1, sizeof(int));
	r->zero_actual = xcalloc(n ? n : 1, sizeof(int));
	for (size_t i = 0; i < n && i < count; i++) {
		struct output_check *oc = &r->outputs[r->noutputs];
		if (parse_output(json_array_get(outs, i), tol, oc, &r->zero_expected[i], &r->zero_actual[i])) {
			outputs_cmp_release(r);
			return -1;
		}
		r->noutputs++;
		r->pass &= oc->cmp.pass;
		r->nan_actual |= oc->cmp.n_nan_actual > 0 || oc->cmp.n_inf_actual > 0;
	}
	return 0;
}

static json_t *tolerances(enum tolerance_preset preset)
{
	static const enum st_dtype all[] = { ST_F32, ST_F16, ST_BF16, ST_F64, ST_I64, ST_I32, ST_I16, ST_I8, ST_U8, ST_BOOL };
	json_t *t = json_object();
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct tolerance x = tolerance_for(preset, all[i]);
		json_object_set_new(t, st_dtype_name(all[i]), json_pack("[f, f]", x.atol, x.rtol));
	}
	return t;
}

int xchg_compare(struct eval_ctx *c, const char *expected, const char *actual, struct outputs_cmp *r,
		 struct sb_error *err)
{
	if (!xchg_shared(c))
		return outputs_compare(expected, actual, c->cfg->eval.tolerance, r, err);
	memset(r, 0, sizeof(*r));
	if (!held(c, expected))
		return sb_error_set(err, SB_EENV, "no expected outputs kept under %s", expected);
	if (!held(c, actual)) {
		snprintf(r->error, sizeof(r->error), "the candidate's outputs were never received");
		return 0;
	}
	double t0 = proc_now();
	json_t *req = json_pack("{s:s, s:s, s:s, s:o}", "cmd", "compare", "expected", expected, "actual", actual, "tol",
				tolerances(c->cfg->eval.tolerance)), *reply;
	if (eval_ref_ask(&c->ref, req, &reply, "comparing the outputs", err))
		return -1;
	int rc = xchg_parse_stats(reply, c->cfg->eval.tolerance, r);
	json_decref(reply);
	if (rc)
		return sb_error_set(err, SB_EENV, "the reference worker's comparison of %s is malformed", actual);
	const char *base = strrchr(actual, '/');
	sb_trace("compare %s on the reference worker: %.3f s", base ? base + 1 : actual, proc_now() - t0);
	return 0;
}

void xchg_drop(struct eval_ctx *c, const char *key)
{
	if (!xchg_shared(c)) {
		outputs_drop(key, c->e->keep_workdirs);
		return;
	}
	if (!held(c, key))
		return;
	forget(c, key);
	json_t *reply;
	struct sb_error err = { 0 };
	if (eval_ref_ask(&c->ref, json_pack("{s:s, s:[s]}", "cmd", "drop", "keys", key), &reply, "dropping outputs", &err) == 0)
		json_decref(reply);
}

void xchg_finish(struct eval_ctx *c)
{
	if (!c->held.nr)
		return;
	json_t *reply;
	struct sb_error err = { 0 };
	if (c->ref.started && !c->ref.finished &&
	    eval_ref_ask(&c->ref, json_pack("{s:s, s:b}", "cmd", "drop", "all", 1), &reply, "dropping outputs", &err) == 0)
		json_decref(reply);
	strvec_clear(&c->held);
}
