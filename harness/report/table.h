/* table.h - tables and text for people: one table model rendered as GitHub Markdown or as HTML, and the
 * escaping that keeps untrusted text (agent names, finding messages, run ids) literal in both. */
#ifndef SB_TABLE_H
#define SB_TABLE_H

#include <stddef.h>

#include "../core/strbuf.h"

/* A cell is either text stitchbench wrote (labels, numbers: trusted, only '|' is escaped in Markdown so
 * that the output stays readable) or text from outside (escaped so that it shows literally). */
struct table_cell {
	char *text;
	int untrusted;
};

/* Rows of ncols cells, row-major; the first row is the header. */
struct table {
	size_t ncols;
	struct table_cell *cells;
	size_t ncells, alloc;
};

void table_init(struct table *t, size_t ncols);
void table_release(struct table *t);
void table_cell(struct table *t, const char *text);     /* trusted */
/* The header row: the n names of a static array (trusted); TABLE_COLS(names) is n. */
void table_head(struct table *t, const char *const *names, size_t n);
#define TABLE_COLS(names) (sizeof(names) / sizeof((names)[0]))
__attribute__((format(printf, 2, 3)))
void table_cellf(struct table *t, const char *fmt, ...); /* trusted */
void table_text(struct table *t, const char *text);     /* untrusted: escaped */
size_t table_rows(const struct table *t);

/* GitHub-flavoured Markdown: "| a | b |" lines, "|---|" under the header. An incomplete last row is
 * filled with empty cells. */
void table_markdown(const struct table *t, struct strbuf *out);
/* <table> with <thead>; id and cls may be NULL. Every cell is HTML-escaped. */
void table_html(const struct table *t, const char *id, const char *cls, struct strbuf *out);

/* Text shown literally in HTML (element content or a quoted attribute): & < > " ' become entities;
 * control characters other than tab and newline become U+FFFD. */
void html_escape(struct strbuf *out, const char *s);
/* Text shown literally in Markdown: the punctuation Markdown acts on is backslash-escaped, & < > become
 * entities (no raw HTML, no links, no emphasis), and line breaks become spaces (one line, one cell). */
void md_escape(struct strbuf *out, const char *s);

#endif
