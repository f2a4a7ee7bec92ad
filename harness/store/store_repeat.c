/* store_repeat.c - the `repeats` table: a stored candidate judged again, so that the spread between
 * evaluations of one candidate is measured rather than assumed (docs/store.md, docs/metrics.md). A repeat
 * is a row of its own beside its verdict and never changes it. */
#include "store_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run and candidate of the verdict at k: 1 when stored, 0 when not, negative on error. */
static int verdict_of(struct store *s, const struct store_key *k, int64_t *run, char sha[65], char psha[65],
		      struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT run, candidate_sha256, problem_sha256 FROM verdicts WHERE agent = ? AND "
				    "problem = ? AND sample = ? AND attempt = ?", err);
	if (rc)
		return rc;
	st_bind_text(st, 1, k->agent);
	st_bind_text(st, 2, k->problem);
	sqlite3_bind_int(st, 3, k->sample);
	sqlite3_bind_int(st, 4, k->attempt);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		*run = sqlite3_column_int64(st, 0);
		st_copy(sha, 65, st, 1);
		st_copy(psha, 65, st, 2);
		rc = 1;
	} else if (step != SQLITE_DONE) {
		rc = st_fail(s, err, SB_EIO, "reading a verdict");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_count_repeats(struct store *s, const struct store_key *k, int *n, int *last, struct sb_error *err)
{
	sqlite3_stmt *st;
	int present, rc = st_table_present(s, "repeats", &present, err);
	*n = 0;
	if (last)
		*last = 0;
	if (rc || !present)
		return rc;
	if ((rc = st_prepare(s, &st, "SELECT count(*), coalesce(max(idx), 0) FROM repeats WHERE agent = ? AND "
				     "problem = ? AND sample = ? AND attempt = ?", err)))
		return rc;
	st_bind_text(st, 1, k->agent);
	st_bind_text(st, 2, k->problem);
	sqlite3_bind_int(st, 3, k->sample);
	sqlite3_bind_int(st, 4, k->attempt);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*n = sqlite3_column_int(st, 0);
		if (last)
			*last = sqlite3_column_int(st, 1);
	} else
		rc = st_fail(s, err, SB_EIO, "counting repeats");
	sqlite3_finalize(st);
	return rc;
}

static double ci_end(json_t *verdict, size_t i)
{
	json_t *v = json_array_get(json_object_get(json_object_get(verdict, "speedup"), "vs_eager_ci95"), i);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int store_put_repeat(struct store *s, const struct store_key *k, int idx, json_t *verdict, const char *created,
		     struct sb_error *err)
{
	struct vfields f;
	int64_t run = 0;
	char sha[65], psha[65], now[32];
	int rc, nested;
	if (idx < 1)
		return sb_error_set(err, SB_EINTERNAL, "repeat %d of %s %s: repeats are numbered from 1", idx, k->agent,
				    k->problem);
	if ((rc = st_read_fields(verdict, &f, err)))
		return rc;
	if ((rc = st_begin(s, &nested, err)))
		return rc;
	rc = verdict_of(s, k, &run, sha, psha, err);
	if (rc == 0)
		rc = sb_error_set(err, SB_EINPUT, "%s %s sample %d attempt %d has no verdict in %s to repeat", k->agent,
				  k->problem, k->sample, k->attempt, s->path);
	else if (rc == 1 && (strcmp(f.problem, k->problem) || strcmp(f.candidate_sha, sha) || strcmp(f.problem_sha, psha)))
		rc = sb_error_set(err, SB_EINPUT, "repeat %d of %s %s sample %d attempt %d judged another %s (%.12s..., the "
				  "verdict's %.12s...): a repeat judges the same file again", idx, k->agent, k->problem,
				  k->sample, k->attempt, strcmp(f.candidate_sha, sha) ? "candidate" : "problem file",
				  strcmp(f.candidate_sha, sha) ? f.candidate_sha : f.problem_sha,
				  strcmp(f.candidate_sha, sha) ? sha : psha);
	else if (rc == 1)
		rc = st_check_run(s, run, verdict, err);
	sqlite3_stmt *st = NULL;
	if (rc == 0) {
		int present = 0;
		rc = st_table_present(s, "repeats", &present, err);
		if (!rc && !present)
			rc = sb_error_set(err, SB_EINTERNAL, "%s has no repeats table (opened for reading?)", s->path);
	}
	if (rc == 0)
		rc = st_prepare(s, &st, "SELECT 1 FROM repeats WHERE agent = ? AND problem = ? AND sample = ? AND attempt = ? "
					"AND idx = ?", err);
	if (rc == 0) {
		st_bind_text(st, 1, k->agent);
		st_bind_text(st, 2, k->problem);
		sqlite3_bind_int(st, 3, k->sample);
		sqlite3_bind_int(st, 4, k->attempt);
		sqlite3_bind_int(st, 5, idx);
		if (sqlite3_step(st) == SQLITE_ROW)
			rc = sb_error_set(err, SB_EEXIST, "repeat %d of %s %s sample %d attempt %d is already stored", idx,
					  k->agent, k->problem, k->sample, k->attempt);
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = st_prepare(s, &st, "INSERT INTO repeats (agent, problem, sample, attempt, idx, run, status, speedup_eager,"
					" speedup_eager_lo, speedup_eager_hi, candidate_sha256, created, json)"
					" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err);
	if (rc == 0) {
		char *json = json_dumps(verdict, JSON_COMPACT | JSON_PRESERVE_ORDER);
		st_now(now);
		st_bind_text(st, 1, k->agent);
		st_bind_text(st, 2, k->problem);
		sqlite3_bind_int(st, 3, k->sample);
		sqlite3_bind_int(st, 4, k->attempt);
		sqlite3_bind_int(st, 5, idx);
		sqlite3_bind_int64(st, 6, run);
		st_bind_text(st, 7, f.status);
		st_bind_real(st, 8, f.speedup_eager);
		st_bind_real(st, 9, ci_end(verdict, 0));
		st_bind_real(st, 10, ci_end(verdict, 1));
		st_bind_text(st, 11, f.candidate_sha);
		st_bind_text(st, 12, created ? created : now);
		st_bind_text(st, 13, json);
		rc = st_run(s, st, "adding a repeat", err);
		free(json);
	}
	return st_end(s, nested, rc, err);
}

int store_each_repeat(struct store *s, store_repeat_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int present, rc = st_table_present(s, "repeats", &present, err);
	if (rc || !present)
		return rc;
	if ((rc = st_prepare(s, &st,
			     "SELECT r.agent, r.problem, r.sample, r.attempt, r.idx, r.status, r.speedup_eager,"
			     " r.speedup_eager_lo, r.speedup_eager_hi, r.candidate_sha256, r.created, r.json"
			     " FROM repeats r JOIN problems p ON p.ref = r.problem"
			     " ORDER BY r.agent, p.level, p.id, r.sample, r.attempt, r.idx", err)))
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_repeat_row r = {
			.agent = st_text(st, 0), .problem = st_text(st, 1), .sample = sqlite3_column_int(st, 2),
			.attempt = sqlite3_column_int(st, 3), .idx = sqlite3_column_int(st, 4), .status = st_text(st, 5),
			.speedup_eager = st_real(st, 6), .speedup_lo = st_real(st, 7), .speedup_hi = st_real(st, 8),
			.candidate_sha256 = st_text(st, 9), .created = st_text(st, 10), .json = st_text(st, 11),
		};
		rc = fn(arg, &r, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading repeats");
	sqlite3_finalize(st);
	return rc;
}
