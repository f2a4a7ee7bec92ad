/* table.c - one table model for Markdown and HTML, and the escaping of untrusted text in both: a report
 * shows agent names and messages that came from configs, models and candidates, never as markup. */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols ? ncols : 1;
}

void table_release(struct table *t)
{
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i].text);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

static void add(struct table *t, char *text, int untrusted)
{
	if (t->ncells == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 16;
		t->cells = xrealloc(t->cells, t->alloc * sizeof(*t->cells));
	}
	t->cells[t->ncells++] = (struct table_cell){ text, untrusted };
}

void table_cell(struct table *t, const char *text)
{
	add(t, xstrdup(text ? text : ""), 0);
}

void table_head(struct table *t, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		table_cell(t, names[i]);
}

void table_cellf(struct table *t, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	add(t, strbuf_detach(&sb, NULL), 0);
}

void table_text(struct table *t, const char *text)
{
	add(t, xstrdup(text ? text : ""), 1);
}

size_t table_rows(const struct table *t)
{
	return (t->ncells + t->ncols - 1) / t->ncols;
}

static const struct table_cell *cell_at(const struct table *t, size_t row, size_t col)
{
	size_t i = row * t->ncols + col;
	return i < t->ncells ? &t->cells[i] : NULL;
}

/* Trusted text: only what would break the table. */
static void md_cell_raw(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			strbuf_addstr(out, "\\|");
		else if (*s == '\n' || *s == '\r')
			strbuf_addch(out, ' ');
		else
			strbuf_addch(out, *s);
	}
}

/* at_start: s begins a line, where "# ", "- " and "1. " would start a heading or a list. */
static void md_escape_at(struct strbuf *out, const char *s, int at_start)
{
	const char *start = at_start ? s : NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int lead = s == start && strchr("#+-=", c);
		int list_dot = start && (c == '.' || c == ')') && s > start &&
			       strspn(start, "0123456789") == (size_t)(s - start);
		if (c == '&')
			strbuf_addstr(out, "&amp;");
		else if (c == '<')
			strbuf_addstr(out, "&lt;");
		else if (c == '>')
			strbuf_addstr(out, "&gt;");
		else if (c == '\n' || c == '\r' || c == '\t')
			strbuf_addch(out, ' ');
		else if (c < 0x20 || c == 0x7f)
			strbuf_addstr(out, "\xef\xbf\xbd");
		else if (lead || list_dot || strchr("\\`*_[]|~", c)) {
			strbuf_addch(out, '\\');
			strbuf_addch(out, (char)c);
		} else
			strbuf_addch(out, (char)c);
	}
}

void md_escape(struct strbuf *out, const char *s)
{
	md_escape_at(out, s, 1);
}

void html_escape(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&#39;"); break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				strbuf_addstr(out, "\xef\xbf\xbd");
			else
				strbuf_addch(out, (char)c);
		}
	}
}

void table_markdown(const struct table *t, struct strbuf *out)
{
	size_t rows = table_rows(t);
	for (size_t r = 0; r < rows; r++) {
		strbuf_addch(out, '|');
		for (size_t c = 0; c < t->ncols; c++) {
			const struct table_cell *x = cell_at(t, r, c);
			strbuf_addch(out, ' ');
			if (x && x->untrusted)
				md_escape_at(out, x->text, 0);
			else if (x)
				md_cell_raw(out, x->text);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
		if (r == 0) {
			strbuf_addch(out, '|');
			for (size_t c = 0; c < t->ncols; c++)
				strbuf_addstr(out, "---|");
			strbuf_addch(out, '\n');
		}
	}
}

void table_html(const struct table *t, const char *id, const char *cls, struct strbuf *out)
{
	size_t rows = table_rows(t);
	strbuf_addstr(out, "<table");
	if (id) {
		strbuf_addstr(out, " id=\"");
		html_escape(out, id);
		strbuf_addch(out, '"');
	}
	if (cls) {
		strbuf_addstr(out, " class=\"");
		html_escape(out, cls);
		strbuf_addch(out, '"');
	}
	strbuf_addstr(out, ">\n");
	for (size_t r = 0; r < rows; r++) {
		strbuf_addstr(out, r == 0 ? "<thead><tr>" : "<tr>");
		for (size_t c = 0; c < t->ncols; c++) {
			const struct table_cell *x = cell_at(t, r, c);
			const char *tag = r == 0 ? "th" : "td";
			strbuf_addf(out, "<%s>", tag);
			if (x)
				html_escape(out, x->text);
			strbuf_addf(out, "</%s>", tag);
		}
		strbuf_addstr(out, r == 0 ? "</tr></thead>\n<tbody>\n" : "</tr>\n");
	}
	if (rows)
		strbuf_addstr(out, "</tbody>\n");
	strbuf_addstr(out, "</table>\n");
}
