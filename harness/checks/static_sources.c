/* static_sources.c - the C++ a candidate builds: the strings load_inline's source arguments reach
 * (names, docstrings, concatenation, join, format, helper functions), and a wider scan when they cannot be told. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

#define MAX_REACH_DEPTH 24

/* The string tokens one source argument reaches, in the order the code puts them together. */
struct reach {
	struct static_ctx *c;
	size_t *strs;
	size_t n, cap;
	unsigned char *seen_bind, *seen_func, *seen_param;
	int depth;
	int unresolved;          /* some part of it is computed from something the file does not show */
	size_t decoded;          /* a decoder applied to it (base64, zlib, reversed, ...), or PV_NONE */
	char decoder[64];
	size_t locals[32];       /* comprehension and lambda names of the expression being read */
	size_t nlocals;
};

/* Methods of str that keep the text readable: the result is made of the pieces the code shows. */
static const char *const str_methods[] = { "join", "format", "format_map", "replace", "strip", "lstrip", "rstrip",
					   "upper", "lower", "expandtabs", "removeprefix", "removesuffix", "ljust",
					   "rjust", "center", "zfill", "split", "splitlines", "encode", "decode",
					   "__doc__", "__add__", NULL };
/* Calls that turn bytes or numbers into the text, or reorder it: what is compiled is not what is written. */
static const char *const decoders[] = { "base64", "binascii", "codecs", "zlib", "bz2", "lzma", "gzip", "marshal",
					"pickle", "bytes.fromhex", "bytearray.fromhex", "chr", "bytes", "bytearray",
					"reversed", "sorted", "translate", "maketrans", "rot13", NULL };
/* Functions of the standard library that hand their string argument back readable. */
static const char *const passthrough[] = { "inspect.getdoc", "inspect.cleandoc", "textwrap.dedent", "textwrap.indent",
					   "str", "repr", "format", "list", "tuple", "dict", "len", "range", "int", "float",
					   "enumerate", "zip", "min", "max", "isinstance", "string.Template", NULL };

static void resolve(struct reach *R, size_t a, size_t b);

static void reach_str(struct reach *R, size_t tok)
{
	for (size_t i = 0; i < R->n; i++)
		if (R->strs[i] == tok)
			return;
	if (R->n == R->cap) {
		R->cap = R->cap ? 2 * R->cap : 16;
		R->strs = xrealloc(R->strs, R->cap * sizeof(*R->strs));
	}
	R->strs[R->n++] = tok;
}

/* A docstring and the literals implicitly joined to it. */
static void reach_doc(struct reach *R, size_t doc)
{
	if (doc == PV_NONE) {
		R->unresolved = 1;
		return;
	}
	for (size_t k = doc; k < R->c->t->n && R->c->t->v[k].kind == PT_STRING; k++)
		reach_str(R, k);
}

static void decoded(struct reach *R, size_t at, const char *what)
{
	if (R->decoded == PV_NONE) {
		R->decoded = at;
		snprintf(R->decoder, sizeof(R->decoder), "%s", what);
	}
}

/* What a call of local function f returns (its return and yield expressions), and the defaults of its
 * parameters, which those expressions may use. */
static void reach_returns(struct reach *R, int f)
{
	const struct pyview *v = R->c->v;
	const struct pytok_list *t = R->c->t;
	if (R->seen_func[f])
		return;
	R->seen_func[f] = 1;
	resolve(R, v->funcs[f].params, v->funcs[f].params_end);
	for (size_t k = v->funcs[f].body; k < v->funcs[f].end; k++)
		if ((pytok_is_name(t, k, "return") || pytok_is_name(t, k, "yield")) && pv_func_at(v, k) == f)
			resolve(R, k + 1, pv_stmt_end(v, k));
}

/* A parameter of function f: whatever its callers pass. */
static void reach_param(struct reach *R, int f)
{
	const struct pyview *v = R->c->v;
	const struct pytok_list *t = R->c->t;
	int callers = 0;
	if (f < 0 || R->seen_param[f])
		return; /* every caller's arguments are read already, for all of f's parameters */
	R->seen_param[f] = 1;
	resolve(R, v->funcs[f].params, v->funcs[f].params_end); /* defaults */
	for (size_t k = 0; k + 1 < t->n; k++) {
		if (t->v[k].kind != PT_NAME || !pytok_is_op(t, k + 1, "(") || k == v->funcs[f].def + 1)
			continue;
		char name[PV_NAME];
		pytok_text(t, k, name, sizeof(name));
		if (strcmp(name, v->funcs[f].name))
			continue;
		callers++;
		resolve(R, k + 2, pytok_matching(t, k + 1));
	}
	if (!callers)
		R->unresolved = 1;
}

static int is_local(const struct reach *R, const struct pytok_list *t, size_t k)
{
	char name[PV_NAME], other[PV_NAME];
	pytok_text(t, k, name, sizeof(name));
	for (size_t i = 0; i < R->nlocals; i++) {
		pytok_text(t, R->locals[i], other, sizeof(other));
		if (!strcmp(name, other))
			return 1;
	}
	return 0;
}

/* `for x in ...` inside an expression, `lambda a, b: ...`: their names are the expression's own. */
static size_t add_locals(struct reach *R, const struct pytok_list *t, size_t k, size_t b)
{
	const char *until = pytok_is_name(t, k, "for") ? "in" : ":";
	size_t j = k + 1;
	for (; j < b && !(pytok_is_name(t, j, until) || pytok_is_op(t, j, until)); j++)
		if (t->v[j].kind == PT_NAME && R->nlocals < 32)
			R->locals[R->nlocals++] = j;
	return j;
}

/* x.__doc__, Cls.meth.__doc__, self.__doc__, __doc__: the docstring it names. */
static void reach_doc_ref(struct reach *R, const struct pv_ref *r)
{
	const struct pyview *v = R->c->v;
	char owner[PV_PATH];
	snprintf(owner, sizeof(owner), "%.*s", (int)(strlen(r->path) - strlen(".__doc__")), r->path);
	if (!strcmp(r->path, "__doc__")) {
		reach_doc(R, pv_module_doc(v));
	} else if (r->head == REF_FUNC && !strchr(owner, '.')) {
		reach_doc(R, pv_func_doc(v, r->target));
	} else if (r->head == REF_CLASS && !strchr(owner, '.')) {
		reach_doc(R, pv_class_doc(v, r->target));
	} else if (r->head == REF_CLASS && strchr(owner, '.') == strrchr(owner, '.')) {
		reach_doc(R, pv_func_doc(v, pv_find_method(v, r->target, path_last(owner))));
	} else if (r->head == REF_SELF) {
		int cls = pv_self_class(v, r->start);
		if (!strcmp(owner, "self"))
			reach_doc(R, pv_class_doc(v, cls));
		else if (strchr(owner, '.') == strrchr(owner, '.'))
			reach_doc(R, pv_func_doc(v, pv_find_method(v, cls, path_last(owner))));
		else
			R->unresolved = 1;
	} else {
		R->unresolved = 1; /* a docstring of something the file does not define */
	}
}

/* The parts of r's path after its head (and after `self.attr`) must be str methods. */
static void check_methods(struct reach *R, const struct pv_ref *r, int skip)
{
	char part[PV_NAME];
	const char *p = strchr(r->path, '.');
	for (int i = 0; p && i < skip; i++)
		p = strchr(p + 1, '.');
	while (p) {
		const char *e = strchr(p + 1, '.');
		snprintf(part, sizeof(part), "%.*s", (int)(e ? (size_t)(e - p - 1) : strlen(p + 1)), p + 1);
		if (word_in(part, decoders))
			decoded(R, r->start, part);
		else if (!word_in(part, str_methods))
			R->unresolved = 1;
		p = e;
	}
}

static void reach_binds(struct reach *R, const size_t *b, size_t nb)
{
	if (!nb)
		R->unresolved = 1;
	for (size_t j = 0; j < nb; j++)
		if (!R->seen_bind[b[j]]) {
			R->seen_bind[b[j]] = 1;
			resolve(R, R->c->v->binds[b[j]].rhs, R->c->v->binds[b[j]].rhs_end);
		}
}

static void reach_ref(struct reach *R, const struct pv_ref *r)
{
	const struct pyview *v = R->c->v;
	size_t b[16], nb;
	char head[PV_NAME];
	snprintf(head, sizeof(head), "%.*s", (int)strcspn(r->path, "."), r->path);
	if (ends_with(r->path, ".__doc__") || !strcmp(r->path, "__doc__")) {
		reach_doc_ref(R, r);
		return;
	}
	switch (r->head) {
	case REF_FUNC:
		if (r->ncomp > 1 && !r->called && !word_in(path_last(r->path), str_methods))
			R->unresolved = 1; /* f.source: an attribute set at run time */
		else if (r->called)
			reach_returns(R, r->target);
		else
			reach_doc(R, pv_func_doc(v, r->target)); /* inspect.getdoc(f) */
		check_methods(R, r, 0);
		break;
	case REF_CLASS:
		if (r->ncomp > 1) {
			/* Src.code (a class attribute), Src.build() (a method's returns), Src.meth (its docstring) */
			char attr[PV_NAME];
			const char *dot = strchr(r->path, '.');
			snprintf(attr, sizeof(attr), "%.*s", (int)strcspn(dot + 1, "."), dot + 1);
			int m = pv_find_method(v, r->target, attr);
			if (m >= 0 && r->called)
				reach_returns(R, m);
			else if (m >= 0)
				reach_doc(R, pv_func_doc(v, m));
			else
				reach_binds(R, b, pv_lookup_attr(v, r->target, attr, b, 16));
			check_methods(R, r, 1);
		} else if (r->called) {
			R->unresolved = 1;
		} else {
			reach_doc(R, pv_class_doc(v, r->target));
		}
		break;
	case REF_BOUND:
		reach_binds(R, b, pv_lookup(v, head, r->start, b, 16));
		check_methods(R, r, 0);
		break;
	case REF_SELF: {
		int cls = pv_self_class(v, r->start);
		char attr[PV_NAME];
		const char *dot = strchr(r->path, '.');
		snprintf(attr, sizeof(attr), "%.*s", dot ? (int)strcspn(dot + 1, ".") : 0, dot ? dot + 1 : "");
		nb = cls >= 0 ? pv_lookup_attr(v, cls, attr, b, 16) : 0;
		int m = cls >= 0 ? pv_find_method(v, cls, attr) : -1;
		if (m >= 0 && r->called)
			reach_returns(R, m);
		else
			reach_binds(R, b, nb);
		check_methods(R, r, 1);
		break;
	}
	case REF_PARAM:
		reach_param(R, pv_func_at(v, r->start));
		check_methods(R, r, 0);
		break;
	case REF_IMPORT:
	case REF_FREE:
		if (path_in(r->path, decoders))
			decoded(R, r->start, r->path);
		else if (!word_in(r->path, passthrough) && !path_in(r->path, passthrough))
			R->unresolved = 1;
		break;
	}
}

/* Everything [a, b) reaches: literals directly, names through their bindings, calls of local functions
 * through what they return. Operators and numbers add nothing. */
static void resolve(struct reach *R, size_t a, size_t b)
{
	const struct pytok_list *t = R->c->t;
	size_t locals = R->nlocals;
	if (++R->depth > MAX_REACH_DEPTH) {
		R->unresolved = 1;
		R->depth--;
		return;
	}
	for (size_t k = a; k < b && k < t->n; k++) {
		const struct pytok *x = &t->v[k];
		if (x->kind == PT_STRING) {
			reach_str(R, k);
		} else if (x->kind == PT_OP) {
			/* a slice with a step (s[::-1]) reorders the text */
			if (pytok_is_op(t, k, "[") && k > a && (t->v[k - 1].kind == PT_NAME || t->v[k - 1].kind == PT_STRING ||
								 pytok_is_op(t, k - 1, ")") || pytok_is_op(t, k - 1, "]"))) {
				size_t close = pytok_matching(t, k), colons = 0;
				for (size_t j = k + 1; j < close; j++)
					colons += t->v[j].depth == x->depth + 1 && pytok_is_op(t, j, ":");
				if (colons >= 2)
					decoded(R, k, "a slice with a step");
			}
		} else if (x->kind == PT_NAME) {
			struct pv_ref r;
			if (pytok_is_name(t, k, "for") || pytok_is_name(t, k, "lambda")) {
				k = add_locals(R, t, k, b);
			} else if (pv_is_keyword(t, k) || is_local(R, t, k) || (k + 1 < b && pytok_is_op(t, k + 1, "=") &&
										 !pytok_is_op(t, k - 1, "."))) {
				continue; /* a keyword, the expression's own name, a keyword argument's name */
			} else if (k > 0 && pytok_is_op(t, k - 1, ".")) {
				char m[PV_NAME];
				pytok_text(t, k, m, sizeof(m));
				if (word_in(m, decoders))
					decoded(R, k, m);
				else if (!word_in(m, str_methods))
					R->unresolved = 1; /* a method of something other than a string */
			} else if (pv_ref_at(R->c->v, k, &r)) {
				reach_ref(R, &r);
				k = r.end - 1; /* a call's arguments are read on; its dotted parts were judged with the path */
			}
		}
	}
	R->nlocals = locals;
	R->depth--;
}

/* ---------- the builds ---------- */

/* Calls that compile C++ from strings, with the positions and names of their source arguments. */
struct builder {
	const char *path;
	int pos[2];              /* positional indexes of source arguments (-1: none) */
	const char *kw[3];
	int from_files;          /* the sources are file names: what they hold is written at run time */
};

static const struct builder builders[] = {
	{ "torch.utils.cpp_extension.load_inline", { 1, 2 }, { "cpp_sources", "cuda_sources", "sycl_sources" }, 0 },
	{ "torch.utils.cpp_extension.load", { 1, -1 }, { "sources", NULL, NULL }, 1 },
};

static const struct builder *builder_of(const struct pv_ref *r)
{
	for (size_t i = 0; i < sizeof(builders) / sizeof(*builders); i++)
		if (!strcmp(r->path, builders[i].path))
			return &builders[i];
	return NULL;
}

struct scan {
	struct cx_list *cx;
	unsigned char *scanned;  /* per token: its C++ is in cx already */
	int unresolved;          /* some build's sources are not all strings of this file */
};

static void scan_one(struct static_ctx *c, struct scan *s, size_t tok)
{
	if (!s->scanned[tok]) {
		s->scanned[tok] = 1;
		cxx_scan_string(c->t, tok, s->cx);
	}
}

/* One source argument: each literal it reaches, and, when there are several, all of them read as one. */
static void scan_argument(struct static_ctx *c, struct scan *s, size_t a, size_t b)
{
	struct reach R = { .c = c, .decoded = PV_NONE };
	R.seen_bind = xcalloc(c->v->nbinds + 1, 1);
	R.seen_func = xcalloc(c->v->nfuncs + 1, 1);
	R.seen_param = xcalloc(c->v->nfuncs + 1, 1);
	resolve(&R, a, b);
	for (size_t i = 0; i < R.n; i++)
		scan_one(c, s, R.strs[i]);
	if (R.n > 1)
		cxx_scan_joined(c->t, R.strs, R.n, s->cx);
	/* a template filled in with .format, .replace or `%`: the text the compiler gets */
	struct pv_const_info how;
	char *text = pv_const_string(c->v, a, b, &how);
	if (text && how.transformed)
		cxx_scan_text(c->t, text, strlen(text), a, s->cx);
	free(text);
	s->unresolved |= R.unresolved;
	if (R.decoded != PV_NONE) {
		const struct pytok *k = &c->t->v[R.decoded];
		static_add(c, "H13", "hidden-source", k->line, k->col,
			   "the extension's source passes through %s (line %d), so the C++ that is compiled is not the "
			   "text the checks read; write the C++ source out as a string literal", R.decoder, k->line);
	}
	free(R.strs);
	free(R.seen_bind);
	free(R.seen_func);
	free(R.seen_param);
}

static void scan_build(struct static_ctx *c, struct scan *s, const struct pv_ref *r, const struct builder *bd)
{
	struct pv_arg args[32];
	size_t n = pv_call_args(c->t, r->end, args, 32);
	if (bd->from_files) {
		s->unresolved = 1; /* file names: what the files hold is written at run time */
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (args[i].star)
			scan_argument(c, s, args[i].a, args[i].b); /* load_inline(*parts) / (**config) */
	for (int p = 0; p < 2; p++) {
		const struct pv_arg *x = pv_arg_find(args, n, bd->pos[p] < 0 ? 99 : (size_t)bd->pos[p], bd->kw[p]);
		if (x)
			scan_argument(c, s, x->a, x->b);
	}
	const struct pv_arg *x = bd->kw[2] ? pv_arg_find(args, n, 99, bd->kw[2]) : NULL;
	if (x)
		scan_argument(c, s, x->a, x->b);
}

void static_sources(struct static_ctx *c, struct cx_list *cx)
{
	const struct pytok_list *t = c->t;
	struct scan s = { cx, xcalloc(t->n + 1, 1), 0 };
	struct pv_ref r;
	for (size_t i = 0; i < t->n; i++) {
		if (pv_stmt_start(c->v, i) && (pytok_is_name(t, i, "import") || pytok_is_name(t, i, "from"))) {
			i = pv_stmt_end(c->v, i);
			continue;
		}
		if (t->v[i].kind != PT_NAME || !pv_ref_at(c->v, i, &r))
			continue;
		const struct builder *bd = builder_of(&r);
		/* `build = load_inline`: an alias, whose calls resolve to the build itself */
		int alias = i > 0 && pytok_is_op(t, i - 1, "=") && r.end < t->n && t->v[r.end].kind == PT_NEWLINE;
		if (bd && r.called) {
			scan_build(c, &s, &r, bd);
		} else if (path_under(r.path, "torch.utils.cpp_extension") && !alias &&
			   (bd || r.dynamic || !strcmp(path_last(r.path), "?"))) {
			/* a build passed along as a value, or looked up by a computed name: its sources are unknown */
			s.unresolved = 1;
		}
		i = r.end - 1;
	}
	for (size_t i = 0; i < t->n; i++)
		if (s.unresolved ? cxx_string_has_markers(t, i) : cxx_string_is_code(t, i))
			scan_one(c, &s, i);
	free(s.scanned);
}
