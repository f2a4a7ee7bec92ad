/* static.c - runs the static rules over one candidate: tokenise, read the C++ in its strings, build
 * the symbol view, apply every rule, then order the findings and keep them few enough to read. */
#include "static.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

#define MAX_PER_ID 6        /* the agent needs the first few places, not every one */
#define MAX_PER_RULE 64     /* collected per id and rule; rules add them roughly in file order */
#define MAX_SOURCE (8u << 20)   /* what the rules read of a file */
#define MAX_READ (64u << 20)    /* what is read of it: the format check reads it all */

void static_add(struct static_ctx *c, const char *id, const char *rule, int line, int col, const char *fmt, ...)
{
	struct findings *r = c->out;
	size_t same = 0;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].id, id) && !strcmp(r->v[i].rule, rule) && (r->v[i].line == line || ++same >= MAX_PER_RULE))
			/* one finding per rule and line is enough to point at it, and a few dozen per rule are
			 * more than tidy() keeps: a rule that fires on every line of a huge file stays linear */
			return;
	va_list ap;
	va_start(ap, fmt);
	struct finding *f = findings_vadd(r, id, fmt, ap);
	va_end(ap);
	snprintf(f->rule, sizeof(f->rule), "%s", rule);
	f->line = line;
	f->col = col;
}

int word_in(const char *name, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(name, *words))
			return 1;
	return 0;
}

int path_in(const char *path, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (path_under(path, *prefixes))
			return 1;
	return 0;
}

void for_each_ref(struct static_ctx *c, ref_fn *fn, void *arg)
{
	struct pv_ref r;
	for (size_t i = 0; i < c->t->n; i++)
		if (c->t->v[i].kind == PT_NAME && pv_ref_at(c->v, i, &r)) {
			fn(c, &r, arg);
			i = r.end - 1;
		}
}

int name_in(const struct pytok_list *t, size_t i, const char *const *words, char *buf, size_t cap)
{
	if (i >= t->n || t->v[i].kind != PT_NAME)
		return 0;
	pytok_text(t, i, buf, cap);
	return word_in(buf, words);
}

int method_call_at(const struct pytok_list *t, size_t i, const char *const *names)
{
	char name[PV_NAME];
	return pytok_is_op(t, i, ".") && pytok_is_op(t, i + 2, "(") && name_in(t, i + 1, names, name, sizeof(name));
}

int cx_ident_in(const struct cx_list *l, size_t i, const char *const *names)
{
	return i < l->n && l->v[i].kind == CX_IDENT && word_in(l->v[i].text, names);
}

void for_each_target(struct static_ctx *c, target_fn *fn, void *arg)
{
	const struct pytok_list *t = c->t;
	for (size_t s = 0; s < t->n; s++) {
		if (!pv_stmt_start(c->v, s))
			continue;
		size_t e = pv_stmt_end(c->v, s), last_eq = s;
		int del = pytok_is_name(t, s, "del");
		for (size_t k = s; k < e; k++)
			if (t->v[k].depth == 0 && t->v[k].kind == PT_OP && t->src[t->v[k].off + t->v[k].len - 1] == '=' &&
			    !pytok_is_op(t, k, "==") && !pytok_is_op(t, k, "!=") && !pytok_is_op(t, k, "<=") &&
			    !pytok_is_op(t, k, ">="))
				last_eq = k;
		if (last_eq == s && !del)
			continue;
		for (size_t k = s + del; k < (del ? e : last_eq); k++) {
			int item_start = k == s + del || (t->v[k - 1].depth == 0 && (pytok_is_op(t, k - 1, ",") ||
										    pytok_is_op(t, k - 1, "=")));
			if (item_start && t->v[k].kind == PT_NAME)
				fn(c, k, del ? e : last_eq + 1, e, del, arg);
		}
	}
}

void for_each_const_string(struct static_ctx *c, const_string_fn *fn, void *arg)
{
	static const char *const str_methods[] = { "join", "replace", "format", "strip", "lstrip", "rstrip", "upper",
						   "lower", NULL };
	const struct pytok_list *t = c->t;
	char m[PV_NAME];
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].kind != PT_STRING || (t->v[i].flags & PTF_FEXPR) ||
		    (i > 0 && (t->v[i - 1].kind == PT_STRING || pytok_is_op(t, i - 1, "+"))))
			continue;
		/* the longest run of literals, `+` and .join(...) that may be constant */
		size_t k = i;
		for (;;) {
			while (k < t->n && t->v[k].kind == PT_STRING)
				k++;
			while (pytok_is_op(t, k, ".") && name_in(t, k + 1, str_methods, m, sizeof(m)) && pytok_is_op(t, k + 2, "("))
				k = pytok_matching(t, k + 2) + 1;
			if (pytok_is_op(t, k, "%") && k + 1 < t->n &&
			    (t->v[k + 1].kind == PT_STRING || t->v[k + 1].kind == PT_NAME || pytok_is_op(t, k + 1, "(")))
				k = pytok_is_op(t, k + 1, "(") ? pytok_matching(t, k + 1) + 1 : k + 2;
			if (pytok_is_op(t, k, "+") && k + 1 < t->n &&
			    (t->v[k + 1].kind == PT_STRING ||
			     (t->v[k + 1].kind == PT_NAME && !pytok_is_op(t, k + 2, ".") && !pytok_is_op(t, k + 2, "(") &&
			      !pytok_is_op(t, k + 2, "[")))) {
				k += t->v[k + 1].kind == PT_NAME ? 2 : 1;
				continue;
			}
			break;
		}
		struct pv_const_info how = { 0 };
		char *value = pv_const_string(c->v, i, k, &how);
		if (!value)
			value = pytok_string_value(t, i, NULL), how.assembled = 0;
		if (value)
			fn(c, i, value, how.assembled, arg);
		free(value);
	}
}

static int by_position(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Sorted by position; beyond MAX_PER_ID findings of one id the rest are dropped. */
static void tidy(struct findings *r)
{
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), by_position);
	size_t keep = 0;
	for (size_t i = 0; i < r->n; i++) {
		size_t same = 0;
		for (size_t j = 0; j < keep; j++)
			same += !strcmp(r->v[j].id, r->v[i].id);
		if (same < MAX_PER_ID)
			r->v[keep++] = r->v[i];
		else
			free(r->v[i].message);
	}
	r->n = keep;
}

/* `if __name__ == "__main__":` at module level: the worker imports the candidate under another
 * name, so the block never runs, and LLM answers often test against Model there. Its tokens go. */
static void drop_main_blocks(struct pytok_list *t)
{
	int level = 0;
	for (size_t i = 0; i < t->n; i++) {
		level += t->v[i].kind == PT_INDENT;
		level -= t->v[i].kind == PT_DEDENT;
		int stmt = i == 0 || t->v[i - 1].kind == PT_NEWLINE || t->v[i - 1].kind == PT_DEDENT;
		if (level || !stmt || !pytok_is_name(t, i, "if") || !pytok_is_name(t, i + 1, "__name__") ||
		    !pytok_is_op(t, i + 2, "==") || t->v[i + 3].kind != PT_STRING || !pytok_is_op(t, i + 4, ":"))
			continue;
		char *v = pytok_string_value(t, i + 3, NULL);
		int is_main = v && !strcmp(v, "__main__");
		free(v);
		if (!is_main)
			continue;
		size_t end = i + 5, depth = 0;
		if (t->v[end].kind == PT_NEWLINE && t->v[end + 1].kind == PT_INDENT) {
			for (end = i + 6; end < t->n; end++) {
				depth += t->v[end].kind == PT_INDENT;
				if (t->v[end].kind == PT_DEDENT && depth-- == 1)
					break;
			}
		} else {
			while (end < t->n && t->v[end].kind != PT_NEWLINE)
				end++;
		}
		if (end >= t->n - 1)
			end = t->n - 2; /* keep PT_END */
		memmove(&t->v[i], &t->v[end + 1], (t->n - end - 1) * sizeof(*t->v));
		t->n -= end + 1 - i;
		i--;
	}
}

/* The rules over a module's tokens, `if __name__ == "__main__":` blocks already left out. */
static void analyse(const struct pytok_list *t, struct findings *out)
{
	struct pyview v;
	struct cx_list cx = { 0 };
	pyview_build(t, &v);
	struct static_ctx c = { t, &v, &cx, xcalloc(t->n + 1, 1), out };
	static_sources(&c, &cx);
	rules_work(&c);
	rules_cxx(&c);
	rules_async(&c);
	rules_tamper(&c);
	rules_env(&c);
	tidy(out);
	free(c.hot);
	cx_list_release(&cx);
	pyview_release(&v);
}

int static_check_source(const char *name, const char *src, size_t len, struct findings *out, struct sb_error *err)
{
	struct pytok_list t;
	memset(out, 0, sizeof(*out));
	if (pytok_tokenize(src, len, &t, err)) {
		sb_error_prefix(err, "%s", name);
		return SB_EINPUT;
	}
	drop_main_blocks(&t);
	analyse(&t, out);
	pytok_release(&t);
	return 0;
}

int static_check(const struct candidate_source *s, struct findings *out, struct sb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (s->read_errno)
		return sb_error_set(err, SB_EIO, "cannot read %s: %s", s->path, strerror(s->read_errno));
	if (!s->tokenised) {
		*err = s->err;
		return s->err.code;
	}
	analyse(&s->tokens, out);
	return 0;
}

int static_check_file(const char *path, struct findings *out, struct sb_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	memset(out, 0, sizeof(*out));
	int rc = strbuf_read_file(&sb, path, MAX_SOURCE);
	if (rc) {
		strbuf_release(&sb);
		return sb_error_set(err, SB_EIO, "cannot read %s: %s", path, strerror(-rc));
	}
	rc = static_check_source(path, sb.buf, sb.len, out, err);
	strbuf_release(&sb);
	return rc;
}

static const char *const library_prefixes[] = { "cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", NULL };

static int calls_library(const struct cx_list *cx)
{
	for (size_t i = 0; i + 1 < cx->n; i++) {
		if (cx->v[i].kind != CX_IDENT || !cx_is(cx, i + 1, CX_PUNCT, "("))
			continue;
		for (const char *const *p = library_prefixes; *p; p++) {
			size_t n = strlen(*p);
			/* an API call has the prefix then an upper-case letter: cublasSgemm, cublasLtMatmul */
			if (!strncmp(cx->v[i].text, *p, n) && cx->v[i].text[n] >= 'A' && cx->v[i].text[n] <= 'Z')
				return 1;
		}
	}
	return 0;
}

/* A module's symbol view and the C++ it builds, for the facts candidate_source_load records. */
struct module {
	struct pyview v;
	struct cx_list cx;
	struct findings unused;
};

static void module_open(const struct pytok_list *t, struct module *m)
{
	memset(m, 0, sizeof(*m));
	pyview_build(t, &m->v);
	struct static_ctx c = { t, &m->v, &m->cx, NULL, &m->unused };
	static_sources(&c, &m->cx);
}

static void module_close(struct module *m)
{
	findings_release(&m->unused);
	cx_list_release(&m->cx);
	pyview_release(&m->v);
}

/* Whether the module's C++ calls a library's API: over the tokens as written, main blocks included. */
static int tokens_call_library(const struct pytok_list *t)
{
	struct module m;
	module_open(t, &m);
	int found = calls_library(&m.cx);
	module_close(&m);
	return found;
}

/* What in the module can only run on a GPU, into s->needs_gpu (the first such place): a __global__
 * function in the C++ it builds, a CUDA source given to load_inline, a Triton kernel, a CuPy or jiterator
 * kernel. Over the tokens that run (main blocks left out). */
static void find_gpu_code(const struct pytok_list *t, struct candidate_source *s)
{
	struct module m;
	module_open(t, &m);
	int line = 0;
	const char *what = NULL;
	for (size_t i = 0; i < m.cx.n && !what; i++)
		if (cx_is(&m.cx, i, CX_IDENT, "__global__"))
			line = m.cx.v[i].line, what = "a __global__ CUDA kernel";
	for (size_t f = 0; f < m.v.nfuncs && !what; f++)
		if (m.v.funcs[f].triton)
			line = t->v[m.v.funcs[f].def].line, what = "a Triton kernel";
	for (size_t i = 0; i + 1 < t->n && !what; i++) {
		struct pv_ref r;
		if (pytok_is_name(t, i, "cuda_sources") && pytok_is_op(t, i + 1, "="))
			line = t->v[i].line, what = "a CUDA source (cuda_sources=)";
		else if (t->v[i].kind == PT_NAME && pv_ref_at(&m.v, i, &r) &&
			 (path_under(r.path, "cupy") || path_under(r.path, "torch.cuda.jiterator")))
			line = t->v[i].line, what = "a CuPy or jiterator kernel";
	}
	if (what)
		snprintf(s->needs_gpu, sizeof(s->needs_gpu), "%s (line %d)", what, line);
	module_close(&m);
}

void candidate_source_load(struct candidate_source *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path);
	strbuf_init(&s->text, 0);
	int rc = strbuf_read_file(&s->text, path, MAX_READ);
	if (rc) {
		s->read_errno = -rc;
		strbuf_reset(&s->text);
		return;
	}
	/* beyond MAX_SOURCE no rule looks: the rules and the tokens' positions are sized for real answers */
	if (s->text.len > MAX_SOURCE) {
		sb_error_set(&s->err, SB_EIO, "cannot read %s: %s", path, strerror(EFBIG));
		return;
	}
	if (pytok_tokenize(s->text.buf, s->text.len, &s->tokens, &s->err)) {
		sb_error_prefix(&s->err, "%s", path);
		s->err.code = SB_EINPUT;
		return;
	}
	s->tokenised = 1;
	s->calls_library = tokens_call_library(&s->tokens);
	drop_main_blocks(&s->tokens);
	find_gpu_code(&s->tokens, s);
}

void candidate_source_release(struct candidate_source *s)
{
	if (s->tokenised)
		pytok_release(&s->tokens);
	strbuf_release(&s->text);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

int static_file_calls_library(const char *path)
{
	struct candidate_source s;
	candidate_source_load(&s, path);
	int found = s.calls_library;
	candidate_source_release(&s);
	return found;
}
