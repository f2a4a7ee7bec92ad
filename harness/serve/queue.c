/* queue.c - serve's jobs on the evaluation queue (queue.h, sched/sched.h). One lock guards the evaluation
 * queue, the journal and the store; it is never held while a candidate is built or judged. A verdict goes to the store
 * before the journal says its candidate is done, so a crash in between is mended when the journal is read
 * back: the store's row wins, and nothing is judged twice. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../agents/judge.h"
#include "../core/fs.h"
#include "../core/log.h"
#include "../core/sha256.h"
#include "../eval/evaluate.h"
#include "../sched/sched.h"
#include "gpuwatch.h"
#include "../store/store.h"
#include "queue.h"

struct serve_queue {
	struct serve_queue_opts o;
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* waiters: a candidate ended, or stop */
	struct sched *sched;      /* the evaluation queue: builds ahead, one evaluator per device slot */
	struct gpuwatch *gpus;    /* the slots' GPU utilization, sampled (NULL on the CPU) */
	int stopping;
	/* what the journal queued again at the start, for the evaluation queue once it starts */
	struct requeued { int64_t id; int priority; const struct problem *problem; char *path; } *re;
	size_t nre;
	char *cand_dir;

	/* metrics, since this process started */
	double t0;
	size_t verdicts;
	double *ended;            /* when each verdict of the last hour ended (monotonic seconds) */
	size_t nended, aended;
};

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void serve_request_release(struct serve_request *r)
{
	free(r->v);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

static const struct problem *find_problem(const struct suite *s, const char *ref)
{
	int level, id;
	struct sb_error err = { 0 };
	return problem_ref_parse(ref, &level, &id, &err) ? NULL : suite_find(s, level, id);
}

static void requeue(struct serve_queue *q, int64_t id, int priority, const struct problem *p, const char *path)
{
	q->re = xrealloc(q->re, (q->nre + 1) * sizeof(*q->re));
	q->re[q->nre++] = (struct requeued){ id, priority, p, xstrdup(path) };
}

/* ---------- reading the journal back ---------- */

struct resume {
	struct serve_queue *q;
	size_t queued, stored, lost;
	struct sb_error *err;
	int rc;
};

static double verdict_seconds(json_t *v)
{
	json_t *t = json_object_get(json_object_get(v, "seconds"), "total");
	return json_is_number(t) ? json_number_value(t) : 0;
}

static int resume_one(void *arg, const struct journal_cand *c)
{
	struct resume *r = arg;
	struct serve_queue *q = r->q;
	struct store_key k = { SERVE_AGENT, c->problem, (int)c->id, 0 };
	json_t *v = NULL;
	int have = store_load_verdict(q->o.store, &k, &v, NULL, r->err);
	if (have < 0)
		return r->rc = have;
	if (have == 1) {
		/* judged and stored, and the server stopped before the journal said so */
		r->rc = journal_finish(q->o.journal, c->id, CAND_DONE, NULL, NULL, verdict_seconds(v), r->err);
		json_decref(v);
		r->stored++;
		return r->rc;
	}
	const struct problem *p = find_problem(q->o.suite, c->problem);
	struct stat st;
	if (!p || stat(c->path, &st) != 0) {
		char msg[512];
		if (!p)
			snprintf(msg, sizeof(msg), "problem %s is not in this server's suite any more", c->problem);
		else
			snprintf(msg, sizeof(msg), "the saved source %s is gone", c->path);
		r->lost++;
		return r->rc = journal_finish(q->o.journal, c->id, CAND_FAILED, "harness_error", msg, 0, r->err);
	}
	requeue(q, c->id, c->priority, p, c->path);
	r->queued++;
	return 0;
}

int queue_open(struct serve_queue **out, const struct serve_queue_opts *o, struct sb_error *err)
{
	struct serve_queue *q = xcalloc(1, sizeof(*q));
	pthread_condattr_t ca;
	q->o = *o;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->changed, &ca);
	pthread_condattr_destroy(&ca);
	q->cand_dir = xstrfmt("%s/candidates/%s", o->run_dir, SERVE_AGENT);
	q->t0 = now_mono();
	*out = NULL;

	struct resume r = { q, 0, 0, 0, err, 0 };
	int rc = journal_begin(o->journal, err);
	if (!rc) {
		rc = journal_each_queued(o->journal, resume_one, &r, err);
		if (!rc)
			rc = r.rc;
		if (!rc)
			rc = journal_commit(o->journal, err);
		else
			journal_rollback(o->journal);
	}
	if (rc) {
		queue_close(q);
		return rc;
	}
	if (r.queued || r.stored || r.lost)
		sb_info(o->ctx, "serve: the journal had %zu unfinished candidates: %zu queued again, %zu judged and stored "
			"before the server stopped (answered from the store, not judged again), %zu that cannot be judged "
			"any more (answered as harness_error)", r.queued + r.stored + r.lost, r.queued, r.stored, r.lost);
	*out = q;
	return 0;
}

/* ---------- the evaluator ---------- */

static void record_end(struct serve_queue *q)
{
	double now = now_mono();
	size_t k = 0;
	for (size_t i = 0; i < q->nended; i++)
		if (now - q->ended[i] < 3600)
			q->ended[k++] = q->ended[i];
	q->nended = k;
	if (q->nended == q->aended)
		q->ended = xrealloc(q->ended, (q->aended = q->aended ? 2 * q->aended : 256) * sizeof(*q->ended));
	q->ended[q->nended++] = now;
	q->verdicts++;
}

/* Stores a finished verdict (or the failure that stands for one) and says so in the journal. Called with
 * the lock held. */
static void finish(struct serve_queue *q, int64_t id, const struct problem *problem, struct verdict *v)
{
	struct sb_error err = { 0 };
	int rc;
	if (v->status == V_HARNESS_ERROR || v->status == V_CANNOT_JUDGE) {
		/* judged nothing about the candidate: not a verdict for the store, as `eval --samples` keeps it out */
		rc = journal_finish(q->o.journal, id, CAND_FAILED, verdict_status_name(v->status),
				    v->message ? v->message : "", v->seconds.total, &err);
	} else {
		json_t *vj = verdict_to_json(v);
		struct store_put put = { .agent = SERVE_AGENT, .sample = (int)id };
		rc = store_add_problem(q->o.store, v->problem, problem->name, problem->sha256, &err);
		if (!rc && (rc = store_put_verdict(q->o.store, &put, vj, &err)) == SB_EEXIST)
			rc = 0; /* stored already: the journal only lagged */
		json_decref(vj);
		if (!rc)
			rc = journal_finish(q->o.journal, id, CAND_DONE, NULL, NULL, v->seconds.total, &err);
		else {
			char msg[SB_ERR_MAX + 64];
			sb_warn(q->o.ctx, "serve: candidate %lld (%s): storing its verdict failed: %s", (long long)id,
				v->problem, err.msg);
			snprintf(msg, sizeof(msg), "storing the verdict failed: %s", err.msg);
			err = (struct sb_error){ 0 };
			rc = journal_finish(q->o.journal, id, CAND_FAILED, "harness_error", msg, v->seconds.total, &err);
		}
	}
	if (rc)
		sb_error(q->o.ctx, "serve: candidate %lld: the journal could not record its end: %s (a restart judges it "
			 "again unless its verdict was stored)", (long long)id, err.msg);
	record_end(q);
}

/* The evaluation queue's callbacks. */
static void on_score(void *owner, int64_t id, const struct problem *p, struct verdict *v)
{
	struct serve_queue *q = owner;
	judge_rubric(q->o.judge, p, "judge", (int)id, 0, v);
}

static void on_judged(void *owner, int64_t id, const struct problem *p, const char *path, struct verdict *v)
{
	struct serve_queue *q = owner;
	(void)path;
	sb_info(q->o.ctx, "serve: candidate %lld: %s (%.1f s)", (long long)id, verdict_status_name(v->status),
		v->seconds.total);
	finish(q, id, p, v);
	pthread_cond_broadcast(&q->changed);
}

static void on_built(void *owner, int64_t id, const char *path, const struct prebuild *pb)
{
	struct serve_queue *q = owner;
	(void)path;
	sb_info(q->o.ctx, "serve: built candidate %lld: %s", (long long)id, pb->ok ? "ok" : pb->msg ? pb->msg : "failed");
}

static const struct sched_ops serve_ops = { on_score, on_judged, on_built };

int queue_start(struct serve_queue *q, struct sb_error *err)
{
	struct sched_opts so = { .ctx = q->o.ctx, .cfg = q->o.cfg, .envs = q->o.envs, .nenvs = q->o.nenvs,
				 .lock = &q->lock, .ops = &serve_ops, .owner = q, .stop = q->o.stop };
	struct sched *s = sched_start(&so, err);
	if (!s) {
		sb_error_prefix(err, "serve");
		return SB_EINTERNAL;
	}
	struct gpuwatch *gw = gpuwatch_start(q->o.envs, q->o.nenvs);
	pthread_mutex_lock(&q->lock);
	q->sched = s;
	q->gpus = gw;
	for (size_t i = 0; i < q->nre; i++) {
		sched_add(s, q->re[i].id, q->re[i].priority, q->re[i].problem, q->re[i].path);
		free(q->re[i].path);
	}
	q->nre = 0;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

void queue_stop(struct serve_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = 1;
	struct sched *s = q->sched;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
	/* an evaluation in flight ends (killed by the caller or not) and what is queued stays so in the journal */
	sched_stop(s);
	pthread_mutex_lock(&q->lock);
	q->sched = NULL;
	struct gpuwatch *gw = q->gpus;
	q->gpus = NULL;
	pthread_mutex_unlock(&q->lock);
	gpuwatch_stop(gw);
}

void queue_close(struct serve_queue *q)
{
	if (!q)
		return;
	if (q->sched)
		queue_stop(q);
	for (size_t i = 0; i < q->nre; i++)
		free(q->re[i].path);
	free(q->re);
	free(q->ended);
	free(q->cand_dir);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->changed);
	free(q);
}

/* What the evaluation queue holds: queued, running, building (0s once it stopped). */
static struct sched_stats stats(const struct serve_queue *q)
{
	struct sched_stats st = { 0 };
	if (q->sched)
		sched_stats(q->sched, &st);
	return st;
}

static int is_running(const struct serve_queue *q, int64_t id)
{
	int running = 0;
	return q->sched && sched_has(q->sched, id, &running) && running;
}

/* ---------- submissions ---------- */

/* What a request asks for, in a form that another request with the same id must match. */
static void request_digest(const struct serve_request *r, char out[65])
{
	struct sha256_ctx c;
	uint8_t d[32];
	sha256_init(&c);
	for (size_t i = 0; i < r->n; i++) {
		char line[256];
		const struct serve_candidate *x = &r->v[i];
		int n = snprintf(line, sizeof(line), "%s %s %s %.17g %s\n", x->ref, x->sha256, reward_kind_name(x->reward),
				 x->lambda, x->request_id ? x->request_id : "-");
		sha256_update(&c, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	sha256_final(&c, d);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int new_job_id(char out[33], struct sb_error *err)
{
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return sb_error_set(err, SB_EIO, "serve: getrandom: %s", strerror(errno));
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

static char *source_path(const struct serve_queue *q, const struct serve_candidate *x)
{
	return xstrfmt("%s/L%d-%d/%s.py", q->cand_dir, x->problem->level, x->problem->id, x->sha256);
}

/* The source goes to disk, synced, before the journal names it: a queued candidate always has its file. */
static int save_source(const struct serve_queue *q, const struct serve_candidate *x, struct sb_error *err)
{
	char *path = source_path(q, x);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0 || (size_t)st.st_size != x->len) {
		char *dir = xstrfmt("%s/L%d-%d", q->cand_dir, x->problem->level, x->problem->id);
		int e = fs_mkdirs(dir, 0755);
		if (!e)
			e = fs_write_atomic(path, x->source, x->len);
		if (e)
			rc = sb_error_set(err, SB_EIO, "serve: cannot save a candidate to %s: %s", path, strerror(-e));
		free(dir);
	}
	free(path);
	return rc;
}

/* Seconds until the queue likely has room for `excess` more candidates. */
static int retry_after(const struct serve_queue *q, size_t excess)
{
	struct sched_stats st = stats(q);
	/* the slots judge side by side */
	double per = (st.mean_s > 0 ? st.mean_s : 10) / (st.slots > 0 ? st.slots : 1);
	double s = ceil(per * (double)(excess ? excess : 1));
	return s < 1 ? 1 : s > 3600 ? 3600 : (int)s;
}

int queue_submit(struct serve_queue *q, const struct serve_client *cl, const struct serve_request *r,
		 struct submit_answer *a, struct sb_error *err)
{
	char digest[65];
	int rc = 0;
	memset(a, 0, sizeof(*a));
	request_digest(r, digest);
	int priority = r->priority == SERVE_PRIORITY_CLIENT || r->priority > cl->priority ? cl->priority : r->priority;
	/* per candidate: its journal state before this request (-1: none) */
	int *was = xcalloc(r->n ? r->n : 1, sizeof(*was));
	int64_t *ids = xcalloc(r->n ? r->n : 1, sizeof(*ids));

	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		a->result = SUBMIT_STOPPING;
		snprintf(a->why, sizeof(a->why), "the server is stopping; retry on another endpoint, or here after it restarts");
		goto out;
	}
	if (r->request_id) {
		char job[33], theirs[65];
		if ((rc = journal_find_job(q->o.journal, cl->name, r->request_id, job, theirs, err)) < 0)
			goto out;
		if (rc == 1) {
			rc = 0;
			if (strcmp(theirs, digest)) {
				a->result = SUBMIT_CONFLICT;
				snprintf(a->why, sizeof(a->why), "request_id '%s' was used before for other candidates (job %s); "
					 "use a new request_id for a new request", r->request_id, job);
			} else {
				a->result = SUBMIT_EXISTING;
				memcpy(a->job, job, sizeof(a->job));
			}
			goto out;
		}
	}
	size_t fresh = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct serve_candidate *x = &r->v[i];
		struct journal_cand c;
		if (x->request_id) {
			int64_t bound;
			if ((rc = journal_find_request(q->o.journal, cl->name, x->request_id, &bound, err)) < 0)
				goto out;
			if (rc == 1 && (rc = journal_get_candidate(q->o.journal, bound, &c, err)) == 1) {
				int same = !strcmp(c.problem, x->ref) && !strcmp(c.sha256, x->sha256);
				journal_cand_release(&c);
				if (!same) {
					a->result = SUBMIT_CONFLICT;
					snprintf(a->why, sizeof(a->why), "candidates[%zu]: request_id '%s' was used before for another "
						 "candidate; a retry must send the same problem and source", i, x->request_id);
					rc = 0;
					goto out;
				}
			}
			if (rc < 0)
				goto out;
		}
		if ((rc = journal_find_candidate(q->o.journal, x->ref, x->sha256, &c, err)) < 0)
			goto out;
		was[i] = rc == 1 ? (int)c.state : -1;
		ids[i] = rc == 1 ? c.id : 0;
		if (rc == 1)
			journal_cand_release(&c);
		rc = 0;
		if (was[i] == -1 || was[i] == CAND_FAILED) {
			/* a candidate twice in one request is queued once */
			int dup = 0;
			for (size_t k = 0; k < i && !dup; k++)
				dup = (was[k] == -1 || was[k] == CAND_FAILED) && !strcmp(r->v[k].ref, x->ref) &&
				      !strcmp(r->v[k].sha256, x->sha256);
			fresh += !dup;
		}
	}
	struct sched_stats st = stats(q);
	size_t depth = st.queued + st.running;
	if (fresh && depth + fresh > q->o.queue_max) {
		a->result = SUBMIT_FULL;
		a->retry_after = retry_after(q, depth + fresh - q->o.queue_max);
		snprintf(a->why, sizeof(a->why), "the queue is full: %zu candidates queued or running, room for %zu, this "
			 "request adds %zu; retry after %d s or on another endpoint", depth, q->o.queue_max, fresh,
			 a->retry_after);
		goto out;
	}
	if (fresh && cl->budget_s > 0) {
		double used;
		if ((rc = journal_usage(q->o.journal, cl->name, &used, err)))
			goto out;
		if (used >= cl->budget_s) {
			a->result = SUBMIT_BUDGET;
			snprintf(a->why, sizeof(a->why), "client %s has spent its budget: %.1f of %.1f s of evaluation; "
				 "candidates already judged are still answered", cl->name, used, cl->budget_s);
			goto out;
		}
	}
	for (size_t i = 0; i < r->n; i++)
		if ((was[i] == -1 || was[i] == CAND_FAILED) && (rc = save_source(q, &r->v[i], err)))
			goto out;
	if ((rc = new_job_id(a->job, err)) || (rc = journal_begin(q->o.journal, err)))
		goto out;
	rc = journal_add_job(q->o.journal, a->job, cl->name, r->request_id, digest, err);
	for (size_t i = 0; !rc && i < r->n; i++) {
		const struct serve_candidate *x = &r->v[i];
		struct journal_cand c;
		int found = journal_find_candidate(q->o.journal, x->ref, x->sha256, &c, err);
		if (found < 0) {
			rc = found;
			break;
		}
		if (found == 0) {
			char *path = source_path(q, x);
			rc = journal_add_candidate(q->o.journal, x->ref, x->sha256, path, priority, cl->name, &ids[i], err);
			free(path);
		} else {
			ids[i] = c.id;
			if (c.state == CAND_FAILED)
				rc = journal_requeue(q->o.journal, c.id, priority, cl->name, err);
			else if (c.state == CAND_QUEUED)
				rc = journal_raise(q->o.journal, c.id, priority, err);
			journal_cand_release(&c);
		}
		if (!rc && x->request_id)
			rc = journal_bind_request(q->o.journal, cl->name, x->request_id, ids[i], err);
		if (!rc)
			rc = journal_add_item(q->o.journal, a->job, (int)i, ids[i], x->request_id, reward_kind_name(x->reward),
					      x->lambda, was[i] == CAND_DONE || was[i] == CAND_QUEUED, err);
	}
	if (!rc)
		rc = journal_commit(q->o.journal, err);
	if (rc) {
		journal_rollback(q->o.journal);
		goto out;
	}
	/* the journal holds them: now the evaluators may (a queued one takes the higher priority) */
	for (size_t i = 0; i < r->n; i++) {
		int running = 0, queued = q->sched && sched_has(q->sched, ids[i], &running);
		if (q->sched && (queued || was[i] == -1 || was[i] == CAND_FAILED) && !running) {
			char *path = source_path(q, &r->v[i]);
			sched_add(q->sched, ids[i], priority, r->v[i].problem, path);
			free(path);
			a->queued += !queued;
		}
	}
	a->result = SUBMIT_OK;
out:
	pthread_mutex_unlock(&q->lock);
	free(was);
	free(ids);
	return rc < 0 ? rc : 0;
}

/* ---------- waiting and reading ---------- */

int queue_wait(struct serve_queue *q, const char *job, double timeout_s)
{
	double deadline = timeout_s < 0 ? INFINITY : now_mono() + timeout_s;
	int rc;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		size_t pending;
		struct sb_error err = { 0 };
		if (journal_job_pending(q->o.journal, job, &pending, &err)) {
			rc = -1;
			break;
		}
		if (!pending) {
			rc = 1;
			break;
		}
		if (q->stopping) {
			rc = -1;
			break;
		}
		double now = now_mono();
		if (now >= deadline) {
			rc = 0;
			break;
		}
		if (isinf(deadline)) {
			pthread_cond_wait(&q->changed, &q->lock);
		} else {
			struct timespec ts;
			double t = deadline;
			ts.tv_sec = (time_t)t;
			ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
			pthread_cond_timedwait(&q->changed, &q->lock, &ts);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int queue_job(struct serve_queue *q, const char *job, const struct serve_client *cl, struct job_view *v,
	      struct sb_error *err)
{
	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&q->lock);
	int rc = journal_get_job(q->o.journal, job, v->client, v->created, &v->items, &v->n, err);
	if (rc == 1 && strcmp(v->client, cl->name)) {
		/* another client's job is as good as none: its id tells nothing */
		journal_items_free(v->items, v->n);
		v->items = NULL;
		v->n = 0;
		rc = 0;
	}
	if (rc == 1) {
		snprintf(v->id, sizeof(v->id), "%s", job);
		v->verdicts = xcalloc(v->n ? v->n : 1, sizeof(*v->verdicts));
		v->running = xcalloc(v->n ? v->n : 1, sizeof(*v->running));
		for (size_t i = 0; i < v->n && rc == 1; i++) {
			const struct journal_item *it = &v->items[i];
			if (it->fail_status[0])
				continue;
			if (it->cand.state != CAND_DONE) {
				v->pending++;
				v->running[i] = is_running(q, it->cand.id);
				continue;
			}
			struct store_key k = { SERVE_AGENT, it->cand.problem, (int)it->cand.id, 0 };
			int have = store_load_verdict(q->o.store, &k, &v->verdicts[i], NULL, err);
			if (have < 0)
				rc = have;
			else if (!have)
				rc = sb_error_set(err, SB_EINTERNAL, "serve: candidate %lld is done in the journal but its verdict "
						  "is not in the store", (long long)it->cand.id);
		}
	}
	pthread_mutex_unlock(&q->lock);
	if (rc < 0)
		job_view_release(v);
	return rc;
}

void job_view_release(struct job_view *v)
{
	for (size_t i = 0; v->verdicts && i < v->n; i++)
		json_decref(v->verdicts[i]);
	free(v->verdicts);
	free(v->running);
	journal_items_free(v->items, v->n);
	memset(v, 0, sizeof(*v));
}

/* ---------- metrics ---------- */

json_t *queue_metrics(struct serve_queue *q, const struct serve_clients *clients)
{
	size_t counts[3] = { 0 };
	struct sb_error err = { 0 };
	pthread_mutex_lock(&q->lock);
	double now = now_mono(), up = now - q->t0;
	struct sched_stats st = stats(q);
	double busy = st.busy_s, capacity = up * (st.slots > 0 ? st.slots : 1);
	size_t hour = 0;
	for (size_t i = 0; i < q->nended; i++)
		hour += now - q->ended[i] < 3600;
	/* over the last hour, or over the uptime while it is shorter, scaled to an hour */
	double window = up < 3600 ? up : 3600;
	json_t *per_client = json_array();
	for (size_t i = 0; i < clients->n; i++) {
		double used = 0;
		journal_usage(q->o.journal, clients->v[i].name, &used, &err);
		json_array_append_new(per_client,
				      json_pack("{s:s, s:i, s:o, s:f}", "name", clients->v[i].name, "priority",
						clients->v[i].priority, "budget_s",
						clients->v[i].budget_s > 0 ? json_real(clients->v[i].budget_s) : json_null(),
						"used_s", used));
	}
	int jc = journal_counts(q->o.journal, counts, &err);
	json_t *m = json_pack(
		"{s:f, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:f, s:o, s:o}, s:{s:o, s:f, s:f}, s:o}",
		"uptime_s", up,
		"queue", "depth", (json_int_t)st.queued, "running", (json_int_t)st.running, "max", (json_int_t)q->o.queue_max,
		"verdicts", "since_start", (json_int_t)q->verdicts, "last_hour", (json_int_t)hour, "per_hour",
		window > 0 ? (double)hour * 3600 / window : 0.0,
		"stored_total", jc ? json_null() : json_integer((json_int_t)counts[CAND_DONE]),
		"failed_total", jc ? json_null() : json_integer((json_int_t)counts[CAND_FAILED]),
		"evaluator", "mean_seconds", st.mean_s > 0 ? json_real(st.mean_s) : json_null(), "busy_s", busy,
		"idle", capacity > 0 ? 1 - busy / capacity : 1.0,
		"clients", per_client);
	json_object_set_new(json_object_get(m, "queue"), "building", json_integer((json_int_t)st.building));
	json_t *ev = json_object_get(m, "evaluator");
	json_object_set_new(ev, "slots", json_integer(st.slots));
	gpuwatch_metrics(q->gpus, ev);
	pthread_mutex_unlock(&q->lock);
	return m;
}

json_t *queue_health(struct serve_queue *q)
{
	pthread_mutex_lock(&q->lock);
	struct sched_stats st = stats(q);
	json_t *devices = json_array();
	for (int i = 0; i < q->o.nenvs; i++)
		json_array_append_new(devices, json_string(q->o.envs[i].device));
	json_t *h = json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:I, s:I}", "status", q->stopping ? "stopping" : "ok", "version",
			      SB_VERSION, "device", q->o.envs[0].device, "devices", devices, "gpu", q->o.envs[0].gpu, "preset",
			      preset_name(q->o.cfg->eval.preset), "queue_depth", (json_int_t)st.queued, "running",
			      (json_int_t)st.running);
	pthread_mutex_unlock(&q->lock);
	return h;
}
