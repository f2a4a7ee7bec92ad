/* pyref.c - name resolution over the symbol view: which function or class holds a token, Python's
 * scoping for bound names, and dotted references resolved through imports, aliases, getattr and self. */
#include "pyview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

#define MAX_ALIAS_DEPTH 6
#define ALIAS_BUDGET 256 /* resolutions per reference: alias chains must not blow up */


int pv_func_at(const struct pyview *v, size_t i)
{
	int best = -1;
	for (size_t f = 0; f < v->nfuncs; f++)
		if (v->funcs[f].body <= i && i < v->funcs[f].end && (best < 0 || v->funcs[f].body > v->funcs[best].body))
			best = (int)f;
	return best;
}

int pv_class_body_at(const struct pyview *v, size_t i)
{
	int best = -1;
	for (size_t c = 0; c < v->nclasses; c++)
		if (v->classes[c].body <= i && i < v->classes[c].end &&
		    (best < 0 || v->classes[c].body > v->classes[best].body))
			best = (int)c;
	int f = pv_func_at(v, i);
	if (best >= 0 && f >= 0 && v->funcs[f].body > v->classes[best].body)
		return -1;
	return best;
}

int pv_find_func(const struct pyview *v, const char *name)
{
	for (size_t f = 0; f < v->nfuncs; f++)
		if (v->funcs[f].cls < 0 && v->funcs[f].parent < 0 && !strcmp(v->funcs[f].name, name))
			return (int)f;
	return -1;
}

int pv_find_class(const struct pyview *v, const char *name)
{
	for (size_t c = 0; c < v->nclasses; c++)
		if (!strcmp(v->classes[c].name, name))
			return (int)c;
	return -1;
}

size_t pv_local_bases(const struct pyview *v, int c, int *out, size_t cap)
{
	size_t n = 0;
	const struct pv_class *k = &v->classes[c];
	for (size_t i = k->bases; i < k->bases_end && n < cap; i++) {
		if (v->t->v[i].kind != PT_NAME || (i > k->bases && pytok_is_op(v->t, i - 1, ".")))
			continue;
		char name[PV_NAME];
		pytok_text(v->t, i, name, sizeof(name));
		int b = pv_find_class(v, name);
		if (b >= 0 && b != c)
			out[n++] = b;
	}
	return n;
}

static int find_method_depth(const struct pyview *v, int cls, const char *name, int depth)
{
	if (cls < 0 || depth > 8)
		return -1;
	for (size_t f = 0; f < v->nfuncs; f++)
		if (v->funcs[f].cls == cls && !strcmp(v->funcs[f].name, name))
			return (int)f;
	int bases[8];
	size_t n = pv_local_bases(v, cls, bases, 8);
	for (size_t i = 0; i < n; i++) {
		int m = find_method_depth(v, bases[i], name, depth + 1);
		if (m >= 0)
			return m;
	}
	return -1;
}

int pv_find_method(const struct pyview *v, int cls, const char *name)
{
	return find_method_depth(v, cls, name, 0);
}

static int inherits_depth(const struct pyview *v, int cls, const char *name, int depth)
{
	if (cls < 0 || depth > 8)
		return 0;
	const struct pv_class *k = &v->classes[cls];
	for (size_t i = k->bases; i < k->bases_end; i++)
		if (pytok_is_name(v->t, i, name) && !(i > k->bases && pytok_is_op(v->t, i - 1, ".")))
			return 1;
	int bases[8];
	size_t n = pv_local_bases(v, cls, bases, 8);
	for (size_t i = 0; i < n; i++)
		if (inherits_depth(v, bases[i], name, depth + 1))
			return 1;
	return 0;
}

int pv_class_inherits(const struct pyview *v, int cls, const char *name)
{
	return inherits_depth(v, cls, name, 0);
}

int pv_is_param(const struct pyview *v, int f, const char *name)
{
	if (f < 0)
		return 0;
	const struct pv_func *fn = &v->funcs[f];
	int d = fn->params < v->t->n ? v->t->v[fn->params - 1].depth + 1 : 1;
	for (size_t k = fn->params; k < fn->params_end; k++) {
		if (v->t->v[k].depth != d || !pytok_is_name(v->t, k, name))
			continue;
		size_t p = k - 1;
		if (pytok_is_op(v->t, p, "(") || pytok_is_op(v->t, p, ",") || pytok_is_op(v->t, p, "*") ||
		    pytok_is_op(v->t, p, "**"))
			return 1;
	}
	return 0;
}

const struct pv_import *pv_find_import(const struct pyview *v, const char *name)
{
	for (size_t i = 0; i < v->nimports; i++)
		if (!strcmp(v->imports[i].name, name))
			return &v->imports[i];
	return NULL;
}

size_t pv_lookup_attr(const struct pyview *v, int cls, const char *name, size_t *idx, size_t cap)
{
	int classes[9] = { cls };
	size_t nc = cls < 0 ? 0 : 1 + pv_local_bases(v, cls, classes + 1, 8), n = 0;
	for (size_t b = 0; b < v->nbinds && n < cap; b++)
		for (size_t c = 0; c < nc; c++)
			if (v->binds[b].self_attr && v->binds[b].cls == classes[c] && !strcmp(v->binds[b].name, name)) {
				idx[n++] = b;
				break;
			}
	return n;
}

static size_t binds_in(const struct pyview *v, int func, const char *name, size_t *idx, size_t cap)
{
	size_t n = 0;
	for (size_t b = 0; b < v->nbinds && n < cap; b++)
		if (!v->binds[b].self_attr && v->binds[b].func == func && !strcmp(v->binds[b].name, name))
			idx[n++] = b;
	return n;
}

size_t pv_lookup(const struct pyview *v, const char *name, size_t at, size_t *idx, size_t cap)
{
	for (int f = pv_func_at(v, at); f >= 0; f = v->funcs[f].parent) {
		size_t n = binds_in(v, f, name, idx, cap);
		if (n || pv_is_param(v, f, name))
			return n;
	}
	return binds_in(v, -1, name, idx, cap);
}

int path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '.');
}

const char *path_last(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot ? dot + 1 : path;
}

/* ---------- references ---------- */

static const char *const keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
	"elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
	"nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", NULL,
};

/* What `from torch import *` brings in that a candidate might call bare; builtins such as max stay builtins. */
static const char *const star_torch[] = { "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "conv1d", "conv2d",
					  "conv3d", "linear", "softmax", "log_softmax", "relu", "gelu", "sigmoid",
					  "tanh", "layer_norm", "batch_norm", "group_norm", "dropout", "embedding",
					  "scaled_dot_product_attention", "conv_transpose2d", "max_pool2d", "avg_pool2d",
					  "silu", "tensordot", NULL };

int pv_is_keyword(const struct pytok_list *t, size_t i)
{
	for (const char *const *k = keywords; *k; k++)
		if (pytok_is_name(t, i, *k))
			return 1;
	return 0;
}

int pv_self_class(const struct pyview *v, size_t i)
{
	int f = pv_func_at(v, i);
	while (f >= 0 && v->funcs[f].cls < 0)
		f = v->funcs[f].parent;
	return f >= 0 ? v->funcs[f].cls : -1;
}

static int ref_at(const struct pyview *v, size_t i, struct pv_ref *r, int depth, int *budget);

/* Whether [a, b) can be a bare reference: names and dots, or a short getattr/vars/__dict__ lookup.
 * Cheap, so that resolving `y = x + 1` never recurses into x's own bindings. */
static int maybe_pure(const struct pytok_list *t, size_t a, size_t b)
{
	if (b <= a)
		return 0;
	if (pytok_is_name(t, a, "getattr") || pytok_is_name(t, a, "vars"))
		return b - a <= 16 && (pytok_is_op(t, b - 1, ")") || pytok_is_op(t, b - 1, "]"));
	for (size_t k = a; k < b; k++)
		if (t->v[k].kind != PT_NAME && !pytok_is_op(t, k, ".") &&
		    !(k > a + 2 && (pytok_is_op(t, k, "[") || pytok_is_op(t, k, "]") || t->v[k].kind == PT_STRING)))
			return 0;
	return 1;
}

/* A binding whose right side is nothing but a reference (`mm = torch.matmul`) is an alias: the
 * reference is used in its place when it leads somewhere known (an import, a function, a class). */
static int alias_of(const struct pyview *v, const size_t *b, size_t nb, int depth, struct pv_ref *out, int *budget)
{
	if (depth >= MAX_ALIAS_DEPTH)
		return 0;
	for (size_t j = 0; j < nb; j++) {
		const struct pv_bind *x = &v->binds[b[j]];
		struct pv_ref sub;
		if (!maybe_pure(v->t, x->rhs, x->rhs_end) || --*budget < 0)
			continue;
		if (ref_at(v, x->rhs, &sub, depth + 1, budget) && sub.end == x->rhs_end && !sub.called &&
		    (sub.head == REF_IMPORT || sub.head == REF_FUNC || sub.head == REF_CLASS)) {
			*out = sub;
			return 1;
		}
	}
	return 0;
}

static void resolve_head(const struct pyview *v, size_t i, const char *name, const char *rest, struct pv_ref *r,
			 int depth, int *budget)
{
	size_t b[16], nb;
	struct pv_ref sub;
	r->target = -1;
	if (!strcmp(name, "self") && pv_func_at(v, i) >= 0) {
		r->head = REF_SELF;
		snprintf(r->path, sizeof(r->path), "self%s", rest);
		if (!*rest)
			return;
		char attr[PV_NAME];
		snprintf(attr, sizeof(attr), "%.*s", (int)strcspn(rest + 1, "."), rest + 1);
		nb = pv_lookup_attr(v, pv_self_class(v, i), attr, b, 16);
		if (alias_of(v, b, nb, depth, &sub, budget)) {
			*r = (struct pv_ref){ .head = sub.head, .target = sub.target };
			snprintf(r->path, sizeof(r->path), "%s%s", sub.path, rest + 1 + strlen(attr));
			snprintf(r->via, sizeof(r->via), "self.%s", attr);
		}
		return;
	}
	for (int f = pv_func_at(v, i); f >= 0; f = v->funcs[f].parent) {
		if ((nb = binds_in(v, f, name, b, 16)) != 0)
			goto bound;
		if (pv_is_param(v, f, name)) {
			r->head = REF_PARAM;
			snprintf(r->path, sizeof(r->path), "%s%s", name, rest);
			return;
		}
		for (size_t g = 0; g < v->nfuncs; g++)
			if (v->funcs[g].parent == f && v->funcs[g].cls < 0 && !strcmp(v->funcs[g].name, name)) {
				r->head = REF_FUNC;
				r->target = (int)g;
				snprintf(r->path, sizeof(r->path), "%s%s", name, rest);
				return;
			}
	}
	const struct pv_import *m = pv_find_import(v, name);
	if (m) {
		r->head = REF_IMPORT;
		snprintf(r->path, sizeof(r->path), "%s%s", m->path, rest);
		return;
	}
	if ((nb = binds_in(v, -1, name, b, 16)) != 0)
		goto bound;
	if ((r->target = pv_find_func(v, name)) >= 0 || (r->target = pv_find_class(v, name)) >= 0) {
		r->head = pv_find_func(v, name) >= 0 ? REF_FUNC : REF_CLASS;
		snprintf(r->path, sizeof(r->path), "%s%s", name, rest);
		return;
	}
	for (size_t k = 0; k < v->nimports; k++)
		if (!strcmp(v->imports[k].name, "*") && path_under(v->imports[k].path, "torch"))
			for (const char *const *s = star_torch; *s; s++)
				if (!strcmp(*s, name)) {
					r->head = REF_IMPORT;
					snprintf(r->path, sizeof(r->path), "%s.%s%s", v->imports[k].path, name, rest);
					return;
				}
	r->head = REF_FREE;
	snprintf(r->path, sizeof(r->path), "%s%s", name, rest);
	return;
bound:
	if (alias_of(v, b, nb, depth, &sub, budget)) {
		r->head = sub.head;
		r->target = sub.target;
		snprintf(r->path, sizeof(r->path), "%s%s", sub.path, rest);
		snprintf(r->via, sizeof(r->via), "%s", name);
		return;
	}
	r->head = REF_BOUND;
	snprintf(r->path, sizeof(r->path), "%s%s", name, rest);
}

/* Appends ".name" parts (and `.__dict__["name"]`) from token *k on. */
static void trailing(const struct pytok_list *t, size_t *k, char *rest, size_t cap)
{
	char part[PV_NAME];
	for (;;) {
		if (!pytok_is_op(t, *k, ".") || *k + 1 >= t->n || t->v[*k + 1].kind != PT_NAME)
			return;
		if (pytok_is_name(t, *k + 1, "__dict__") && pytok_is_op(t, *k + 2, "[") && t->v[*k + 3].kind == PT_STRING) {
			size_t after;
			char *s = pytok_string_value(t, *k + 3, &after);
			if (s && pytok_is_op(t, after, "]")) {
				snprintf(rest + strlen(rest), cap - strlen(rest), ".%s", s);
				free(s);
				*k = after + 1;
				continue;
			}
			free(s);
		}
		pytok_text(t, *k + 1, part, sizeof(part));
		snprintf(rest + strlen(rest), cap - strlen(rest), ".%s", part);
		*k += 2;
	}
}

/* getattr(X, "name") and vars(X)["name"]: X's reference with the name appended. */
static int dynamic_lookup(const struct pyview *v, size_t i, struct pv_ref *r, size_t *k, int depth, int *budget)
{
	const struct pytok_list *t = v->t;
	struct pv_ref inner;
	size_t after = 0;
	char *name = NULL;
	int is_getattr = pytok_is_name(t, i, "getattr");
	if (!pytok_is_op(t, i + 1, "(") || !ref_at(v, i + 2, &inner, depth + 1, budget))
		return 0;
	size_t close = pytok_matching(t, i + 1);
	if (is_getattr) {
		if (!pytok_is_op(t, inner.end, ","))
			return 0;
		name = pytok_string_value(t, inner.end + 1, &after);
		if (name && !pytok_is_op(t, after, ")") && !pytok_is_op(t, after, ",")) {
			free(name); /* "soft" + "max": known only at run time */
			name = NULL;
		}
		*k = close + 1;
	} else {
		if (inner.end != close || !pytok_is_op(t, close + 1, "[") || t->v[close + 2].kind != PT_STRING)
			return 0;
		name = pytok_string_value(t, close + 2, &after);
		if (!pytok_is_op(t, after, "]")) {
			free(name);
			return 0;
		}
		*k = after + 1;
	}
	*r = inner;
	r->dynamic = name == NULL;
	snprintf(r->path + strlen(r->path), sizeof(r->path) - strlen(r->path), ".%s", name ? name : "?");
	free(name);
	return 1;
}

static int ref_at(const struct pyview *v, size_t i, struct pv_ref *r, int depth, int *budget)
{
	const struct pytok_list *t = v->t;
	char name[PV_NAME], rest[PV_PATH] = "";
	size_t k = i + 1;
	if (i >= t->n || t->v[i].kind != PT_NAME || pv_is_keyword(t, i) || (i > 0 && pytok_is_op(t, i - 1, ".")))
		return 0;
	size_t shadow[1];
	if (depth > 32)
		return 0; /* getattr(getattr(getattr(...))) deeper than any real code */
	memset(r, 0, sizeof(*r));
	pytok_text(t, i, name, sizeof(name));
	if ((!strcmp(name, "getattr") || !strcmp(name, "vars")) && pv_lookup(v, name, i, shadow, 1) == 0 &&
	    dynamic_lookup(v, i, r, &k, depth, budget)) {
		trailing(t, &k, rest, sizeof(rest));
		snprintf(r->path + strlen(r->path), sizeof(r->path) - strlen(r->path), "%s", rest);
	} else if (!strcmp(name, "super") && pytok_is_op(t, i + 1, "(")) {
		k = pytok_matching(t, i + 1) + 1;
		trailing(t, &k, rest, sizeof(rest));
		r->head = REF_FREE;
		r->target = -1;
		snprintf(r->path, sizeof(r->path), "super()%s", rest);
	} else {
		trailing(t, &k, rest, sizeof(rest));
		resolve_head(v, i, name, rest, r, depth, budget);
	}
	r->start = i;
	r->end = k;
	if (pytok_is_op(t, k, "("))
		r->called = 1;
	else if (pytok_is_op(t, k, "[") && pytok_is_op(t, pytok_matching(t, k) + 1, "("))
		r->called = 1;
	r->ncomp = 1;
	for (const char *p = r->path; *p; p++)
		r->ncomp += *p == '.';
	size_t a = t->v[i].off, e = t->v[k - 1].off + t->v[k - 1].len;
	snprintf(r->text, sizeof(r->text), "%.*s", (int)(e - a), t->src + a);
	return 1;
}

int pv_ref_at(const struct pyview *v, size_t i, struct pv_ref *r)
{
	int budget = ALIAS_BUDGET;
	return ref_at(v, i, r, 0, &budget);
}

/* ---------- calls, docstrings, constant strings ---------- */

/* Splits [a, b) at the commas of its top level into items (up to cap). */
static size_t split_items(const struct pytok_list *t, size_t a, size_t b, struct pv_arg *items, size_t cap)
{
	size_t n = 0;
	if (a >= b)
		return 0;
	int d = t->v[a].depth, in_lambda = 0;
	for (size_t k = a, st = a; k <= b && n < cap; k++) {
		if (k < b && t->v[k].depth == d && pytok_is_name(t, k, "lambda"))
			in_lambda = 1; /* `lambda a, b: ...`: its parameters' commas are its own */
		else if (k < b && in_lambda && t->v[k].depth == d && pytok_is_op(t, k, ":"))
			in_lambda = 0;
		if (k < b && (in_lambda || !(t->v[k].depth == d && pytok_is_op(t, k, ","))))
			continue;
		if (k > st) {
			struct pv_arg *x = &items[n++];
			memset(x, 0, sizeof(*x));
			x->a = st;
			x->b = k;
			if (pytok_is_op(t, st, "*") || pytok_is_op(t, st, "**")) {
				x->star = 1;
				x->a = st + 1;
			} else if (t->v[st].kind == PT_NAME && pytok_is_op(t, st + 1, "=")) {
				pytok_text(t, st, x->kw, sizeof(x->kw));
				x->a = st + 2;
			}
		}
		st = k + 1;
	}
	return n;
}

size_t pv_call_args(const struct pytok_list *t, size_t open, struct pv_arg *args, size_t cap)
{
	if (!pytok_is_op(t, open, "("))
		return 0;
	return split_items(t, open + 1, pytok_matching(t, open), args, cap);
}

const struct pv_arg *pv_arg_find(const struct pv_arg *args, size_t n, size_t pos, const char *kw)
{
	size_t p = 0;
	for (size_t i = 0; i < n; i++) {
		if (args[i].star)
			continue;
		if (args[i].kw[0]) {
			if (kw && !strcmp(args[i].kw, kw))
				return &args[i];
		} else if (p++ == pos) {
			return &args[i];
		}
	}
	return NULL;
}

/* A body's first statement when it is a string by itself. */
static size_t doc_at(const struct pyview *v, size_t body)
{
	return body < v->t->n && v->t->v[body].kind == PT_STRING && pytok_bare_string(v->t, body) ? body : PV_NONE;
}

size_t pv_func_doc(const struct pyview *v, int f)
{
	return f < 0 ? PV_NONE : doc_at(v, v->funcs[f].body);
}

size_t pv_class_doc(const struct pyview *v, int c)
{
	return c < 0 ? PV_NONE : doc_at(v, v->classes[c].body);
}

size_t pv_module_doc(const struct pyview *v)
{
	return doc_at(v, 0);
}

/* ---------- constant strings ---------- */

static int const_expr(const struct pyview *v, size_t a, size_t b, struct strbuf *sb, struct pv_const_info *info, int depth);

/* One argument's value as text: a constant string or a number as written. */
static int const_arg(const struct pyview *v, const struct pv_arg *x, struct strbuf *sb, struct pv_const_info *info,
		     int depth)
{
	const struct pytok_list *t = v->t;
	if (x->star)
		return -1;
	if (x->b == x->a + 1 && t->v[x->a].kind == PT_NUMBER) {
		strbuf_add(sb, t->src + t->v[x->a].off, t->v[x->a].len);
		return 0;
	}
	return const_expr(v, x->a, x->b, sb, info, depth + 1) < 0 ? -1 : 0;
}

/* str.format over constant arguments: {}, {0}, {name}; conversions and format specs are not applied. */
static int apply_format(const struct pyview *v, const char *tpl, const struct pv_arg *args, size_t n, struct strbuf *out,
			struct pv_const_info *info, int depth)
{
	size_t next = 0;
	for (const char *p = tpl; *p; p++) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			strbuf_addch(out, *p++);
			continue;
		}
		if (*p != '{') {
			strbuf_addch(out, *p);
			continue;
		}
		const char *e = strchr(p, '}');
		if (!e)
			return -1;
		char field[PV_NAME];
		snprintf(field, sizeof(field), "%.*s", (int)strcspn(p + 1, "!:}"), p + 1);
		const struct pv_arg *x = NULL;
		if (!field[0])
			x = pv_arg_find(args, n, next++, NULL);
		else if (field[0] >= '0' && field[0] <= '9')
			x = pv_arg_find(args, n, (size_t)atoi(field), NULL);
		else
			x = pv_arg_find(args, n, 99, field);
		if (!x || const_arg(v, x, out, info, depth) < 0)
			return -1;
		p = e;
	}
	return 0;
}

/* printf-style `%` over one constant or a tuple of them: %s, %d, %r with flags and widths. */
static int apply_percent(const struct pyview *v, const char *tpl, const struct pv_arg *args, size_t n, struct strbuf *out,
			 struct pv_const_info *info, int depth)
{
	size_t next = 0;
	for (const char *p = tpl; *p; p++) {
		if (*p != '%') {
			strbuf_addch(out, *p);
			continue;
		}
		if (p[1] == '%') {
			strbuf_addch(out, *++p);
			continue;
		}
		p++;
		while (*p && strchr("#0- +.0123456789", *p))
			p++;
		if (!*p || !strchr("sdirfxXeEgGc", *p) || next >= n || const_arg(v, &args[next++], out, info, depth) < 0)
			return -1;
	}
	return 0;
}

static void replace_all(struct strbuf *sb, const char *from, const char *to)
{
	struct strbuf out = STRBUF_INIT;
	size_t n = strlen(from);
	for (const char *p = sb->buf; *p;) {
		if (n && !strncmp(p, from, n)) {
			strbuf_addstr(&out, to);
			p += n;
		} else {
			strbuf_addch(&out, *p++);
		}
	}
	strbuf_release(sb);
	*sb = out;
}

/* A method of str applied to a constant: join, replace, format, strip and case changes. */
static int apply_method(const struct pyview *v, const char *m, size_t open, struct strbuf *val, struct pv_const_info *info,
			int depth)
{
	const struct pytok_list *t = v->t;
	struct pv_arg args[32];
	size_t n = pv_call_args(t, open, args, 32);
	struct strbuf out = STRBUF_INIT, x = STRBUF_INIT, y = STRBUF_INIT;
	int rc = 0;
	if (!strcmp(m, "join") && n == 1) {
		size_t la = args[0].a, lb = args[0].b;
		if (lb > la && (pytok_is_op(t, la, "[") || pytok_is_op(t, la, "(")) && pytok_matching(t, la) == lb - 1)
			la++, lb--;
		else
			rc = -1;
		struct pv_arg items[32];
		size_t ni = rc ? 0 : split_items(t, la, lb, items, 32);
		for (size_t j = 0; j < ni && !rc; j++) {
			if (j)
				strbuf_addstr(&out, val->buf);
			rc = items[j].kw[0] ? -1 : const_arg(v, &items[j], &out, info, depth);
		}
		info->pieces += (int)ni;
	} else if (!strcmp(m, "replace") && (n == 2 || n == 3)) {
		rc = const_arg(v, &args[0], &x, info, depth) || const_arg(v, &args[1], &y, info, depth) ? -1 : 0;
		strbuf_addstr(&out, val->buf);
		if (!rc)
			replace_all(&out, x.buf, y.buf);
		info->transformed = 1;
	} else if (!strcmp(m, "format")) {
		rc = apply_format(v, val->buf, args, n, &out, info, depth);
		info->transformed = 1;
	} else if (n == 0 && (!strcmp(m, "strip") || !strcmp(m, "lstrip") || !strcmp(m, "rstrip") ||
			      !strcmp(m, "upper") || !strcmp(m, "lower"))) {
		const char *p = val->buf, *e = val->buf + val->len;
		if (m[0] != 'r')
			while (*p == ' ' || *p == '\n' || *p == '\t')
				p++;
		if (m[0] != 'l')
			while (e > p && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t'))
				e--;
		if (m[0] == 'u' || (m[0] == 'l' && m[1] == 'o'))
			p = val->buf, e = val->buf + val->len;
		for (; p < e; p++)
			strbuf_addch(&out, m[0] == 'u' ? (*p >= 'a' && *p <= 'z' ? *p - 32 : *p)
					   : (m[0] == 'l' && m[1] == 'o') ? (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p) : *p);
		info->transformed = 1;
	} else {
		rc = -1;
	}
	strbuf_release(&x);
	strbuf_release(&y);
	strbuf_release(val);
	*val = out;
	info->pieces++;
	return rc;
}

/* One operand: a literal (with the literals implicitly joined to it), a parenthesised expression, or a
 * name bound once to a constant; then the str methods applied to it. *k moves past it. */
static int const_term(const struct pyview *v, size_t *k, size_t b, struct strbuf *sb, struct pv_const_info *info,
		      int depth)
{
	const struct pytok_list *t = v->t;
	struct strbuf val = STRBUF_INIT;
	size_t i = *k;
	int rc = 0;
	if (i >= b) {
		return -1;
	} else if (t->v[i].kind == PT_STRING) {
		size_t next;
		char *s = pytok_string_value(t, i, &next);
		if (!s)
			return -1;
		strbuf_addstr(&val, s);
		free(s);
		info->pieces += (int)(next - i);
		i = next;
	} else if (pytok_is_op(t, i, "(")) {
		size_t close = pytok_matching(t, i);
		rc = const_expr(v, i + 1, close, &val, info, depth + 1);
		i = close + 1;
	} else if (t->v[i].kind == PT_NAME && !pv_is_keyword(t, i) && !(i > 0 && pytok_is_op(t, i - 1, "."))) {
		char name[PV_NAME];
		size_t bind[2];
		pytok_text(t, i, name, sizeof(name));
		if (pv_lookup(v, name, i, bind, 2) != 1 ||
		    const_expr(v, v->binds[bind[0]].rhs, v->binds[bind[0]].rhs_end, &val, info, depth + 1) < 0)
			rc = -1;
		info->pieces += 2; /* a name is never the literal written where it is used */
		i++;
	} else {
		return -1;
	}
	while (!rc && i + 2 < b && pytok_is_op(t, i, ".") && t->v[i + 1].kind == PT_NAME && pytok_is_op(t, i + 2, "(")) {
		char m[PV_NAME];
		pytok_text(t, i + 1, m, sizeof(m));
		rc = apply_method(v, m, i + 2, &val, info, depth);
		i = pytok_matching(t, i + 2) + 1;
	}
	if (!rc && pytok_is_op(t, i, "%") && i + 1 < b) {
		/* "fmt" % x or "fmt" % (x, y) */
		struct pv_arg args[16];
		size_t n, j = i + 1;
		if (pytok_is_op(t, j, "(")) {
			n = pv_call_args(t, j, args, 16);
			i = pytok_matching(t, j) + 1;
		} else {
			struct strbuf one = STRBUF_INIT;
			size_t start = j;
			rc = const_term(v, &j, b, &one, info, depth + 1);
			strbuf_release(&one);
			memset(&args[0], 0, sizeof(args[0]));
			args[0].a = start;
			args[0].b = j;
			n = 1;
			i = j;
		}
		struct strbuf out = STRBUF_INIT;
		if (!rc)
			rc = apply_percent(v, val.buf, args, n, &out, info, depth);
		strbuf_release(&val);
		val = out;
		info->transformed = 1;
	}
	if (!rc)
		strbuf_add(sb, val.buf, val.len);
	strbuf_release(&val);
	*k = i;
	return rc;
}

/* Operands joined with `+`; the whole range must be used. */
static int const_expr(const struct pyview *v, size_t a, size_t b, struct strbuf *sb, struct pv_const_info *info, int depth)
{
	if (depth > 8 || a >= b)
		return -1;
	for (size_t k = a; k < b;) {
		if (k > a && !pytok_is_op(v->t, k++, "+"))
			return -1;
		if (const_term(v, &k, b, sb, info, depth) < 0)
			return -1;
	}
	return 0;
}

char *pv_const_string(const struct pyview *v, size_t a, size_t b, struct pv_const_info *info)
{
	struct strbuf sb = STRBUF_INIT;
	struct pv_const_info local = { 0 };
	if (const_expr(v, a, b, &sb, &local, 0) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	local.assembled = local.pieces > 1 || local.transformed;
	if (info)
		*info = local;
	return strbuf_detach(&sb, NULL);
}
