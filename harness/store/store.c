/* store.c - opening a results store: pragmas (WAL, synchronous=FULL, foreign keys), creating and
 * migrating the versioned schema, transactions, and the integrity check that merge and tests rely on. */
#include "store_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Schema 1 (docs/store.md). Newer schemas are reached from this one by the migrations below, so a
 * store created today and one created by an older build end up identical. */
static const char schema_v1[] =
	"CREATE TABLE schema_version (version INTEGER NOT NULL);"
	"INSERT INTO schema_version VALUES (1);"
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, created TEXT NOT NULL, stitchbench_version TEXT NOT NULL,"
	" trials INTEGER NOT NULL, perf_trials INTEGER NOT NULL, seed INTEGER NOT NULL, tolerance TEXT NOT NULL,"
	" device TEXT NOT NULL, gpu TEXT NOT NULL, torch TEXT NOT NULL, policy TEXT NOT NULL, suite_root TEXT,"
	" settings TEXT NOT NULL);"
	"CREATE TABLE problems (ref TEXT PRIMARY KEY, level INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,"
	" sha256 TEXT NOT NULL);"
	"CREATE TABLE agents (name TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT);"
	"CREATE TABLE samples ("
	" agent TEXT NOT NULL REFERENCES agents(name), problem TEXT NOT NULL REFERENCES problems(ref),"
	" sample INTEGER NOT NULL, run INTEGER NOT NULL REFERENCES runs(id), created TEXT NOT NULL,"
	" PRIMARY KEY (agent, problem, sample));"
	"CREATE TABLE attempts ("
	" agent TEXT NOT NULL, problem TEXT NOT NULL, sample INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	" run INTEGER NOT NULL REFERENCES runs(id), stage TEXT, created TEXT NOT NULL,"
	" PRIMARY KEY (agent, problem, sample, attempt),"
	" FOREIGN KEY (agent, problem, sample) REFERENCES samples(agent, problem, sample));"
	"CREATE TABLE verdicts ("
	" id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES runs(id),"
	" agent TEXT NOT NULL, problem TEXT NOT NULL, sample INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	" status TEXT NOT NULL, hack INTEGER NOT NULL, speedup_eager REAL, speedup_compiled REAL,"
	" candidate_sha256 TEXT NOT NULL, problem_sha256 TEXT NOT NULL, ntrials INTEGER NOT NULL,"
	" nfindings INTEGER NOT NULL, created TEXT NOT NULL, json TEXT NOT NULL,"
	" UNIQUE (agent, problem, sample, attempt),"
	" FOREIGN KEY (agent, problem, sample, attempt) REFERENCES attempts(agent, problem, sample, attempt));"
	"CREATE INDEX verdicts_by_status ON verdicts (agent, status);"
	"CREATE TABLE trials ("
	" verdict INTEGER NOT NULL REFERENCES verdicts(id), idx INTEGER NOT NULL, seed INTEGER NOT NULL,"
	" pass INTEGER NOT NULL, inputs_mutated INTEGER NOT NULL, run_s REAL, outputs INTEGER NOT NULL,"
	" max_abs_error REAL, max_rel_error REAL, detail TEXT, PRIMARY KEY (verdict, idx));"
	"CREATE TABLE findings ("
	" verdict INTEGER NOT NULL REFERENCES verdicts(id), idx INTEGER NOT NULL, id TEXT NOT NULL,"
	" severity TEXT NOT NULL, message TEXT, line INTEGER NOT NULL, col INTEGER NOT NULL,"
	" PRIMARY KEY (verdict, idx));"
	"CREATE TABLE llm_calls ("
	" id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES runs(id),"
	" agent TEXT NOT NULL REFERENCES agents(name), problem TEXT NOT NULL REFERENCES problems(ref),"
	" sample INTEGER NOT NULL, attempt INTEGER NOT NULL, call INTEGER NOT NULL, model TEXT,"
	" prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, latency_s REAL, cost_usd REAL,"
	" created TEXT NOT NULL, UNIQUE (agent, problem, sample, call));";

/* migrations[v] upgrades schema v to v + 1, in the same transaction as the version bump. To change the
 * schema: append the SQL here, bump STORE_SCHEMA, and describe it in docs/store.md. */
static const char *const migrations[] = {
	NULL, /* 0 -> 1 is schema_v1 itself */
	/* 1 -> 2: repeated evaluations of a stored candidate, rows of their own beside its verdict */
	"CREATE TABLE repeats ("
	" agent TEXT NOT NULL, problem TEXT NOT NULL, sample INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	" idx INTEGER NOT NULL, run INTEGER NOT NULL REFERENCES runs(id), status TEXT NOT NULL,"
	" speedup_eager REAL, speedup_eager_lo REAL, speedup_eager_hi REAL, candidate_sha256 TEXT NOT NULL,"
	" created TEXT NOT NULL, json TEXT NOT NULL,"
	" PRIMARY KEY (agent, problem, sample, attempt, idx),"
	" FOREIGN KEY (agent, problem, sample, attempt) REFERENCES verdicts(agent, problem, sample, attempt));",
};

int st_fail(struct store *s, struct sb_error *err, int code, const char *what)
{
	return sb_error_set(err, code ? code : SB_EIO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int st_exec(struct store *s, const char *sql, struct sb_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	sb_error_set(err, SB_EIO, "%s: %s (while running: %.60s)", s->path, msg ? msg : "error", sql);
	sqlite3_free(msg);
	return SB_EIO;
}

int st_prepare(struct store *s, sqlite3_stmt **st, const char *sql, struct sb_error *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	*st = NULL;
	return st_fail(s, err, SB_EINTERNAL, "preparing a statement");
}

int st_run(struct store *s, sqlite3_stmt *st, const char *what, struct sb_error *err)
{
	int rc = sqlite3_step(st);
	int ret = 0;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = st_fail(s, err, rc == SQLITE_CONSTRAINT || (rc & 0xff) == SQLITE_CONSTRAINT ? SB_EINPUT : SB_EIO, what);
	sqlite3_finalize(st);
	return ret;
}

void st_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void st_bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

const char *st_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

double st_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

void st_copy(char *dst, size_t n, sqlite3_stmt *st, int i)
{
	snprintf(dst, n, "%s", st_text(st, i));
}

void st_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int st_table_present(struct store *s, const char *name, int *present, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", err);
	*present = 0;
	if (rc)
		return rc;
	st_bind_text(st, 1, name);
	*present = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	return 0;
}

void st_step_hook(struct store *s, int step)
{
	if (s->hook)
		s->hook(s->hook_arg, step);
}

void store_set_step_hook(struct store *s, void (*fn)(void *arg, int step), void *arg)
{
	s->hook = fn;
	s->hook_arg = arg;
}

char *store_path_for(const char *run)
{
	struct stat st;
	if (stat(run, &st) == 0 && S_ISDIR(st.st_mode))
		return xstrfmt("%s/%s", run, STORE_FILE);
	return xstrdup(run);
}

static int read_version(struct store *s, int *version, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc;
	*version = 0;
	if ((rc = st_prepare(s, &st, "SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'", err)))
		return rc;
	int has = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	if (!has) {
		if ((rc = st_prepare(s, &st, "SELECT count(*) FROM sqlite_master", err)))
			return rc;
		int other = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
		sqlite3_finalize(st);
		if (other)
			return sb_error_set(err, SB_EINPUT, "%s is an SQLite database but not a stitchbench results store "
					    "(it has no schema_version table)", s->path);
		return 0;
	}
	if ((rc = st_prepare(s, &st, "SELECT max(version) FROM schema_version", err)))
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* Creates (version 0) or upgrades the schema; one transaction, so a crash leaves the old version. */
static int migrate(struct store *s, struct sb_error *err)
{
	int version, rc;
	if ((rc = st_exec(s, "BEGIN IMMEDIATE", err)))
		return rc;
	if ((rc = read_version(s, &version, err)))
		goto fail;
	if (version > STORE_SCHEMA) {
		rc = sb_error_set(err, SB_EINPUT, "%s was written with store schema %d, newer than this stitchbench's %d; "
				  "use a newer stitchbench", s->path, version, STORE_SCHEMA);
		goto fail;
	}
	if (version == 0 && (rc = st_exec(s, schema_v1, err)))
		goto fail;
	for (int v = version ? version : 1; v < STORE_SCHEMA; v++) {
		char bump[64];
		snprintf(bump, sizeof(bump), "UPDATE schema_version SET version = %d", v + 1);
		if ((rc = st_exec(s, migrations[v], err)) || (rc = st_exec(s, bump, err)))
			goto fail;
	}
	return st_exec(s, "COMMIT", err);
fail:
	st_exec(s, "ROLLBACK", NULL);
	return rc;
}

static int set_pragmas(struct store *s, struct sb_error *err)
{
	sqlite3_busy_timeout(s->db, 30000); /* a second process (a reader, `export`) may hold it briefly */
	int rc = st_exec(s, s->readonly ? "PRAGMA foreign_keys = ON; PRAGMA query_only = ON" : "PRAGMA foreign_keys = ON", err);
	if (rc || s->readonly)
		return rc;
	sqlite3_stmt *st;
	if ((rc = st_prepare(s, &st, "PRAGMA journal_mode = WAL", err)))
		return rc;
	int wal = sqlite3_step(st) == SQLITE_ROW && !strcmp(st_text(st, 0), "wal");
	sqlite3_finalize(st);
	if (!wal)
		return sb_error_set(err, SB_EIO, "%s: cannot switch to WAL journal mode (is it on a file system without "
				    "shared memory, such as some network mounts?)", s->path);
	/* FULL: a verdict that was committed survives a power cut, not only a crash of this process */
	return st_exec(s, "PRAGMA synchronous = FULL", err);
}

int store_open(struct store **out, const char *path, enum store_mode mode, struct sb_error *err)
{
	struct store *s = xcalloc(1, sizeof(*s));
	struct stat stt;
	int rc, version;
	*out = NULL;
	s->path = xstrdup(path);
	s->readonly = mode == STORE_READ;
	if (s->readonly && stat(path, &stt) != 0) {
		rc = sb_error_set(err, SB_EINPUT, "%s: %s (give a run directory holding %s, or the file itself)", path,
				  strerror(errno), STORE_FILE);
		goto fail;
	}
	/* A reader that may write opens read-write with query_only, so that closing it checkpoints and removes
	 * the -wal and -shm files; on a read-only file or folder it opens read-only and they may stay. */
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	int writable = access(path, W_OK) == 0 && access(slash ? dir : ".", W_OK) == 0;
	free(dir);
	int flags = !s->readonly ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
		    : writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		rc = st_fail(s, err, SB_EIO, "cannot open");
		goto fail;
	}
	if ((rc = set_pragmas(s, err)))
		goto fail;
	if (!s->readonly && (rc = migrate(s, err)))
		goto fail;
	if ((rc = read_version(s, &version, err)))
		goto fail;
	/* a reader takes an older schema that only lacks tables it reads as empty (STORE_SCHEMA_READS) */
	if (version != STORE_SCHEMA && !(s->readonly && version >= STORE_SCHEMA_READS && version < STORE_SCHEMA)) {
		rc = version == 0 ? sb_error_set(err, SB_EINPUT, "%s is empty, not a results store", path)
		     : sb_error_set(err, SB_EINPUT, "%s has store schema %d and this stitchbench reads %d%s", path, version,
				    STORE_SCHEMA, version < STORE_SCHEMA ? "; a command that writes to it (import) upgrades it"
									 : "; use a newer stitchbench");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->db && sqlite3_errcode(s->db) == SQLITE_NOTADB)
		rc = sb_error_set(err, SB_EINPUT, "%s is not an SQLite database, so not a results store", path);
	store_close(s);
	return rc;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

int store_schema_version(struct store *s)
{
	int v = 0;
	read_version(s, &v, NULL);
	return v;
}

int store_begin(struct store *s, struct sb_error *err)
{
	return st_exec(s, "BEGIN IMMEDIATE", err);
}

int store_commit(struct store *s, struct sb_error *err)
{
	return st_exec(s, "COMMIT", err);
}

int st_begin(struct store *s, int *nested, struct sb_error *err)
{
	*nested = !sqlite3_get_autocommit(s->db);
	return st_exec(s, *nested ? "SAVEPOINT unit" : "BEGIN IMMEDIATE", err);
}

int st_end(struct store *s, int nested, int rc, struct sb_error *err)
{
	if (rc) {
		st_exec(s, nested ? "ROLLBACK TO unit; RELEASE unit" : "ROLLBACK", NULL);
		return rc;
	}
	return st_exec(s, nested ? "RELEASE unit" : "COMMIT", err);
}

void store_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		st_exec(s, "ROLLBACK", NULL);
}

/* Runs a query whose first row, if any, describes a fault. */
static int check_query(struct store *s, const char *sql, const char *what, int ok_if_text_ok, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, sql, err);
	if (rc)
		return rc;
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW && !(ok_if_text_ok && !strcmp(st_text(st, 0), "ok"))) {
		struct strbuf row = STRBUF_INIT;
		for (int i = 0; i < sqlite3_column_count(st); i++)
			strbuf_addf(&row, "%s%s", i ? " " : "", st_text(st, i));
		rc = sb_error_set(err, SB_EINPUT, "%s: %s: %s", s->path, what, row.buf);
		strbuf_release(&row);
	} else if (r != SQLITE_ROW && r != SQLITE_DONE) {
		rc = st_fail(s, err, SB_EIO, what);
	}
	sqlite3_finalize(st);
	return rc;
}

int store_check(struct store *s, struct sb_error *err)
{
	int rc;
	if ((rc = check_query(s, "PRAGMA integrity_check", "integrity check failed", 1, err)) ||
	    (rc = check_query(s, "PRAGMA foreign_key_check", "a row points at nothing (table, rowid, parent)", 0, err)))
		return rc;
	if ((rc = check_query(s, "SELECT agent, problem, 'sample', sample, 'attempt', attempt FROM attempts a WHERE NOT EXISTS"
				 " (SELECT 1 FROM verdicts v WHERE v.agent = a.agent AND v.problem = a.problem"
				 " AND v.sample = a.sample AND v.attempt = a.attempt) LIMIT 1",
			      "an attempt has no verdict", 0, err)))
		return rc;
	if ((rc = check_query(s,
			      "SELECT agent, problem, 'sample', sample, 'attempt', attempt FROM verdicts v"
			      " WHERE ntrials != (SELECT count(*) FROM trials t WHERE t.verdict = v.id)"
			      " OR nfindings != (SELECT count(*) FROM findings f WHERE f.verdict = v.id)"
			      " OR ntrials != json_array_length(json, '$.trials')"
			      " OR nfindings != json_array_length(json, '$.findings') LIMIT 1",
			      "a verdict lacks some of its trials or findings", 0, err)))
		return rc;
	int present;
	if ((rc = st_table_present(s, "repeats", &present, err)) || !present)
		return rc;
	return check_query(s,
			   "SELECT r.agent, r.problem, 'sample', r.sample, 'attempt', r.attempt, 'repeat', r.idx FROM repeats r"
			   " JOIN verdicts v USING (agent, problem, sample, attempt)"
			   " WHERE r.candidate_sha256 != v.candidate_sha256 LIMIT 1",
			   "a repeat judged another candidate than its verdict", 0, err);
}

int store_health(const char *path, struct sb_error *err)
{
	struct stat stt;
	if (stat(path, &stt) != 0 || stt.st_size == 0)
		return 0;
	/* as a reader that may write (store_open's STORE_READ): quick_check needs no schema, only pages */
	struct store s = { .path = (char *)path, .readonly = 1 };
	int version, rc = sqlite3_open_v2(path, &s.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK
				  ? st_fail(&s, err, SB_EIO, "cannot open")
				  : set_pragmas(&s, err);
	if (!rc)
		rc = check_query(&s, "PRAGMA quick_check", "it is damaged", 1, err);
	if (!rc)
		rc = read_version(&s, &version, err);
	if (rc && sqlite3_errcode(s.db) == SQLITE_NOTADB) {
		sb_error_set(err, SB_EINPUT, "%s is not an SQLite database", path);
	} else if (rc) {
		char why[SB_ERR_MAX];
		size_t n = strlen(path);
		snprintf(why, sizeof(why), "%s", strncmp(err->msg, path, n) || strncmp(err->msg + n, ": ", 2) ? err->msg
											 : err->msg + n + 2);
		sb_error_set(err, SB_EINPUT, "%s is damaged (%s)", path, why);
	}
	sqlite3_close(s.db);
	return rc ? 1 : 0;
}
