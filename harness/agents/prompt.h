/* prompt.h - prompt templates: text files with {{placeholders}} (docs/agents.md "Prompts"), found in
 * an agent's prompts_dir first and then in the built-in folders, and rendered strictly. */
#ifndef SB_PROMPT_H
#define SB_PROMPT_H

#include "../core/error.h"
#include "../core/strbuf.h"

/* The values a template may use, by name. Values are inserted verbatim and never scanned again. */
struct tvars {
	struct strvec names, values;
};
#define TVARS_INIT { STRVEC_INIT, STRVEC_INIT }
void tvars_set(struct tvars *v, const char *name, const char *value); /* replaces an existing name */
__attribute__((format(printf, 3, 4)))
void tvars_setf(struct tvars *v, const char *name, const char *fmt, ...);
const char *tvars_get(const struct tvars *v, const char *name);
void tvars_release(struct tvars *v);

/* Where templates come from: the agent's prompts_dir (may be NULL) before the built-in folders. */
struct prompt_dirs {
	const char *dirs[4];     /* searched in order; NULL entries are skipped */
};
/* The dirs for an agent: prompts_dir, <home>/harness/prompts, <home>/baselines/prompts. */
void prompt_dirs_init(struct prompt_dirs *d, const char *prompts_dir, const char *home_harness,
		      const char *home_baselines);

/* Reads template NAME (file NAME.md) from the first folder that has it; *path receives where it was
 * found. SB_EINPUT naming every folder searched when none has it. */
int prompt_load(const struct prompt_dirs *d, const char *name, struct strbuf *out, char **path, struct sb_error *err);

/* Renders text: {{name}} (spaces inside the braces allowed) becomes the value, {{! ...}} comments
 * vanish (with their line when they fill it). A placeholder with no value, or a "{{" that does not
 * start a placeholder, is SB_EINPUT naming where:line and the known names. */
int prompt_render(const char *text, const char *where, const struct tvars *v, struct strbuf *out,
		  struct sb_error *err);

/* prompt_load + prompt_render. */
int prompt_render_file(const struct prompt_dirs *d, const char *name, const struct tvars *v, struct strbuf *out,
		       struct sb_error *err);

#endif
