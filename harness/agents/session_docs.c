/* session_docs.c - documentation passages for the Coder's repair prompts (agents[].docs). The passages
 * given are written beside the sample's plans, so a user can see what the model was shown and why
 * (the query) without diffing prompts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docs.h"
#include "session_int.h"

int session_docs_open(struct agent_session *s, struct sb_error *err)
{
	struct docs_index *ix;
	if (!s->t.agent->docs)
		return 0;
	int rc = docs_shared(s->t.agent->docs, s->sh->env->cache_root, &ix, err);
	if (rc)
		sb_error_prefix(err, "agent %s", s->t.agent->name);
	return rc;
}

static void record(struct agent_session *s, enum agent_stage stage, const struct attempt *last,
		   const struct docs_index *ix, const struct strvec *terms, const struct docs_passages *hits)
{
	json_t *j = json_object(), *q = json_array(), *ps = json_array();
	int tokens = 0;
	for (size_t i = 0; i < terms->nr; i++)
		json_array_append_new(q, json_string(terms->v[i]));
	for (size_t i = 0; i < hits->nr; i++) {
		const struct docs_passage *d = &hits->v[i];
		json_array_append_new(ps, json_pack("{s:s, s:i, s:s, s:f, s:i}", "file", d->file, "line", d->line,
						    "heading", d->heading, "score", d->score, "tokens", d->tokens));
		tokens += d->tokens;
	}
	json_object_set_new(j, "call", json_integer(s->ncalls));
	json_object_set_new(j, "stage", json_string(stage_name(stage)));
	json_object_set_new(j, "attempt", json_integer(last->index));
	json_object_set_new(j, "status", json_string(last->status));
	json_object_set_new(j, "folder", json_string(ix->folder));
	json_object_set_new(j, "index", json_string(ix->db_path));
	json_object_set_new(j, "budget_tokens", json_integer(s->t.agent->docs_tokens));
	json_object_set_new(j, "tokens", json_integer(tokens));
	json_object_set_new(j, "query", q);
	json_object_set_new(j, "passages", ps);
	char name[40];
	snprintf(name, sizeof(name), "docs-call-%04d.json", s->ncalls);
	char *path = session_path(s, "samples", name);
	struct sb_error err;
	if (session_write_json(path, j, &err))
		session_note(s, "%s", err.msg);
	free(path);
	json_decref(j);

	struct strbuf where = STRBUF_INIT;
	for (size_t i = 0; i < hits->nr; i++)
		strbuf_addf(&where, "%s%s:%d", i ? ", " : "", hits->v[i].file, hits->v[i].line);
	session_note(s, "docs for call %d (%s): %zu passages, %d tokens%s%s", s->ncalls, stage_name(stage), hits->nr,
		     tokens, hits->nr ? ": " : "", where.buf);
	strbuf_release(&where);
}

int session_docs_var(struct agent_session *s, enum agent_stage stage, struct tvars *v, struct sb_error *err)
{
	tvars_set(v, "docs", "");
	if (!s->t.agent->docs || !s->natt || (stage != STAGE_REPAIR_COMPILE && stage != STAGE_REPAIR_CORRECTNESS))
		return 0;
	const struct attempt *last = &s->att[s->natt - 1];
	struct docs_index *ix;
	int rc = docs_shared(s->t.agent->docs, s->sh->env->cache_root, &ix, err);
	if (rc)
		return rc;
	struct strvec terms = STRVEC_INIT;
	struct docs_passages hits = DOCS_PASSAGES_INIT;
	docs_query_from_verdict(last->verdict, &terms);
	rc = docs_search(ix, &terms, s->t.agent->docs_tokens, &hits, err);
	if (!rc) {
		struct strbuf text = STRBUF_INIT;
		docs_render(&hits, &terms, &text);
		tvars_set(v, "docs", text.buf);
		strbuf_release(&text);
		record(s, stage, last, ix, &terms, &hits);
	}
	docs_passages_release(&hits);
	strvec_clear(&terms);
	return rc;
}
