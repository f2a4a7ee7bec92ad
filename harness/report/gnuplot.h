/* gnuplot.h - drawing plots with the real gnuplot: a plot is a data file and a script that draws it, run once
 * per terminal (SVG for inlining, PNG for Markdown), and the SVG made safe to inline into one HTML page. */
#ifndef SB_GNUPLOT_H
#define SB_GNUPLOT_H

#include "../core/error.h"
#include "../core/strbuf.h"

struct gnuplot {
	char *path;
	char version[64];          /* "gnuplot 5.4 patchlevel 4" */
	char png_terminal[16];     /* pngcairo, or png (libgd) where gnuplot was built without cairo */
};

/* Finds program (NULL: "gnuplot" on PATH) and checks it has the svg terminal and a PNG one. SB_EENV with
 * what to install when it is missing or lacks them. */
int gnuplot_find(struct gnuplot *g, const char *program, struct sb_error *err);
void gnuplot_release(struct gnuplot *g);

struct plot {
	char name[32];             /* file stem: NAME.dat, NAME.gp, NAME.svg, NAME.png */
	struct strbuf data;        /* what NAME.dat holds */
	struct strbuf body;        /* gnuplot commands that draw the plot from NAME.dat, for any terminal */
	int width, height;         /* pixels */
	char *caption;             /* plain text: what the plot shows */
	char *omitted;             /* not NULL: the plot has no data, and this line says why */
};
void plot_init(struct plot *p, const char *name, int width, int height);
void plot_release(struct plot *p);
__attribute__((format(printf, 2, 3)))
void plot_omit(struct plot *p, const char *fmt, ...);

/* Writes dir/NAME.dat and dir/NAME.gp (both terminals in one script: `gnuplot NAME.gp` in dir redraws
 * both), runs gnuplot there, and returns NAME.svg made inlinable (svg_inline, ids prefixed NAME-).
 * SB_EIO naming the script and gnuplot's messages when it fails. */
int gnuplot_draw(const struct gnuplot *g, const char *dir, const struct plot *p, char **svg, struct sb_error *err);

/* An SVG file's text made fit to sit inside an HTML page beside others: the XML prolog, doctype and
 * xmlns attributes (the only URLs gnuplot writes) removed, every id and every reference to it (#id,
 * url(#id)) prefixed "PREFIX-". Refused (SB_EINPUT) when anything could fetch or run: a URL, <script>,
 * <image>, <foreignObject>, an event handler, or an external reference. */
int svg_inline(const char *svg, const char *prefix, char **out, struct sb_error *err);

/* s as a single-quoted gnuplot string: quotes doubled, line breaks and control characters made spaces
 * (no backquote or macro substitution happens inside single quotes). */
void gp_quote(struct strbuf *out, const char *s);

#endif
