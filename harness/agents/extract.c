/* extract.c - code and plans out of free-form answers. Models wrap code in fences (or not), think aloud
 * first, and repeat drafts; these rules pick the final version and say plainly when there is none. */
#include "extract.h"

#include <ctype.h>
#include <string.h>

const char *extract_how_name(enum extract_how h)
{
	static const char *const names[] = { "none", "python_fence", "any_fence", "raw" };
	return (unsigned)h < sizeof(names) / sizeof(names[0]) ? names[h] : "unknown";
}

void extract_answer(const char *text, struct strbuf *out)
{
	const char *close = strstr(text, "</think>"), *open = strstr(text, "<think>");
	if (close && (!open || open > close))
		text = close + strlen("</think>");
	for (;;) {
		open = strstr(text, "<think>");
		if (!open) {
			strbuf_addstr(out, text);
			return;
		}
		strbuf_add(out, text, (size_t)(open - text));
		close = strstr(open, "</think>");
		if (!close)
			return; /* cut off while reasoning: nothing after it is an answer */
		text = close + strlen("</think>");
	}
}

struct fence {
	char lang[16];
	const char *start;   /* first byte of the content */
	size_t len;
};

static const char *line_end(const char *p)
{
	const char *nl = strchr(p, '\n');
	return nl ? nl : p + strlen(p);
}

/* A line that opens or closes a fence: optional indentation, then ``` . */
static const char *fence_at(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	return starts_with(line, "```") ? line + 3 : NULL;
}

/* Every fenced block in order; at most cap. An unclosed last fence runs to the end. */
static size_t find_fences(const char *text, struct fence *out, size_t cap)
{
	size_t n = 0;
	const char *p = text;
	while (*p && n < cap) {
		const char *end = line_end(p), *info = fence_at(p);
		if (!info) {
			p = *end ? end + 1 : end;
			continue;
		}
		struct fence *f = &out[n++];
		size_t k = 0;
		while (info < end && isspace((unsigned char)*info))
			info++;
		while (info < end && k + 1 < sizeof(f->lang) && !isspace((unsigned char)*info))
			f->lang[k++] = (char)tolower((unsigned char)*info++);
		f->lang[k] = '\0';
		f->start = *end ? end + 1 : end;
		const char *q = f->start;
		for (;;) {
			const char *qe = line_end(q);
			const char *close = fence_at(q);
			if (close && strspn(close, " \t\r") == (size_t)(qe - close)) {
				f->len = (size_t)(q - f->start);
				p = *qe ? qe + 1 : qe;
				break;
			}
			if (!*qe) {
				f->len = strlen(f->start);
				p = qe;
				break;
			}
			q = qe + 1;
		}
	}
	return n;
}

/* Whether a line of [s, s+len) is `class ModelNew` followed by '(' or ':'. */
static int defines_modelnew(const char *s, size_t len)
{
	const char *end = s + len;
	for (const char *line = s; line < end;) {
		const char *p = line;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p > 14 && !strncmp(p, "class", 5) && isspace((unsigned char)p[5])) {
			p += 5;
			while (p < end && isspace((unsigned char)*p))
				p++;
			if (end - p >= 9 && !strncmp(p, "ModelNew", 8) && (p[8] == '(' || p[8] == ':' || p[8] == ' '))
				return 1;
		}
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		line = nl ? nl + 1 : end;
	}
	return 0;
}

static void set_code(struct strbuf *code, const char *s, size_t len)
{
	strbuf_reset(code);
	strbuf_add(code, s, len);
	strbuf_trim(code);
	strbuf_addch(code, '\n');
}

enum extract_how extract_code(const char *text, struct strbuf *code)
{
	struct strbuf answer = STRBUF_INIT;
	struct fence f[64];
	enum extract_how how = EXTRACT_NONE;
	extract_answer(text ? text : "", &answer);
	size_t n = find_fences(answer.buf, f, sizeof(f) / sizeof(f[0]));
	for (size_t i = n; i-- > 0 && how == EXTRACT_NONE;)
		if ((!strcmp(f[i].lang, "python") || !strcmp(f[i].lang, "py") || !strcmp(f[i].lang, "python3")) &&
		    defines_modelnew(f[i].start, f[i].len)) {
			set_code(code, f[i].start, f[i].len);
			how = EXTRACT_PYTHON_FENCE;
		}
	for (size_t i = n; i-- > 0 && how == EXTRACT_NONE;)
		if (defines_modelnew(f[i].start, f[i].len)) {
			set_code(code, f[i].start, f[i].len);
			how = EXTRACT_ANY_FENCE;
		}
	if (how == EXTRACT_NONE && defines_modelnew(answer.buf, answer.len)) {
		set_code(code, answer.buf, answer.len);
		how = EXTRACT_RAW;
	}
	strbuf_release(&answer);
	return how;
}

/* ---------- plans ---------- */

static const char *const plan_lists[] = { "implementation_steps", "expected_bottlenecks", "correctness_risks",
					  "constraints", NULL };

static int check_plan(json_t *plan, struct strbuf *why)
{
	if (!json_is_object(plan)) {
		strbuf_addstr(why, "the plan must be a JSON object with the fields summary, implementation_steps, "
			      "expected_bottlenecks, correctness_risks and constraints");
		return -1;
	}
	json_t *s = json_object_get(plan, "summary");
	if (!json_is_string(s) || !json_string_length(s)) {
		strbuf_addf(why, "field \"summary\" is %s: it must be a non-empty string", s ? "not a non-empty string" : "missing");
		return -1;
	}
	for (size_t i = 0; plan_lists[i]; i++) {
		json_t *a = json_object_get(plan, plan_lists[i]), *e;
		size_t k;
		if (!json_is_array(a)) {
			strbuf_addf(why, "field \"%s\" is %s: it must be a list of strings", plan_lists[i],
				    a ? "not a list" : "missing");
			return -1;
		}
		json_array_foreach(a, k, e)
			if (!json_is_string(e)) {
				strbuf_addf(why, "field \"%s\", item %zu is not a string", plan_lists[i], k);
				return -1;
			}
		if (i == 0 && !json_array_size(a)) {
			strbuf_addstr(why, "field \"implementation_steps\" is empty: list at least one step");
			return -1;
		}
	}
	return 0;
}

json_t *extract_json(const char *text, struct strbuf *why)
{
	struct strbuf answer = STRBUF_INIT;
	struct fence f[64];
	const char *start = NULL;
	size_t len = 0;
	extract_answer(text ? text : "", &answer);
	size_t n = find_fences(answer.buf, f, sizeof(f) / sizeof(f[0]));
	for (size_t i = 0; i < n && !start; i++)
		if (!strcmp(f[i].lang, "json"))
			start = f[i].start, len = f[i].len;
	for (size_t i = 0; i < n && !start; i++) {
		const char *p = f[i].start;
		while (p < f[i].start + f[i].len && isspace((unsigned char)*p))
			p++;
		if (*p == '{')
			start = f[i].start, len = f[i].len;
	}
	if (!start) {
		const char *a = strchr(answer.buf, '{'), *b = strrchr(answer.buf, '}');
		if (a && b && b > a)
			start = a, len = (size_t)(b - a) + 1;
	}
	json_t *o = NULL;
	if (!start) {
		strbuf_addstr(why, "the answer holds no JSON object");
	} else {
		json_error_t jerr;
		o = json_loadb(start, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!o)
			strbuf_addf(why, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
	}
	strbuf_release(&answer);
	return o;
}

json_t *extract_plan(const char *text, struct strbuf *why)
{
	json_t *plan = extract_json(text, why);
	if (plan && check_plan(plan, why)) {
		json_decref(plan);
		plan = NULL;
	}
	return plan;
}

void plan_render(json_t *plan, struct strbuf *out)
{
	static const char *const titles[] = { "Implementation steps", "Expected bottlenecks", "Correctness risks",
					      "Constraints" };
	strbuf_addf(out, "Summary: %s\n", json_string_value(json_object_get(plan, "summary")));
	for (size_t i = 0; plan_lists[i]; i++) {
		json_t *a = json_object_get(plan, plan_lists[i]), *e;
		size_t k;
		if (!json_array_size(a))
			continue;
		strbuf_addf(out, "\n%s:\n", titles[i]);
		json_array_foreach(a, k, e)
			if (i == 0)
				strbuf_addf(out, "%zu. %s\n", k + 1, json_string_value(e));
			else
				strbuf_addf(out, "- %s\n", json_string_value(e));
	}
}
