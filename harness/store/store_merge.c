/* store_merge.c - merging run stores (Slurm shards, resumed pieces) into a new one: refuses inputs whose
 * numbers are not comparable unless forced, refuses overlapping keys, and writes the result atomically. */
#include "store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fs.h"

struct src {
	const char *name;          /* as the user gave it, for messages */
	struct store *s;
	struct store_run *runs;
	size_t nruns;
	int64_t *newid;            /* runs[j] is newid[j] in the output */
	struct store_problem *problems;
	size_t nproblems;
	struct store_agent *agents;
	size_t nagents;
};

static void src_release(struct src *x)
{
	store_close(x->s);
	store_runs_free(x->runs, x->nruns);
	free(x->newid);
	free(x->problems);
	free(x->agents);
}

static int src_open(struct src *x, const char *arg, struct sb_error *err)
{
	char *path = store_path_for(arg);
	int rc;
	memset(x, 0, sizeof(*x));
	x->name = arg;
	rc = store_open(&x->s, path, STORE_READ, err);
	free(path);
	if (rc || (rc = store_check(x->s, err)) || (rc = store_load_runs(x->s, &x->runs, &x->nruns, err)) ||
	    (rc = store_load_problems(x->s, &x->problems, &x->nproblems, err)) ||
	    (rc = store_load_agents(x->s, &x->agents, &x->nagents, err)))
		return rc;
	x->newid = xcalloc(x->nruns ? x->nruns : 1, sizeof(*x->newid));
	return 0;
}

/* Lists every setting that changes numbers and differs from the first run, every problem whose file
 * differs between inputs, and every agent name used for two different agents. Returns the count. */
static int differences(struct src *v, size_t n, struct strbuf *out)
{
	struct store_runs_of *runs = xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++)
		runs[i] = (struct store_runs_of){ v[i].name, v[i].runs, v[i].nruns };
	int count = store_compare_runs(runs, n, STORE_DIFF_ALL, out), problems = 0;
	free(runs);
	for (size_t i = 1; i < n; i++)
		for (size_t k = 0; k < v[i].nproblems; k++) {
			const struct store_problem *p = &v[i].problems[k];
			for (size_t j = 0; j < i; j++)
				for (size_t m = 0; m < v[j].nproblems; m++)
					if (!strcmp(v[j].problems[m].ref, p->ref) && strcmp(v[j].problems[m].sha256, p->sha256)) {
						if (++problems <= 5)
							strbuf_addf(out, "  problem %s: sha256 %.12s... in %s vs %.12s... in %s\n", p->ref,
								    v[j].problems[m].sha256, v[j].name, p->sha256, v[i].name);
						goto next_problem;
					}
next_problem:;
		}
	if (problems > 5)
		strbuf_addf(out, "  ... and %d more problems whose files differ\n", problems - 5);
	for (size_t i = 1; i < n; i++)
		for (size_t k = 0; k < v[i].nagents; k++) {
			const struct store_agent *a = &v[i].agents[k];
			for (size_t j = 0; j < i; j++)
				for (size_t m = 0; m < v[j].nagents; m++) {
					const struct store_agent *b = &v[j].agents[m];
					if (!strcmp(a->name, b->name) && (strcmp(a->kind, b->kind) || strcmp(a->model, b->model))) {
						count++;
						strbuf_addf(out, "  agent %s: kind %s, model %s in %s vs kind %s, model %s in %s\n",
							    a->name, b->kind, *b->model ? b->model : "none", v[j].name, a->kind,
							    *a->model ? a->model : "none", v[i].name);
					}
				}
		}
	return count + problems;
}

struct copy {
	struct store *out;
	struct src *v;
	size_t i;                  /* the input being copied */
	int force;
	size_t verdicts, calls;
};

static int64_t map_run(const struct src *x, int64_t old)
{
	for (size_t j = 0; j < x->nruns; j++)
		if (x->runs[j].id == old)
			return x->newid[j];
	return 0;
}

/* Which earlier input already holds the key, for the message. */
static const char *holder(struct copy *c, const struct store_key *k)
{
	for (size_t j = 0; j < c->i; j++)
		if (store_lookup(c->v[j].s, k, NULL, NULL) == 1)
			return c->v[j].name;
	return c->v[c->i].name;
}

static int copy_verdict(void *arg, const struct store_verdict_row *row, struct sb_error *err)
{
	struct copy *c = arg;
	json_error_t jerr;
	json_t *v = json_loads(row->json, 0, &jerr);
	if (!v)
		return sb_error_set(err, SB_EINPUT, "%s: the stored verdict of %s %s sample %d attempt %d is not JSON: %s",
				    c->v[c->i].name, row->agent, row->problem, row->sample, row->attempt, jerr.text);
	struct store_put p = { row->agent, row->sample, row->attempt, row->stage, row->created,
			       map_run(&c->v[c->i], row->run), c->force };
	int rc = store_put_verdict(c->out, &p, v, err);
	json_decref(v);
	if (rc == SB_EEXIST) {
		struct store_key k = { row->agent, row->problem, row->sample, row->attempt };
		return sb_error_set(err, SB_EINPUT, "%s %s sample %d attempt %d is in both %s and %s: shards must not "
				    "overlap (a key is written once)", row->agent, row->problem, row->sample, row->attempt,
				    holder(c, &k), c->v[c->i].name);
	}
	if (rc)
		sb_error_prefix(err, "%s", c->v[c->i].name);
	c->verdicts += rc == 0;
	return rc;
}

static int copy_call(void *arg, const struct store_llm_call *call, struct sb_error *err)
{
	struct copy *c = arg;
	struct store_llm_call x = *call;
	x.run = map_run(&c->v[c->i], call->run);
	int rc = store_put_llm_call(c->out, &x, err);
	if (rc)
		sb_error_prefix(err, "%s", c->v[c->i].name);
	c->calls += rc == 0;
	return rc;
}

/* A repeat follows its verdict (copied before it), keeping its number and creation time. */
static int copy_repeat(void *arg, const struct store_repeat_row *row, struct sb_error *err)
{
	struct copy *c = arg;
	json_error_t jerr;
	json_t *v = json_loads(row->json, 0, &jerr);
	if (!v)
		return sb_error_set(err, SB_EINPUT, "%s: repeat %d of %s %s sample %d attempt %d is not JSON: %s",
				    c->v[c->i].name, row->idx, row->agent, row->problem, row->sample, row->attempt, jerr.text);
	struct store_key k = { row->agent, row->problem, row->sample, row->attempt };
	int rc = store_put_repeat(c->out, &k, row->idx, v, row->created, err);
	json_decref(v);
	return rc;
}

static int copy_all(struct copy *c, size_t n, struct sb_error *err)
{
	int rc = 0;
	for (c->i = 0; c->i < n && !rc; c->i++) {
		struct src *x = &c->v[c->i];
		for (size_t j = 0; j < x->nruns && !rc; j++) {
			struct store_run r = x->runs[j]; /* shares the strings; store_add_run only reads them */
			rc = store_add_run(c->out, &r, err);
			x->newid[j] = r.id;
		}
		for (size_t j = 0; j < x->nproblems && !rc; j++) {
			const struct store_problem *p = &x->problems[j];
			rc = store_add_problem(c->out, p->ref, *p->name ? p->name : NULL, p->sha256, err);
			rc = rc == SB_EINPUT && c->force ? 0 : rc;
		}
		for (size_t j = 0; j < x->nagents && !rc; j++) {
			const struct store_agent *a = &x->agents[j];
			rc = store_add_agent(c->out, a->name, a->kind, *a->model ? a->model : NULL, err);
			rc = rc == SB_EINPUT && c->force ? 0 : rc;
		}
		if (!rc)
			rc = store_each_verdict(x->s, copy_verdict, c, err);
		if (!rc)
			rc = store_each_repeat(x->s, copy_repeat, c, err);
		if (!rc)
			rc = store_each_llm_call(x->s, copy_call, c, err);
		if (!rc && (rc = st_copy_audit(x->s, c->out, err)) == 0 && (rc = st_copy_unavailable(x->s, c->out, err)) == 0)
			rc = st_copy_reference_failures(x->s, c->out, err);
		if (rc)
			sb_error_prefix(err, "%s", c->v[c->i].name);
	}
	return rc;
}

static void remove_partial(const char *partial)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
		char *p = xstrfmt("%s%s", partial, suffixes[i]);
		unlink(p);
		free(p);
	}
}

int store_merge(const char *out_dir, char *const *inputs, size_t n, int force, struct strbuf *overridden,
		struct store_merge_stats *stats, struct sb_error *err)
{
	struct src *v = xcalloc(n ? n : 1, sizeof(*v));
	struct strbuf diff = STRBUF_INIT;
	char *final = xstrfmt("%s/%s", out_dir, STORE_FILE), *partial = xstrfmt("%s.partial", final);
	struct store *out = NULL;
	struct stat st;
	size_t opened = 0;
	int made_dir = 0;
	memset(stats, 0, sizeof(*stats));
	int rc = 0;

	for (; opened < n && !rc; opened++)
		rc = src_open(&v[opened], inputs[opened], err);
	if (rc)
		goto done;
	int ndiff = differences(v, n, &diff);
	if (ndiff && !force) {
		rc = sb_error_set(err, SB_EINPUT, "the runs differ in %d setting%s that change the numbers:\n%s"
				  "merge them anyway with --force", ndiff, ndiff == 1 ? "" : "s", diff.buf);
		goto done;
	}
	strbuf_addstr(overridden, diff.buf);
	if (stat(final, &st) == 0) {
		rc = sb_error_set(err, SB_EINPUT, "%s exists; merge writes a new store (choose another OUT)", final);
		goto done;
	}
	made_dir = stat(out_dir, &st) != 0;
	if ((rc = fs_mkdirs(out_dir, 0755))) {
		rc = sb_error_set(err, SB_EIO, "cannot create %s: %s", out_dir, strerror(-rc));
		goto done;
	}
	remove_partial(partial);
	/* everything goes into one transaction of a file that only becomes results.db when complete */
	struct copy c = { .v = v, .force = force };
	if ((rc = store_open(&out, partial, STORE_WRITE, err)) || (rc = store_begin(out, err)))
		goto done;
	c.out = out;
	if ((rc = copy_all(&c, n, err)) || (rc = store_check(out, err)) || (rc = store_commit(out, err))) {
		store_rollback(out);
		goto done;
	}
	store_close(out);
	out = NULL;
	if (rename(partial, final) != 0) {
		rc = sb_error_set(err, SB_EIO, "cannot rename %s to %s: %s", partial, final, strerror(errno));
		goto done;
	}
	stats->verdicts = c.verdicts;
	stats->calls = c.calls;
	for (size_t i = 0; i < n; i++)
		stats->runs += v[i].nruns;
done:
	store_close(out);
	if (rc)
		remove_partial(partial);
	if (rc && made_dir)
		rmdir(out_dir); /* only the folder this merge made, and only when empty */
	for (size_t i = 0; i < opened; i++)
		src_release(&v[i]);
	free(v);
	strbuf_release(&diff);
	free(final);
	free(partial);
	return rc;
}
