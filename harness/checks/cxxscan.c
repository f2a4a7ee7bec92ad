/* cxxscan.c - reads the C++ inside a Python literal: first undoes Python's escapes while remembering
 * where each character came from, then lexes C++ lightly, so a finding points at the .py line. */
#include "cxxscan.h"

#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

/* The literals' text as the compiler will see it, with each character's offset in the .py file and the
 * literal it came from. */
struct decoded {
	char *c;
	size_t *from, *tok;
	size_t n, alloc;
	size_t cur;              /* the literal being decoded */
};

static void put(struct decoded *d, char c, size_t from)
{
	d->c[d->n] = c;
	d->tok[d->n] = d->cur;
	d->from[d->n++] = from;
}

/* Appends literal `tok` to d (a string's decoded text is never longer than its body). */
static void decode(const struct pytok_list *t, size_t tok, struct decoded *d)
{
	const struct pytok *s = &t->v[tok];
	const char *p = t->src + s->body;
	size_t n = s->body_len;
	int raw = (s->sflags & PTS_RAW) != 0, fmt = (s->sflags & PTS_FORMAT) != 0;
	if (d->n + n + 1 > d->alloc) {
		d->alloc = 2 * (d->n + n + 1);
		d->c = xrealloc(d->c, d->alloc);
		d->from = xrealloc(d->from, d->alloc * sizeof(size_t));
		d->tok = xrealloc(d->tok, d->alloc * sizeof(size_t));
	}
	d->cur = tok;
	for (size_t i = 0; i < n; i++) {
		size_t at = s->body + i;
		char c = p[i];
		if (fmt && (c == '{' || c == '}') && i + 1 < n && p[i + 1] == c) {
			put(d, c, at);
			i++;
		} else if (fmt && c == '{') {
			/* a field: its value is unknown here, and its code is lexed as Python already */
			int depth = 1;
			while (++i < n && depth) {
				if (p[i] == '{')
					depth++;
				else if (p[i] == '}')
					depth--;
				else if (p[i] == '"' || p[i] == '\'') {
					char q = p[i];
					while (++i < n && p[i] != q)
						;
				}
			}
			i--;
			put(d, ' ', at);
		} else if (!raw && c == '\\' && i + 1 < n) {
			char e = p[++i];
			switch (e) {
			case 'n': put(d, '\n', at); break;
			case 't': put(d, '\t', at); break;
			case 'r': break;
			case '\n': break; /* a continued line */
			case '\\': case '\'': case '"': put(d, e, at); break;
			default: put(d, '\\', at); put(d, e, at + 1); break;
			}
		} else {
			put(d, c, at);
		}
	}
	d->c[d->n] = '\0';
}

int cxx_string_is_code(const struct pytok_list *t, size_t i)
{
	/* a bare string statement: a docstring or a string used as a comment */
	return !pytok_bare_string(t, i) && cxx_string_has_markers(t, i);
}

int cxx_string_has_markers(const struct pytok_list *t, size_t i)
{
	const struct pytok *s = &t->v[i];
	if (i >= t->n || s->kind != PT_STRING)
		return 0;
	char *body = xstrndup(t->src + s->body, s->body_len);
	int code = strstr(body, "#include") || strstr(body, "__global__") || strstr(body, "__device__") ||
		   strstr(body, "torch::") || strstr(body, "at::") || strstr(body, "c10::") ||
		   (strchr(body, '{') && strchr(body, ';'));
	free(body);
	return code;
}

static void add(struct cx_list *out, enum cx_kind kind, const char *text, size_t len, const struct pytok_list *t,
		size_t from, size_t pystr)
{
	if (out->n == out->alloc) {
		out->alloc = out->alloc ? 2 * out->alloc : 128;
		out->v = xrealloc(out->v, out->alloc * sizeof(*out->v));
	}
	struct cx_tok *k = &out->v[out->n++];
	k->kind = kind;
	k->text = xstrndup(text, len);
	k->pystr = pystr;
	pytok_position(t, from, &k->line, &k->col);
}

static int ident_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

/* Skips a C++ string or character literal opening at i; returns the index after it. */
static size_t skip_literal(const struct decoded *d, size_t i)
{
	char q = d->c[i];
	for (i++; i < d->n && d->c[i] != q && d->c[i] != '\n'; i++)
		if (d->c[i] == '\\')
			i++;
	return i < d->n ? i + 1 : d->n;
}

void cxx_scan_string(const struct pytok_list *t, size_t pystr, struct cx_list *out)
{
	cxx_scan_joined(t, &pystr, 1, out);
}

static void lex(const struct pytok_list *t, struct decoded *d, struct cx_list *out);

void cxx_scan_joined(const struct pytok_list *t, const size_t *strs, size_t nstrs, struct cx_list *out)
{
	struct decoded d = { 0 };
	for (size_t k = 0; k < nstrs; k++)
		if (strs[k] < t->n && t->v[strs[k]].kind == PT_STRING)
			decode(t, strs[k], &d);
	lex(t, &d, out);
}

void cxx_scan_text(const struct pytok_list *t, const char *text, size_t len, size_t at, struct cx_list *out)
{
	struct decoded d = { xmalloc(len + 1), xmalloc((len + 1) * sizeof(size_t)), xmalloc((len + 1) * sizeof(size_t)),
			     0, len + 1, at };
	for (size_t i = 0; i < len; i++)
		put(&d, text[i], t->v[at].off);
	d.c[d.n] = '\0';
	lex(t, &d, out);
}

/* Lexes the decoded text into out and frees it. */
static void lex(const struct pytok_list *t, struct decoded *d_, struct cx_list *out)
{
	struct decoded d = *d_;
	if (!d.n) {
		free(d.c);
		free(d.from);
		free(d.tok);
		return;
	}
	const char *c = d.c;
	size_t i = 0, n = d.n;
	int line_start = 1;
	while (i < n) {
		if (c[i] == '\n') {
			line_start = 1;
			i++;
			continue;
		}
		if (c[i] == ' ' || c[i] == '\t' || c[i] == '\r' || c[i] == '\\') {
			i++;
			continue;
		}
		int at_start = line_start;
		line_start = 0;
		if (c[i] == '/' && i + 1 < n && c[i + 1] == '/') {
			while (i < n && c[i] != '\n')
				i++;
		} else if (c[i] == '/' && i + 1 < n && c[i + 1] == '*') {
			const char *e = strstr(c + i + 2, "*/");
			i = e ? (size_t)(e - c) + 2 : n;
		} else if (c[i] == '#' && at_start) {
			size_t j = i + 1;
			while (j < n && (c[j] == ' ' || c[j] == '\t'))
				j++;
			if (!strncmp(c + j, "include", 7)) {
				j += 7;
				while (j < n && (c[j] == ' ' || c[j] == '\t'))
					j++;
				char close = c[j] == '<' ? '>' : c[j] == '"' ? '"' : 0;
				size_t a = ++j;
				while (close && j < n && c[j] != close && c[j] != '\n')
					j++;
				if (close)
					add(out, CX_INCLUDE, c + a, j - a, t, d.from[a < n ? a : n - 1], d.tok[a < n ? a : n - 1]);
				while (j < n && c[j] != '\n')
					j++;
			}
			i = j; /* other directives: their words are lexed like code */
		} else if (c[i] == 'R' && i + 1 < n && c[i + 1] == '"') {
			/* a raw string literal R"delim( ... )delim" */
			const char *open = strchr(c + i + 2, '(');
			if (!open) {
				i += 2;
				continue;
			}
			char *close = xstrfmt(")%.*s\"", (int)(open - (c + i + 2)), c + i + 2);
			const char *e = strstr(open, close);
			size_t a = (size_t)(open - c) + 1, b = e ? (size_t)(e - c) : n;
			add(out, CX_STRING, c + a, b - a, t, d.from[i], d.tok[i]);
			i = e ? b + strlen(close) : n;
			free(close);
		} else if (c[i] == '"') {
			size_t e = skip_literal(&d, i);
			add(out, CX_STRING, c + i + 1, e > i + 1 ? e - i - 2 : 0, t, d.from[i], d.tok[i]);
			i = e;
		} else if (c[i] == '\'') {
			i = skip_literal(&d, i);
		} else if (ident_start(c[i])) {
			size_t a = i;
			while (i < n && ident_char(c[i]))
				i++;
			add(out, CX_IDENT, c + a, i - a, t, d.from[a], d.tok[a]);
		} else if (c[i] >= '0' && c[i] <= '9') {
			size_t a = i;
			while (i < n && (ident_char(c[i]) || c[i] == '.'))
				i++;
			add(out, CX_NUMBER, c + a, i - a, t, d.from[a], d.tok[a]);
		} else {
			size_t len = c[i] == ':' && i + 1 < n && c[i + 1] == ':' ? 2 : 1;
			add(out, CX_PUNCT, c + i, len, t, d.from[i], d.tok[i]);
			i += len;
		}
	}
	free(d.c);
	free(d.from);
	free(d.tok);
}

void cx_list_release(struct cx_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].text);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int cx_is(const struct cx_list *l, size_t i, enum cx_kind kind, const char *text)
{
	return i < l->n && l->v[i].kind == kind && !strcmp(l->v[i].text, text);
}

size_t cx_find(const struct cx_list *l, size_t from, const char *name)
{
	for (size_t i = from; i < l->n; i++)
		if (cx_is(l, i, CX_IDENT, name))
			return i;
	return l->n;
}
