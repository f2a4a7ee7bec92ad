/* journal.c - serve's durable queue in SQLite (journal.h): candidates, jobs, their items, request ids and
 * usage. Every call is one statement or a few inside the caller's transaction; the caller serialises. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/strbuf.h"
#include "journal.h"

struct journal {
	sqlite3 *db;
	char *path;
};

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS candidates("
	"  id INTEGER PRIMARY KEY, problem TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('queued', 'done', 'failed')), priority INTEGER NOT NULL,"
	"  client TEXT NOT NULL, status TEXT, message TEXT, seconds REAL, created TEXT NOT NULL, finished TEXT,"
	"  UNIQUE (problem, sha256));"
	"CREATE TABLE IF NOT EXISTS jobs("
	"  id TEXT PRIMARY KEY, client TEXT NOT NULL, request_id TEXT, digest TEXT NOT NULL, created TEXT NOT NULL,"
	"  UNIQUE (client, request_id));"
	"CREATE TABLE IF NOT EXISTS items("
	"  job TEXT NOT NULL REFERENCES jobs(id), idx INTEGER NOT NULL,"
	"  candidate INTEGER NOT NULL REFERENCES candidates(id), request_id TEXT, reward TEXT NOT NULL,"
	"  lambda REAL NOT NULL, reused INTEGER NOT NULL, fail_status TEXT, fail_message TEXT,"
	"  PRIMARY KEY (job, idx));"
	"CREATE INDEX IF NOT EXISTS items_candidate ON items(candidate);"
	"CREATE TABLE IF NOT EXISTS requests("
	"  client TEXT NOT NULL, request_id TEXT NOT NULL, candidate INTEGER NOT NULL REFERENCES candidates(id),"
	"  PRIMARY KEY (client, request_id));"
	"CREATE TABLE IF NOT EXISTS usage(client TEXT PRIMARY KEY, seconds REAL NOT NULL);";

static const char *const state_names[] = { "queued", "done", "failed" };

static int db_fail(struct journal *j, struct sb_error *err, const char *what)
{
	return sb_error_set(err, SB_EIO, "%s: %s: %s", j->path, what, sqlite3_errmsg(j->db));
}

static int exec(struct journal *j, const char *sql, struct sb_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(j->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	int rc = sb_error_set(err, SB_EIO, "%s: %s", j->path, msg ? msg : sqlite3_errmsg(j->db));
	sqlite3_free(msg);
	return rc;
}

static int prep(struct journal *j, sqlite3_stmt **st, const char *sql, struct sb_error *err)
{
	if (sqlite3_prepare_v2(j->db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	*st = NULL;
	return db_fail(j, err, "preparing a statement");
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Runs a statement that returns no rows. */
static int done(struct journal *j, sqlite3_stmt *st, struct sb_error *err, const char *what)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(j, err, what);
	sqlite3_finalize(st);
	return rc;
}

static void now_iso(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

int journal_open(struct journal **out, const char *path, struct sb_error *err)
{
	struct journal *j = xcalloc(1, sizeof(*j));
	j->path = xstrdup(path);
	*out = NULL;
	if (sqlite3_open_v2(path, &j->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) !=
	    SQLITE_OK) {
		int rc = db_fail(j, err, "cannot open");
		journal_close(j);
		return rc;
	}
	sqlite3_busy_timeout(j->db, 30000);
	int rc = exec(j, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", err);
	if (!rc)
		rc = exec(j, schema_sql, err);
	if (!rc) {
		sqlite3_stmt *st;
		if (!(rc = prep(j, &st, "SELECT value FROM meta WHERE key = 'schema'", err))) {
			int have = sqlite3_step(st) == SQLITE_ROW ? atoi(col_text(st, 0)) : 0;
			sqlite3_finalize(st);
			if (have > JOURNAL_SCHEMA)
				rc = sb_error_set(err, SB_EINPUT, "%s: written by a newer stitchbench (journal schema %d, this one "
						  "knows %d); use that version, or another --run", path, have, JOURNAL_SCHEMA);
			else if (!have)
				rc = exec(j, "INSERT INTO meta(key, value) VALUES ('schema', '1')", err);
		}
	}
	if (rc) {
		journal_close(j);
		return rc;
	}
	*out = j;
	return 0;
}

void journal_close(struct journal *j)
{
	if (!j)
		return;
	sqlite3_close(j->db);
	free(j->path);
	free(j);
}

int journal_begin(struct journal *j, struct sb_error *err)
{
	return exec(j, "BEGIN IMMEDIATE", err);
}

int journal_commit(struct journal *j, struct sb_error *err)
{
	return exec(j, "COMMIT", err);
}

void journal_rollback(struct journal *j)
{
	sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---------- candidates ---------- */

#define CAND_COLS "id, problem, sha256, path, state, priority, client, status, message, seconds"

void journal_cand_release(struct journal_cand *c)
{
	free(c->path);
	free(c->message);
	c->path = c->message = NULL;
}

static void cand_read(sqlite3_stmt *st, int col, struct journal_cand *c)
{
	memset(c, 0, sizeof(*c));
	c->id = sqlite3_column_int64(st, col);
	snprintf(c->problem, sizeof(c->problem), "%s", col_text(st, col + 1));
	snprintf(c->sha256, sizeof(c->sha256), "%s", col_text(st, col + 2));
	c->path = xstrdup(col_text(st, col + 3));
	const char *state = col_text(st, col + 4);
	c->state = !strcmp(state, "done") ? CAND_DONE : !strcmp(state, "failed") ? CAND_FAILED : CAND_QUEUED;
	c->priority = sqlite3_column_int(st, col + 5);
	snprintf(c->client, sizeof(c->client), "%s", col_text(st, col + 6));
	snprintf(c->status, sizeof(c->status), "%s", col_text(st, col + 7));
	c->message = sqlite3_column_type(st, col + 8) == SQLITE_NULL ? NULL : xstrdup(col_text(st, col + 8));
	c->seconds = sqlite3_column_double(st, col + 9);
}

static int find_one(struct journal *j, sqlite3_stmt *st, struct journal_cand *out, struct sb_error *err)
{
	int step = sqlite3_step(st), rc;
	if (step == SQLITE_ROW) {
		cand_read(st, 0, out);
		rc = 1;
	} else {
		rc = step == SQLITE_DONE ? 0 : db_fail(j, err, "reading a candidate");
	}
	sqlite3_finalize(st);
	return rc;
}

int journal_find_candidate(struct journal *j, const char *problem, const char *sha256, struct journal_cand *out,
			   struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT " CAND_COLS " FROM candidates WHERE problem = ? AND sha256 = ?", err);
	if (rc)
		return rc;
	bind_text(st, 1, problem);
	bind_text(st, 2, sha256);
	return find_one(j, st, out, err);
}

int journal_get_candidate(struct journal *j, int64_t id, struct journal_cand *out, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT " CAND_COLS " FROM candidates WHERE id = ?", err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	return find_one(j, st, out, err);
}

int journal_add_candidate(struct journal *j, const char *problem, const char *sha256, const char *path, int priority,
			  const char *client, int64_t *id, struct sb_error *err)
{
	sqlite3_stmt *st;
	char now[32];
	int rc = prep(j, &st, "INSERT INTO candidates(problem, sha256, path, state, priority, client, created) "
			      "VALUES (?, ?, ?, 'queued', ?, ?, ?)", err);
	if (rc)
		return rc;
	now_iso(now);
	bind_text(st, 1, problem);
	bind_text(st, 2, sha256);
	bind_text(st, 3, path);
	sqlite3_bind_int(st, 4, priority);
	bind_text(st, 5, client);
	bind_text(st, 6, now);
	if ((rc = done(j, st, err, "adding a candidate")) == 0)
		*id = sqlite3_last_insert_rowid(j->db);
	return rc;
}

int journal_requeue(struct journal *j, int64_t id, int priority, const char *client, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "UPDATE candidates SET state = 'queued', priority = ?, client = ?, status = NULL, "
			      "message = NULL, finished = NULL WHERE id = ?", err);
	if (rc)
		return rc;
	sqlite3_bind_int(st, 1, priority);
	bind_text(st, 2, client);
	sqlite3_bind_int64(st, 3, id);
	return done(j, st, err, "queueing a candidate again");
}

int journal_raise(struct journal *j, int64_t id, int priority, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "UPDATE candidates SET priority = ? WHERE id = ? AND priority < ?", err);
	if (rc)
		return rc;
	sqlite3_bind_int(st, 1, priority);
	sqlite3_bind_int64(st, 2, id);
	sqlite3_bind_int(st, 3, priority);
	return done(j, st, err, "raising a candidate's priority");
}

int journal_finish(struct journal *j, int64_t id, enum cand_state state, const char *status, const char *message,
		   double seconds, struct sb_error *err)
{
	sqlite3_stmt *st;
	char now[32];
	int rc = prep(j, &st, "UPDATE candidates SET state = ?, status = ?, message = ?, seconds = ?, finished = ? "
			      "WHERE id = ?", err);
	if (rc)
		return rc;
	now_iso(now);
	bind_text(st, 1, state_names[state]);
	bind_text(st, 2, state == CAND_FAILED ? status : NULL);
	bind_text(st, 3, state == CAND_FAILED ? message : NULL);
	sqlite3_bind_double(st, 4, seconds);
	bind_text(st, 5, now);
	sqlite3_bind_int64(st, 6, id);
	if ((rc = done(j, st, err, "finishing a candidate")))
		return rc;
	if (state == CAND_FAILED) {
		if ((rc = prep(j, &st, "UPDATE items SET fail_status = ?, fail_message = ? "
				       "WHERE candidate = ? AND fail_status IS NULL", err)))
			return rc;
		bind_text(st, 1, status);
		bind_text(st, 2, message);
		sqlite3_bind_int64(st, 3, id);
		return done(j, st, err, "recording a failure");
	}
	if ((rc = prep(j, &st, "INSERT INTO usage(client, seconds) SELECT client, ? FROM candidates WHERE id = ? "
			       "ON CONFLICT(client) DO UPDATE SET seconds = seconds + excluded.seconds", err)))
		return rc;
	sqlite3_bind_double(st, 1, seconds > 0 ? seconds : 0);
	sqlite3_bind_int64(st, 2, id);
	return done(j, st, err, "charging a client");
}

int journal_each_queued(struct journal *j, journal_cand_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT " CAND_COLS " FROM candidates WHERE state = 'queued' ORDER BY id", err);
	if (rc)
		return rc;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct journal_cand c;
		cand_read(st, 0, &c);
		rc = fn(arg, &c);
		journal_cand_release(&c);
		if (rc)
			break;
	}
	if (!rc && step != SQLITE_DONE)
		rc = db_fail(j, err, "reading the queue");
	sqlite3_finalize(st);
	return rc;
}

/* ---------- jobs ---------- */

int journal_find_job(struct journal *j, const char *client, const char *request_id, char job[33], char digest[65],
		     struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT id, digest FROM jobs WHERE client = ? AND request_id = ?", err);
	if (rc)
		return rc;
	bind_text(st, 1, client);
	bind_text(st, 2, request_id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		snprintf(job, 33, "%s", col_text(st, 0));
		snprintf(digest, 65, "%s", col_text(st, 1));
		rc = 1;
	} else {
		rc = step == SQLITE_DONE ? 0 : db_fail(j, err, "finding a job");
	}
	sqlite3_finalize(st);
	return rc;
}

int journal_add_job(struct journal *j, const char *id, const char *client, const char *request_id, const char *digest,
		    struct sb_error *err)
{
	sqlite3_stmt *st;
	char now[32];
	int rc = prep(j, &st, "INSERT INTO jobs(id, client, request_id, digest, created) VALUES (?, ?, ?, ?, ?)", err);
	if (rc)
		return rc;
	now_iso(now);
	bind_text(st, 1, id);
	bind_text(st, 2, client);
	bind_text(st, 3, request_id);
	bind_text(st, 4, digest);
	bind_text(st, 5, now);
	return done(j, st, err, "adding a job");
}

int journal_add_item(struct journal *j, const char *job, int idx, int64_t cand, const char *request_id,
		     const char *reward, double lambda, int reused, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "INSERT INTO items(job, idx, candidate, request_id, reward, lambda, reused) "
			      "VALUES (?, ?, ?, ?, ?, ?, ?)", err);
	if (rc)
		return rc;
	bind_text(st, 1, job);
	sqlite3_bind_int(st, 2, idx);
	sqlite3_bind_int64(st, 3, cand);
	bind_text(st, 4, request_id);
	bind_text(st, 5, reward);
	sqlite3_bind_double(st, 6, lambda);
	sqlite3_bind_int(st, 7, reused);
	return done(j, st, err, "adding a job's candidate");
}

int journal_get_job(struct journal *j, const char *id, char client[64], char created[32], struct journal_item **items,
		    size_t *n, struct sb_error *err)
{
	sqlite3_stmt *st;
	*items = NULL;
	*n = 0;
	int rc = prep(j, &st, "SELECT client, created FROM jobs WHERE id = ?", err);
	if (rc)
		return rc;
	bind_text(st, 1, id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		snprintf(client, 64, "%s", col_text(st, 0));
		snprintf(created, 32, "%s", col_text(st, 1));
	}
	sqlite3_finalize(st);
	if (step != SQLITE_ROW)
		return step == SQLITE_DONE ? 0 : db_fail(j, err, "reading a job");

	if ((rc = prep(j, &st, "SELECT i.idx, i.request_id, i.reward, i.lambda, i.reused, i.fail_status, i.fail_message, "
			       "c.id, c.problem, c.sha256, c.path, c.state, c.priority, c.client, c.status, c.message, c.seconds "
			       "FROM items i JOIN candidates c ON c.id = i.candidate WHERE i.job = ? ORDER BY i.idx", err)))
		return rc;
	bind_text(st, 1, id);
	size_t alloc = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == alloc)
			*items = xrealloc(*items, (alloc = alloc ? 2 * alloc : 8) * sizeof(**items));
		struct journal_item *it = &(*items)[(*n)++];
		memset(it, 0, sizeof(*it));
		it->idx = sqlite3_column_int(st, 0);
		it->request_id = sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : xstrdup(col_text(st, 1));
		snprintf(it->reward, sizeof(it->reward), "%s", col_text(st, 2));
		it->lambda = sqlite3_column_double(st, 3);
		it->reused = sqlite3_column_int(st, 4);
		snprintf(it->fail_status, sizeof(it->fail_status), "%s", col_text(st, 5));
		it->fail_message = sqlite3_column_type(st, 6) == SQLITE_NULL ? NULL : xstrdup(col_text(st, 6));
		cand_read(st, 7, &it->cand);
	}
	rc = step == SQLITE_DONE ? 1 : db_fail(j, err, "reading a job's candidates");
	sqlite3_finalize(st);
	if (rc < 0) {
		journal_items_free(*items, *n);
		*items = NULL;
		*n = 0;
	}
	return rc;
}

void journal_items_free(struct journal_item *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].request_id);
		free(v[i].fail_message);
		journal_cand_release(&v[i].cand);
	}
	free(v);
}

int journal_job_pending(struct journal *j, const char *id, size_t *pending, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT count(*) FROM items i JOIN candidates c ON c.id = i.candidate "
			      "WHERE i.job = ? AND i.fail_status IS NULL AND c.state != 'done'", err);
	if (rc)
		return rc;
	bind_text(st, 1, id);
	rc = sqlite3_step(st) == SQLITE_ROW ? 0 : db_fail(j, err, "counting a job's candidates");
	*pending = rc ? 0 : (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

/* ---------- request ids, usage ---------- */

int journal_find_request(struct journal *j, const char *client, const char *request_id, int64_t *cand,
			 struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT candidate FROM requests WHERE client = ? AND request_id = ?", err);
	if (rc)
		return rc;
	bind_text(st, 1, client);
	bind_text(st, 2, request_id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		*cand = sqlite3_column_int64(st, 0);
		rc = 1;
	} else {
		rc = step == SQLITE_DONE ? 0 : db_fail(j, err, "finding a request id");
	}
	sqlite3_finalize(st);
	return rc;
}

int journal_bind_request(struct journal *j, const char *client, const char *request_id, int64_t cand,
			 struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "INSERT OR IGNORE INTO requests(client, request_id, candidate) VALUES (?, ?, ?)", err);
	if (rc)
		return rc;
	bind_text(st, 1, client);
	bind_text(st, 2, request_id);
	sqlite3_bind_int64(st, 3, cand);
	return done(j, st, err, "recording a request id");
}

int journal_usage(struct journal *j, const char *client, double *seconds, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT seconds FROM usage WHERE client = ?", err);
	if (rc)
		return rc;
	bind_text(st, 1, client);
	int step = sqlite3_step(st);
	*seconds = step == SQLITE_ROW ? sqlite3_column_double(st, 0) : 0;
	rc = step == SQLITE_ROW || step == SQLITE_DONE ? 0 : db_fail(j, err, "reading usage");
	sqlite3_finalize(st);
	return rc;
}

int journal_counts(struct journal *j, size_t counts[3], struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prep(j, &st, "SELECT state, count(*) FROM candidates GROUP BY state", err);
	if (rc)
		return rc;
	counts[0] = counts[1] = counts[2] = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		for (int i = 0; i < 3; i++)
			if (!strcmp(col_text(st, 0), state_names[i]))
				counts[i] = (size_t)sqlite3_column_int64(st, 1);
	rc = step == SQLITE_DONE ? 0 : db_fail(j, err, "counting candidates");
	sqlite3_finalize(st);
	return rc;
}
