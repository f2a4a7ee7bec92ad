/* store_reffail.c - the `reference_failures` table: samples that could not be judged because their
 * problem's reference failed (raised, or gave outputs it cannot repeat), so that metrics and reports
 * count them as the problem's failure, not the candidate's. Created when first written, like `audit`. */
#include "store_int.h"

#include <stdlib.h>

static const char reffail_table[] =
	"CREATE TABLE IF NOT EXISTS reference_failures (agent TEXT NOT NULL REFERENCES agents(name),"
	" problem TEXT NOT NULL REFERENCES problems(ref), sample INTEGER NOT NULL, message TEXT NOT NULL,"
	" created TEXT NOT NULL, PRIMARY KEY (agent, problem, sample))";

static int put(struct store *s, const char *verb, const struct store_reference_failure *f, struct sb_error *err)
{
	sqlite3_stmt *st;
	char now[32], *sql = xstrfmt("INSERT OR %s INTO reference_failures (agent, problem, sample, message, created)"
				     " VALUES (?, ?, ?, ?, ?)", verb);
	int rc = st_exec(s, reffail_table, err);
	if (!rc)
		rc = st_prepare(s, &st, sql, err);
	free(sql);
	if (rc)
		return rc;
	st_now(now);
	st_bind_text(st, 1, f->agent);
	st_bind_text(st, 2, f->problem);
	sqlite3_bind_int(st, 3, f->sample);
	st_bind_text(st, 4, f->message);
	st_bind_text(st, 5, f->created ? f->created : now);
	return st_run(s, st, "recording a sample its reference kept from being judged", err);
}

int store_put_reference_failure(struct store *s, const char *agent, const char *problem, int sample,
				const char *message, struct sb_error *err)
{
	struct store_reference_failure f = { agent, problem, sample, message, NULL };
	return put(s, "REPLACE", &f, err);
}

int store_clear_reference_failure(struct store *s, const char *agent, const char *problem, int sample,
				  struct sb_error *err)
{
	sqlite3_stmt *st;
	int present, rc = st_table_present(s, "reference_failures", &present, err);
	if (rc || !present)
		return rc;
	if ((rc = st_prepare(s, &st, "DELETE FROM reference_failures WHERE agent = ? AND problem = ? AND sample = ?", err)))
		return rc;
	st_bind_text(st, 1, agent);
	st_bind_text(st, 2, problem);
	sqlite3_bind_int(st, 3, sample);
	return st_run(s, st, "forgetting a reference failure", err);
}

int store_each_reference_failure(struct store *s, store_reference_failure_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int present, rc = st_table_present(s, "reference_failures", &present, err);
	if (rc || !present)
		return rc;
	if ((rc = st_prepare(s, &st, "SELECT agent, problem, sample, message, created FROM reference_failures"
				     " ORDER BY agent, problem, sample", err)))
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_reference_failure f = { st_text(st, 0), st_text(st, 1), sqlite3_column_int(st, 2),
						      st_text(st, 3), st_text(st, 4) };
		rc = fn(arg, &f, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading the reference_failures table");
	sqlite3_finalize(st);
	return rc;
}

static int copy_one(void *arg, const struct store_reference_failure *f, struct sb_error *err)
{
	return put(arg, "IGNORE", f, err);
}

int st_copy_reference_failures(struct store *from, struct store *to, struct sb_error *err)
{
	return store_each_reference_failure(from, copy_one, to, err);
}
