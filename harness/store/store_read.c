/* store_read.c - reading a store back: verdicts in a stable order (export, metrics, merge), LLM calls,
 * problems and agents. Rows are handed to callbacks so a large run is never loaded whole. */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

int store_each_verdict(struct store *s, store_verdict_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st,
			    "SELECT v.run, r.run_id, v.agent, a.kind, a.model, v.problem, v.problem_sha256, p.level, p.id,"
			    " v.sample, v.attempt, v.status, t.stage, v.hack, v.speedup_eager, v.speedup_compiled,"
			    " v.candidate_sha256, v.created, v.json,"
			    " (SELECT group_concat(id, ' ') FROM (SELECT f.id FROM findings f WHERE f.verdict = v.id"
			    " ORDER BY f.idx)),"
			    " CASE WHEN json_type(v.json, '$.reward') IN ('real', 'integer')"
			    " THEN json_extract(v.json, '$.reward') END,"
			    " json_extract(v.json, '$.robust.passed') IS 0,"
			    " json_extract(v.json, '$.timing.noise.noisy') IS 1,"
			    " json_extract(v.json, '$.speedup.vs_eager_ci95[0]'), json_extract(v.json, '$.speedup.vs_eager_ci95[1]')"
			    " FROM verdicts v JOIN runs r ON r.id = v.run JOIN agents a ON a.name = v.agent"
			    " JOIN problems p ON p.ref = v.problem"
			    " JOIN attempts t USING (agent, problem, sample, attempt)"
			    " ORDER BY v.agent, p.level, p.id, v.sample, v.attempt", err);
	if (rc)
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_verdict_row row = {
			.run = sqlite3_column_int64(st, 0), .run_id = st_text(st, 1), .agent = st_text(st, 2),
			.agent_kind = st_text(st, 3), .model = st_text(st, 4), .problem = st_text(st, 5),
			.problem_sha256 = st_text(st, 6), .level = sqlite3_column_int(st, 7),
			.problem_id = sqlite3_column_int(st, 8), .sample = sqlite3_column_int(st, 9),
			.attempt = sqlite3_column_int(st, 10), .status = st_text(st, 11),
			.stage = sqlite3_column_type(st, 12) == SQLITE_NULL ? NULL : st_text(st, 12),
			.hack = sqlite3_column_int(st, 13), .speedup_eager = st_real(st, 14),
			.speedup_compiled = st_real(st, 15), .candidate_sha256 = st_text(st, 16),
			.created = st_text(st, 17), .json = st_text(st, 18), .finding_ids = st_text(st, 19),
			.reward = st_real(st, 20), .robust_failed = sqlite3_column_int(st, 21),
			.noisy = sqlite3_column_int(st, 22), .speedup_lo = st_real(st, 23), .speedup_hi = st_real(st, 24),
		};
		rc = fn(arg, &row, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading verdicts");
	sqlite3_finalize(st);
	return rc;
}

int store_count_attempts(struct store *s, const char *agent, const char *problem, int sample, int *n,
			 struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT count(*) FROM verdicts WHERE agent = ? AND problem = ? AND sample = ?", err);
	*n = 0;
	if (rc)
		return rc;
	st_bind_text(st, 1, agent);
	st_bind_text(st, 2, problem);
	sqlite3_bind_int(st, 3, sample);
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int(st, 0);
	else
		rc = st_fail(s, err, SB_EIO, "counting a sample's verdicts");
	sqlite3_finalize(st);
	return rc;
}

int store_each_llm_call(struct store *s, store_call_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st,
			    "SELECT agent, problem, sample, attempt, call, model, prompt_tokens, completion_tokens,"
			    " latency_s, cost_usd, created, run FROM llm_calls ORDER BY agent, problem, sample, call", err);
	if (rc)
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_llm_call c = {
			.agent = st_text(st, 0), .problem = st_text(st, 1), .sample = sqlite3_column_int(st, 2),
			.attempt = sqlite3_column_int(st, 3), .call = sqlite3_column_int(st, 4),
			.model = sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : st_text(st, 5),
			.prompt_tokens = (long)sqlite3_column_int64(st, 6), .completion_tokens = (long)sqlite3_column_int64(st, 7),
			.latency_s = st_real(st, 8), .cost_usd = st_real(st, 9), .created = st_text(st, 10),
			.run = sqlite3_column_int64(st, 11),
		};
		rc = fn(arg, &c, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading LLM calls");
	sqlite3_finalize(st);
	return rc;
}

int store_load_problems(struct store *s, struct store_problem **out, size_t *n, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT ref, level, id, name, sha256 FROM problems ORDER BY level, id", err);
	*out = NULL;
	*n = 0;
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		struct store_problem *p = &(*out)[(*n)++];
		st_copy(p->ref, sizeof(p->ref), st, 0);
		p->level = sqlite3_column_int(st, 1);
		p->id = sqlite3_column_int(st, 2);
		st_copy(p->name, sizeof(p->name), st, 3);
		st_copy(p->sha256, sizeof(p->sha256), st, 4);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : st_fail(s, err, SB_EIO, "reading problems");
}

int store_load_agents(struct store *s, struct store_agent **out, size_t *n, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT name, kind, model FROM agents ORDER BY name", err);
	*out = NULL;
	*n = 0;
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		struct store_agent *a = &(*out)[(*n)++];
		st_copy(a->name, sizeof(a->name), st, 0);
		st_copy(a->kind, sizeof(a->kind), st, 1);
		st_copy(a->model, sizeof(a->model), st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : st_fail(s, err, SB_EIO, "reading agents");
}

int store_each_finding(struct store *s, store_finding_fn fn, void *arg, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st,
			    "SELECT v.agent, v.problem, v.sample, v.attempt, f.id, f.severity, f.message, f.line, f.col"
			    " FROM findings f JOIN verdicts v ON v.id = f.verdict JOIN problems p ON p.ref = v.problem"
			    " ORDER BY v.agent, p.level, p.id, v.sample, v.attempt, f.idx", err);
	if (rc)
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_finding_row f = {
			.agent = st_text(st, 0), .problem = st_text(st, 1), .sample = sqlite3_column_int(st, 2),
			.attempt = sqlite3_column_int(st, 3), .id = st_text(st, 4), .severity = st_text(st, 5),
			.message = st_text(st, 6), .line = sqlite3_column_int(st, 7), .col = sqlite3_column_int(st, 8),
		};
		rc = fn(arg, &f, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading findings");
	sqlite3_finalize(st);
	return rc;
}

/* The audit table is not part of schema 1: a store gets one when `stitchbench audit` writes it. Its
 * columns are found by name, so that the audit may add more without breaking this reader. */
int store_each_audit(struct store *s, store_audit_fn fn, void *arg, int *present, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT name FROM pragma_table_info('audit')", err);
	int has[3] = { 0 };
	static const char *const cols[] = { "problem", "id", "message" };
	*present = 0;
	if (rc)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*present = 1;
		for (int i = 0; i < 3; i++)
			has[i] |= !strcmp(st_text(st, 0), cols[i]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return st_fail(s, err, SB_EIO, "reading the audit table's columns");
	if (!*present)
		return 0;
	if (!has[0] || !has[1])
		return sb_error_set(err, SB_EINPUT, "%s: its audit table lacks the column %s that reports read (docs/store.md); "
				    "was it written by a newer stitchbench?", s->path, has[0] ? "id" : "problem");
	rc = st_prepare(s, &st, has[2] ? "SELECT a.problem, a.id, a.message FROM audit a LEFT JOIN problems p ON p.ref = a.problem"
					 " ORDER BY p.level, p.id, a.problem, a.id"
				       : "SELECT a.problem, a.id, NULL FROM audit a LEFT JOIN problems p ON p.ref = a.problem"
					 " ORDER BY p.level, p.id, a.problem, a.id", err);
	if (rc)
		return rc;
	int step = SQLITE_DONE;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_audit_row a = { .problem = st_text(st, 0), .id = st_text(st, 1), .message = st_text(st, 2) };
		rc = fn(arg, &a, err);
	}
	if (!rc && step != SQLITE_DONE)
		rc = st_fail(s, err, SB_EIO, "reading the audit table");
	sqlite3_finalize(st);
	return rc;
}

int store_load_verdict(struct store *s, const struct store_key *k, json_t **out, char stage[32], struct sb_error *err)
{
	sqlite3_stmt *st;
	*out = NULL;
	int rc = st_prepare(s, &st,
			    "SELECT v.json, t.stage FROM verdicts v JOIN attempts t USING (agent, problem, sample, attempt)"
			    " WHERE v.agent = ?1 AND v.problem = ?2 AND v.sample = ?3 AND v.attempt = ?4", err);
	if (rc)
		return rc;
	st_bind_text(st, 1, k->agent);
	st_bind_text(st, 2, k->problem);
	sqlite3_bind_int(st, 3, k->sample);
	sqlite3_bind_int(st, 4, k->attempt);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		json_error_t jerr;
		*out = json_loads(st_text(st, 0), JSON_DECODE_ANY, &jerr);
		if (stage)
			st_copy(stage, 32, st, 1);
		rc = *out ? 1 : sb_error_set(err, SB_EINPUT, "%s: the stored verdict of %s %s sample %d attempt %d is not JSON: %s",
					     s->path, k->agent, k->problem, k->sample, k->attempt, jerr.text);
	} else if (step != SQLITE_DONE) {
		rc = st_fail(s, err, SB_EIO, "reading a verdict");
	}
	sqlite3_finalize(st);
	return rc;
}
