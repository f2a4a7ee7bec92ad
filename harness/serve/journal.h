/* journal.h - what `serve` must not forget across a crash: the candidates it accepted and their state,
 * the jobs that asked for them, request ids and each client's evaluation seconds, in RUN/serve.db
 * (SQLite, WAL, synchronous=FULL). The verdicts themselves live in the run's results store. */
#ifndef SB_SERVE_JOURNAL_H
#define SB_SERVE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../core/error.h"

#define JOURNAL_FILE "serve.db"
#define JOURNAL_SCHEMA 1

struct journal;

/* Opens (creating) the journal at path. */
int journal_open(struct journal **out, const char *path, struct sb_error *err);
void journal_close(struct journal *j);

/* One transaction around several calls below: a submission goes in whole or not at all. */
int journal_begin(struct journal *j, struct sb_error *err);
int journal_commit(struct journal *j, struct sb_error *err);
void journal_rollback(struct journal *j);

enum cand_state { CAND_QUEUED, CAND_DONE, CAND_FAILED };

/* One candidate: a problem and the bytes of one source file, judged at most once (its id is the sample
 * number of its verdict in the results store). */
struct journal_cand {
	int64_t id;
	char problem[16];
	char sha256[65];
	char *path;              /* the source as the server saved it */
	enum cand_state state;
	int priority;
	char client[64];         /* who is charged for its evaluation */
	char status[24];         /* failed: harness_error | cannot_judge; "" otherwise */
	char *message;           /* failed: why */
	double seconds;          /* done: the evaluation's wall seconds */
};
void journal_cand_release(struct journal_cand *c);

/* 1 and *out filled when found, 0 when not, negative on error. */
int journal_find_candidate(struct journal *j, const char *problem, const char *sha256, struct journal_cand *out,
			   struct sb_error *err);
int journal_get_candidate(struct journal *j, int64_t id, struct journal_cand *out, struct sb_error *err);
/* A new queued candidate; *id receives its number. */
int journal_add_candidate(struct journal *j, const char *problem, const char *sha256, const char *path, int priority,
			  const char *client, int64_t *id, struct sb_error *err);
/* A failed candidate asked for again goes back to the queue, paid for by its new asker. */
int journal_requeue(struct journal *j, int64_t id, int priority, const char *client, struct sb_error *err);
/* A queued candidate another asker wants sooner moves up (never down). */
int journal_raise(struct journal *j, int64_t id, int priority, struct sb_error *err);
/* The end of a candidate's evaluation: done (its verdict is in the store; its seconds are charged to its
 * client) or failed (status and message go to every item still waiting on it). */
int journal_finish(struct journal *j, int64_t id, enum cand_state state, const char *status, const char *message,
		   double seconds, struct sb_error *err);
/* Every queued candidate, oldest first; fn's non-zero return stops. */
typedef int (*journal_cand_fn)(void *arg, const struct journal_cand *c);
int journal_each_queued(struct journal *j, journal_cand_fn fn, void *arg, struct sb_error *err);

/* ---------- jobs ---------- */

/* The job a client's request id made: 1 with job[33] and digest[65] (of what it asked) filled, 0 when none. */
int journal_find_job(struct journal *j, const char *client, const char *request_id, char job[33], char digest[65],
		     struct sb_error *err);
int journal_add_job(struct journal *j, const char *id, const char *client, const char *request_id, const char *digest,
		    struct sb_error *err);

/* One candidate of a job, as asked: how to reward it and, once its candidate failed, why. */
struct journal_item {
	int idx;
	char *request_id;        /* NULL when none */
	char reward[16];
	double lambda;
	int reused;              /* its candidate had been judged (or queued) for an earlier request */
	char fail_status[24];    /* "" unless its candidate failed while it waited */
	char *fail_message;
	struct journal_cand cand;
};
int journal_add_item(struct journal *j, const char *job, int idx, int64_t cand, const char *request_id,
		     const char *reward, double lambda, int reused, struct sb_error *err);
/* The job's client, creation time and items in order: 1 when found, 0 when not. */
int journal_get_job(struct journal *j, const char *id, char client[64], char created[32], struct journal_item **items,
		    size_t *n, struct sb_error *err);
void journal_items_free(struct journal_item *v, size_t n);
/* How many of the job's items still wait on a candidate. */
int journal_job_pending(struct journal *j, const char *id, size_t *pending, struct sb_error *err);

/* ---------- request ids and clients ---------- */

/* The candidate a client's candidate request id names: 1 when bound, 0 when not. */
int journal_find_request(struct journal *j, const char *client, const char *request_id, int64_t *cand,
			 struct sb_error *err);
int journal_bind_request(struct journal *j, const char *client, const char *request_id, int64_t cand,
			 struct sb_error *err);
/* The seconds of evaluation charged to a client so far. */
int journal_usage(struct journal *j, const char *client, double *seconds, struct sb_error *err);
/* Candidates by state, for the metrics. */
int journal_counts(struct journal *j, size_t counts[3], struct sb_error *err);

#endif
