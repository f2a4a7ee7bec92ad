/* extract.h - reading an LLM answer: the candidate file (a fenced python block, then fallbacks) and
 * the planner's JSON plan (validated field by field, with jansson's own parse error when it is not JSON). */
#ifndef SB_EXTRACT_H
#define SB_EXTRACT_H

#include <jansson.h>

#include "../core/strbuf.h"

enum extract_how {
	EXTRACT_NONE,            /* no usable code: the attempt is a format_error */
	EXTRACT_PYTHON_FENCE,    /* a ```python (or ```py) block defining class ModelNew */
	EXTRACT_ANY_FENCE,       /* another fenced block defining class ModelNew */
	EXTRACT_RAW,             /* no fence holds it, but the text defines class ModelNew: the whole text */
};
const char *extract_how_name(enum extract_how h);

/* Finds the candidate in an answer. Reasoning (<think>...</think>) is dropped first. Of several
 * qualifying blocks the last wins (models put the final version last). An unclosed fence (a truncated
 * answer) runs to the end of the text. code receives the file's text, ending in a newline. */
enum extract_how extract_code(const char *text, struct strbuf *code);

/* The answer without <think>...</think> sections (and without everything before a lone </think>, which
 * servers leave when they strip the opening tag; an unclosed <think> ends the answer), appended to out. */
void extract_answer(const char *text, struct strbuf *out);

/* The JSON an answer holds, reasoning dropped: the first ```json block, else any fenced block that starts
 * with '{', else the text from the first '{' to the last '}'. Returns the value (the caller checks its
 * type), or NULL with why saying what is wrong in words (jansson's "line L column C: ..."). */
json_t *extract_json(const char *text, struct strbuf *why);

/* The planner's answer as a plan: extract_json, then each field checked. Returns the plan, or
 * NULL with why naming the parse error or the field that is missing or mistyped. */
json_t *extract_plan(const char *text, struct strbuf *why);

/* The plan as Markdown for the coder's prompt: the summary, then each list under its heading. */
void plan_render(json_t *plan, struct strbuf *out);

#endif
