/* gnuplot.c - running the real gnuplot on a data file and a script per plot (SVG and PNG from one script),
 * and making its SVG safe to inline: unique ids per plot, and nothing that could fetch or run. */
#include "gnuplot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../core/fs.h"
#include "../core/proc.h"

#define GNUPLOT_TIMEOUT_MS 120000
#define SVG_MAX (64u << 20)

/* ---------- finding gnuplot ---------- */

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

static int run_capture(const char *const *argv, struct proc_result *r)
{
	struct proc_opts o = { .argv = argv, .timeout_ms = 30000 };
	proc_result_init(r);
	return proc_run(&o, r) == 0 && proc_ok(r) ? 0 : -1;
}

int gnuplot_find(struct gnuplot *g, const char *program, struct sb_error *err)
{
	memset(g, 0, sizeof(*g));
	g->path = proc_which(program ? program : "gnuplot");
	if (!g->path)
		return sb_error_set(err, SB_EENV, "gnuplot is not installed (%s not found on PATH), and the report's plots "
				    "are drawn by it: install the package gnuplot-nox (scripts/setup.sh does, as root), or "
				    "pass --no-plots for a report with tables only", program ? program : "gnuplot");
	const char *vargv[] = { g->path, "--version", NULL };
	const char *targv[] = { g->path, "-e", "print GPVAL_TERMINALS", NULL };
	struct proc_result r;
	int rc = run_capture(vargv, &r);
	if (!rc) {
		strbuf_trim(&r.out);
		snprintf(g->version, sizeof(g->version), "%.*s", (int)strcspn(r.out.buf, "\n"), r.out.buf);
	}
	proc_result_release(&r);
	if (!rc)
		rc = run_capture(targv, &r); /* gnuplot prints to stderr */
	if (rc) {
		proc_result_release(&r);
		return sb_error_set(err, SB_EENV, "%s does not run (gnuplot --version or -e failed): reinstall gnuplot-nox, "
				    "or pass --no-plots", g->path);
	}
	struct strbuf *t = r.err.len ? &r.err : &r.out;
	int svg = has_word(t->buf, "svg");
	const char *png = has_word(t->buf, "pngcairo") ? "pngcairo" : has_word(t->buf, "png") ? "png" : NULL;
	proc_result_release(&r);
	if (!svg || !png)
		return sb_error_set(err, SB_EENV, "%s (%s) lacks the %s terminal that reports need: install Debian's "
				    "gnuplot-nox (it has svg and pngcairo), or pass --no-plots", g->path, g->version,
				    !svg ? "svg" : "png");
	snprintf(g->png_terminal, sizeof(g->png_terminal), "%s", png);
	return 0;
}

void gnuplot_release(struct gnuplot *g)
{
	free(g->path);
	memset(g, 0, sizeof(*g));
}

/* ---------- plots ---------- */

void plot_init(struct plot *p, const char *name, int width, int height)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	strbuf_init(&p->data, 0);
	strbuf_init(&p->body, 0);
	p->width = width;
	p->height = height;
}

void plot_release(struct plot *p)
{
	strbuf_release(&p->data);
	strbuf_release(&p->body);
	free(p->caption);
	free(p->omitted);
	memset(p, 0, sizeof(*p));
}

void plot_omit(struct plot *p, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(p->omitted);
	p->omitted = strbuf_detach(&sb, NULL);
}

void gp_quote(struct strbuf *out, const char *s)
{
	strbuf_addch(out, '\'');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'')
			strbuf_addstr(out, "''");
		else if (c < 0x20 || c == 0x7f)
			strbuf_addch(out, ' ');
		else
			strbuf_addch(out, (char)c);
	}
	strbuf_addch(out, '\'');
}

static int write_text(const char *path, const struct strbuf *text, struct sb_error *err)
{
	int e = fs_write_atomic(path, text->buf, text->len);
	return e ? sb_error_set(err, SB_EIO, "cannot write %s: %s", path, strerror(-e)) : 0;
}

static void terminal(struct strbuf *gp, const struct gnuplot *g, const struct plot *p, int svg)
{
	if (svg)
		strbuf_addf(gp, "set terminal svg size %d,%d dynamic noenhanced font 'Sans,12' background '#ffffff'\n",
			    p->width, p->height);
	else if (!strcmp(g->png_terminal, "pngcairo"))
		strbuf_addf(gp, "set terminal pngcairo size %d,%d noenhanced font 'Sans,10' background '#ffffff'\n",
			    p->width, p->height);
	else
		strbuf_addf(gp, "set terminal png size %d,%d noenhanced background '#ffffff'\n", p->width, p->height);
	strbuf_addf(gp, "set output '%s.%s'\n%s\nunset output\n", p->name, svg ? "svg" : "png", p->body.buf);
}

static int nonempty(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

int gnuplot_draw(const struct gnuplot *g, const char *dir, const struct plot *p, char **svg, struct sb_error *err)
{
	struct strbuf gp = STRBUF_INIT, text = STRBUF_INIT;
	char *dat = xstrfmt("%s/%s.dat", dir, p->name), *script = xstrfmt("%s/%s.gp", dir, p->name);
	char *svg_path = xstrfmt("%s/%s.svg", dir, p->name), *png_path = xstrfmt("%s/%s.png", dir, p->name);
	char *name = xstrfmt("%s.gp", p->name);
	const char *argv[] = { g->path, name, NULL };
	struct proc_opts o = { .argv = argv, .cwd = dir, .timeout_ms = GNUPLOT_TIMEOUT_MS, .keep_tail = 1 };
	struct proc_result r;
	int rc;

	strbuf_addf(&gp, "# %s.gp - drawn by stitchbench report from %s.dat (docs/report.md): ", p->name, p->name);
	for (const char *c = p->caption ? p->caption : ""; *c; c++)
		strbuf_addch(&gp, (unsigned char)*c < 0x20 ? ' ' : *c);
	strbuf_addf(&gp, "\n# Redraws %s.svg and %s.png with: gnuplot %s.gp (in this folder)\n", p->name, p->name, p->name);
	terminal(&gp, g, p, 1);
	terminal(&gp, g, p, 0);
	proc_result_init(&r);
	remove(svg_path);
	remove(png_path);
	rc = write_text(dat, &p->data, err);
	if (!rc)
		rc = write_text(script, &gp, err);
	if (!rc && proc_run(&o, &r))
		rc = sb_error_set(err, SB_EIO, "could not start %s for %s", g->path, script);
	if (!rc && (!proc_ok(&r) || !nonempty(svg_path) || !nonempty(png_path))) {
		char how[48];
		if (r.timed_out)
			snprintf(how, sizeof(how), "timed out after %d s", GNUPLOT_TIMEOUT_MS / 1000);
		else if (r.exited)
			snprintf(how, sizeof(how), "exit code %d", r.exit_code);
		else
			snprintf(how, sizeof(how), "killed by signal %d", r.signo);
		strbuf_trim(&r.err);
		rc = sb_error_set(err, SB_EIO, "gnuplot failed on %s (%s): %s; the script and its data are kept there",
				  script, how, r.err.len ? r.err.buf : "it wrote no SVG or PNG");
	}
	if (!rc && strbuf_read_file(&text, svg_path, SVG_MAX))
		rc = sb_error_set(err, SB_EIO, "cannot read %s", svg_path);
	if (!rc && svg_inline(text.buf, p->name, svg, err)) {
		sb_error_prefix(err, "%s", svg_path);
		rc = err->code = SB_EIO; /* gnuplot wrote it: not the user's input */
	}
	proc_result_release(&r);
	strbuf_release(&gp);
	strbuf_release(&text);
	free(dat);
	free(script);
	free(svg_path);
	free(png_path);
	free(name);
	return rc;
}

/* ---------- inlining SVG ---------- */

struct svg_scan {
	const char *p;             /* the next character to read */
	const char *prefix;
	struct strbuf *out;
	struct sb_error *err;
};

static int refuse(struct svg_scan *s, const char *what, const char *at)
{
	return sb_error_set(s->err, SB_EINPUT, "cannot inline this SVG: it has %s (near \"%.40s\"); only gnuplot's own "
			    "drawing is inlined", what, at);
}

/* Writes "#id" or "url(#id)" references inside an attribute value with the prefix; refuses any url() or
 * href that points outside the document. */
static int rewrite_value(struct svg_scan *s, const char *name, const char *v, size_t n)
{
	int is_id = !strcmp(name, "id");
	int is_href = !strcmp(name, "href") || !strcmp(name, "xlink:href");
	struct strbuf val = STRBUF_INIT;
	strbuf_add(&val, v, n);
	int rc = 0;
	if (strcasestr(val.buf, "javascript:") || strcasestr(val.buf, "http:") || strcasestr(val.buf, "https:") ||
	    strcasestr(val.buf, "data:") || strcasestr(val.buf, "@import") || strcasestr(val.buf, "file:"))
		rc = refuse(s, "a reference to something outside the page", v);
	else if (is_href && val.buf[0] != '#')
		rc = refuse(s, "a link to another document", v);
	if (rc) {
		strbuf_release(&val);
		return rc;
	}
	if (is_id) {
		strbuf_addf(s->out, "%s-%s", s->prefix, val.buf);
	} else if (is_href) {
		strbuf_addf(s->out, "#%s-%s", s->prefix, val.buf + 1);
	} else {
		for (const char *q = val.buf; *q;) {
			const char *u = strcasestr(q, "url(");
			if (!u) {
				strbuf_addstr(s->out, q);
				break;
			}
			strbuf_add(s->out, q, (size_t)(u - q) + 4);
			u += 4;
			u += strspn(u, " '\"");
			if (*u != '#') {
				rc = refuse(s, "a url() to something outside the page", u);
				break;
			}
			strbuf_addf(s->out, "#%s-", s->prefix);
			q = u + 1;
		}
	}
	strbuf_release(&val);
	return rc;
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == ':' || c == '.';
}

/* One start or end tag, s->p at its '<'. */
static int copy_tag(struct svg_scan *s)
{
	static const char *const banned[] = { "script", "image", "foreignObject", "iframe", "object", "embed", "style",
					      "audio", "video", "a", NULL };
	const char *p = s->p + 1;
	int closing = *p == '/';
	p += closing;
	const char *name = p;
	while (is_name_char(*p))
		p++;
	size_t nlen = (size_t)(p - name);
	for (int i = 0; banned[i]; i++)
		if (nlen == strlen(banned[i]) && !strncasecmp(name, banned[i], nlen))
			return refuse(s, "an element that can fetch, run or link", s->p);
	strbuf_add(s->out, s->p, (size_t)(p - s->p));
	for (;;) {
		const char *ws = p;
		p += strspn(p, " \t\r\n");
		if (*p == '>' || (p[0] == '/' && p[1] == '>')) {
			strbuf_add(s->out, ws, (size_t)(p - ws));
			strbuf_addstr(s->out, *p == '>' ? ">" : "/>");
			s->p = p + (*p == '>' ? 1 : 2);
			return 0;
		}
		const char *an = p;
		while (is_name_char(*p))
			p++;
		const char *an_end = p;
		p += strspn(p, " \t\r\n"); /* gnuplot writes "fill = 'rgb(...)'" */
		if (an_end == an || *p != '=')
			return refuse(s, "a tag it cannot read", an);
		p++;
		p += strspn(p, " \t\r\n");
		if (*p != '"' && *p != '\'')
			return refuse(s, "a tag it cannot read", an);
		char attr[64];
		snprintf(attr, sizeof(attr), "%.*s", (int)(an_end - an), an);
		char quote = *p;
		const char *v = p + 1, *end = strchr(v, quote);
		if (!end)
			return refuse(s, "an unterminated attribute", an);
		p = end + 1;
		if (!strncmp(attr, "xmlns", 5))
			continue; /* namespace URLs: the HTML parser knows SVG's namespaces */
		if (!strncasecmp(attr, "on", 2))
			return refuse(s, "an event handler", an);
		strbuf_add(s->out, ws, (size_t)(an - ws));
		strbuf_addf(s->out, "%s=%c", attr, quote);
		int rc = rewrite_value(s, attr, v, (size_t)(end - v));
		if (rc)
			return rc;
		strbuf_addch(s->out, quote);
	}
}

int svg_inline(const char *svg, const char *prefix, char **out, struct sb_error *err)
{
	struct strbuf o = STRBUF_INIT;
	struct svg_scan s = { svg, prefix, &o, err };
	int rc = 0;
	*out = NULL;
	while (*s.p && !rc) {
		if (*s.p != '<') {
			size_t n = strcspn(s.p, "<");
			strbuf_add(&o, s.p, n);
			s.p += n;
		} else if (!strncmp(s.p, "<?", 2)) {
			const char *e = strstr(s.p, "?>");
			s.p = e ? e + 2 : s.p + strlen(s.p);
		} else if (!strncmp(s.p, "<!--", 4)) {
			const char *e = strstr(s.p, "-->");
			s.p = e ? e + 3 : s.p + strlen(s.p);
		} else if (!strncasecmp(s.p, "<!DOCTYPE", 9)) {
			const char *b = strchr(s.p, '['), *e = strchr(s.p, '>');
			if (b && e && b < e)
				e = strstr(b, "]>") ? strstr(b, "]>") + 1 : e;
			s.p = e ? e + 1 : s.p + strlen(s.p);
		} else if (!strncmp(s.p, "<![CDATA[", 9)) {
			rc = refuse(&s, "a CDATA section", s.p);
		} else {
			rc = copy_tag(&s);
		}
	}
	if (!rc && !strstr(o.buf, "<svg"))
		rc = sb_error_set(err, SB_EINPUT, "cannot inline this SVG: it has no <svg> element");
	if (rc) {
		strbuf_release(&o);
		return rc;
	}
	strbuf_trim(&o);
	*out = strbuf_detach(&o, NULL);
	return 0;
}
