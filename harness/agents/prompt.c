/* prompt.c - loading and rendering prompt templates. Rendering is strict: a placeholder the agent did
 * not fill is an error, because a prompt that silently lost its plan or feedback would skew a run. */
#include "prompt.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tvars_set(struct tvars *v, const char *name, const char *value)
{
	for (size_t i = 0; i < v->names.nr; i++)
		if (!strcmp(v->names.v[i], name)) {
			free((char *)v->values.v[i]);
			v->values.v[i] = xstrdup(value ? value : "");
			return;
		}
	strvec_push(&v->names, name);
	strvec_push(&v->values, value ? value : "");
}

void tvars_setf(struct tvars *v, const char *name, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	tvars_set(v, name, sb.buf);
	strbuf_release(&sb);
}

const char *tvars_get(const struct tvars *v, const char *name)
{
	for (size_t i = 0; i < v->names.nr; i++)
		if (!strcmp(v->names.v[i], name))
			return v->values.v[i];
	return NULL;
}

void tvars_release(struct tvars *v)
{
	strvec_clear(&v->names);
	strvec_clear(&v->values);
}

void prompt_dirs_init(struct prompt_dirs *d, const char *prompts_dir, const char *home_harness,
		      const char *home_baselines)
{
	memset(d, 0, sizeof(*d));
	d->dirs[0] = prompts_dir;
	d->dirs[1] = home_harness;
	d->dirs[2] = home_baselines;
}

int prompt_load(const struct prompt_dirs *d, const char *name, struct strbuf *out, char **path, struct sb_error *err)
{
	struct strbuf tried = STRBUF_INIT;
	*path = NULL;
	for (size_t i = 0; i < sizeof(d->dirs) / sizeof(d->dirs[0]); i++) {
		if (!d->dirs[i])
			continue;
		char *p = xstrfmt("%s/%s.md", d->dirs[i], name);
		int rc = strbuf_read_file(out, p, 1 << 20);
		if (rc == 0) {
			*path = p;
			strbuf_release(&tried);
			return 0;
		}
		if (rc != -ENOENT) {
			sb_error_set(err, SB_EINPUT, "prompt template %s: %s", p, strerror(-rc));
			free(p);
			strbuf_release(&tried);
			return SB_EINPUT;
		}
		strbuf_addf(&tried, "%s%s", tried.len ? ", " : "", d->dirs[i]);
		free(p);
	}
	sb_error_set(err, SB_EINPUT, "prompt template %s.md not found (searched %s); restore it or set the agent's prompts_dir",
		     name, tried.len ? tried.buf : "no folder");
	strbuf_release(&tried);
	return SB_EINPUT;
}

static int line_of(const char *text, const char *at)
{
	int line = 1;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

static int bad(const char *text, const char *at, const char *where, const struct tvars *v, struct sb_error *err,
	       const char *what)
{
	struct strbuf known = STRBUF_INIT;
	for (size_t i = 0; i < v->names.nr; i++)
		strbuf_addf(&known, "%s%s", i ? ", " : "", v->names.v[i]);
	sb_error_set(err, SB_EINPUT, "%s:%d: %s (placeholders this prompt knows: %s)", where, line_of(text, at), what,
		     known.len ? known.buf : "none");
	strbuf_release(&known);
	return SB_EINPUT;
}

int prompt_render(const char *text, const char *where, const struct tvars *v, struct strbuf *out,
		  struct sb_error *err)
{
	const char *p = text;
	while (*p) {
		const char *open = strstr(p, "{{");
		if (!open) {
			strbuf_addstr(out, p);
			break;
		}
		strbuf_add(out, p, (size_t)(open - p));
		const char *close = strstr(open + 2, "}}");
		if (open[2] == '!') {
			/* a comment is one line and ends at that line's last "}}", so it may name placeholders */
			const char *eol = strchr(open, '\n');
			eol = eol ? eol : open + strlen(open);
			close = NULL;
			for (const char *q = open + 3; q + 1 < eol; q++)
				if (q[0] == '}' && q[1] == '}')
					close = q;
		}
		if (!close)
			return bad(text, open, where, v, err, open[2] == '!' ? "'{{!' comment without '}}' on its line"
									   : "'{{' without a closing '}}'");
		if (open[2] == '!') {
			/* a comment alone on its line takes the line with it */
			int alone = (open == text || open[-1] == '\n') && (close[2] == '\n' || !close[2]);
			p = close + 2 + (alone && close[2] == '\n');
			continue;
		}
		const char *a = open + 2, *b = close;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		char name[64];
		size_t len = (size_t)(b - a);
		int ok = len > 0 && len < sizeof(name);
		for (const char *q = a; ok && q < b; q++)
			ok = islower((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_';
		if (!ok) {
			char shown[80];
			snprintf(shown, sizeof(shown), "'%.*s' is not a placeholder name (a-z, 0-9, _)",
				 (int)(len < 40 ? len : 40), a);
			return bad(text, open, where, v, err, shown);
		}
		memcpy(name, a, len);
		name[len] = '\0';
		const char *val = tvars_get(v, name);
		if (!val) {
			char msg[128];
			snprintf(msg, sizeof(msg), "unknown placeholder {{%s}}", name);
			return bad(text, open, where, v, err, msg);
		}
		strbuf_addstr(out, val);
		p = close + 2;
	}
	return 0;
}

int prompt_render_file(const struct prompt_dirs *d, const char *name, const struct tvars *v, struct strbuf *out,
		       struct sb_error *err)
{
	struct strbuf text = STRBUF_INIT;
	char *path;
	int rc = prompt_load(d, name, &text, &path, err);
	if (!rc)
		rc = prompt_render(text.buf, path, v, out, err);
	free(path);
	strbuf_release(&text);
	return rc;
}
