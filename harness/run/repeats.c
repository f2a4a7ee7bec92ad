/* repeats.c - each problem's representative clean timed pass per agent judged again until the store holds
 * K repeats of it: the run's own configuration and suite, this machine's evaluator, one evaluation at a
 * time, each stored as soon as it ends (so a stopped process loses at most the one in flight). */
#include "repeats.h"

#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../agents/judge.h"
#include "../core/config.h"
#include "../core/lockfile.h"
#include "../core/sha256.h"
#include "../core/suite.h"
#include "../eval/evaluate.h"
#include "../eval/sweep.h"
#include "../llm/transcript.h"
#include "../report/metrics.h"
#include "../store/store.h"

/* What a candidate to repeat needs beyond its metrics row: the hashes its verdict's columns hold. */
struct cand_info {
	char sha[65], problem_sha[65];
};

struct cand {
	const struct metric_row *row;
	const struct cand_info *info;
	int have, last;               /* repeats stored, and the highest number among them */
};

struct load {
	struct cand_info *info;       /* parallel to the metric_input's rows */
	size_t n;
};

static int keep_info(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err)
{
	struct load *l = arg;
	(void)err;
	if (index >= l->n) {
		size_t n = index + 1 > 2 * l->n ? index + 1 : 2 * l->n;
		l->info = xrealloc(l->info, n * sizeof(*l->info));
		memset(l->info + l->n, 0, (n - l->n) * sizeof(*l->info));
		l->n = n;
	}
	struct cand_info *c = &l->info[index];
	snprintf(c->sha, sizeof(c->sha), "%s", v->candidate_sha256 ? v->candidate_sha256 : "");
	snprintf(c->problem_sha, sizeof(c->problem_sha), "%s", v->problem_sha256 ? v->problem_sha256 : "");
	return 0;
}

__attribute__((format(printf, 3, 4)))
static void say(const struct repeats_opts *o, int warn, const char *fmt, ...)
{
	if (!o->say)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *line = NULL;
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	if (line)
		o->say(o->say_arg, warn, line);
	free(line);
}

/* The representatives asked for that are clean passes with a speedup, each once, in row order. */
static size_t pick(const struct metric_input *in, const struct repeats_opts *o, struct cand **out, struct sb_error *err)
{
	unsigned char *chosen = xcalloc(in->nrows ? in->nrows : 1, 1);
	size_t n = 0;
	for (int by = METRICS_FIRST; by <= METRICS_BEST; by++) {
		struct metrics m;
		if ((by == METRICS_FIRST && !o->by_first) || (by == METRICS_BEST && !o->by_best))
			continue;
		if (metrics_compute(in->rows, in->nrows, NULL, 0, (enum metrics_by)by, NULL, &m, err)) {
			free(chosen);
			return (size_t)-1;
		}
		for (size_t a = 0; a < m.nagents; a++)
			for (size_t i = 0; i < m.agents[a].nproblems; i++) {
				const struct metric_row *r = m.agents[a].problems[i].rep;
				if (r->missing || !metrics_clean(r) || !isfinite(r->speedup_eager) || r->speedup_eager <= 0)
					continue;
				size_t at = (size_t)(r - in->rows);
				n += !chosen[at];
				chosen[at] = 1;
			}
		metrics_release(&m);
	}
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (size_t i = 0, k = 0; i < in->nrows; i++)
		if (chosen[i])
			(*out)[k++].row = &in->rows[i];
	free(chosen);
	return n;
}

/* path, resolved, when it is a file holding the bytes that were judged; else NULL. */
static char *same_bytes(const char *path, const char *sha256)
{
	char sha[65];
	struct stat st;
	if (path && stat(path, &st) == 0 && S_ISREG(st.st_mode) && sha256_file_hex(path, sha) == 0 && !strcmp(sha, sha256))
		return realpath(path, NULL);
	return NULL;
}

/* The candidate's file: where the run keeps it (candidates/AGENT/L1_2/sN/attempt-NN.py), else the path its
 * verdict recorded (read from the store only then), whichever still holds the bytes that were judged.
 * NULL when neither does. */
static char *find_file(const char *dir, struct store *s, const struct cand *c)
{
	char *root = xstrfmt("%s/candidates", dir);
	char *t = transcript_path(root, c->row->agent, c->row->problem, c->row->sample, 0);
	char *kept = xstrfmt("%s/attempt-%02d.py", dirname(t), c->row->attempt);
	char *found = same_bytes(kept, c->info->sha);
	free(root);
	free(t);
	free(kept);
	json_t *v = NULL;
	struct store_key k = { c->row->agent, c->row->problem, c->row->sample, c->row->attempt };
	struct sb_error err = { 0 };
	if (!found && store_load_verdict(s, &k, &v, NULL, &err) == 1)
		found = same_bytes(json_string_value(json_object_get(json_object_get(v, "candidate"), "path")), c->info->sha);
	json_decref(v);
	return found;
}

/* The folder of the store a RUN argument names (a run directory, or a results.db in one). */
static char *dir_of(const char *run, const char *store_path)
{
	struct stat st;
	if (stat(run, &st) == 0 && S_ISDIR(st.st_mode))
		return xstrdup(run);
	char *copy = xstrdup(store_path), *d = xstrdup(dirname(copy));
	free(copy);
	return d;
}

struct judging {
	const struct repeats_opts *o;
	struct store *s;
	const char *dir, *run;
	struct config cfg;
	struct suite suite;
	struct eval_env env;
	struct eval_claim claim;
	struct lockfile lock;
	int cfg_ready, suite_ready, env_ready;
	size_t left;                  /* evaluations still to judge: while more follow, the next one's worker
				       * starts during the current one, as in eval --samples */
};

/* The run's lock, configuration, suite and evaluator: what judging needs, made only when something is to
 * be judged. */
static int judging_open(struct judging *j, struct sb_error *err)
{
	char held[512], *lock = xstrfmt("%s/run.lock", j->dir), *yaml = xstrfmt("%s/config.yaml", j->dir);
	int rc = lockfile_take(&j->lock, lock, 0, "stitchbench repeats", held, sizeof(held), err);
	free(lock);
	if (rc == 1)
		rc = sb_error_set(err, SB_EINPUT, "%s is in use by %s; repeats judged beside it would time on a busy "
				  "machine: wait for it to end", j->run, held);
	if (!rc && access(yaml, R_OK) != 0)
		rc = sb_error_set(err, SB_EINPUT, "%s: no config.yaml beside the store, so not the settings its verdicts "
				  "were judged with (a merged store?): judge the repeats in each run before merging", j->run);
	if (!rc) {
		config_init(&j->cfg);
		j->cfg_ready = 1;
		if (!(rc = config_load_file(&j->cfg, yaml, err)))
			rc = config_validate(&j->cfg, err);
	}
	free(yaml);
	if (!rc && !(rc = suite_load(&j->suite, j->o->home, j->cfg.problems.root, err)))
		j->suite_ready = 1;
	if (!rc && !(rc = eval_env_init(&j->env, &j->cfg, j->o->home, err)))
		j->env_ready = 1;
	if (!rc) {
		struct strbuf warn = STRBUF_INIT;
		struct sb_error e = { 0 };
		if (eval_claim_begin(&j->claim, j->env.cache_root, &e))
			say(j->o, 1, "%s; work folders left by ended processes are not swept", e.msg);
		if (eval_claim_device(&j->claim, j->env.cache_root, j->env.device, &warn, &e))
			say(j->o, 1, "%s; other processes timing on %s are not noticed", e.msg, j->env.device);
		for (const char *p = warn.buf; *p;) {
			size_t len = strcspn(p, "\n");
			say(j->o, 1, "%.*s", (int)len, p);
			p += len + (p[len] == '\n');
		}
		strbuf_release(&warn);
	}
	return rc;
}

static void judging_close(struct judging *j)
{
	if (j->env_ready) {
		eval_prestart_drain(); /* a worker started for an evaluation a stop left out; before its env goes */
		eval_claim_release(&j->claim);
		eval_env_release(&j->env);
	}
	if (j->suite_ready)
		suite_release(&j->suite);
	if (j->cfg_ready)
		config_release(&j->cfg);
	lockfile_release(&j->lock);
}

/* Judges candidate c until it has k repeats; a candidate that cannot be repeated is a warning. */
static int repeat_one(struct judging *j, struct cand *c, struct repeats_result *res, struct sb_error *err)
{
	const struct metric_row *r = c->row;
	int level, id;
	const struct problem *p = problem_ref_parse(r->problem, &level, &id, NULL) ? NULL : suite_find(&j->suite, level, id);
	if (!p || strcmp(p->sha256, c->info->problem_sha)) {
		say(j->o, 1, "repeats: %s %s sample %d attempt %d is not repeated: the problem file %s", r->agent, r->problem,
		    r->sample, r->attempt, p ? "changed since it was judged" : "is not in the run's suite");
		res->skipped++;
		return 0;
	}
	char *path = find_file(j->dir, j->s, c);
	if (!path) {
		say(j->o, 1, "repeats: %s %s sample %d attempt %d is not repeated: its candidate file (%.12s...) is neither "
		    "in %s/candidates nor at the path its verdict recorded", r->agent, r->problem, r->sample, r->attempt,
		    c->info->sha, j->dir);
		res->skipped++;
		return 0;
	}
	int rc = 0;
	for (int idx = c->last + 1; c->have < j->o->k && !rc; idx++) {
		struct verdict v;
		if (j->o->stop && atomic_load(j->o->stop))
			break;
		j->env.prestart_next = j->left > 1;
		j->left -= j->left > 0;
		if ((rc = eval_candidate(&j->env, &j->cfg, p, path, NULL, &v, err))) {
			verdict_release(&v);
			break;
		}
		if (v.status == V_CANNOT_JUDGE || v.status == V_HARNESS_ERROR) {
			say(j->o, 1, "repeats: %s %s sample %d attempt %d is not repeated: %s (%s)", r->agent, r->problem,
			    r->sample, r->attempt, verdict_status_name(v.status), v.message ? v.message : "");
			verdict_release(&v);
			res->skipped++;
			break;
		}
		json_t *vj = verdict_to_json(&v);
		struct store_key k = { r->agent, r->problem, r->sample, r->attempt };
		rc = store_put_repeat(j->s, &k, idx, vj, NULL, err);
		if (!rc) {
			json_t *sp = json_object_get(vj, "speedup"), *ci = json_object_get(sp, "vs_eager_ci95");
			double x = json_number_value(json_object_get(sp, "vs_eager"));
			struct strbuf what = STRBUF_INIT;
			if (v.status == V_PASS && json_is_number(json_object_get(sp, "vs_eager")))
				strbuf_addf(&what, "%.3fx", x);
			else
				strbuf_addstr(&what, verdict_status_name(v.status));
			if (json_is_array(ci) && json_array_size(ci) == 2)
				strbuf_addf(&what, " [%.3f, %.3f]", json_number_value(json_array_get(ci, 0)),
					    json_number_value(json_array_get(ci, 1)));
			say(j->o, 0, "repeat %d of %d: %s %s sample %d attempt %d: %s (first evaluation %.3fx)", c->have + 1,
			    j->o->k, r->agent, r->problem, r->sample, r->attempt, what.buf, r->speedup_eager);
			strbuf_release(&what);
			c->have++;
			res->judged++;
		}
		json_decref(vj);
		verdict_release(&v);
	}
	free(path);
	return rc;
}

int repeats_fill(const char *run, const struct repeats_opts *o, struct repeats_result *res, struct sb_error *err)
{
	struct metric_input in = { 0 };
	struct load info = { 0 };
	struct cand *cands = NULL;
	struct judging j = { .o = o, .run = run, .lock = LOCKFILE_INIT };
	char *path = store_path_for(run), *dir = dir_of(run, path);
	size_t n = 0, need = 0;
	memset(res, 0, sizeof(*res));
	int rc = store_open(&j.s, path, STORE_WRITE, err);
	in.on_row = keep_info;
	in.on_row_arg = &info;
	if (!rc)
		rc = metrics_load(j.s, NULL, &in, err);
	if (!rc && (n = pick(&in, o, &cands, err)) == (size_t)-1) {
		n = 0;
		rc = SB_EINPUT;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct store_key k = { cands[i].row->agent, cands[i].row->problem, cands[i].row->sample, cands[i].row->attempt };
		cands[i].info = &info.info[cands[i].row - in.rows];
		rc = store_count_repeats(j.s, &k, &cands[i].have, &cands[i].last, err);
		res->stored += (size_t)(cands[i].have < o->k ? cands[i].have : o->k);
		need += (size_t)(cands[i].have < o->k ? o->k - cands[i].have : 0);
	}
	res->candidates = n;
	if (!rc && need) {
		j.dir = dir;
		j.left = need;
		say(o, 0, "repeats: %zu evaluations to judge for %zu candidates (%zu repeats stored already)", need, n,
		    res->stored);
		rc = judging_open(&j, err);
		for (size_t i = 0; i < n && !rc; i++)
			if (cands[i].have < o->k)
				rc = repeat_one(&j, &cands[i], res, err);
	}
	judging_close(&j);
	store_close(j.s);
	free(info.info);
	free(cands);
	metric_input_release(&in);
	free(path);
	free(dir);
	return rc;
}
