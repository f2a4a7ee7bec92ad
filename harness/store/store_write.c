/* store_write.c - writing problems, agents, verdicts and LLM calls. A verdict, its sample and attempt rows,
 * its trials and its findings are one transaction: after a crash either all of them are there or none. */
#include "store_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/suite.h"

static int add_problem(struct store *s, const char *ref, const char *name, const char *sha256, struct sb_error *err)
{
	sqlite3_stmt *st;
	int level, id, rc;
	if ((rc = problem_ref_parse(ref, &level, &id, err)))
		return rc;
	char canon[16];
	snprintf(canon, sizeof(canon), "L%d/%d", level, id);
	if ((rc = st_prepare(s, &st, "SELECT sha256, name IS NULL FROM problems WHERE ref = ?", err)))
		return rc;
	st_bind_text(st, 1, canon);
	int found = sqlite3_step(st) == SQLITE_ROW;
	if (found && strcmp(st_text(st, 0), sha256))
		rc = sb_error_set(err, SB_EINPUT, "problem %s has sha256 %.12s... here but %.12s... in %s: the problem file "
				  "changed since the run started; use a new run", canon, sha256, st_text(st, 0), s->path);
	int fill_name = found && sqlite3_column_int(st, 1) && name;
	sqlite3_finalize(st);
	if (rc || (found && !fill_name))
		return rc;
	if ((rc = st_prepare(s, &st, found ? "UPDATE problems SET name = ?5 WHERE ref = ?1"
					   : "INSERT INTO problems (ref, level, id, sha256, name) VALUES (?1, ?2, ?3, ?4, ?5)",
			     err)))
		return rc;
	st_bind_text(st, 1, canon);
	sqlite3_bind_int(st, 2, level);
	sqlite3_bind_int(st, 3, id);
	st_bind_text(st, 4, sha256);
	st_bind_text(st, 5, name);
	return st_run(s, st, "adding a problem", err);
}

static int add_agent(struct store *s, const char *name, const char *kind, const char *model, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT kind, model FROM agents WHERE name = ?", err);
	if (rc)
		return rc;
	st_bind_text(st, 1, name);
	if (sqlite3_step(st) == SQLITE_ROW) {
		if (strcmp(st_text(st, 0), kind) || strcmp(st_text(st, 1), model ? model : ""))
			rc = sb_error_set(err, SB_EINPUT, "agent %s is stored in %s as kind %s, model %s; this one is kind %s, "
					  "model %s: give it another name", name, s->path, st_text(st, 0),
					  *st_text(st, 1) ? st_text(st, 1) : "none", kind, model ? model : "none");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	if ((rc = st_prepare(s, &st, "INSERT INTO agents (name, kind, model) VALUES (?, ?, ?)", err)))
		return rc;
	st_bind_text(st, 1, name);
	st_bind_text(st, 2, kind);
	st_bind_text(st, 3, model);
	return st_run(s, st, "adding an agent", err);
}

/* Check-then-insert, as one unit so that two writers adding the same row cannot both insert it. */
int store_add_problem(struct store *s, const char *ref, const char *name, const char *sha256, struct sb_error *err)
{
	int nested, rc = st_begin(s, &nested, err);
	return rc ? rc : st_end(s, nested, add_problem(s, ref, name, sha256, err), err);
}

int store_add_agent(struct store *s, const char *name, const char *kind, const char *model, struct sb_error *err)
{
	int nested, rc = st_begin(s, &nested, err);
	return rc ? rc : st_end(s, nested, add_agent(s, name, kind, model, err), err);
}

/* The key columns, bound from parameter i on: agent, problem, sample, then attempt (or call). */
static void bind_key(sqlite3_stmt *st, int i, const char *agent, const char *problem, int sample, int attempt)
{
	st_bind_text(st, i, agent);
	st_bind_text(st, i + 1, problem);
	sqlite3_bind_int(st, i + 2, sample);
	sqlite3_bind_int(st, i + 3, attempt);
}

int store_lookup(struct store *s, const struct store_key *k, char candidate_sha[65], struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT candidate_sha256 FROM verdicts WHERE agent = ? AND problem = ? AND sample = ? "
				    "AND attempt = ?", err);
	if (rc)
		return rc;
	bind_key(st, 1, k->agent, k->problem, k->sample, k->attempt);
	rc = sqlite3_step(st);
	int found = rc == SQLITE_ROW;
	if (found && candidate_sha)
		st_copy(candidate_sha, 65, st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return st_fail(s, err, SB_EIO, "looking up a verdict");
	return found;
}

/* ---------- one verdict ---------- */

static const char *const statuses[] = {
	"pass", "incorrect", "compile_error", "runtime_error", "timeout", "rejected", "format_error", NULL,
};

static double jnum(json_t *j)
{
	return json_is_number(j) ? json_number_value(j) : NAN;
}

int st_read_fields(json_t *v, struct vfields *f, struct sb_error *err)
{
	const char *ref;
	int level, id, known = 0;
	memset(f, 0, sizeof(*f));
	if (!json_is_object(v) || json_integer_value(json_object_get(v, "schema")) != 1)
		return sb_error_set(err, SB_EINPUT, "not a schema-1 verdict (docs/verdict.md): \"schema\" must be 1");
	f->status = json_string_value(json_object_get(v, "status"));
	for (int i = 0; f->status && statuses[i]; i++)
		known |= !strcmp(f->status, statuses[i]);
	if (!known)
		return sb_error_set(err, SB_EINPUT, "verdict: status %s%s%s is not one of pass, incorrect, compile_error, "
				    "runtime_error, timeout, rejected, format_error", f->status ? "\"" : "",
				    f->status ? f->status : "(missing)", f->status ? "\"" : "");
	if (json_unpack(v, "{s:{s:s, s:s}, s:{s:s}, s:o, s:o}", "problem", "ref", &ref, "sha256", &f->problem_sha,
			"candidate", "sha256", &f->candidate_sha, "trials", &f->trials, "findings", &f->findings) ||
	    !json_is_array(f->trials) || !json_is_array(f->findings))
		return sb_error_set(err, SB_EINPUT, "verdict: needs problem.ref, problem.sha256, candidate.sha256 and the "
				    "arrays trials and findings (docs/verdict.md)");
	if (problem_ref_parse(ref, &level, &id, err))
		return SB_EINPUT;
	snprintf(f->problem, sizeof(f->problem), "L%d/%d", level, id);
	json_t *sp = json_object_get(v, "speedup");
	f->speedup_eager = jnum(json_object_get(sp, "vs_eager"));
	f->speedup_compiled = jnum(json_object_get(sp, "vs_compiled"));
	f->hack = !strcmp(f->status, "rejected");
	size_t i;
	json_t *x;
	json_array_foreach(f->findings, i, x) {
		const char *fid, *sev;
		if (json_unpack(x, "{s:s, s:s}", "id", &fid, "severity", &sev))
			return sb_error_set(err, SB_EINPUT, "verdict: findings[%zu] needs an id and a severity", i);
		f->hack |= !strcmp(sev, "reject");
	}
	json_array_foreach(f->trials, i, x)
		if (!json_is_object(x) || !json_is_integer(json_object_get(x, "seed")))
			return sb_error_set(err, SB_EINPUT, "verdict: trials[%zu] is not an object with a seed", i);
	return 0;
}

int st_check_run(struct store *s, int64_t run, json_t *v, struct sb_error *err)
{
	struct store_run stored, mine;
	int rc = st_load_run(s, run, &stored, err);
	if (rc)
		return rc;
	memset(&mine, 0, sizeof(mine));
	if ((rc = st_run_fields_from_verdict(&mine, v, err)) == 0) {
		struct strbuf diff = STRBUF_INIT;
		if (store_run_diff(&stored, "its run", &mine, "the verdict", STORE_DIFF_VERDICT, &diff))
			rc = sb_error_set(err, SB_EINPUT, "the verdict's settings differ from those of run %s:\n%s", stored.run_id,
					  diff.buf);
		strbuf_release(&diff);
	}
	store_run_release(&mine);
	store_run_release(&stored);
	return rc;
}

/* Trials and findings are rows of their verdict: (verdict, idx) are their first two parameters. */
static int prepare_row_of(struct store *s, sqlite3_stmt **st, const char *sql, int64_t verdict, size_t idx,
			  struct sb_error *err)
{
	int rc = st_prepare(s, st, sql, err);
	if (rc == 0) {
		sqlite3_bind_int64(*st, 1, verdict);
		sqlite3_bind_int64(*st, 2, (sqlite3_int64)idx);
	}
	return rc;
}

static int insert_trial(struct store *s, int64_t verdict, size_t idx, json_t *t, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prepare_row_of(s, &st, "INSERT INTO trials (verdict, idx, seed, pass, inputs_mutated, run_s, outputs, "
				       "max_abs_error, max_rel_error, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				verdict, idx, err);
	if (rc)
		return rc;
	json_t *outs = json_object_get(t, "outputs"), *o;
	double max_abs = NAN, max_rel = NAN;
	const char *detail = NULL;
	size_t i;
	json_array_foreach(outs, i, o) {
		double a = jnum(json_object_get(o, "max_abs_error")), r = jnum(json_object_get(o, "max_rel_error"));
		max_abs = isnan(max_abs) || a > max_abs ? a : max_abs;
		max_rel = isnan(max_rel) || r > max_rel ? r : max_rel;
		if (!detail && json_is_false(json_object_get(o, "pass")))
			detail = json_string_value(json_object_get(o, "detail"));
	}
	sqlite3_bind_int64(st, 3, json_integer_value(json_object_get(t, "seed")));
	sqlite3_bind_int(st, 4, json_is_true(json_object_get(t, "pass")));
	sqlite3_bind_int(st, 5, json_is_true(json_object_get(t, "inputs_mutated")));
	st_bind_real(st, 6, jnum(json_object_get(t, "run_s")));
	sqlite3_bind_int64(st, 7, (sqlite3_int64)json_array_size(outs));
	st_bind_real(st, 8, max_abs);
	st_bind_real(st, 9, max_rel);
	st_bind_text(st, 10, detail);
	return st_run(s, st, "adding a trial", err);
}

static int insert_finding(struct store *s, int64_t verdict, size_t idx, json_t *f, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = prepare_row_of(s, &st, "INSERT INTO findings (verdict, idx, id, severity, message, line, col) "
				       "VALUES (?, ?, ?, ?, ?, ?, ?)", verdict, idx, err);
	if (rc)
		return rc;
	st_bind_text(st, 3, json_string_value(json_object_get(f, "id")));
	st_bind_text(st, 4, json_string_value(json_object_get(f, "severity")));
	st_bind_text(st, 5, json_string_value(json_object_get(f, "message")));
	sqlite3_bind_int64(st, 6, json_integer_value(json_object_get(f, "line")));
	sqlite3_bind_int64(st, 7, json_integer_value(json_object_get(f, "col")));
	return st_run(s, st, "adding a finding", err);
}

static int key_taken(struct store *s, const struct store_put *p, const struct vfields *f, struct sb_error *err)
{
	char sha[65];
	struct store_key k = { p->agent, f->problem, p->sample, p->attempt };
	int rc = store_lookup(s, &k, sha, err);
	if (rc <= 0)
		return rc;
	if (!strcmp(sha, f->candidate_sha))
		return sb_error_set(err, SB_EEXIST, "%s %s sample %d attempt %d is already stored (the same candidate)",
				    p->agent, f->problem, p->sample, p->attempt);
	return sb_error_set(err, SB_EEXIST, "%s %s sample %d attempt %d is already stored, with another candidate "
			    "(stored %.12s..., this one %.12s...)", p->agent, f->problem, p->sample, p->attempt, sha,
			    f->candidate_sha);
}

static int insert_rows(struct store *s, const struct store_put *p, int64_t run, const struct vfields *f,
		       const char *created, const char *json, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc, step = 1;
	if ((rc = st_prepare(s, &st, "INSERT OR IGNORE INTO samples (agent, problem, sample, run, created) "
				     "VALUES (?1, ?2, ?3, ?5, ?6)", err)))
		return rc;
	bind_key(st, 1, p->agent, f->problem, p->sample, p->attempt);
	sqlite3_bind_int64(st, 5, run);
	st_bind_text(st, 6, created);
	if ((rc = st_run(s, st, "adding a sample", err)))
		return rc;
	st_step_hook(s, step++);
	if ((rc = st_prepare(s, &st, "INSERT INTO attempts (agent, problem, sample, attempt, run, stage, created) "
				     "VALUES (?, ?, ?, ?, ?, ?, ?)", err)))
		return rc;
	bind_key(st, 1, p->agent, f->problem, p->sample, p->attempt);
	sqlite3_bind_int64(st, 5, run);
	st_bind_text(st, 6, p->stage);
	st_bind_text(st, 7, created);
	if ((rc = st_run(s, st, "adding an attempt", err)))
		return rc;
	st_step_hook(s, step++);
	if ((rc = st_prepare(s, &st, "INSERT INTO verdicts (agent, problem, sample, attempt, run, status, hack, "
				     "speedup_eager, speedup_compiled, candidate_sha256, problem_sha256, ntrials, nfindings, "
				     "created, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err)))
		return rc;
	bind_key(st, 1, p->agent, f->problem, p->sample, p->attempt);
	sqlite3_bind_int64(st, 5, run);
	st_bind_text(st, 6, f->status);
	sqlite3_bind_int(st, 7, f->hack);
	st_bind_real(st, 8, f->speedup_eager);
	st_bind_real(st, 9, f->speedup_compiled);
	st_bind_text(st, 10, f->candidate_sha);
	st_bind_text(st, 11, f->problem_sha);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)json_array_size(f->trials));
	sqlite3_bind_int64(st, 13, (sqlite3_int64)json_array_size(f->findings));
	st_bind_text(st, 14, created);
	st_bind_text(st, 15, json);
	if ((rc = st_run(s, st, "adding a verdict", err)))
		return rc;
	int64_t id = sqlite3_last_insert_rowid(s->db);
	st_step_hook(s, step++);
	size_t i;
	json_t *x;
	json_array_foreach(f->trials, i, x) {
		if ((rc = insert_trial(s, id, i, x, err)))
			return rc;
		st_step_hook(s, step++);
	}
	json_array_foreach(f->findings, i, x) {
		if ((rc = insert_finding(s, id, i, x, err)))
			return rc;
		st_step_hook(s, step++);
	}
	return 0;
}

static int agent_known(struct store *s, const char *agent, struct sb_error *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, &st, "SELECT 1 FROM agents WHERE name = ?", err);
	if (rc)
		return rc;
	st_bind_text(st, 1, agent);
	rc = sqlite3_step(st) == SQLITE_ROW ? 0
	     : sb_error_set(err, SB_EINTERNAL, "agent %s is not in %s (store_add_agent first)", agent, s->path);
	sqlite3_finalize(st);
	return rc;
}

int store_put_verdict(struct store *s, const struct store_put *p, json_t *verdict, struct sb_error *err)
{
	struct vfields f;
	int64_t run = p->run ? p->run : s->run;
	char now[32];
	int rc;
	if (!run)
		return sb_error_set(err, SB_EINTERNAL, "%s: no run selected for the verdict (store_use_run first)", s->path);
	if ((rc = st_read_fields(verdict, &f, err)) || (rc = st_check_run(s, run, verdict, err)) ||
	    (rc = agent_known(s, p->agent, err)))
		return rc;
	st_now(now);
	char *json = json_dumps(verdict, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int nested;
	if ((rc = st_begin(s, &nested, err))) {
		free(json);
		return rc;
	}
	st_step_hook(s, 0);
	if ((rc = key_taken(s, p, &f, err)) == 0 &&
	    (rc = store_add_problem(s, f.problem, NULL, f.problem_sha, err)) && p->force && rc == SB_EINPUT)
		rc = 0; /* merge --force: the verdict keeps its own problem_sha256 */
	if (rc == 0)
		rc = insert_rows(s, p, run, &f, p->created ? p->created : now, json, err);
	/* a verdict of an audited problem carries the audit (docs/verdict.md): the store keeps it for reports */
	json_t *audit = json_object_get(verdict, "audit");
	if (rc == 0 && json_is_object(audit))
		rc = st_put_audit_rows(s, f.problem, f.problem_sha, json_object_get(audit, "findings"), err);
	free(json);
	return st_end(s, nested, rc, err);
}

/* ---------- LLM calls ---------- */

int store_put_llm_call(struct store *s, const struct store_llm_call *c, struct sb_error *err)
{
	sqlite3_stmt *st;
	int64_t run = c->run ? c->run : s->run;
	char now[32];
	int rc;
	if (!run)
		return sb_error_set(err, SB_EINTERNAL, "%s: no run selected for the LLM call (store_use_run first)", s->path);
	if ((rc = st_prepare(s, &st, "SELECT 1 FROM llm_calls WHERE agent = ? AND problem = ? AND sample = ? AND call = ?",
			     err)))
		return rc;
	bind_key(st, 1, c->agent, c->problem, c->sample, c->call);
	int taken = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (taken)
		return sb_error_set(err, SB_EEXIST, "LLM call %d of %s %s sample %d is already stored", c->call, c->agent,
				    c->problem, c->sample);
	if ((rc = st_prepare(s, &st, "INSERT INTO llm_calls (agent, problem, sample, call, run, attempt, model, "
				     "prompt_tokens, completion_tokens, latency_s, cost_usd, created) "
				     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err)))
		return rc;
	st_now(now);
	bind_key(st, 1, c->agent, c->problem, c->sample, c->call);
	sqlite3_bind_int64(st, 5, run);
	sqlite3_bind_int(st, 6, c->attempt);
	st_bind_text(st, 7, c->model);
	sqlite3_bind_int64(st, 8, c->prompt_tokens);
	sqlite3_bind_int64(st, 9, c->completion_tokens);
	st_bind_real(st, 10, c->latency_s);
	st_bind_real(st, 11, c->cost_usd);
	st_bind_text(st, 12, c->created ? c->created : now);
	if ((rc = st_run(s, st, "adding an LLM call", err)) == SB_EINPUT)
		sb_error_set(err, SB_EINPUT, "LLM call %d of %s %s: store the agent and the problem first", c->call,
			     c->agent, c->problem);
	return rc;
}
