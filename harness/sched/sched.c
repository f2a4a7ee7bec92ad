/* sched.c - the evaluation queue (sched.h): candidates by priority, builders ahead on the cores, one
 * evaluator per device slot. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/taskpool.h"
#include "sched.h"

enum build_state { B_WAITING, B_BUILDING, B_BUILT };

/* A waiter's side of sched_judge and sched_device_task. */
struct ticket {
	int started, done, rc;
	struct verdict v;
	struct sb_error err;
};

struct item {
	int64_t id;
	int priority;
	uint64_t seq;             /* the order items came in */
	const struct problem *problem;
	char *path;
	enum build_state build;
	struct prebuild *pb;      /* B_BUILT: its outcome (a failed build is judged from it, not built again) */
	const struct config *cfg; /* NULL: the queue's */
	struct ticket *t;         /* a waiter's: the outcome goes there instead of to the callbacks */
	void (*task)(const struct eval_env *env, void *arg); /* a device task instead of a candidate */
	void *task_arg;
};

struct slot {
	struct sched *s;
	struct eval_env *env;
	pthread_t thread;
	int started;
	int64_t running;          /* the candidate it judges; 0: none */
	double since;             /* when that evaluation started */
};

struct sched {
	struct sched_opts o;
	pthread_cond_t wake;      /* evaluators and builders: something was queued or built or ended, or stop */
	pthread_cond_t idle;      /* sched_drain: a candidate ended, or stop */
	struct item *q;
	size_t nq, alloc;
	struct slot *slots;
	int stopping;
	int gpu;                  /* builds may overlap evaluations (on the CPU they would share their cores) */
	int building;
	size_t running;
	uint64_t seq;
	int64_t tickets;          /* waiters' items take ids -1, -2, ... */
	struct taskpool builders;
	double busy_s, mean_s;
};

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void item_release(struct item *c)
{
	if (c->pb) {
		prebuild_release(c->pb);
		free(c->pb);
	}
	free(c->path);
}

static int before(const struct item *a, const struct item *b)
{
	return a->priority > b->priority || (a->priority == b->priority && a->seq < b->seq);
}

/* The candidate to judge next: among those of the highest priority queued, the first built, so a slow
 * build holds up only itself, while one of higher priority that just came waits for its own build rather
 * than behind the built ones. SIZE_MAX: none is ready. */
static size_t next_to_judge(const struct sched *s)
{
	int top = INT32_MIN;
	size_t b = SIZE_MAX;
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].priority > top)
			top = s->q[i].priority;
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].priority == top && s->q[i].build == B_BUILT && (b == SIZE_MAX || before(&s->q[i], &s->q[b])))
			b = i;
	return b;
}

/* The best candidate whose build has not started; SIZE_MAX: none. */
static size_t next_to_build(const struct sched *s)
{
	size_t b = SIZE_MAX;
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].build == B_WAITING && (b == SIZE_MAX || before(&s->q[i], &s->q[b])))
			b = i;
	return b;
}

static int stopped(const struct sched *s)
{
	return s->stopping || (s->o.stop && atomic_load(s->o.stop));
}

static void push(struct sched *s, struct item it)
{
	if (s->nq == s->alloc)
		s->q = xrealloc(s->q, (s->alloc = s->alloc ? 2 * s->alloc : 64) * sizeof(*s->q));
	it.seq = ++s->seq;
	s->q[s->nq++] = it;
	pthread_cond_broadcast(&s->wake);
}

/* Waits on cond for at most ms milliseconds (the owner's stop bits are set without a signal). */
static void wait_ms(pthread_cond_t *cond, pthread_mutex_t *lock, int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(cond, lock, &ts);
}

static struct item *find(const struct sched *s, int64_t id)
{
	for (size_t i = 0; i < s->nq; i++)
		if (s->q[i].id == id)
			return &s->q[i];
	return NULL;
}

/* The problems of the evaluations likely to follow, for the workers started ahead (EVAL_AHEAD): the
 * built candidates first, then the ones still building, each in judging order. */
static void fill_next(const struct sched *s, struct eval_env *env)
{
	size_t k = 0;
	char *taken = xcalloc(s->nq ? s->nq : 1, 1);
	for (int built = 1; built >= 0; built--)
		while (k < EVAL_AHEAD) {
			size_t b = SIZE_MAX;
			for (size_t i = 0; i < s->nq; i++)
				if (!taken[i] && s->q[i].problem && (s->q[i].build == B_BUILT) == built &&
				    (b == SIZE_MAX || before(&s->q[i], &s->q[b])))
					b = i;
			if (b == SIZE_MAX)
				break;
			taken[b] = 1;
			env->next_problems[k++] = s->q[b].problem;
		}
	free(taken);
	env->prestart_next = k > 0;
	while (k < EVAL_AHEAD)
		env->next_problems[k++] = NULL;
}

/* ---------- evaluators ---------- */

static void *evaluator(void *arg)
{
	struct slot *sl = arg;
	struct sched *s = sl->s;
	pthread_mutex_lock(s->o.lock);
	for (;;) {
		size_t b = SIZE_MAX;
		while (!s->stopping && (stopped(s) || (b = next_to_judge(s)) == SIZE_MAX || (!s->gpu && s->building)))
			wait_ms(&s->wake, s->o.lock, 500);
		if (s->stopping)
			break;
		struct item c = s->q[b];
		s->q[b] = s->q[--s->nq];
		if (c.t)
			c.t->started = 1;
		sl->running = c.id;
		sl->since = now_mono();
		s->running++;
		fill_next(s, sl->env);
		pthread_mutex_unlock(s->o.lock);

		struct verdict v;
		struct sb_error err = { 0 };
		int rc = 0;
		memset(&v, 0, sizeof(v));
		if (c.task) {
			c.task(sl->env, c.task_arg);
		} else {
			const char *base = strrchr(c.path, '/');
			if (!c.t)
				sb_info(s->o.ctx, "judging candidate %lld on %s (L%d/%d, %.40s)", (long long)c.id,
					sl->env->device, c.problem->level, c.problem->id, base ? base + 1 : c.path);
			rc = eval_candidate(sl->env, c.cfg ? c.cfg : s->o.cfg, c.problem, c.path, c.pb, &v, &err);
		}
		int bits = s->o.stop ? atomic_load(s->o.stop) : 0;
		int killed = bits & (s->o.kill_bits ? s->o.kill_bits : ~0);
		if (c.t) {
			/* the waiter takes the outcome as it is, and decides */
		} else if (!killed && rc) {
			sb_warn(s->o.ctx, "%s: not judged: %s", c.path, err.msg);
			verdict_release(&v);
			eval_failure(sl->env, s->o.cfg, c.problem, c.path, V_HARNESS_ERROR,
				     err.msg[0] ? err.msg : "the harness failed", &v);
		} else if (!killed && s->o.ops->score) {
			s->o.ops->score(s->o.owner, c.id, c.problem, &v);
		}
		pthread_mutex_lock(s->o.lock);
		double took = now_mono() - sl->since;
		s->busy_s += took;
		s->mean_s = s->mean_s > 0 ? 0.8 * s->mean_s + 0.2 * took : took;
		sl->running = 0;
		s->running--;
		/* a killed evaluation's verdict is the kill's, not the candidate's: its owner keeps it queued */
		if (c.t) {
			c.t->rc = killed ? SCHED_STOPPED : rc;
			c.t->v = v;
			c.t->err = err;
			c.t->done = 1;
			if (killed && !c.task)
				verdict_release(&c.t->v);
		} else {
			if (!killed && s->o.ops->judged)
				s->o.ops->judged(s->o.owner, c.id, c.problem, c.path, &v);
			verdict_release(&v);
		}
		item_release(&c);
		pthread_cond_broadcast(&s->wake); /* builders that wait for the evaluation to end (CPU) */
		pthread_cond_broadcast(&s->idle);
		if (killed && !c.t)
			break;
	}
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(s->o.lock);
	return NULL;
}

/* ---------- builders (a taskpool over the queue) ---------- */

struct build_task {
	int64_t id;
	const struct problem *problem;
	char *path;
	struct prebuild *pb;
	const struct config *cfg;
};

/* With the lock held: the best candidate not yet built. On the CPU only while nothing is judged and the
 * evaluators' next candidate is not built yet, so compilers never share the cores with timed calls and a
 * stream of new candidates cannot keep the evaluators waiting. A candidate cannot leave the queue while
 * it builds: evaluators take built ones only. */
static void *build_take(void *arg, int *stop)
{
	struct sched *s = arg;
	size_t i;
	if (s->stopping) {
		*stop = 1;
		return NULL;
	}
	if ((i = next_to_build(s)) == SIZE_MAX || (!s->gpu && (s->running || next_to_judge(s) != SIZE_MAX)))
		return NULL;
	s->q[i].build = B_BUILDING;
	s->building++;
	struct build_task *b = xcalloc(1, sizeof(*b));
	*b = (struct build_task){ s->q[i].id, s->q[i].problem, xstrdup(s->q[i].path), xcalloc(1, sizeof(struct prebuild)),
				  s->q[i].cfg ? s->q[i].cfg : s->o.cfg };
	return b;
}

static void build_one(void *arg, void *task)
{
	struct sched *s = arg;
	struct build_task *b = task;
	struct sb_error err = { 0 };
	if (prebuild_run(&s->o.envs[0], b->cfg, b->problem, b->path, b->pb, &err))
		sb_warn(s->o.ctx, "building candidate %lld ahead failed (%s); its evaluation builds it", (long long)b->id,
			err.msg);
}

static void build_done(void *arg, void *task)
{
	struct sched *s = arg;
	struct build_task *b = task;
	struct item *c = find(s, b->id);
	s->building--;
	if (s->o.ops->built && b->id > 0)
		s->o.ops->built(s->o.owner, b->id, b->path, b->pb);
	if (c) {
		c->build = B_BUILT;
		c->pb = b->pb;
	} else {
		prebuild_release(b->pb);
		free(b->pb);
	}
	free(b->path);
	free(b);
}

/* ---------- the queue ---------- */

struct sched *sched_start(const struct sched_opts *o, struct sb_error *err)
{
	struct sched *s = xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;
	s->o = *o;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->idle, &ca);
	pthread_condattr_destroy(&ca);
	s->gpu = !strncmp(o->envs[0].device, "cuda", 4);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (o->cfg->eval.build_jobs)
		cores = o->cfg->eval.build_jobs;
	else if (s->gpu && cores > 1 + o->nenvs)
		cores -= o->nenvs; /* one core per slot for its evaluation's two workers */
	s->builders = (struct taskpool){ o->lock, &s->wake, s, build_take, build_one, build_done, NULL, 0 };
	s->slots = xcalloc((size_t)o->nenvs, sizeof(*s->slots));
	int started = taskpool_start(&s->builders, cores > 0 ? (int)cores : 1) > 0;
	for (int i = 0; started && i < o->nenvs; i++) {
		s->slots[i] = (struct slot){ .s = s, .env = &o->envs[i] };
		s->slots[i].started = pthread_create(&s->slots[i].thread, NULL, evaluator, &s->slots[i]) == 0;
		started = s->slots[i].started;
	}
	if (!started) {
		sched_stop(s);
		sb_error_set(err, SB_EINTERNAL, "cannot start the evaluator and builder threads");
		return NULL;
	}
	return s;
}

void sched_add(struct sched *s, int64_t id, int priority, const struct problem *p, const char *path)
{
	struct item *c = find(s, id);
	if (c) {
		if (c->priority < priority)
			c->priority = priority;
		pthread_cond_broadcast(&s->wake);
	} else {
		push(s, (struct item){ .id = id, .priority = priority, .problem = p, .path = xstrdup(path) });
	}
}

/* Waits for a waiter's item: its outcome, or SCHED_STOPPED after taking it out when the queue or the owner
 * stopped before it started. */
static int wait_ticket(struct sched *s, struct ticket *t, int64_t id)
{
	while (!t->done) {
		if (!t->started && stopped(s)) {
			for (size_t i = 0; i < s->nq; i++)
				if (s->q[i].id == id) {
					item_release(&s->q[i]);
					s->q[i] = s->q[--s->nq];
					break;
				}
			return SCHED_STOPPED;
		}
		wait_ms(&s->idle, s->o.lock, 200);
	}
	return t->rc;
}

int sched_judge(struct sched *s, const struct config *cfg, const struct problem *p, const char *path, struct verdict *v,
		struct sb_error *err)
{
	struct ticket t = { 0 };
	int64_t id = -(++s->tickets);
	push(s, (struct item){ .id = id, .problem = p, .path = xstrdup(path), .cfg = cfg, .t = &t });
	int rc = wait_ticket(s, &t, id);
	if (rc != SCHED_STOPPED) {
		*v = t.v;
		*err = t.err;
	}
	return rc;
}

int sched_device_task(struct sched *s, void (*fn)(const struct eval_env *env, void *arg), void *arg)
{
	struct ticket t = { 0 };
	int64_t id = -(++s->tickets);
	push(s, (struct item){ .id = id, .problem = NULL, .path = xstrdup("-"), .build = B_BUILT, .t = &t, .task = fn,
			       .task_arg = arg });
	return wait_ticket(s, &t, id);
}

int sched_has(const struct sched *s, int64_t id, int *running)
{
	*running = 0;
	for (int i = 0; i < s->o.nenvs; i++)
		if (s->slots[i].running == id)
			return *running = 1;
	return find(s, id) != NULL;
}

void sched_drain(struct sched *s)
{
	while (!s->stopping && (s->nq || s->running))
		pthread_cond_wait(&s->idle, s->o.lock);
}

void sched_stop(struct sched *s)
{
	if (!s)
		return;
	pthread_mutex_lock(s->o.lock);
	s->stopping = 1;
	pthread_cond_broadcast(&s->wake);
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(s->o.lock);
	for (int i = 0; i < s->o.nenvs; i++)
		if (s->slots[i].started)
			pthread_join(s->slots[i].thread, NULL);
	/* a build in flight ends first (a stop's signal ends its compilers) */
	taskpool_join(&s->builders);
	for (size_t i = 0; i < s->nq; i++)
		item_release(&s->q[i]);
	free(s->q);
	free(s->slots);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->idle);
	free(s);
}

void sched_stats(const struct sched *s, struct sched_stats *out)
{
	double now = now_mono();
	*out = (struct sched_stats){ s->nq, s->running, (size_t)s->building, s->o.nenvs, s->busy_s, s->mean_s };
	for (int i = 0; i < s->o.nenvs; i++)
		if (s->slots[i].running)
			out->busy_s += now - s->slots[i].since;
}
