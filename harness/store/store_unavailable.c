/* store_unavailable.c - the `unavailable` table: agents a run could not run at all in its environment
 * (torch-compile under a torch without torch.compile), with why, so that metrics and reports say so
 * instead of showing a 0% agent or leaving it out. Created when first written, like `audit`. */
#include "store_int.h"

#include <string.h>

static const char unavailable_table[] =
	"CREATE TABLE IF NOT EXISTS unavailable (agent TEXT PRIMARY KEY REFERENCES agents(name), reason TEXT NOT NULL)";

int store_put_unavailable(struct store *s, const char *agent, const char *reason, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_exec(s, unavailable_table, err);
	if (rc || (rc = st_prepare(s, &st, "INSERT OR REPLACE INTO unavailable (agent, reason) VALUES (?, ?)", err)))
		return rc;
	st_bind_text(st, 1, agent);
	st_bind_text(st, 2, reason);
	return st_run(s, st, "recording an unavailable agent", err);
}

int store_each_unavailable(struct store *s, store_unavailable_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int present, rc = st_table_present(s, "unavailable", &present, err);
	if (rc || !present)
		return rc;
	if ((rc = st_prepare(s, &st, "SELECT agent, reason FROM unavailable ORDER BY agent", err)))
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW)
		rc = fn(arg, st_text(st, 0), st_text(st, 1), err);
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading the unavailable table");
	sqlite3_finalize(st);
	return rc;
}

static int copy_one(void *arg, const char *agent, const char *reason, struct sb_error *err)
{
	struct store *to = arg;
	sqlite3_stmt *st;
	int rc = st_prepare(to, &st, "INSERT OR IGNORE INTO unavailable (agent, reason) VALUES (?, ?)", err);
	if (rc)
		return rc;
	st_bind_text(st, 1, agent);
	st_bind_text(st, 2, reason);
	return st_run(to, st, "copying an unavailable agent", err);
}

int st_copy_unavailable(struct store *from, struct store *to, struct sb_error *err)
{
	int present, rc = st_table_present(from, "unavailable", &present, err);
	if (rc || !present)
		return rc;
	if ((rc = st_exec(to, unavailable_table, err)))
		return rc;
	return store_each_unavailable(from, copy_one, to, err);
}
