/* doc.c - rendering a report's blocks as Markdown (plots as links to their PNG files) and as one HTML page
 * that needs nothing else: styles inline, plots inline as SVG, and a policy that forbids any fetch. */
#include "doc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void doc_init(struct doc *d, const char *title)
{
	memset(d, 0, sizeof(*d));
	d->title = xstrdup(title);
}

void doc_release(struct doc *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct doc_block *b = &d->b[i];
		free(b->id);
		free(b->text);
		table_release(&b->table);
		free(b->svg);
		free(b->png);
		free(b->svg_file);
	}
	free(d->b);
	free(d->title);
	memset(d, 0, sizeof(*d));
}

static struct doc_block *add(struct doc *d, enum doc_kind kind, const char *id)
{
	if (d->n == d->alloc) {
		d->alloc = d->alloc ? 2 * d->alloc : 32;
		d->b = xrealloc(d->b, d->alloc * sizeof(*d->b));
	}
	struct doc_block *b = &d->b[d->n++];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->id = id ? xstrdup(id) : NULL;
	return b;
}

void doc_heading(struct doc *d, int level, const char *id, const char *text)
{
	struct doc_block *b = add(d, DOC_HEADING, id);
	b->level = level < 2 ? 2 : level > 4 ? 4 : level;
	b->text = xstrdup(text);
}

static void add_text(struct doc *d, enum doc_kind kind, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	add(d, kind, NULL)->text = strbuf_detach(&sb, NULL);
}

void doc_para(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(d, DOC_PARA, fmt, ap);
	va_end(ap);
}

void doc_note(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(d, DOC_NOTE, fmt, ap);
	va_end(ap);
}

struct table *doc_table(struct doc *d, const char *id, size_t ncols)
{
	struct doc_block *b = add(d, DOC_TABLE, id);
	table_init(&b->table, ncols);
	return &b->table;
}

void doc_plot(struct doc *d, const char *id, const char *caption, char *svg, const char *png, const char *svg_file,
	      int width)
{
	struct doc_block *b = add(d, DOC_PLOT, id);
	b->text = xstrdup(caption);
	b->svg = svg;
	b->png = xstrdup(png);
	b->svg_file = xstrdup(svg_file);
	b->width = width;
}

/* ---------- Markdown ---------- */

void doc_markdown(const struct doc *d, struct strbuf *out)
{
	strbuf_addstr(out, "# ");
	md_escape(out, d->title);
	strbuf_addstr(out, "\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct doc_block *b = &d->b[i];
		strbuf_addch(out, '\n');
		switch (b->kind) {
		case DOC_HEADING:
			strbuf_addchars(out, '#', (size_t)b->level);
			strbuf_addch(out, ' ');
			md_escape(out, b->text);
			strbuf_addch(out, '\n');
			break;
		case DOC_PARA:
			md_escape(out, b->text);
			strbuf_addch(out, '\n');
			break;
		case DOC_NOTE:
			strbuf_addstr(out, "> ");
			md_escape(out, b->text);
			strbuf_addch(out, '\n');
			break;
		case DOC_TABLE:
			table_markdown(&b->table, out);
			break;
		case DOC_PLOT:
			strbuf_addstr(out, "![");
			md_escape(out, b->id);
			strbuf_addf(out, "](%s)\n\n", b->png);
			md_escape(out, b->text);
			strbuf_addstr(out, " SVG: ");
			md_escape(out, b->svg_file);
			strbuf_addch(out, '\n');
			break;
		}
	}
}

/* ---------- HTML ---------- */

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1200px;"
	"padding:0 1rem;color:#1a1a1a;line-height:1.45}\n"
	"h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2.2rem;border-bottom:1px solid #ddd}h3{font-size:1.1rem}\n"
	"nav ul{columns:2;font-size:.9rem}\n"
	"table{border-collapse:collapse;margin:.8rem 0;font-size:.88rem}\n"
	"th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}\n"
	"thead th{background:#f0f0f0}\n"
	"tbody tr:nth-child(even){background:#fafafa}\n"
	".table-wrap{overflow-x:auto}\n"
	".note{color:#555;border-left:3px solid #bbb;padding-left:.7rem;font-style:italic}\n"
	"figure.plot{margin:1rem 0}\n"
	".plot-canvas{overflow-x:auto}\n"
	".plot-canvas svg{display:block;width:100%;height:auto}\n"
	"figcaption{font-size:.88rem;color:#333;max-width:60rem}\n";

static void attr(struct strbuf *out, const char *name, const char *value)
{
	strbuf_addf(out, " %s=\"", name);
	html_escape(out, value);
	strbuf_addch(out, '"');
}

static void html_toc(const struct doc *d, struct strbuf *out)
{
	strbuf_addstr(out, "<nav><ul>\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct doc_block *b = &d->b[i];
		if (b->kind != DOC_HEADING || b->level != 2 || !b->id)
			continue;
		strbuf_addstr(out, "<li><a href=\"#");
		html_escape(out, b->id);
		strbuf_addstr(out, "\">");
		html_escape(out, b->text);
		strbuf_addstr(out, "</a></li>\n");
	}
	strbuf_addstr(out, "</ul></nav>\n");
}

void doc_html(const struct doc *d, struct strbuf *out)
{
	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	html_escape(out, d->title);
	strbuf_addf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
	html_escape(out, d->title);
	strbuf_addstr(out, "</h1>\n");
	html_toc(d, out);
	for (size_t i = 0; i < d->n; i++) {
		const struct doc_block *b = &d->b[i];
		switch (b->kind) {
		case DOC_HEADING:
			strbuf_addf(out, "<h%d", b->level);
			if (b->id)
				attr(out, "id", b->id);
			strbuf_addch(out, '>');
			html_escape(out, b->text);
			strbuf_addf(out, "</h%d>\n", b->level);
			break;
		case DOC_PARA:
		case DOC_NOTE:
			strbuf_addstr(out, b->kind == DOC_NOTE ? "<p class=\"note\">" : "<p>");
			html_escape(out, b->text);
			strbuf_addstr(out, "</p>\n");
			break;
		case DOC_TABLE:
			strbuf_addstr(out, "<div class=\"table-wrap\">");
			table_html(&b->table, b->id, NULL, out);
			strbuf_addstr(out, "</div>\n");
			break;
		case DOC_PLOT:
			strbuf_addstr(out, "<figure class=\"plot\"");
			attr(out, "id", b->id);
			/* a plot wider than the page scrolls instead of shrinking its labels away */
			strbuf_addf(out, ">\n<div class=\"plot-canvas\"><div style=\"width:%dpx%s\">\n", b->width,
				    b->width > 1100 ? "" : ";max-width:100%");
			strbuf_addstr(out, b->svg);
			strbuf_addstr(out, "\n</div></div>\n<figcaption>");
			html_escape(out, b->text);
			strbuf_addstr(out, " Files: ");
			html_escape(out, b->svg_file);
			strbuf_addstr(out, ", ");
			html_escape(out, b->png);
			strbuf_addstr(out, ".</figcaption>\n</figure>\n");
			break;
		}
	}
	strbuf_addstr(out, "</body>\n</html>\n");
}
