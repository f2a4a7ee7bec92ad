/* pyview.c - builds the symbol view of a tokenised module in one pass over its statements: blocks
 * from INDENT/DEDENT, functions and classes with their ranges, bindings, imports and except handlers. */
#include "pyview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

/* Per-token statement marks, owned by the view while it is built. */
#define ST_START 1u  /* the first token of a simple statement or compound header */
#define ST_COLON 2u  /* the colon that ends a compound statement's header */

static const char *const compound[] = { "def", "class", "if", "elif", "else", "for", "while", "try", "except",
					"finally", "with", "async", NULL };

/* A `global` or `nonlocal` statement's name in a function: its bindings there are the module's (or
 * the enclosing function's). */
struct declared {
	int func, nonlocal;
	char name[PV_NAME];
};

struct builder {
	struct pyview *v;
	const struct pytok_list *t;
	unsigned char *st;
	struct declared *decl;
	size_t ndecl;
};

static int tok_in(const struct pytok_list *t, size_t i, const char *const *words)
{
	for (; *words; words++)
		if (pytok_is_name(t, i, *words))
			return 1;
	return 0;
}

static int structural(const struct pytok *k)
{
	return k->kind == PT_NEWLINE || k->kind == PT_INDENT || k->kind == PT_DEDENT || k->kind == PT_END;
}

/* The header colon of the compound statement starting at s. */
static size_t header_colon(const struct pytok_list *t, size_t s)
{
	for (size_t k = s; k < t->n && t->v[k].kind != PT_NEWLINE && t->v[k].kind != PT_END; k++)
		if (t->v[k].depth == 0 && !(t->v[k].flags & PTF_FEXPR) && pytok_is_op(t, k, ":"))
			return k;
	return PV_NONE;
}

/* Marks statement starts and header colons. */
static void mark_statements(struct builder *b)
{
	const struct pytok_list *t = b->t;
	int expect = 1;
	for (size_t i = 0; i < t->n; i++) {
		const struct pytok *k = &t->v[i];
		if (structural(k)) {
			expect = 1;
			continue;
		}
		if (k->depth != 0 || (k->flags & PTF_FEXPR))
			continue;
		if (expect) {
			b->st[i] |= ST_START;
			expect = 0;
			if (tok_in(t, i, compound)) {
				size_t c = header_colon(t, i);
				if (c != PV_NONE)
					b->st[c] |= ST_COLON; /* a simple suite after it starts a statement */
			}
		}
		if (pytok_is_op(t, i, ";") || (b->st[i] & ST_COLON))
			expect = 1;
	}
}

int pv_stmt_start(const struct pyview *v, size_t i)
{
	return v->stmt && i < v->t->n && (v->stmt[i] & ST_START);
}

size_t pv_stmt_end(const struct pyview *v, size_t i)
{
	const struct pytok_list *t = v->t;
	for (size_t k = i; k < t->n; k++) {
		if (t->v[k].kind == PT_NEWLINE || t->v[k].kind == PT_END)
			return k;
		if (t->v[k].depth == 0 && !(t->v[k].flags & PTF_FEXPR) &&
		    (pytok_is_op(t, k, ";") || (v->stmt && (v->stmt[k] & ST_COLON))))
			return k;
	}
	return t->n;
}

/* The body after header colon c: an indented block, or the rest of the line. */
static void block_after(const struct pytok_list *t, size_t c, size_t *body, size_t *end)
{
	if (c + 2 < t->n && t->v[c + 1].kind == PT_NEWLINE && t->v[c + 2].kind == PT_INDENT) {
		int level = 0;
		*body = c + 3;
		for (size_t k = c + 2; k < t->n; k++) {
			if (t->v[k].kind == PT_INDENT)
				level++;
			else if (t->v[k].kind == PT_DEDENT && --level == 0) {
				*end = k;
				return;
			}
		}
		*end = t->n;
		return;
	}
	*body = c + 1;
	for (*end = c + 1; *end < t->n && t->v[*end].kind != PT_NEWLINE && t->v[*end].kind != PT_END; (*end)++)
		;
}

/* ---------- what is open where ---------- */

struct open_block {
	int is_class, index;
	size_t end;
};

struct scope {
	struct open_block *v;
	size_t n, alloc;
};

static int cur_func(const struct scope *s)
{
	for (size_t k = s->n; k-- > 0;)
		if (!s->v[k].is_class)
			return s->v[k].index;
	return -1;
}

static int cur_class_body(const struct scope *s)
{
	return s->n && s->v[s->n - 1].is_class ? s->v[s->n - 1].index : -1;
}

static void push_block(struct scope *s, int is_class, int index, size_t end)
{
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 16;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	s->v[s->n++] = (struct open_block){ is_class, index, end };
}

/* ---------- records ---------- */

#define GROW(arr, n) ((arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr))), &(arr)[(n)++])

static void add_bind(struct builder *b, const struct scope *s, size_t at, int self_attr, size_t rhs, size_t rhs_end)
{
	struct pyview *v = b->v;
	if (rhs >= rhs_end)
		return;
	struct pv_bind *x = GROW(v->binds, v->nbinds);
	memset(x, 0, sizeof(*x));
	pytok_text(b->t, at, x->name, sizeof(x->name));
	x->at = at;
	x->rhs = rhs;
	x->rhs_end = rhs_end;
	x->func = cur_func(s);
	x->self_attr = self_attr;
	x->cls = -1;
	int body_cls = cur_class_body(s);
	for (size_t k = 0; k < b->ndecl && !self_attr && body_cls < 0; k++)
		if (b->decl[k].func == x->func && !strcmp(b->decl[k].name, x->name)) {
			x->func = b->decl[k].nonlocal ? v->funcs[x->func].parent : -1;
			break;
		}
	if (body_cls >= 0 && !self_attr) {
		x->self_attr = 1; /* a class attribute, reached as self.name */
		x->cls = body_cls;
	} else if (self_attr && x->func >= 0) {
		int f = x->func;
		while (f >= 0 && v->funcs[f].cls < 0)
			f = v->funcs[f].parent;
		x->cls = f >= 0 ? v->funcs[f].cls : -1;
	}
}

/* A self attribute bound under `name`, or under "?" when the name is computed at run time. */
static void add_named(struct builder *b, const struct scope *s, size_t at, size_t rhs, size_t rhs_end, const char *name)
{
	size_t n = b->v->nbinds;
	add_bind(b, s, at, 1, rhs, rhs_end);
	if (b->v->nbinds > n)
		snprintf(b->v->binds[n].name, PV_NAME, "%s", name && strlen(name) < PV_NAME ? name : "?");
}

/* The constant string the tokens [a, b) are, or NULL. The caller frees it. */
static char *literal(const struct pytok_list *t, size_t a, size_t b)
{
	size_t next;
	char *v = a < b ? pytok_string_value(t, a, &next) : NULL;
	if (v && next != b) {
		free(v);
		v = NULL;
	}
	return v;
}

/* The end of the subscripts from x on (`[i][j]`), or x when there are none. */
static size_t subscripts(const struct pytok_list *t, size_t x, size_t y)
{
	while (x < y && pytok_is_op(t, x, "["))
		x = pytok_matching(t, x) + 1;
	return x;
}

/* A store into an item: `x[k] = e` and `self.x[k] = e` bind x to e (the container holds e, as after
 * x.append(e)); `self.__dict__[k] = e` and `vars(self)[k] = e` bind the attribute k, whatever spells
 * it. Other targets bind nothing. */
static void item_target(struct builder *b, const struct scope *s, size_t x, size_t y, size_t r0, size_t r1)
{
	const struct pytok_list *t = b->t;
	size_t key = PV_NONE;
	if (pytok_is_name(t, x, "vars") && pytok_is_op(t, x + 1, "(") && pytok_is_name(t, x + 2, "self") &&
	    pytok_is_op(t, x + 3, ")") && pytok_is_op(t, x + 4, "[") && subscripts(t, x + 4, y) == y) {
		key = x + 4;
	} else if (pytok_is_name(t, x, "self") && pytok_is_op(t, x + 1, ".") && pytok_is_name(t, x + 2, "__dict__") &&
		   pytok_is_op(t, x + 3, "[") && subscripts(t, x + 3, y) == y) {
		key = x + 3;
	} else if (pytok_is_name(t, x, "self") && pytok_is_op(t, x + 1, ".") && t->v[x + 2].kind == PT_NAME &&
		   pytok_is_op(t, x + 3, "[") && subscripts(t, x + 3, y) == y) {
		add_bind(b, s, x + 2, 1, r0, r1);
		return;
	} else if (t->v[x].kind == PT_NAME && pytok_is_op(t, x + 1, "[") && subscripts(t, x + 1, y) == y) {
		add_bind(b, s, x, 0, r0, r1);
		return;
	} else {
		return;
	}
	char *name = literal(t, key + 1, pytok_matching(t, key));
	add_named(b, s, key + 1, r0, r1, name);
	free(name);
}

/* Binds each name of a target list [a, b) ("x", "self.x", "a, b", "(a, b)", "[a, b]", "x: int",
 * "x[k]") to rhs. When the right side has as many top-level items as the target, items pair up. */
static void bind_targets(struct builder *b, const struct scope *s, size_t a, size_t bnd, size_t rhs, size_t rhs_end)
{
	const struct pytok_list *t = b->t;
	int d = a < t->n ? t->v[a].depth : 0;
	if (a < bnd && (pytok_is_op(t, a, "(") || pytok_is_op(t, a, "[")) && pytok_matching(t, a) == bnd - 1) {
		bind_targets(b, s, a + 1, bnd - 1, rhs, rhs_end);
		return;
	}
	size_t items[32][2], nitems = 0, ritems[32][2], nr = 0;
	for (size_t k = a, st = a; k <= bnd && nitems < 32; k++)
		if (k == bnd || (t->v[k].depth == d && pytok_is_op(t, k, ","))) {
			if (k > st)
				items[nitems][0] = st, items[nitems++][1] = k;
			st = k + 1;
		}
	int rd = rhs < t->n ? t->v[rhs].depth : 0;
	for (size_t k = rhs, st = rhs; k <= rhs_end && nr < 32; k++)
		if (k == rhs_end || (t->v[k].depth == rd && pytok_is_op(t, k, ","))) {
			if (k > st)
				ritems[nr][0] = st, ritems[nr++][1] = k;
			st = k + 1;
		}
	for (size_t j = 0; j < nitems; j++) {
		size_t x = items[j][0], y = items[j][1];
		size_t r0 = nitems > 1 && nr == nitems ? ritems[j][0] : rhs, r1 = nitems > 1 && nr == nitems ? ritems[j][1] : rhs_end;
		if (pytok_is_op(t, x, "*"))
			x++;
		for (size_t k = x; k < y; k++)
			if (t->v[k].depth == d && pytok_is_op(t, k, ":"))
				y = k; /* an annotation */
		if (y == x + 1 && t->v[x].kind == PT_NAME)
			add_bind(b, s, x, 0, r0, r1);
		else if (y == x + 3 && pytok_is_name(t, x, "self") && pytok_is_op(t, x + 1, ".") && t->v[x + 2].kind == PT_NAME)
			add_bind(b, s, x + 2, 1, r0, r1);
		else if (x < y && (pytok_is_op(t, x, "(") || pytok_is_op(t, x, "[")) && pytok_matching(t, x) == y - 1)
			bind_targets(b, s, x + 1, y - 1, r0, r1);
		else
			item_target(b, s, x, y, r0, r1);
	}
}

static const char *const augops[] = { "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "|=", "&=", "^=", ">>=", "<<=", NULL };
static const char *const grow_methods[] = { "append", "extend", "insert", "add", "update", "setdefault", "add_module",
					    "register_module", NULL };

static void simple_statement(struct builder *b, const struct scope *s, size_t a, size_t e)
{
	const struct pytok_list *t = b->t;
	size_t eqs[16], neq = 0;
	if ((pytok_is_name(t, a, "global") || pytok_is_name(t, a, "nonlocal")) && cur_func(s) >= 0) {
		for (size_t k = a + 1; k < e; k++)
			if (t->v[k].kind == PT_NAME) {
				struct declared *d = GROW(b->decl, b->ndecl);
				d->func = cur_func(s);
				d->nonlocal = pytok_is_name(t, a, "nonlocal");
				pytok_text(t, k, d->name, sizeof(d->name));
			}
		return;
	}
	for (size_t k = a; k < e; k++) {
		if (t->v[k].depth != 0 || (t->v[k].flags & PTF_FEXPR))
			continue;
		if (pytok_is_op(t, k, "=") && neq < 16)
			eqs[neq++] = k;
		for (const char *const *o = augops; *o && !neq; o++)
			if (pytok_is_op(t, k, *o)) {
				bind_targets(b, s, a, k, k + 1, e);
				return;
			}
	}
	if (neq) {
		size_t from = a;
		for (size_t j = 0; j < neq; j++) {
			bind_targets(b, s, from, eqs[j], eqs[neq - 1] + 1, e);
			from = eqs[j] + 1;
		}
		return;
	}
	/* x.append(e), self.layers.append(e): the container now holds e */
	size_t k = a;
	int self_attr = 0;
	if (pytok_is_name(t, k, "self") && pytok_is_op(t, k + 1, ".")) {
		k += 2;
		self_attr = 1;
	}
	if (t->v[k].kind == PT_NAME && pytok_is_op(t, k + 1, ".") && tok_in(t, k + 2, grow_methods) &&
	    pytok_is_op(t, k + 3, "(")) {
		add_bind(b, s, k, self_attr, k + 4, pytok_matching(t, k + 3));
		return;
	}
	/* setattr(self, k, e), object.__setattr__(self, k, e), self.__setattr__(k, e), super().__setattr__(k, e):
	 * the attribute k, or one whose name the file does not show */
	size_t open = PV_NONE;
	int recv = 1;
	if (pytok_is_name(t, a, "setattr") && pytok_is_op(t, a + 1, "("))
		open = a + 1;
	else if (pytok_is_name(t, a, "object") && pytok_is_op(t, a + 1, ".") && pytok_is_name(t, a + 2, "__setattr__") &&
		 pytok_is_op(t, a + 3, "("))
		open = a + 3;
	else if (pytok_is_name(t, a, "self") && pytok_is_op(t, a + 1, ".") && pytok_is_name(t, a + 2, "__setattr__") &&
		 pytok_is_op(t, a + 3, "("))
		open = a + 3, recv = 0;
	else if (pytok_is_name(t, a, "super") && pytok_is_op(t, a + 1, "(") && pytok_is_op(t, a + 2, ")") &&
		 pytok_is_op(t, a + 3, ".") && pytok_is_name(t, a + 4, "__setattr__") && pytok_is_op(t, a + 5, "("))
		open = a + 5, recv = 0;
	struct pv_arg args[4];
	size_t n = open == PV_NONE ? 0 : pv_call_args(t, open, args, 4);
	if (n != (size_t)(2 + recv) || (recv && !(args[0].b == args[0].a + 1 && pytok_is_name(t, args[0].a, "self"))))
		return;
	const struct pv_arg *key = &args[recv], *val = &args[recv + 1];
	char *name = literal(t, key->a, key->b);
	add_named(b, s, key->a, val->a, val->b, name);
	free(name);
}

static void dotted(const struct pytok_list *t, size_t *k, size_t e, char *out, size_t cap)
{
	out[0] = '\0';
	while (*k < e && pytok_is_op(t, *k, "."))
		(*k)++, strncat(out, ".", cap - strlen(out) - 1);
	while (*k < e && t->v[*k].kind == PT_NAME) {
		char part[PV_NAME];
		pytok_text(t, *k, part, sizeof(part));
		strncat(out, part, cap - strlen(out) - 1);
		(*k)++;
		if (*k < e && pytok_is_op(t, *k, ".") && *k + 1 < e && t->v[*k + 1].kind == PT_NAME) {
			strncat(out, ".", cap - strlen(out) - 1);
			(*k)++;
		} else {
			break;
		}
	}
}

static void add_import(struct pyview *v, const char *name, const char *path, size_t at)
{
	struct pv_import *m = GROW(v->imports, v->nimports);
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->at = at;
}

static void import_statement(struct builder *b, size_t a, size_t e)
{
	const struct pytok_list *t = b->t;
	char mod[PV_PATH], name[PV_PATH], alias[PV_NAME];
	if (pytok_is_name(t, a, "import")) {
		for (size_t k = a + 1; k < e;) {
			size_t at = k;
			dotted(t, &k, e, mod, sizeof(mod));
			if (pytok_is_name(t, k, "as") && k + 1 < e) {
				pytok_text(t, k + 1, alias, sizeof(alias));
				add_import(b->v, alias, mod, k + 1);
				k += 2;
			} else if (mod[0]) {
				char first[PV_NAME];
				snprintf(first, sizeof(first), "%.*s", (int)strcspn(mod, "."), mod);
				add_import(b->v, first, first, at);
			}
			while (k < e && !pytok_is_op(t, k, ","))
				k++;
			k++;
		}
		return;
	}
	size_t k = a + 1;
	dotted(t, &k, e, mod, sizeof(mod));
	if (!pytok_is_name(t, k, "import"))
		return;
	for (k++; k < e; k++) {
		if (pytok_is_op(t, k, "*")) {
			add_import(b->v, "*", mod, k);
			continue;
		}
		if (t->v[k].kind != PT_NAME)
			continue;
		pytok_text(t, k, alias, sizeof(alias));
		snprintf(name, sizeof(name), "%s%s%s", mod, mod[0] && mod[strlen(mod) - 1] != '.' ? "." : "", alias);
		size_t at = k;
		if (pytok_is_name(t, k + 1, "as") && k + 2 < e) {
			pytok_text(t, k + 2, alias, sizeof(alias));
			at = k + 2;
			k += 2;
		}
		add_import(b->v, alias, name, at);
	}
}

/* `for a, b in e:` and `with e as x, f as y:` bind names too. */
static void header_bindings(struct builder *b, const struct scope *s, size_t a, size_t colon)
{
	const struct pytok_list *t = b->t;
	size_t k = a + (pytok_is_name(t, a, "async") ? 1 : 0);
	if (pytok_is_name(t, k, "for")) {
		for (size_t j = k + 1; j < colon; j++)
			if (t->v[j].depth == 0 && pytok_is_name(t, j, "in")) {
				bind_targets(b, s, k + 1, j, j + 1, colon);
				break;
			}
	} else if (pytok_is_name(t, k, "with")) {
		size_t item = k + 1;
		for (size_t j = k + 1; j <= colon; j++) {
			if (j < colon && !(t->v[j].depth == 0 && pytok_is_op(t, j, ",")))
				continue;
			for (size_t x = item; x < j; x++)
				if (t->v[x].depth == 0 && pytok_is_name(t, x, "as"))
					bind_targets(b, s, x + 1, j, item, x);
			item = j + 1;
		}
	}
}

static void function_header(struct builder *b, struct scope *s, size_t a, size_t colon)
{
	const struct pytok_list *t = b->t;
	struct pyview *v = b->v;
	size_t def = a + (pytok_is_name(t, a, "async") ? 1 : 0);
	struct pv_func *f = GROW(v->funcs, v->nfuncs);
	memset(f, 0, sizeof(*f));
	pytok_text(t, def + 1, f->name, sizeof(f->name));
	f->def = def;
	f->deco = a;
	/* decorators: the statements just before it that start with '@' */
	for (size_t k = a; k > 0;) {
		size_t p = k - 1;
		if (t->v[p].kind != PT_NEWLINE)
			break;
		while (p > 0 && !(b->st[p] & ST_START))
			p--;
		if (!pytok_is_op(t, p, "@"))
			break;
		f->deco = k = p;
	}
	f->params = def + 3;
	f->params_end = pytok_is_op(t, def + 2, "(") ? pytok_matching(t, def + 2) : def + 3;
	block_after(t, colon, &f->body, &f->end);
	f->cls = cur_class_body(s);
	f->parent = cur_func(s);
	push_block(s, 0, (int)(v->nfuncs - 1), f->end);
}

static void class_header(struct builder *b, struct scope *s, size_t a, size_t colon)
{
	const struct pytok_list *t = b->t;
	struct pyview *v = b->v;
	struct pv_class *c = GROW(v->classes, v->nclasses);
	memset(c, 0, sizeof(*c));
	pytok_text(t, a + 1, c->name, sizeof(c->name));
	c->at = a;
	c->bases = c->bases_end = a + 2;
	if (pytok_is_op(t, a + 2, "(")) {
		c->bases = a + 3;
		c->bases_end = pytok_matching(t, a + 2);
	}
	block_after(t, colon, &c->body, &c->end);
	c->parent_func = cur_func(s);
	if (!strcmp(c->name, "ModelNew") && v->model_new < 0)
		v->model_new = (int)(v->nclasses - 1);
	push_block(s, 1, (int)(v->nclasses - 1), c->end);
}

void pyview_build(const struct pytok_list *t, struct pyview *v)
{
	struct builder b = { v, t, xcalloc(t->n + 1, 1), NULL, 0 };
	struct scope s = { 0 };
	memset(v, 0, sizeof(*v));
	v->t = t;
	v->model_new = -1;
	mark_statements(&b);
	for (size_t i = 0; i < t->n; i++) {
		while (s.n && i >= s.v[s.n - 1].end)
			s.n--;
		if (!(b.st[i] & ST_START))
			continue;
		size_t colon = tok_in(t, i, compound) ? header_colon(t, i) : PV_NONE;
		size_t kw = i + (pytok_is_name(t, i, "async") ? 1 : 0);
		if (colon != PV_NONE && pytok_is_name(t, kw, "def")) {
			function_header(&b, &s, i, colon);
		} else if (colon != PV_NONE && pytok_is_name(t, i, "class")) {
			class_header(&b, &s, i, colon);
		} else if (colon != PV_NONE && pytok_is_name(t, i, "except")) {
			struct pv_handler *h = GROW(v->handlers, v->nhandlers);
			h->at = i;
			block_after(t, colon, &h->body, &h->end);
		} else if (colon != PV_NONE) {
			header_bindings(&b, &s, i, colon);
		} else if (pytok_is_name(t, i, "import") || pytok_is_name(t, i, "from")) {
			import_statement(&b, i, pv_stmt_end(v, i));
		} else if (!pytok_is_op(t, i, "@")) {
			simple_statement(&b, &s, i, pv_stmt_end(v, i));
		}
	}
	v->stmt = b.st;
	free(s.v);
	free(b.decl);
	/* GPU code written in Python (@triton.jit, @numba.cuda.jit): the interpreter never runs its body */
	for (size_t f = 0; f < v->nfuncs; f++)
		for (size_t i = v->funcs[f].deco; i < v->funcs[f].def; i++) {
			struct pv_ref r;
			if (pytok_is_op(t, i, "@") && pv_ref_at(v, i + 1, &r) &&
			    (path_under(r.path, "triton") || path_under(r.path, "numba.cuda.jit") || path_under(r.path, "cupy")))
				v->funcs[f].triton = 1;
		}
}

void pyview_release(struct pyview *v)
{
	free(v->funcs);
	free(v->classes);
	free(v->binds);
	free(v->imports);
	free(v->handlers);
	free(v->stmt);
	memset(v, 0, sizeof(*v));
}
