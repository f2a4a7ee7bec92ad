/* sched.h - the evaluation queue: the one way many candidates are judged. `eval --samples` and `serve`
 * and `run` are front ends of it: the first two queue candidates and take each verdict through a
 * callback, run's session threads each queue an attempt and wait for its verdict (sched_judge). Candidates
 * wait by priority, then the order they came in; builder threads build them ahead on the cores
 * in that order; one evaluator thread per device slot (one per GPU of --gpus) judges the best built
 * candidate. On the CPU the timed calls would share the cores with the compilers, so a build starts only
 * while nothing is judged, and an evaluation only while nothing builds.
 *
 * The queue runs under its owner's lock: the owner calls every function below with the lock held, and
 * the queue's threads hold it whenever they touch the queue or call the owner back, never while a
 * candidate is built or judged. */
#ifndef SB_SCHED_H
#define SB_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/error.h"
#include "../core/log.h"
#include "../eval/evaluate.h"

struct sched;

struct sched_ops {
	/* Without the lock, after the evaluation (rc 0 only): what the owner adds to a verdict (the rubric
	 * judge's scores). May be NULL. */
	void (*score)(void *owner, int64_t id, const struct problem *p, struct verdict *v);
	/* With the lock held: the candidate's verdict, a harness_error standing for one when the evaluator
	 * failed. The queue has forgotten the candidate; the verdict is released after the call. */
	void (*judged)(void *owner, int64_t id, const struct problem *p, const char *path, struct verdict *v);
	/* With the lock held, may be NULL: a build ended (ok: its outcome is a built extension). */
	void (*built)(void *owner, int64_t id, const char *path, const struct prebuild *pb);
};

struct sched_opts {
	const struct sb_ctx *ctx;
	const struct config *cfg;
	struct eval_env *envs;    /* one per device slot, each its evaluator's alone once started; envs[0] also builds */
	int nenvs;
	pthread_mutex_t *lock;    /* the owner's */
	const struct sched_ops *ops;
	void *owner;
	atomic_int *stop;         /* NULL, or the owner's stop bits: while any is set no evaluation starts, and
				   * one that ends while a kill bit is set was killed: its verdict is dropped
				   * and its candidate stays queued (the owner keeps it for the next start) */
	int kill_bits;            /* the bits of *stop that mean a kill (0: every bit) */
};

/* Starts the builders and the evaluators; NULL with err set when no thread could start. */
struct sched *sched_start(const struct sched_opts *o, struct sb_error *err);
/* Queues a candidate (id > 0, unique among those queued; path is copied). A candidate queued already
 * keeps its place and takes the higher of the two priorities. */
void sched_add(struct sched *s, int64_t id, int priority, const struct problem *p, const char *path);
/* Queues a candidate (at priority 0, judged with cfg) and waits, the lock released meanwhile, for its
 * evaluation: eval_candidate's rc, with *v filled (release it) and err set as eval_candidate sets them,
 * score and judged not called; or SCHED_STOPPED, no verdict, when the queue or the owner stopped before
 * its evaluation started, or a kill ended it. Called with the lock held. */
#define SCHED_STOPPED (-100)
int sched_judge(struct sched *s, const struct config *cfg, const struct problem *p, const char *path, struct verdict *v,
		struct sb_error *err);
/* Runs fn on the next free device slot, in its turn among the candidates, and waits for it (the lock
 * released meanwhile): work that needs a GPU to itself, like a reference's profile. 0, or SCHED_STOPPED
 * when the queue or the owner stopped before it started. Called with the lock held. */
int sched_device_task(struct sched *s, void (*fn)(const struct eval_env *env, void *arg), void *arg);
/* Whether the candidate is queued or being judged; being judged: *running 1. */
int sched_has(const struct sched *s, int64_t id, int *running);
/* Waits (the lock released meanwhile) until nothing is queued or judged, or the queue stops. */
void sched_drain(struct sched *s);
/* Nothing new starts; a build or evaluation in flight ends (the caller may kill its processes first);
 * the threads are joined and what was queued is dropped. Called without the lock, once no thread waits
 * in sched_judge or sched_device_task. NULL is a no-op. */
void sched_stop(struct sched *s);

/* Metrics, with the lock held. */
struct sched_stats {
	size_t queued, running, building;
	int slots;
	double busy_s;            /* evaluator seconds spent judging, summed over the slots */
	double mean_s;            /* moving mean of one evaluation's wall seconds; 0: none yet */
};
void sched_stats(const struct sched *s, struct sched_stats *out);

#endif
