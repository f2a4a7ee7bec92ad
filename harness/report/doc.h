/* doc.h - a report as a list of blocks (headings, paragraphs, notes, tables, plots), written once and rendered
 * twice: as Markdown and as one self-contained HTML page. Text is plain and escaped by each renderer. */
#ifndef SB_DOC_H
#define SB_DOC_H

#include <stddef.h>

#include "../core/strbuf.h"
#include "table.h"

enum doc_kind { DOC_HEADING, DOC_PARA, DOC_NOTE, DOC_TABLE, DOC_PLOT };

struct doc_block {
	enum doc_kind kind;
	int level;            /* headings: 2 or 3 (the title is level 1) */
	char *id;             /* headings, tables, plots: the HTML id (stitchbench's own [a-z0-9_-] names) */
	char *text;           /* heading, paragraph or note text; a plot's caption. Plain text, never markup */
	struct table table;   /* tables */
	char *svg;            /* plots: the SVG to inline, checked by svg_inline() */
	char *png, *svg_file; /* plots: the files, relative to the report's folder */
	int width;            /* plots: the width to show it at, in CSS pixels */
};

struct doc {
	char *title;
	struct doc_block *b;
	size_t n, alloc;
};

void doc_init(struct doc *d, const char *title);
void doc_release(struct doc *d);
void doc_heading(struct doc *d, int level, const char *id, const char *text);
__attribute__((format(printf, 2, 3)))
void doc_para(struct doc *d, const char *fmt, ...);
/* A remark set apart from the text (e.g. why a plot is missing). */
__attribute__((format(printf, 2, 3)))
void doc_note(struct doc *d, const char *fmt, ...);
/* Appends an empty table and returns it to be filled (valid until the next doc_* call). */
struct table *doc_table(struct doc *d, const char *id, size_t ncols);
/* Takes svg (already made safe to inline). */
void doc_plot(struct doc *d, const char *id, const char *caption, char *svg, const char *png, const char *svg_file,
	      int width);

void doc_markdown(const struct doc *d, struct strbuf *out);
/* One HTML page: inline CSS, inline SVG, a Content-Security-Policy that forbids every fetch and script,
 * no reference to anything outside the file. */
void doc_html(const struct doc *d, struct strbuf *out);

#endif
