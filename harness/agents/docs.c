/* docs.c - documentation retrieval: a folder of documents split into passages, indexed into an SQLite
 * FTS5 table in the cache, and searched with BM25 for the terms of a failure. The index is keyed by the
 * documents' content, so it is built once per version of the folder and shared by every run and shard;
 * the query comes from the diagnostic lines only, because a build log is mostly command lines, paths
 * and flags that would match the documents by accident. */
#include "docs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/sha256.h"

#define DOCS_FILE_MAX (64u << 20)  /* bytes read of one document */
#define DOCS_DEPTH_MAX 16          /* folder levels walked */
#define DOCS_CANDIDATES 40         /* ranked rows looked at to fill the budget */

void docs_passages_release(struct docs_passages *p)
{
	for (size_t i = 0; i < p->nr; i++) {
		free(p->v[i].file);
		free(p->v[i].heading);
		free(p->v[i].body);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static struct docs_passage *passage_push(struct docs_passages *p)
{
	if (p->nr == p->alloc) {
		p->alloc = p->alloc ? 2 * p->alloc : 32;
		p->v = xrealloc(p->v, p->alloc * sizeof(*p->v));
	}
	struct docs_passage *d = &p->v[p->nr++];
	memset(d, 0, sizeof(*d));
	return d;
}

int docs_tokens(const char *text)
{
	return (int)((strlen(text) + 3) / 4);
}

int docs_format_of(const char *path)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash))
		return -1;
	static const struct { const char *ext; enum docs_format f; } ext[] = {
		{ ".md", DOCS_MARKDOWN }, { ".markdown", DOCS_MARKDOWN }, { ".txt", DOCS_TEXT }, { ".text", DOCS_TEXT },
		{ ".rst", DOCS_TEXT },    { ".html", DOCS_HTML },         { ".htm", DOCS_HTML }, { ".xhtml", DOCS_HTML },
	};
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (!strcasecmp(dot, ext[i].ext))
			return (int)ext[i].f;
	return -1;
}

/* ---------- HTML to text ---------- */

struct html_out {
	struct strbuf *sb;
	int pre, heading;
};

static void out_trim_spaces(struct html_out *o)
{
	while (o->sb->len && o->sb->buf[o->sb->len - 1] == ' ')
		strbuf_setlen(o->sb, o->sb->len - 1);
}

/* Ends the paragraph: the text so far ends with exactly one blank line (nothing at the start). */
static void out_break(struct html_out *o)
{
	out_trim_spaces(o);
	if (!o->sb->len)
		return;
	while (o->sb->len && o->sb->buf[o->sb->len - 1] == '\n')
		strbuf_setlen(o->sb, o->sb->len - 1);
	strbuf_addstr(o->sb, "\n\n");
}

static void out_newline(struct html_out *o)
{
	out_trim_spaces(o);
	if (o->sb->len && o->sb->buf[o->sb->len - 1] != '\n')
		strbuf_addch(o->sb, '\n');
}

static void out_char(struct html_out *o, int c)
{
	if (o->pre) {
		strbuf_addch(o->sb, c);
		return;
	}
	if (isspace(c)) {
		/* runs of white space are one space, and none starts a line */
		if (o->sb->len && !isspace((unsigned char)o->sb->buf[o->sb->len - 1]))
			strbuf_addch(o->sb, ' ');
		return;
	}
	strbuf_addch(o->sb, c);
}

static void out_utf8(struct html_out *o, unsigned long cp)
{
	if (cp == 0xa0 || cp == 0) {
		out_char(o, ' ');
	} else if (cp < 0x80) {
		out_char(o, (int)cp);
	} else if (cp < 0x800) {
		strbuf_addch(o->sb, (int)(0xc0 | (cp >> 6)));
		strbuf_addch(o->sb, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		strbuf_addch(o->sb, (int)(0xe0 | (cp >> 12)));
		strbuf_addch(o->sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
		strbuf_addch(o->sb, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x110000) {
		strbuf_addch(o->sb, (int)(0xf0 | (cp >> 18)));
		strbuf_addch(o->sb, (int)(0x80 | ((cp >> 12) & 0x3f)));
		strbuf_addch(o->sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
		strbuf_addch(o->sb, (int)(0x80 | (cp & 0x3f)));
	}
}

/* Decodes the entity at p ('&'); returns the bytes it took, 0 when it is not one (then '&' is text). */
static size_t entity(struct html_out *o, const char *p)
{
	static const struct { const char *name; unsigned long cp; } named[] = {
		{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' }, { "nbsp", 0xa0 },
		{ "ndash", 0x2013 }, { "mdash", 0x2014 }, { "hellip", 0x2026 }, { "rsquo", 0x2019 }, { "lsquo", 0x2018 },
		{ "rdquo", 0x201d }, { "ldquo", 0x201c }, { "times", 0xd7 }, { "copy", 0xa9 },
	};
	const char *semi = strchr(p, ';');
	if (!semi || semi - p > 10)
		return 0;
	if (p[1] == '#') {
		char *end;
		unsigned long cp = p[2] == 'x' || p[2] == 'X' ? strtoul(p + 3, &end, 16) : strtoul(p + 2, &end, 10);
		if (end != semi || end == p + 2 || end == p + 3)
			return 0;
		out_utf8(o, cp);
		return (size_t)(semi - p) + 1;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if ((size_t)(semi - p - 1) == strlen(named[i].name) && !strncmp(p + 1, named[i].name, strlen(named[i].name))) {
			out_utf8(o, named[i].cp);
			return (size_t)(semi - p) + 1;
		}
	return 0;
}

static int tag_is(const char *name, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcasecmp(name, list[i]))
			return 1;
	return 0;
}

/* The end of the tag starting at p ('<'): the '>' outside quoted attribute values; NULL when none, or
 * when another '<' comes first ("x <y and </p>": the first "<" is text, not a tag running to "</p>"). */
static const char *tag_end(const char *p)
{
	char quote = 0;
	for (const char *q = p + 1; *q; q++) {
		if (quote) {
			if (*q == quote)
				quote = 0;
		} else if (*q == '"' || *q == '\'') {
			quote = *q;
		} else if (*q == '>') {
			return q;
		} else if (*q == '<') {
			return NULL;
		}
	}
	return NULL;
}

void docs_strip_html(const char *html, struct strbuf *out)
{
	static const char *const hidden[] = { "script", "style", "noscript", "template", "svg", "head", NULL };
	static const char *const blocks[] = { "p", "div", "ul", "ol", "table", "tr", "section", "article", "header",
					      "footer", "nav", "aside", "blockquote", "dl", "dt", "dd", "hr", "main",
					      "figure", "figcaption", "caption", "body", "html", "title", "h", NULL };
	struct html_out o = { out, 0, 0 };
	const char *p = html;
	while (*p) {
		if (*p == '&') {
			size_t n = entity(&o, p);
			if (n) {
				p += n;
				continue;
			}
			out_char(&o, '&');
			p++;
			continue;
		}
		if (*p != '<') {
			out_char(&o, (unsigned char)*p++);
			continue;
		}
		if (!strncmp(p, "<!--", 4)) {
			const char *e = strstr(p + 4, "-->");
			p = e ? e + 3 : p + strlen(p);
			continue;
		}
		int closing = p[1] == '/';
		const char *n = p + 1 + closing;
		const char *end = (isalpha((unsigned char)*n) || (!closing && (*n == '!' || *n == '?'))) ? tag_end(p) : NULL;
		if (!end) {
			/* "a < b", a lone "<", a tag never closed: text, so nothing is lost to broken markup */
			out_char(&o, '<');
			p++;
			continue;
		}
		char name[16];
		size_t len = 0;
		while (isalnum((unsigned char)n[len]) && len < sizeof(name) - 1) {
			name[len] = (char)tolower((unsigned char)n[len]);
			len++;
		}
		name[len] = '\0';
		p = end + 1;
		if (!closing && tag_is(name, hidden)) {
			/* raw text and metadata: skip to the matching close tag when there is one */
			char close[24];
			snprintf(close, sizeof(close), "</%s", name);
			const char *c = strcasestr(p, close);
			if (c) {
				const char *e = tag_end(c);
				p = e ? e + 1 : c + strlen(close);
			}
			continue;
		}
		if (len == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6') {
			out_break(&o);
			if (!closing) {
				strbuf_addchars(out, '#', (size_t)(name[1] - '0'));
				strbuf_addch(out, ' ');
			}
			o.heading = !closing;
		} else if (!strcmp(name, "pre")) {
			if (!closing) {
				out_break(&o);
				strbuf_addstr(out, "```\n");
				o.pre = 1;
			} else if (o.pre) {
				if (out->len && out->buf[out->len - 1] != '\n')
					strbuf_addch(out, '\n');
				strbuf_addstr(out, "```");
				o.pre = 0;
				out_break(&o);
			}
		} else if (o.pre) {
			continue; /* markup inside a code block (<code>, <span>) adds nothing */
		} else if (!strcmp(name, "br")) {
			if (o.heading)
				out_char(&o, ' ');
			else
				out_newline(&o);
		} else if (!strcmp(name, "li") && !closing) {
			out_newline(&o);
			strbuf_addstr(out, "- ");
		} else if (!strcmp(name, "td") || !strcmp(name, "th")) {
			out_char(&o, ' ');
		} else if (tag_is(name, blocks)) {
			out_break(&o);
		}
	}
	if (o.pre)
		strbuf_addstr(out, "\n```");
	out_trim_spaces(&o);
	while (out->len && out->buf[out->len - 1] == '\n')
		strbuf_setlen(out, out->len - 1);
	if (out->len)
		strbuf_addch(out, '\n');
}

/* ---------- splitting ---------- */

struct splitter {
	const char *file;
	struct docs_passages *out;
	char *heads[6];
	struct strbuf cur, para;
	int cur_line, para_line, para_lines;
};

static void heading_path(struct splitter *s, struct strbuf *sb)
{
	for (int i = 0; i < 6; i++)
		if (s->heads[i])
			strbuf_addf(sb, "%s%s", sb->len ? " > " : "", s->heads[i]);
}

static void flush_passage(struct splitter *s)
{
	strbuf_trim(&s->cur);
	if (s->cur.len) {
		struct docs_passage *d = passage_push(s->out);
		struct strbuf h = STRBUF_INIT;
		heading_path(s, &h);
		d->file = xstrdup(s->file);
		d->line = s->cur_line;
		d->heading = strbuf_detach(&h, NULL);
		d->body = xstrdup(s->cur.buf);
		d->tokens = docs_tokens(d->body);
	}
	strbuf_reset(&s->cur);
}

static void add_to_passage(struct splitter *s, const char *text, size_t len, int line)
{
	if (s->cur.len && s->cur.len + len > DOCS_PASSAGE_TARGET)
		flush_passage(s);
	if (!s->cur.len)
		s->cur_line = line;
	else
		strbuf_addstr(&s->cur, "\n\n");
	strbuf_add(&s->cur, text, len);
}

/* Where to cut a paragraph longer than DOCS_PASSAGE_MAX: the last line end, else sentence end, else
 * space before the limit; the limit itself when there is none. */
static size_t cut_at(const char *t, size_t len)
{
	size_t lim = len < DOCS_PASSAGE_MAX ? len : DOCS_PASSAGE_MAX, k;
	for (k = lim; k > lim / 2; k--)
		if (t[k - 1] == '\n')
			return k;
	for (k = lim; k > lim / 2; k--)
		if ((t[k - 1] == '.' || t[k - 1] == '!' || t[k - 1] == '?') && (k == len || isspace((unsigned char)t[k])))
			return k;
	for (k = lim; k > lim / 2; k--)
		if (t[k - 1] == ' ')
			return k;
	return lim;
}

static void end_paragraph(struct splitter *s)
{
	strbuf_trim(&s->para);
	const char *t = s->para.buf;
	size_t len = s->para.len;
	if (len > DOCS_PASSAGE_MAX) {
		flush_passage(s);
		while (len) {
			size_t k = cut_at(t, len);
			add_to_passage(s, t, k, s->para_line);
			flush_passage(s);
			t += k;
			len -= k;
			while (len && isspace((unsigned char)*t))
				t++, len--;
		}
	} else if (len) {
		add_to_passage(s, t, len, s->para_line);
	}
	strbuf_reset(&s->para);
	s->para_lines = 0;
}

static void set_heading(struct splitter *s, int level, const char *text, size_t len)
{
	flush_passage(s);
	while (len && (isspace((unsigned char)text[len - 1]) || text[len - 1] == '#'))
		len--;
	while (len && isspace((unsigned char)*text))
		text++, len--;
	for (int i = level - 1; i < 6; i++) {
		free(s->heads[i]);
		s->heads[i] = NULL;
	}
	if (len)
		s->heads[level - 1] = xstrndup(text, len);
}

static int is_fence(const char *l, size_t len)
{
	size_t i = 0;
	while (i < len && i < 3 && l[i] == ' ')
		i++;
	return len - i >= 3 && (!strncmp(l + i, "```", 3) || !strncmp(l + i, "~~~", 3));
}

/* "# Title": its level and where the title starts; 0 when the line is no heading. */
static int atx_level(const char *l, size_t len, size_t *title)
{
	size_t i = 0;
	int n = 0;
	while (i < len && i < 3 && l[i] == ' ')
		i++;
	while (i < len && l[i] == '#' && n < 7)
		i++, n++;
	if (n < 1 || n > 6 || (i < len && l[i] != ' ' && l[i] != '\t'))
		return 0;
	*title = i;
	return n;
}

/* "===" or "---" under a one-line paragraph: 1 or 2; 0 otherwise. */
static int setext_level(const char *l, size_t len)
{
	while (len && isspace((unsigned char)l[len - 1]))
		len--;
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (l[i] != l[0])
			return 0;
	return l[0] == '=' ? 1 : l[0] == '-' ? 2 : 0;
}

static int blank(const char *l, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)l[i]))
			return 0;
	return 1;
}

void docs_split(const char *file, const char *text, enum docs_format fmt, struct docs_passages *out)
{
	struct strbuf stripped = STRBUF_INIT;
	if (fmt == DOCS_HTML) {
		docs_strip_html(text, &stripped);
		text = stripped.buf;
	}
	struct splitter s = { .file = file, .out = out, .cur = STRBUF_INIT, .para = STRBUF_INIT };
	int fence = 0, lineno = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *l = p;
		p += len + (nl != NULL);
		lineno++;
		if (len && l[len - 1] == '\r')
			len--;
		size_t title;
		int lv;
		if (fence) {
			strbuf_addch(&s.para, '\n');
			strbuf_add(&s.para, l, len);
			if (is_fence(l, len)) {
				fence = 0;
				end_paragraph(&s);
			}
		} else if (is_fence(l, len)) {
			end_paragraph(&s);
			s.para_line = lineno;
			strbuf_add(&s.para, l, len);
			fence = 1;
		} else if ((lv = atx_level(l, len, &title))) {
			end_paragraph(&s);
			set_heading(&s, lv, l + title, len - title);
		} else if (s.para_lines == 1 && (lv = setext_level(l, len))) {
			char *t = xstrdup(s.para.buf);
			strbuf_reset(&s.para);
			s.para_lines = 0;
			set_heading(&s, lv, t, strlen(t));
			free(t);
		} else if (blank(l, len)) {
			end_paragraph(&s);
		} else {
			if (!s.para.len)
				s.para_line = lineno;
			else
				strbuf_addch(&s.para, '\n');
			strbuf_add(&s.para, l, len);
			s.para_lines++;
		}
	}
	end_paragraph(&s);
	flush_passage(&s);
	for (int i = 0; i < 6; i++)
		free(s.heads[i]);
	strbuf_release(&s.cur);
	strbuf_release(&s.para);
	strbuf_release(&stripped);
}

/* ---------- query terms ---------- */

/* English function words and the boilerplate of build logs and verdicts, which say nothing about
 * what went wrong but match documents everywhere. */
static const char *const stopwords[] = {
	"the", "and", "not", "for", "from", "with", "without", "are", "was", "were", "been", "being", "this", "that",
	"these", "those", "its", "but", "then", "than", "such", "can", "cannot", "could", "may", "might", "must",
	"should", "would", "will", "shall", "does", "did", "done", "has", "have", "had", "here", "there", "which",
	"who", "whom", "whose", "what", "when", "where", "why", "how", "all", "any", "each", "every", "some", "more",
	"most", "other", "into", "out", "over", "under", "only", "own", "same", "too", "very", "just", "also", "via",
	"per", "you", "your", "our", "they", "them", "their", "his", "her", "about", "above", "after", "again",
	"against", "before", "below", "between", "both", "during", "few", "further", "once", "off", "through",
	"until", "while", "because", "yet", "nor", "one", "use", "used", "using", "got", "get",
	"error", "errors", "warning", "warnings", "note", "fatal", "line", "lines", "column", "file", "files",
	"failed", "fail", "fails", "failure", "build", "building", "built", "compilation", "terminated", "stopped",
	"subcommand", "ninja", "extension", "expected", "token", "instead", "required", "here", "candidate",
	"candidates", "compile_error", "format_error", "runtime_error", "load_inline", "traceback", "recent", "call",
	"last", "module", "self", "return", "returned", "status", "exit", "code", "see", "main",
	NULL,
};

static int is_stopword(const char *t)
{
	for (size_t i = 0; stopwords[i]; i++)
		if (!strcmp(t, stopwords[i]))
			return 1;
	return 0;
}

/* A word that is a path, a URL, a flag or a source location ("main.cpp:13:5:", "k.cu(12):",
 * "<command-line>:"). */
static int noise_word(const char *w, size_t len)
{
	if (len > 1 && w[0] == '-')
		return 1;
	if (len > 3 && w[0] == '<' && w[len - 2] == '>' && w[len - 1] == ':')
		return 1;
	for (size_t i = 0; i < len; i++) {
		if (w[i] == '/' || w[i] == '\\')
			return 1;
		if ((w[i] == ':' || w[i] == '(') && i + 1 < len && isdigit((unsigned char)w[i + 1]))
			return 1;
	}
	return 0;
}

static void add_term(struct strvec *terms, const char *t, size_t len)
{
	char tok[64];
	if (len < 3 || len >= sizeof(tok) || terms->nr >= DOCS_MAX_TERMS || isdigit((unsigned char)t[0]))
		return;
	int hex = 1, digit = 0;
	for (size_t i = 0; i < len; i++) {
		tok[i] = (char)tolower((unsigned char)t[i]);
		hex &= isxdigit((unsigned char)t[i]) != 0;
		digit |= isdigit((unsigned char)t[i]) != 0;
	}
	tok[len] = '\0';
	if ((hex && digit) || is_stopword(tok)) /* numbers and hashes: "ea68f0c2", "deadbeef0" */
		return;
	for (size_t i = 0; i < terms->nr; i++)
		if (!strcmp(terms->v[i], tok))
			return;
	strvec_push(terms, tok);
}

void docs_query_terms(const char *text, struct strvec *terms)
{
	const char *p = text ? text : "";
	while (*p) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *w = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		size_t wlen = (size_t)(p - w);
		if (!wlen || noise_word(w, wlen))
			continue;
		for (size_t i = 0; i < wlen;) {
			if (!isalnum((unsigned char)w[i]) && w[i] != '_') {
				i++;
				continue;
			}
			size_t j = i;
			while (j < wlen && (isalnum((unsigned char)w[j]) || w[j] == '_'))
				j++;
			add_term(terms, w + i, j - i);
			i = j;
		}
	}
}

static int mentions(const char *p, size_t len, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0; i + w <= len; i++)
		if (!strncasecmp(p + i, word, w))
			return 1;
	return 0;
}

/* The lines of text that say what failed: compiler diagnostics and exceptions ("error:", "fatal error:",
 * "RuntimeError:"); with tail > 0, of the last tail lines only. */
static void error_lines(const char *text, int tail, struct strbuf *out)
{
	if (!text || !*text)
		return;
	const char *from = text;
	if (tail > 0) {
		const char *q = text + strlen(text);
		int n = 0;
		if (q[-1] == '\n') /* a final newline ends the last line; it starts none */
			q--;
		while (q > text && !(q[-1] == '\n' && ++n == tail))
			q--;
		from = q;
	}
	/* diagnostics first ("error:"), else any line naming an error, else all: a build log's first
	 * line ("Error building extension ... c++ -MMD ...") names one but holds only the command */
	size_t before = out->len;
	for (int tier = 0; tier < 3 && out->len == before; tier++)
		for (const char *p = from; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			int hit = tier == 2 || mentions(p, len, "error:") || mentions(p, len, "exception:") ||
				  (tier == 1 && (mentions(p, len, "error") || mentions(p, len, "exception")));
			if (hit) {
				strbuf_add(out, p, len);
				strbuf_addch(out, '\n');
			}
			p += len + (nl != NULL);
		}
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

void docs_query_from_verdict(json_t *v, struct strvec *terms)
{
	const char *status = jstr(v, "status"), *detail = jstr(v, "detail"), *stage = NULL;
	struct strbuf text = STRBUF_INIT;
	if (!strcmp(status, "compile_error") || !strcmp(status, "format_error")) {
		error_lines(*detail ? detail : jstr(v, "message"), 0, &text);
		stage = !strcmp(status, "compile_error") ? "compile" : NULL;
	} else if (!strcmp(status, "runtime_error") || !strcmp(status, "timeout")) {
		error_lines(*detail ? detail : jstr(v, "log_tail"), 25, &text);
		if (!text.len)
			strbuf_addstr(&text, jstr(v, "message"));
		stage = !strcmp(status, "timeout") ? "timeout" : "runtime";
	} else if (!strcmp(status, "incorrect")) {
		strbuf_addf(&text, "%s\n", jstr(v, "message"));
		json_t *t, *o;
		size_t i, k;
		json_array_foreach(json_object_get(v, "trials"), i, t) {
			if (json_is_true(json_object_get(t, "pass")))
				continue;
			if (json_is_true(json_object_get(t, "inputs_mutated")))
				strbuf_addstr(&text, "inplace modified inputs\n");
			json_array_foreach(json_object_get(t, "outputs"), k, o)
				if (!json_is_true(json_object_get(o, "pass")))
					strbuf_addf(&text, "%s\n", jstr(o, "detail"));
			break; /* the first failing trial says what the others say */
		}
		stage = "correctness";
	} else if (!strcmp(status, "rejected")) {
		json_t *f;
		size_t i;
		json_array_foreach(json_object_get(v, "findings"), i, f)
			if (!strcmp(jstr(f, "severity"), "reject"))
				strbuf_addf(&text, "%s\n", jstr(f, "message"));
	}
	/* the stage's word goes in before the cap, so a long log cannot crowd it out */
	docs_query_terms(text.buf, terms);
	if (stage) {
		if (terms->nr >= DOCS_MAX_TERMS) {
			free((char *)terms->v[--terms->nr]);
			terms->v[terms->nr] = NULL;
		}
		add_term(terms, stage, strlen(stage));
	}
	strbuf_release(&text);
}

/* ---------- the index ---------- */

struct doc_file {
	char *rel;
	char hash[65];
};

static int cmp_doc(const void *a, const void *b)
{
	return strcmp(((const struct doc_file *)a)->rel, ((const struct doc_file *)b)->rel);
}

/* Collects the documents under root/rel (hidden files and folders skipped) with their hashes. */
static int walk(const char *root, const char *rel, int depth, struct doc_file **v, size_t *n, size_t *alloc,
		struct sb_error *err)
{
	char *dir = *rel ? xstrfmt("%s/%s", root, rel) : xstrdup(root);
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		sb_error_set(err, SB_EINPUT, "agents[].docs: cannot read %s: %s", dir, strerror(e));
		free(dir);
		return SB_EINPUT;
	}
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *r = *rel ? xstrfmt("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		char *full = xstrfmt("%s/%s", root, r);
		struct stat st;
		if (stat(full, &st)) {
			/* a dangling link is no document */
		} else if (S_ISDIR(st.st_mode) && depth < DOCS_DEPTH_MAX) {
			rc = walk(root, r, depth + 1, v, n, alloc, err);
		} else if (S_ISREG(st.st_mode) && docs_format_of(r) >= 0) {
			if (*n == *alloc) {
				*alloc = *alloc ? 2 * *alloc : 32;
				*v = xrealloc(*v, *alloc * sizeof(**v));
			}
			struct doc_file *f = &(*v)[(*n)++];
			f->rel = r;
			r = NULL;
			int hrc = sha256_file_hex(full, f->hash);
			if (hrc)
				rc = sb_error_set(err, SB_EINPUT, "agents[].docs: cannot read %s: %s", full, strerror(-hrc));
		}
		free(r);
		free(full);
	}
	closedir(d);
	free(dir);
	return rc;
}

static int sql_fail(sqlite3 *db, const char *what, const char *path, struct sb_error *err)
{
	return sb_error_set(err, SB_EIO, "documentation index %s: %s: %s", path, what, db ? sqlite3_errmsg(db) : "out of memory");
}

static int build_index(const char *root, const struct doc_file *files, size_t n, const char *key, const char *tmp,
		       long *npassages, struct sb_error *err)
{
	static const char *const schema =
		"PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
		"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
		"CREATE TABLE files(path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, passages INTEGER NOT NULL);"
		/* '_' is part of a word so that __syncthreads and cuda_runtime stay one term; porter folds
		 * "launches" and "launch" together */
		"CREATE VIRTUAL TABLE passages USING fts5(file UNINDEXED, line UNINDEXED, heading, body,"
		" tokenize = \"porter unicode61 tokenchars '_'\");";
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL, *insf = NULL;
	int rc = 0;
	*npassages = 0;
	unlink(tmp);
	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO passages(file, line, heading, body) VALUES (?, ?, ?, ?)", -1, &ins, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO files(path, sha256, passages) VALUES (?, ?, ?)", -1, &insf, NULL)) {
		rc = sql_fail(db, "cannot create it", tmp, err);
		goto out;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		struct strbuf text = STRBUF_INIT;
		struct docs_passages ps = DOCS_PASSAGES_INIT;
		char *full = xstrfmt("%s/%s", root, files[i].rel);
		int r = strbuf_read_file(&text, full, DOCS_FILE_MAX);
		if (r)
			rc = sb_error_set(err, SB_EINPUT, "agents[].docs: cannot read %s: %s", full, strerror(-r));
		if (!rc)
			docs_split(files[i].rel, text.buf, (enum docs_format)docs_format_of(files[i].rel), &ps);
		for (size_t k = 0; !rc && k < ps.nr; k++) {
			sqlite3_bind_text(ins, 1, ps.v[k].file, -1, SQLITE_STATIC);
			sqlite3_bind_int(ins, 2, ps.v[k].line);
			sqlite3_bind_text(ins, 3, ps.v[k].heading, -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 4, ps.v[k].body, -1, SQLITE_STATIC);
			if (sqlite3_step(ins) != SQLITE_DONE)
				rc = sql_fail(db, "cannot insert a passage", tmp, err);
			sqlite3_reset(ins);
		}
		if (!rc) {
			sqlite3_bind_text(insf, 1, files[i].rel, -1, SQLITE_STATIC);
			sqlite3_bind_text(insf, 2, files[i].hash, -1, SQLITE_STATIC);
			sqlite3_bind_int64(insf, 3, (sqlite3_int64)ps.nr);
			if (sqlite3_step(insf) != SQLITE_DONE)
				rc = sql_fail(db, "cannot insert a file", tmp, err);
			sqlite3_reset(insf);
		}
		*npassages += (long)ps.nr;
		docs_passages_release(&ps);
		strbuf_release(&text);
		free(full);
	}
	if (!rc) {
		char *meta = sqlite3_mprintf("INSERT INTO meta VALUES ('format', '%d'), ('key', %Q), ('folder', %Q);"
					     "COMMIT; INSERT INTO passages(passages) VALUES ('optimize');",
					     DOCS_INDEX_FORMAT, key, root);
		if (!meta || sqlite3_exec(db, meta, NULL, NULL, NULL) != SQLITE_OK)
			rc = sql_fail(db, "cannot finish it", tmp, err);
		sqlite3_free(meta);
	}
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(insf);
	if (db && sqlite3_close(db) != SQLITE_OK && !rc)
		rc = sb_error_set(err, SB_EIO, "documentation index %s: cannot close it", tmp);
	if (rc)
		unlink(tmp);
	return rc;
}

/* Opens an existing entry read-only; 0 when it is whole and carries this key. */
static int open_entry(struct docs_index *ix)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int ok = 0;
	if (sqlite3_open_v2(ix->db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT (SELECT value FROM meta WHERE key = 'key'), (SELECT count(*) FROM files),"
				   " (SELECT sum(passages) FROM files)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		ok = k && !strcmp(k, ix->key);
		ix->files = sqlite3_column_int64(st, 1);
		ix->passages = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (ok)
		ix->db = db;
	else
		sqlite3_close(db);
	return ok ? 0 : -1;
}

int docs_open(const char *folder, const char *cache_root, struct docs_index **out, struct sb_error *err)
{
	static atomic_uint seq;
	char real[PATH_MAX];
	struct stat st;
	*out = NULL;
	if (!realpath(folder, real) || stat(real, &st))
		return sb_error_set(err, SB_EINPUT, "agents[].docs: %s: %s", folder, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINPUT, "agents[].docs: %s is not a folder", folder);
	struct doc_file *files = NULL;
	size_t n = 0, alloc = 0;
	int rc = walk(real, "", 0, &files, &n, &alloc, err);
	if (!rc && !n)
		rc = sb_error_set(err, SB_EINPUT, "agents[].docs: %s holds no document (.md, .markdown, .txt, .text, .rst, "
				  ".html, .htm, .xhtml)", folder);
	struct docs_index *ix = NULL;
	if (!rc) {
		qsort(files, n, sizeof(*files), cmp_doc);
		struct sha256_ctx c;
		uint8_t dig[32];
		char head[48];
		snprintf(head, sizeof(head), "stitchbench-docs %d\n", DOCS_INDEX_FORMAT);
		sha256_init(&c);
		sha256_update(&c, head, strlen(head));
		for (size_t i = 0; i < n; i++) {
			sha256_update(&c, files[i].rel, strlen(files[i].rel) + 1);
			sha256_update(&c, files[i].hash, 64);
		}
		sha256_final(&c, dig);
		ix = xcalloc(1, sizeof(*ix));
		for (int i = 0; i < 32; i++)
			snprintf(ix->key + 2 * i, 3, "%02x", dig[i]);
		ix->folder = xstrdup(real);
		char *dir = xstrfmt("%s/docs", cache_root);
		ix->db_path = xstrfmt("%s/%s.db", dir, ix->key);
		if (open_entry(ix)) {
			char *tmp = xstrfmt("%s.tmp.%ld.%u", ix->db_path, (long)getpid(), atomic_fetch_add(&seq, 1));
			int mk = fs_mkdirs(dir, 0755);
			if (mk)
				rc = sb_error_set(err, SB_EIO, "cannot create %s: %s", dir, strerror(-mk));
			if (!rc)
				rc = build_index(real, files, n, ix->key, tmp, &ix->passages, err);
			if (!rc && rename(tmp, ix->db_path))
				rc = sb_error_set(err, SB_EIO, "cannot move %s into place: %s", tmp, strerror(errno));
			if (!rc && open_entry(ix))
				rc = sb_error_set(err, SB_EIO, "documentation index %s: cannot open it", ix->db_path);
			if (rc)
				unlink(tmp);
			ix->built = !rc;
			free(tmp);
		}
		free(dir);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].rel);
	free(files);
	if (rc) {
		docs_close(ix);
		return rc;
	}
	*out = ix;
	return 0;
}

void docs_close(struct docs_index *ix)
{
	if (!ix)
		return;
	sqlite3_close(ix->db);
	free(ix->folder);
	free(ix->db_path);
	free(ix);
}

struct shared_index {
	char *folder, *cache_root;
	struct docs_index *ix;
	struct shared_index *next;
};

int docs_shared(const char *folder, const char *cache_root, struct docs_index **out, struct sb_error *err)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct shared_index *list;
	int rc = 0;
	pthread_mutex_lock(&mu);
	struct shared_index *e = list;
	while (e && (strcmp(e->folder, folder) || strcmp(e->cache_root, cache_root)))
		e = e->next;
	if (!e) {
		/* indexing happens under the lock, so two sessions never index one folder twice */
		struct docs_index *ix;
		rc = docs_open(folder, cache_root, &ix, err);
		if (!rc) {
			e = xcalloc(1, sizeof(*e));
			e->folder = xstrdup(folder);
			e->cache_root = xstrdup(cache_root);
			e->ix = ix;
			e->next = list;
			list = e;
		}
	}
	*out = e ? e->ix : NULL;
	pthread_mutex_unlock(&mu);
	return rc;
}

/* ---------- search ---------- */

static void render_intro(const struct strvec *terms, struct strbuf *out)
{
	strbuf_addstr(out, "Documentation that may help (passages of the agent's documentation folder that best match "
			   "the failure; searched for:");
	for (size_t i = 0; i < terms->nr; i++)
		strbuf_addf(out, "%s%s", i ? ", " : " ", terms->v[i]);
	strbuf_addstr(out, "):\n\n");
}

static void render_passage(const struct docs_passage *d, size_t k, struct strbuf *out)
{
	strbuf_addf(out, "[%zu] %s, line %d", k, d->file, d->line);
	if (*d->heading)
		strbuf_addf(out, ", \"%s\"", d->heading);
	strbuf_addf(out, "\n%s\n\n", d->body);
}

int docs_search(struct docs_index *ix, const struct strvec *terms, int max_tokens, struct docs_passages *out,
		struct sb_error *err)
{
	if (!terms->nr)
		return 0;
	struct strbuf q = STRBUF_INIT, piece = STRBUF_INIT;
	for (size_t i = 0; i < terms->nr; i++) {
		/* terms are letters, digits and '_' only (docs_query_terms), so quoting needs no escapes and
		 * keeps FTS5's operators (AND, NOT, NEAR) from being read as syntax */
		strbuf_addf(&q, "%s\"%s\"", i ? " OR " : "", terms->v[i]);
	}
	render_intro(terms, &piece);
	int used = docs_tokens(piece.buf), rc = 0;
	sqlite3 *db = ix->db;
	sqlite3_stmt *st = NULL;
	/* bm25() is lower for better matches; the weights are per column: file and line are not searched,
	 * a heading counts twice a body */
	if (sqlite3_prepare_v2(db, "SELECT file, line, heading, body, bm25(passages, 0, 0, 2.0, 1.0) AS r FROM passages"
				   " WHERE passages MATCH ?1 ORDER BY r, rowid LIMIT ?2", -1, &st, NULL) != SQLITE_OK) {
		rc = sql_fail(db, "cannot search it", ix->db_path, err);
		goto done;
	}
	sqlite3_bind_text(st, 1, q.buf, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, DOCS_CANDIDATES);
	int s = SQLITE_DONE;
	while (out->nr < DOCS_MAX_PASSAGES && (s = sqlite3_step(st)) == SQLITE_ROW) {
		struct docs_passage d = {
			.file = (char *)sqlite3_column_text(st, 0), .line = sqlite3_column_int(st, 1),
			.heading = (char *)sqlite3_column_text(st, 2), .body = (char *)sqlite3_column_text(st, 3),
			.score = -sqlite3_column_double(st, 4),
		};
		if (!d.file || !d.heading || !d.body)
			continue;
		strbuf_reset(&piece);
		render_passage(&d, out->nr + 1, &piece);
		d.tokens = docs_tokens(piece.buf);
		if (used + d.tokens > max_tokens)
			continue; /* a shorter passage further down may still fit */
		used += d.tokens;
		struct docs_passage *p = passage_push(out);
		*p = d;
		p->file = xstrdup(d.file);
		p->heading = xstrdup(d.heading);
		p->body = xstrdup(d.body);
	}
	if (out->nr < DOCS_MAX_PASSAGES && s != SQLITE_DONE && s != SQLITE_ROW)
		rc = sql_fail(db, "cannot search it", ix->db_path, err);
done:
	sqlite3_finalize(st);
	strbuf_release(&q);
	strbuf_release(&piece);
	return rc;
}

void docs_render(const struct docs_passages *hits, const struct strvec *terms, struct strbuf *out)
{
	if (!hits->nr)
		return;
	render_intro(terms, out);
	for (size_t i = 0; i < hits->nr; i++)
		render_passage(&hits->v[i], i + 1, out);
	strbuf_setlen(out, out->len - 1); /* one line end, like the other blocks a template places */
}
