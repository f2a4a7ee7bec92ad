/* store_int.h - what the files of harness/store/ share and nothing else sees: the store struct and
 * small SQLite helpers that turn a failed call into a struct sb_error naming the database. */
#ifndef SB_STORE_INT_H
#define SB_STORE_INT_H

#include <sqlite3.h>

#include "store.h"

struct store {
	sqlite3 *db;
	char *path;
	int readonly;
	int64_t run;                    /* the run of store_use_run(); 0 = none yet */
	void (*hook)(void *arg, int step);
	void *hook_arg;
};

/* "PATH: WHAT: sqlite's message" with code (SB_EIO unless given). */
int st_fail(struct store *s, struct sb_error *err, int code, const char *what);
int st_exec(struct store *s, const char *sql, struct sb_error *err);
int st_prepare(struct store *s, sqlite3_stmt **st, const char *sql, struct sb_error *err);
/* Steps a statement that returns no rows, then finalizes it. */
int st_run(struct store *s, sqlite3_stmt *st, const char *what, struct sb_error *err);

void st_bind_text(sqlite3_stmt *st, int i, const char *v);   /* NULL binds NULL */
void st_bind_real(sqlite3_stmt *st, int i, double v);        /* non-finite binds NULL */
const char *st_text(sqlite3_stmt *st, int i);                /* NULL column -> "" */
double st_real(sqlite3_stmt *st, int i);                     /* NULL column -> NAN */
void st_copy(char *dst, size_t n, sqlite3_stmt *st, int i);

/* The compared settings a verdict carries (settings.*, env.*); SB_EINPUT when it lacks them. */
int st_run_fields_from_verdict(struct store_run *r, json_t *verdict, struct sb_error *err);
/* What the indexed columns of a verdict (and of a repeat) hold, read from the verdict JSON once. */
struct vfields {
	const char *status, *problem_sha, *candidate_sha;
	char problem[16];
	double speedup_eager, speedup_compiled;
	json_t *trials, *findings;
	int hack;
};
/* Reads and checks a schema-1 verdict's fields; SB_EINPUT naming what is wrong. */
int st_read_fields(json_t *v, struct vfields *f, struct sb_error *err);
/* The verdict's settings against those of run `run`: a run holds one setting (resumes must not mix them,
 * and a repeat is judged as its verdict was). SB_EINPUT naming each setting that differs. */
int st_check_run(struct store *s, int64_t run, json_t *v, struct sb_error *err);
/* One row of runs by id; SB_EINTERNAL when there is none. */
int st_load_run(struct store *s, int64_t id, struct store_run *r, struct sb_error *err);

/* A unit of writes that is all or nothing: its own immediate transaction (taking the write lock first, so
 * two writers never interleave a read and a write), or a savepoint inside a transaction already open. */
int st_begin(struct store *s, int *nested, struct sb_error *err);
/* Commits (rc == 0) or rolls back what st_begin started; returns rc, or the commit's error. */
int st_end(struct store *s, int nested, int rc, struct sb_error *err);

/* The audit rows of one problem (findings: [{"id", "message"}]), replacing its earlier ones; creates the
 * table first. No transaction of its own. */
int st_put_audit_rows(struct store *s, const char *problem, const char *sha256, json_t *findings, struct sb_error *err);
/* Copies the audit table of `from`, if it has one, into `to` (rows already there are kept). */
int st_copy_audit(struct store *from, struct store *to, struct sb_error *err);
/* Copies the unavailable table of `from`, if it has one, into `to` (agents already there are kept). */
int st_copy_unavailable(struct store *from, struct store *to, struct sb_error *err);

/* Whether the store has a table of that name (the tables created on first use, outside the schema). */
int st_table_present(struct store *s, const char *name, int *present, struct sb_error *err);
/* Copies the reference_failures table of `from`, if it has one, into `to` (samples already there are kept). */
int st_copy_reference_failures(struct store *from, struct store *to, struct sb_error *err);

/* ISO 8601 UTC, second resolution. */
void st_now(char out[32]);
/* Calls the test hook, if any. */
void st_step_hook(struct store *s, int step);

#endif
