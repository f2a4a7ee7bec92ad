/* store_audit.c - the `audit` table: the problems `stitchbench audit` found flawed (docs/store.md). It is
 * created when first written, so its presence means audit data exists (report's "No audit data"). */
#include "store_int.h"

#include <string.h>

static const char audit_table[] =
	"CREATE TABLE IF NOT EXISTS audit (problem TEXT NOT NULL, id TEXT NOT NULL, message TEXT,"
	" sha256 TEXT NOT NULL, PRIMARY KEY (problem, id))";

int st_put_audit_rows(struct store *s, const char *problem, const char *sha256, json_t *findings, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_exec(s, audit_table, err);
	if (rc || (rc = st_prepare(s, &st, "DELETE FROM audit WHERE problem = ?", err)))
		return rc;
	st_bind_text(st, 1, problem);
	if ((rc = st_run(s, st, "replacing a problem's audit rows", err)))
		return rc;
	size_t i;
	json_t *f;
	json_array_foreach(findings, i, f) {
		const char *id = json_string_value(json_object_get(f, "id"));
		if (!id)
			return sb_error_set(err, SB_EINPUT, "audit findings[%zu] of %s has no id", i, problem);
		if ((rc = st_prepare(s, &st, "INSERT OR REPLACE INTO audit (problem, id, message, sha256) VALUES (?, ?, ?, ?)",
				     err)))
			return rc;
		st_bind_text(st, 1, problem);
		st_bind_text(st, 2, id);
		st_bind_text(st, 3, json_string_value(json_object_get(f, "message")));
		st_bind_text(st, 4, sha256);
		if ((rc = st_run(s, st, "adding an audit row", err)))
			return rc;
	}
	return 0;
}

int store_put_audit(struct store *s, const char *problem, const char *name, const char *sha256, json_t *findings,
		    struct sb_error *err)
{
	int nested, rc = st_begin(s, &nested, err);
	if (rc)
		return rc;
	rc = store_add_problem(s, problem, name, sha256, err);
	if (rc == 0)
		rc = st_put_audit_rows(s, problem, sha256, findings, err);
	return st_end(s, nested, rc, err);
}

int st_copy_audit(struct store *from, struct store *to, struct sb_error *err)
{
	sqlite3_stmt *st;
	int present = 0, rc = st_prepare(from, &st, "SELECT count(*) FROM sqlite_master WHERE name = 'audit'", err);
	if (rc)
		return rc;
	present = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	if (!present)
		return 0;
	if ((rc = st_exec(to, audit_table, err)) ||
	    (rc = st_prepare(from, &st, "SELECT problem, id, message, sha256 FROM audit", err)))
		return rc;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_stmt *ins;
		if ((rc = st_prepare(to, &ins, "INSERT OR IGNORE INTO audit (problem, id, message, sha256) VALUES (?, ?, ?, ?)",
				     err)))
			break;
		for (int i = 0; i < 4; i++)
			st_bind_text(ins, i + 1, sqlite3_column_type(st, i) == SQLITE_NULL ? NULL : st_text(st, i));
		rc = st_run(to, ins, "copying an audit row", err);
	}
	sqlite3_finalize(st);
	return rc;
}
