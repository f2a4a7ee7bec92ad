/* queue.h - serve's work: a submission becomes a job of candidates in the journal, one evaluator thread
 * judges the queued candidates by priority into the run's results store, and whoever waits on a job is
 * woken as its candidates end. A candidate (problem, source hash) is judged once, whoever asks. */
#ifndef SB_SERVE_QUEUE_H
#define SB_SERVE_QUEUE_H

#include <jansson.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/context.h"
#include "../core/error.h"
#include "../core/suite.h"
#include "clients.h"
#include "journal.h"
#include "reward.h"

struct eval_env;
struct judge;
struct store;

/* The agent name of every verdict `serve` stores; its sample number is the candidate's journal id. */
#define SERVE_AGENT "serve"

/* One candidate of a request as the API read it; the strings belong to the request. */
struct serve_candidate {
	const struct problem *problem;
	char ref[16];             /* "L1/19" */
	const char *source;
	size_t len;
	char sha256[65];          /* of the source's bytes: the file the evaluator judges */
	const char *request_id;   /* NULL when none */
	enum reward_kind reward;
	double lambda;
};

/* One request: a batch of candidates, for POST /v1/evaluate or /v1/jobs. */
struct serve_request {
	const char *request_id;   /* the job's, NULL when none */
	int priority;             /* SERVE_PRIORITY_CLIENT: the client's own */
	int full;                 /* answer with whole verdicts, not summaries */
	double wait_s;            /* POST /v1/evaluate: how long to wait for the verdicts; < 0: until they come */
	int has_wait;             /* the body gave wait_s */
	struct serve_candidate *v;
	size_t n;
	json_t *json;             /* the parsed body, which owns the strings */
};
#define SERVE_PRIORITY_CLIENT INT_MIN
void serve_request_release(struct serve_request *r);

struct serve_queue_opts {
	const struct sb_ctx *ctx;
	const struct config *cfg;
	const struct suite *suite;
	struct eval_env *envs;    /* one per device slot (--gpus), each its evaluator thread's alone once started */
	int nenvs;
	const struct judge *judge;
	struct store *store;      /* the run's results store, serialised by the queue from here on */
	struct journal *journal;  /* likewise */
	const char *run_dir;      /* candidates' sources go to RUN_DIR/candidates/serve/ */
	size_t queue_max;         /* candidates queued or running at most */
	atomic_int *stop;         /* set by a signal: the evaluation in flight is being killed, drop its verdict */
};

struct serve_queue;

/* Reads the journal back: a candidate whose verdict the store holds (stored before a crash) is marked
 * done, the other unfinished ones are queued again, and what it did is said on stderr. */
int queue_open(struct serve_queue **out, const struct serve_queue_opts *o, struct sb_error *err);
int queue_start(struct serve_queue *q, struct sb_error *err);
/* Nothing new is accepted or started; waiters are woken; the evaluation in flight ends (killed by the
 * caller or not) and its thread is joined. What is still queued stays so in the journal. */
void queue_stop(struct serve_queue *q);
void queue_close(struct serve_queue *q);

enum submit_result {
	SUBMIT_OK,        /* a new job */
	SUBMIT_EXISTING,  /* the request id named an earlier job of the same candidates: that one */
	SUBMIT_FULL,      /* the queue has no room: retry after retry_after seconds */
	SUBMIT_BUDGET,    /* the client's evaluation seconds are spent */
	SUBMIT_CONFLICT,  /* a request id was used before for other candidates */
	SUBMIT_STOPPING,  /* the server is stopping */
};

struct submit_answer {
	enum submit_result result;
	char job[33];
	int retry_after;
	size_t queued;            /* candidates this submission put in the queue (the rest were known) */
	char why[512];
};

/* Submits a request for a client. Only a failure of the server itself (the journal, a disk) returns
 * non-zero; every refusal is an answer. */
int queue_submit(struct serve_queue *q, const struct serve_client *cl, const struct serve_request *r,
		 struct submit_answer *a, struct sb_error *err);

/* Waits until every candidate of the job has ended: 1 when they have, 0 when timeout_s passed first
 * (timeout_s < 0: no limit), -1 when the server is stopping. */
int queue_wait(struct serve_queue *q, const char *job, double timeout_s);

/* A job as it stands, with the verdicts of its ended candidates. */
struct job_view {
	char id[33];
	char client[64];
	char created[32];
	struct journal_item *items;
	json_t **verdicts;        /* per item: the stored verdict, or NULL */
	int *running;             /* per item: its candidate is being judged now */
	size_t n, pending;
};
/* 1 with v filled when the job exists and is the client's, 0 when not (or another client's). */
int queue_job(struct serve_queue *q, const char *job, const struct serve_client *cl, struct job_view *v,
	      struct sb_error *err);
void job_view_release(struct job_view *v);

/* GET /v1/metrics: the queue, verdicts per hour, the evaluator's idle share, each client's usage. */
json_t *queue_metrics(struct serve_queue *q, const struct serve_clients *clients);
/* GET /v1/health: up, and what judges here. */
json_t *queue_health(struct serve_queue *q);

#endif
