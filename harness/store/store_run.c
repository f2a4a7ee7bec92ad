/* store_run.c - the runs table: what settings a run was made with, taken from the configuration or from a
 * verdict, and the comparison that refuses to mix runs (resume, merge) whose numbers are not comparable. */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void store_run_release(struct store_run *r)
{
	free(r->suite_root);
	free(r->settings);
	memset(r, 0, sizeof(*r));
}

static void policy_string(const struct config *cfg, char out[SB_HACK_IDS + 1])
{
	for (int i = 0; i < SB_HACK_IDS; i++)
		out[i] = cfg->checks.policy[i] == POLICY_REJECT ? 'r' : 'f';
	out[SB_HACK_IDS] = '\0';
}

static json_t *policy_json(const struct config *cfg)
{
	json_t *o = json_object();
	for (int i = 0; i < SB_HACK_IDS; i++) {
		char id[8];
		snprintf(id, sizeof(id), "H%02d", i + 1);
		json_object_set_new(o, id, json_string(cfg->checks.policy[i] == POLICY_REJECT ? "reject" : "flag"));
	}
	return o;
}

static void run_header(struct store_run *r, const char *run_id)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->run_id, sizeof(r->run_id), "%s", run_id);
	st_now(r->created);
	snprintf(r->version, sizeof(r->version), "%s (%s)", SB_VERSION, SB_GIT);
}

static char *dump_settings(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	char *copy = xstrdup(text ? text : "{}");
	free(text);
	json_decref(o);
	return copy;
}

void store_run_from_config(struct store_run *r, const char *run_id, const struct config *cfg, const char *device,
			   const char *gpu, const char *sm, const char *torch, const char *suite_root)
{
	const struct eval_cfg *e = &cfg->eval;
	run_header(r, run_id);
	r->trials = e->trials;
	r->perf_trials = e->perf_trials;
	r->seed = e->seed;
	snprintf(r->tolerance, sizeof(r->tolerance), "%s", tolerance_name(e->tolerance));
	snprintf(r->preset, sizeof(r->preset), "%s", preset_name(e->preset));
	snprintf(r->device, sizeof(r->device), "%s", device);
	snprintf(r->gpu, sizeof(r->gpu), "%s", gpu);
	snprintf(r->torch, sizeof(r->torch), "%s", torch);
	policy_string(cfg, r->policy);
	r->suite_root = suite_root ? xstrdup(suite_root) : NULL;
	json_t *ev = json_pack("{s:s, s:s, s:i, s:i, s:s, s:i, s:i, s:i, s:f, s:i, s:s, s:i, s:b, s:i, s:i}", "preset",
			       r->preset, "device", e->device,
			       "trials", e->trials, "perf_trials", e->perf_trials, "tolerance", r->tolerance, "timeout_s",
			       e->timeout_s, "warmup_ms", e->warmup_ms, "warmup_calls", e->warmup_calls, "rse_target",
			       e->rse_target, "timing_cap_s", e->timing_cap_s, "statistic",
			       e->statistic == STAT_MEAN ? "mean" : "median", "extra_shapes", e->extra_shapes, "compile",
			       e->compile, "seed", e->seed, "build_jobs", e->build_jobs);
	json_t *env = json_pack("{s:s, s:s, s:s, s:s}", "device", device, "gpu", gpu, "sm", sm ? sm : "", "torch", torch);
	r->settings = dump_settings(json_pack("{s:s?, s:o, s:o, s:{s:o}, s:o, s:s?, s:s, s:s}", "name", cfg->name, "eval",
					      ev, "identity", config_identity(cfg), "checks", "policy", policy_json(cfg),
					      "env", env, "suite_root", suite_root, "from", "configuration", "stitchbench",
					      r->version));
}

/* The eval settings older stitchbench recorded, where they are of a key of the identity and of its kind
 * (a verdict's own fields beside them, such as the hash seed applied, may be null where the key is not). */
static void overlay_old(json_t *id, json_t *old)
{
	const char *k;
	json_t *v;
	json_object_foreach(old, k, v) {
		char *key = xstrfmt("eval.%s", k);
		json_t *was = json_object_get(id, key);
		if (was && (json_typeof(was) == json_typeof(v) || (json_is_number(was) && json_is_number(v)) ||
			    (json_is_boolean(was) && json_is_boolean(v))))
			json_object_set(id, key, v);
		free(key);
	}
}

/* A run's or a verdict's identity: its preset's defaults, then what older stitchbench recorded of the
 * eval keys (`old`), then the identity it carries. A run or verdict written before a key joined the
 * identity reads as the key's default under its preset: that is what it ran with unless its
 * configuration changed the key, and nothing recorded says otherwise; runs from before presets
 * existed were all stitchbench's. */
static json_t *identity_of(const char *preset, json_t *old, json_t *identity)
{
	json_t *id = config_identity_default(preset);
	if (json_is_object(old))
		overlay_old(id, old);
	if (json_is_object(identity))
		json_object_update(id, identity);
	return id;
}

static json_t *verdict_identity(json_t *verdict)
{
	json_t *settings = json_object_get(verdict, "settings");
	return identity_of(json_string_value(json_object_get(settings, "preset")), settings,
			   json_object_get(settings, "identity"));
}

static json_t *run_identity(const struct store_run *r)
{
	json_t *o = json_loads(r->settings ? r->settings : "{}", 0, NULL);
	json_t *id = identity_of(r->preset, json_object_get(o, "eval"), json_object_get(o, "identity"));
	json_decref(o);
	return id;
}

int st_run_fields_from_verdict(struct store_run *r, json_t *verdict, struct sb_error *err)
{
	json_int_t trials, perf, seed;
	const char *tol, *device, *gpu, *torch;
	if (json_unpack(json_object_get(verdict, "settings"), "{s:I, s:I, s:I, s:s}", "trials", &trials, "perf_trials",
			&perf, "seed", &seed, "tolerance", &tol) ||
	    json_unpack(json_object_get(verdict, "env"), "{s:s, s:s, s:s}", "device", &device, "gpu", &gpu, "torch", &torch))
		return sb_error_set(err, SB_EINPUT, "the verdict lacks settings.{trials, perf_trials, seed, tolerance} or "
				    "env.{device, gpu, torch} (docs/verdict.md)");
	const char *preset = json_string_value(json_object_get(json_object_get(verdict, "settings"), "preset"));
	snprintf(r->preset, sizeof(r->preset), "%s", preset ? preset : "");
	r->trials = (int)trials;
	r->perf_trials = (int)perf;
	r->seed = (int)seed;
	snprintf(r->tolerance, sizeof(r->tolerance), "%s", tol);
	snprintf(r->device, sizeof(r->device), "%s", device);
	snprintf(r->gpu, sizeof(r->gpu), "%s", gpu);
	snprintf(r->torch, sizeof(r->torch), "%s", torch);
	free(r->settings);
	r->settings = dump_settings(json_pack("{s:o}", "identity", verdict_identity(verdict)));
	return 0;
}

/* A run's reference agents (torch-eager, torch-compile) are judged with the checks off (session.h), so
 * a verdict's checks keys are not necessarily its run's: those come from the configuration, as the
 * policy does, and verdicts are not compared on them. */
static int is_checks_key(const char *key)
{
	return !strncmp(key, "checks.", 7);
}

int store_run_from_verdict(struct store_run *r, const char *run_id, json_t *verdict, const struct config *cfg,
			   struct sb_error *err)
{
	run_header(r, run_id);
	int rc = st_run_fields_from_verdict(r, verdict, err);
	if (rc)
		return rc;
	policy_string(cfg, r->policy);
	json_t *id = verdict_identity(verdict), *configured = config_identity(cfg), *v;
	const char *key;
	json_object_foreach(configured, key, v)
		if (is_checks_key(key))
			json_object_set(id, key, v);
	json_decref(configured);
	free(r->settings);
	r->settings = dump_settings(json_pack("{s:O, s:o, s:O, s:{s:o}, s:s, s:s}", "eval", json_object_get(verdict, "settings"),
					      "identity", id, "env", json_object_get(verdict, "env"),
					      "checks", "policy", policy_json(cfg), "from", "imported verdicts", "stitchbench",
					      r->version));
	return 0;
}

/* "cuda:3" and "cuda:0" are the same kind of device: shards of one run go to different GPUs of a node. */
static size_t device_kind_len(const char *d)
{
	const char *colon = strchr(d, ':');
	return colon ? (size_t)(colon - d) : strlen(d);
}

static void policy_diff(const char *a, const char *b, struct strbuf *ids)
{
	for (int i = 0; i < SB_HACK_IDS && a[i] && b[i]; i++)
		if (a[i] != b[i])
			strbuf_addf(ids, "%sH%02d %s vs %s", ids->len ? ", " : "", i + 1, a[i] == 'r' ? "reject" : "flag",
				    b[i] == 'r' ? "reject" : "flag");
}

static char *identity_text(json_t *v)
{
	char *t = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
	return t ? t : xstrdup("nothing");
}

/* One line per identity key whose values differ, as JSON ("eval.tf32: false in A vs true in B"); a key
 * only one side has (a newer stitchbench's) differs too. */
static int identity_diff(const struct store_run *a, const char *an, const struct store_run *b, const char *bn,
			 int mask, struct strbuf *out)
{
	json_t *ia = run_identity(a), *ib = run_identity(b), *all = json_deep_copy(ia), *v;
	const char *key;
	int n = 0;
	json_object_update_missing(all, ib);
	json_object_foreach(all, key, v) {
		json_t *va = json_object_get(ia, key), *vb = json_object_get(ib, key);
		/* the device asked for ("auto", "cuda:1") is compared as the one evaluated, below */
		if (!strcmp(key, "eval.device") || (mask == STORE_DIFF_VERDICT && is_checks_key(key)) ||
		    (va && vb && json_equal(va, vb)))
			continue;
		char *ta = identity_text(va), *tb = identity_text(vb);
		strbuf_addf(out, "  %s: %s in %s vs %s in %s\n", key, ta, an, tb, bn);
		free(ta);
		free(tb);
		n++;
	}
	json_decref(all);
	json_decref(ia);
	json_decref(ib);
	return n;
}

int store_run_diff(const struct store_run *a, const char *an, const struct store_run *b, const char *bn, int mask,
		   struct strbuf *out)
{
	int n = identity_diff(a, an, b, bn, mask, out);
	if (mask == STORE_DIFF_CONFIG)
		goto policy;
#define DIFF_STR(key, f)                                                                              \
	if (strcmp(a->f, b->f)) {                                                                      \
		n++;                                                                                   \
		strbuf_addf(out, "  %s: \"%s\" in %s vs \"%s\" in %s\n", key, a->f, an, b->f, bn);       \
	}
	size_t ka = device_kind_len(a->device), kb = device_kind_len(b->device);
	if (ka != kb || strncmp(a->device, b->device, ka)) {
		n++;
		strbuf_addf(out, "  device: \"%s\" in %s vs \"%s\" in %s\n", a->device, an, b->device, bn);
	}
	DIFF_STR("gpu", gpu)
	DIFF_STR("torch", torch)
#undef DIFF_STR
policy:
	if (mask != STORE_DIFF_VERDICT) {
		struct strbuf ids = STRBUF_INIT;
		policy_diff(a->policy, b->policy, &ids);
		if (ids.len) {
			n++;
			strbuf_addf(out, "  checks.policy: %s (%s vs %s)\n", ids.buf, an, bn);
		}
		strbuf_release(&ids);
	}
	return n;
}

static char *run_label(const struct store_runs_of *x, const struct store_run *r)
{
	return x->nruns > 1 ? xstrfmt("run %s of %s", r->run_id, x->name) : xstrdup(x->name);
}

int store_compare_runs(const struct store_runs_of *v, size_t n, int mask, struct strbuf *out)
{
	const struct store_run *base = NULL;
	char *base_name = NULL;
	int count = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i].nruns; j++) {
			if (!base) {
				base = &v[i].runs[j];
				base_name = run_label(&v[i], base);
				continue;
			}
			char *name = run_label(&v[i], &v[i].runs[j]);
			count += store_run_diff(base, base_name, &v[i].runs[j], name, mask, out);
			free(name);
		}
	free(base_name);
	return count;
}

static const char run_columns[] = "id, run_id, created, stitchbench_version, trials, perf_trials, seed, tolerance, "
				  "device, gpu, torch, policy, suite_root, settings";

static void run_from_row(struct store_run *r, sqlite3_stmt *st)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	st_copy(r->run_id, sizeof(r->run_id), st, 1);
	st_copy(r->created, sizeof(r->created), st, 2);
	st_copy(r->version, sizeof(r->version), st, 3);
	r->trials = sqlite3_column_int(st, 4);
	r->perf_trials = sqlite3_column_int(st, 5);
	r->seed = sqlite3_column_int(st, 6);
	st_copy(r->tolerance, sizeof(r->tolerance), st, 7);
	st_copy(r->device, sizeof(r->device), st, 8);
	st_copy(r->gpu, sizeof(r->gpu), st, 9);
	st_copy(r->torch, sizeof(r->torch), st, 10);
	st_copy(r->policy, sizeof(r->policy), st, 11);
	r->suite_root = sqlite3_column_type(st, 12) == SQLITE_NULL ? NULL : xstrdup(st_text(st, 12));
	r->settings = xstrdup(st_text(st, 13));
	/* in the settings, not a column of its own: stores written before presets existed read as "" */
	json_t *o = json_loads(r->settings, 0, NULL);
	const char *preset = json_string_value(json_object_get(json_object_get(o, "eval"), "preset"));
	snprintf(r->preset, sizeof(r->preset), "%s", preset ? preset : "");
	json_decref(o);
}

/* Runs in id order; id > 0 selects that one only. */
static int query_runs(struct store *s, int64_t id, struct store_run **out, size_t *n, struct sb_error *err)
{
	sqlite3_stmt *st;
	char *sql = xstrfmt("SELECT %s FROM runs WHERE ?1 = 0 OR id = ?1 ORDER BY id", run_columns);
	int rc = st_prepare(s, &st, sql, err);
	free(sql);
	*out = NULL;
	*n = 0;
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		run_from_row(&(*out)[(*n)++], st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : st_fail(s, err, SB_EIO, "reading runs");
}

int st_load_run(struct store *s, int64_t id, struct store_run *r, struct sb_error *err)
{
	struct store_run *runs;
	size_t n;
	int rc = query_runs(s, id, &runs, &n, err);
	if (!rc && n != 1)
		rc = sb_error_set(err, SB_EINTERNAL, "%s: no run with id %lld (select one with store_use_run)", s->path,
				  (long long)id);
	if (!rc)
		*r = runs[0]; /* takes over its strings */
	free(runs);
	return rc;
}

int store_load_runs(struct store *s, struct store_run **out, size_t *n, struct sb_error *err)
{
	return query_runs(s, 0, out, n, err);
}

void store_runs_free(struct store_run *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_run_release(&r[i]);
	free(r);
}

int store_add_run(struct store *s, struct store_run *r, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "INSERT INTO runs (run_id, created, stitchbench_version, trials, perf_trials, seed, "
				    "tolerance, device, gpu, torch, policy, suite_root, settings) "
				    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err);
	if (rc)
		return rc;
	st_bind_text(st, 1, r->run_id);
	st_bind_text(st, 2, r->created);
	st_bind_text(st, 3, r->version);
	sqlite3_bind_int(st, 4, r->trials);
	sqlite3_bind_int(st, 5, r->perf_trials);
	sqlite3_bind_int(st, 6, r->seed);
	st_bind_text(st, 7, r->tolerance);
	st_bind_text(st, 8, r->device);
	st_bind_text(st, 9, r->gpu);
	st_bind_text(st, 10, r->torch);
	st_bind_text(st, 11, r->policy);
	st_bind_text(st, 12, r->suite_root);
	st_bind_text(st, 13, r->settings ? r->settings : "{}");
	if ((rc = st_run(s, st, "adding the run", err)))
		return rc;
	r->id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

static int use_run(struct store *s, struct store_run *r, struct sb_error *err)
{
	struct store_run *runs;
	size_t n;
	int rc = store_load_runs(s, &runs, &n, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(runs[i].run_id, r->run_id))
			continue;
		struct strbuf diff = STRBUF_INIT;
		if (store_run_diff(&runs[i], "the stored run", r, "this invocation", STORE_DIFF_ALL, &diff))
			rc = sb_error_set(err, SB_EINPUT, "run %s in %s was made with other settings, and one run holds one "
					  "setting:\n%s  use a new run id, or the original settings", r->run_id, s->path, diff.buf);
		strbuf_release(&diff);
		if (!rc) {
			r->id = s->run = runs[i].id;
			snprintf(r->created, sizeof(r->created), "%s", runs[i].created);
		}
		store_runs_free(runs, n);
		return rc;
	}
	store_runs_free(runs, n);
	if ((rc = store_add_run(s, r, err)) == 0)
		s->run = r->id;
	return rc;
}

/* Find-or-add as one unit: two processes starting the same run id add it once. */
int store_use_run(struct store *s, struct store_run *r, struct sb_error *err)
{
	int nested, rc = st_begin(s, &nested, err);
	return rc ? rc : st_end(s, nested, use_run(s, r, err), err);
}
