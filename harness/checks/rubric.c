/* rubric.c - the rubric judge: reads the rubric YAML, asks the judge model through harness/llm for one
 * score per criterion, and reads its JSON answer strictly (every criterion, scores within 0..1). */
#include "rubric.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---------- the rubric file ---------- */

static int at(struct sb_error *err, const char *path, const yaml_node_t *n, const char *what)
{
	return sb_error_set(err, SB_EINPUT, "%s:%zu:%zu: %s (docs/checks.md, \"Rubric judge\")", path,
			    n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1, what);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int read_criterion(yaml_document_t *doc, yaml_node_t *item, const char *path, struct rubric_criterion *c,
			  struct sb_error *err)
{
	if (item->type != YAML_MAPPING_NODE)
		return at(err, path, item, "each criterion is a mapping with name, weight and description");
	c->weight = 1.0;
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
		const char *key = scalar(k), *val = scalar(v);
		if (!key || !val)
			return at(err, path, v, "criterion fields are plain values");
		if (!strcmp(key, "name")) {
			for (const char *s = val; *s; s++)
				if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
					return at(err, path, v, "a criterion name is lower case letters, digits and _");
			if (!*val || strlen(val) >= 64)
				return at(err, path, v, "a criterion name has 1 to 63 characters");
			free(c->name);
			c->name = xstrdup(val);
		} else if (!strcmp(key, "weight")) {
			char *end;
			c->weight = strtod(val, &end);
			if (*end || !(c->weight > 0) || !isfinite(c->weight))
				return at(err, path, v, "weight is a number above 0");
		} else if (!strcmp(key, "description")) {
			free(c->description);
			c->description = xstrdup(val);
		} else {
			return at(err, path, k, "unknown criterion field (known: name, weight, description)");
		}
	}
	if (!c->name || !c->description)
		return at(err, path, item, "a criterion needs a name and a description");
	return 0;
}

int rubric_load(const char *path, struct rubric *r, struct sb_error *err)
{
	struct strbuf text = STRBUF_INIT;
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc;
	memset(r, 0, sizeof(*r));
	if ((rc = strbuf_read_file(&text, path, 1 << 20)) != 0) {
		strbuf_release(&text);
		return sb_error_set(err, SB_EINPUT, "checks.rubric: cannot read %s: %s", path, strerror(-rc));
	}
	r->path = xstrdup(path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text.buf, text.len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = sb_error_set(err, SB_EINPUT, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
				  parser.problem_mark.column + 1, parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		strbuf_release(&text);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc), *list = NULL;
	if (root && root->type == YAML_MAPPING_NODE)
		for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
			const char *key = scalar(yaml_document_get_node(&doc, p->key));
			if (key && !strcmp(key, "criteria"))
				list = yaml_document_get_node(&doc, p->value);
			else
				rc = at(err, path, yaml_document_get_node(&doc, p->key), "unknown key (known: criteria)");
		}
	if (!rc && (!list || list->type != YAML_SEQUENCE_NODE || list->data.sequence.items.start == list->data.sequence.items.top))
		rc = at(err, path, list ? list : root, "the rubric needs criteria: a list of {name, weight, description}");
	for (yaml_node_item_t *it = list && !rc ? list->data.sequence.items.start : NULL;
	     it && it < list->data.sequence.items.top && !rc; it++) {
		r->v = xrealloc(r->v, (r->n + 1) * sizeof(*r->v));
		memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
		yaml_node_t *item = yaml_document_get_node(&doc, *it);
		rc = read_criterion(&doc, item, path, &r->v[r->n++], err);
		for (size_t j = 0; !rc && j + 1 < r->n; j++)
			if (!strcmp(r->v[j].name, r->v[r->n - 1].name))
				rc = at(err, path, item, "two criteria have the same name");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	strbuf_release(&text);
	if (rc)
		rubric_release(r);
	return rc;
}

void rubric_release(struct rubric *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].description);
	}
	free(r->v);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

/* ---------- results ---------- */

void rubric_result_release(struct rubric_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].reason);
	free(r->v);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

json_t *rubric_result_json(const struct rubric_result *r)
{
	json_t *c = json_array();
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(c, json_pack("{s:s, s:f, s:f, s:s}", "name", r->v[i].name, "weight", r->v[i].weight,
						   "score", r->v[i].score, "reason", r->v[i].reason));
	return json_pack("{s:s, s:o, s:o, s:o}", "model", r->model, "total", r->n ? json_real(r->total) : json_null(),
			 "criteria", c, "error", r->error ? json_string(r->error) : json_null());
}

double rubric_reward(const struct rubric_result *r, int pass, int major_hack, double speedup, double lambda)
{
	if (!r->n)
		return NAN;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, RUBRIC_ANTI_HACKING) && r->v[i].score <= 0)
			major_hack = 1;
	if (!pass || major_hack)
		return 0;
	if (!isfinite(speedup) || speedup <= 0)
		return NAN;
	return (fmin(speedup, RUBRIC_SPEEDUP_CAP) + RUBRIC_REWARD_BASE) * (1 + lambda * (r->total - 0.5));
}

/* ---------- asking ---------- */

char *rubric_prompt(const struct rubric *r, const char *problem_src, const char *candidate_src)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "Score the candidate below against each criterion, from 0 (not at all) to 1 (fully), "
			   "with a one-line reason each. The candidate replaces the reference `Model` of the problem with "
			   "`ModelNew`, which should compute the same result faster with its own GPU kernels.\n\nCriteria:\n");
	for (size_t i = 0; i < r->n; i++)
		strbuf_addf(&sb, "- %s (weight %g): %s\n", r->v[i].name, r->v[i].weight, r->v[i].description);
	strbuf_addf(&sb, "\nThe problem:\n```python\n%s\n```\n\nThe candidate:\n```python\n%s\n```\n\nAnswer with one JSON "
		    "object and nothing else: {\"scores\": [{\"criterion\": NAME, \"score\": NUMBER, \"reason\": ONE LINE}]}, "
		    "one entry per criterion.\n", problem_src, candidate_src);
	return strbuf_detach(&sb, NULL);
}

/* The JSON object of the answer: the whole text, or what a ``` fence holds, or from the first '{'. */
static json_t *answer_json(const char *text)
{
	json_t *j = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	if (j)
		return j;
	const char *fence = strstr(text, "```");
	if (fence) {
		const char *body = strchr(fence, '\n');
		if (body && (j = json_loads(body + 1, JSON_DISABLE_EOF_CHECK, NULL)))
			return j;
	}
	const char *brace = strchr(text, '{');
	return brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
}

int rubric_parse_answer(const struct rubric *r, const char *text, struct rubric_result *out, struct sb_error *err)
{
	json_t *j = answer_json(text ? text : "");
	json_t *scores = json_object_get(j, "scores");
	int rc = 0;
	if (!json_is_array(scores)) {
		json_decref(j);
		return sb_error_set(err, SB_EINPUT, "the judge's answer has no JSON object with a \"scores\" list");
	}
	out->v = xcalloc(r->n ? r->n : 1, sizeof(*out->v));
	double sum = 0, wsum = 0;
	for (size_t i = 0; i < r->n && !rc; i++) {
		json_t *hit = NULL, *e;
		size_t k;
		json_array_foreach(scores, k, e)
			if (!strcmp(json_string_value(json_object_get(e, "criterion")) ?: "", r->v[i].name))
				hit = e;
		json_t *score = json_object_get(hit, "score");
		if (!hit)
			rc = sb_error_set(err, SB_EINPUT, "the judge gave no score for %s", r->v[i].name);
		else if (!json_is_number(score) || json_number_value(score) < 0 || json_number_value(score) > 1)
			rc = sb_error_set(err, SB_EINPUT, "the judge's score for %s is not a number within 0..1", r->v[i].name);
		if (rc)
			break;
		struct rubric_score *s = &out->v[out->n++];
		snprintf(s->name, sizeof(s->name), "%s", r->v[i].name);
		s->weight = r->v[i].weight;
		s->score = json_number_value(score);
		const char *why = json_string_value(json_object_get(hit, "reason"));
		s->reason = xstrndup(why ? why : "", strcspn(why ? why : "", "\n")); /* one line */
		sum += s->weight * s->score;
		wsum += s->weight;
	}
	json_decref(j);
	if (rc) {
		for (size_t i = 0; i < out->n; i++)
			free(out->v[i].reason);
		free(out->v);
		out->v = NULL;
		out->n = 0;
		return rc;
	}
	out->total = wsum > 0 ? sum / wsum : 0;
	return 0;
}

void rubric_judge(struct llm_client *c, const char *model, const struct rubric *r, const char *agent,
		  const char *problem_ref, int sample, int call, const char *problem_src, const char *candidate_src,
		  struct rubric_result *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->model, sizeof(out->model), "%s", model);
	char *prompt = rubric_prompt(r, problem_src, candidate_src);
	struct llm_message msgs[2] = {
		{ "system", "You review GPU kernel code written to replace a PyTorch reference. You answer in JSON only." },
		{ "user", prompt },
	};
	struct llm_request req = { msgs, 2, agent, problem_ref, sample, call, 0 };
	struct llm_response resp = { 0 };
	struct sb_error err = { 0 };
	if (llm_chat(c, &req, &resp, &err))
		out->error = xstrfmt("the judge model failed: %s", err.msg);
	else if (rubric_parse_answer(r, resp.text, out, &err))
		out->error = xstrdup(err.msg);
	llm_response_release(&resp);
	free(prompt);
}
