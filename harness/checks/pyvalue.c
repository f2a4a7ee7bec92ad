/* pyvalue.c - the value lattice of pyvalue.h: an expression's value is the join of what its names are
 * bound to (every binding, memoised), what its attributes, subscripts and calls give, and what its
 * displays hold. A torch op taken as a value taints whatever holds it: a container, a descriptor, a
 * partial, an iterator, a class attribute, a lambda's default, a function's return value. The lookup
 * doors (__getattribute__, __dict__, vars, __mro__, getattr by a computed name) on a tensor or torch
 * object give a tainted value too: they reach attributes no name in the file spells. */
#include "pyvalue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

/* How deep evaluation nests (names through names, calls through returns); deeper counts as tainted,
 * so that a chain built only to be long hides nothing. */
#define MAX_DEPTH 96

enum { MEMO_NONE, MEMO_BUSY, MEMO_DONE };

struct memo {
	unsigned char *state;
	struct pval *val;
};

struct pvals {
	const struct pyview *v;
	const struct pytok_list *t;
	struct memo binds, rets, attrs;
	int depth;
};

/* Builtins whose result is a plain Python value whatever their arguments hold. */
static const char *const plain_builtins[] = { "len", "int", "float", "bool", "str", "repr", "format", "id", "hash",
					      "isinstance", "issubclass", "hasattr", "callable", "print", "ord", "chr",
					      "bin", "hex", "oct", "range", "slice", "input", "setattr", "delattr",
					      "divmod", "ascii", "bytes", "bytearray", "complex", "open", "dir", "any",
					      "all", "object", "super", "exec", "eval", "compile", "__import__",
					      "__name__", "__file__", "__doc__", "__spec__", "__package__", "None",
					      "True", "False", "NotImplemented", "Ellipsis", "help", NULL };
/* Builtins whose result holds what their arguments hold (a container, an iterator, a descriptor). */
static const char *const carrier_builtins[] = { "iter", "next", "list", "tuple", "set", "frozenset", "dict",
						"reversed", "sorted", "map", "filter", "zip", "enumerate",
						"staticmethod", "classmethod", "property", "min", "max", "sum", "abs",
						"round", "pow", "memoryview", "aiter", "anext", NULL };
/* Builtins whose result is a namespace: any of its names. */
static const char *const namespace_builtins[] = { "globals", "locals", "vars", "__builtins__", NULL };
/* Names of a lookup by name: through them any attribute is reached, whatever the file spells. */
static const char *const doors[] = { "__dict__", "__getattribute__", "__getattr__", "?", NULL };
/* Names that lead from an object to its class and the classes above it. */
static const char *const class_chain[] = { "__class__", "__base__", "__bases__", "__mro__", "__orig_class__", NULL };
/* torch functions that return a callable that computes: what they return is a torch op too. */
static const char *const op_makers[] = { "torch.compile", "torch.jit", "torch.func", "torch.vmap", "torch._dynamo",
					 "torch.compiler", "torch.fx", NULL };
/* nn classes that only hold other modules: what they are built from is what they hold. */
static const char *const nn_holders[] = { "torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential",
					  "torch.nn.ParameterList", "torch.nn.ParameterDict", NULL };

static int is_exception_name(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && !strcmp(name + n - 5, "Error")) || (n > 9 && !strcmp(name + n - 9, "Exception")) ||
	       (n > 7 && !strcmp(name + n - 7, "Warning"));
}

/* ---------- the lattice ---------- */

/* Adds x to a set; 0 when the set is full. */
static int add_index(int *set, int *n, int x)
{
	for (int i = 0; i < *n; i++)
		if (set[i] == x)
			return 1;
	if (*n >= VAL_SET)
		return 0;
	set[(*n)++] = x;
	return 1;
}

static int add_lambda(struct pval *v, size_t lam)
{
	for (int i = 0; i < v->nlam; i++)
		if (v->lam[i] == lam)
			return 1;
	if (v->nlam >= VAL_SET)
		return 0;
	v->lam[v->nlam++] = lam;
	return 1;
}

static void held(struct pval *v, const char *why, size_t at);

static void join(struct pval *a, const struct pval *b)
{
	if (!a->path[0] && b->path[0])
		snprintf(a->path, sizeof(a->path), "%s", b->path);
	if (!a->builtin[0] && b->builtin[0])
		snprintf(a->builtin, sizeof(a->builtin), "%s", b->builtin);
	if (b->f & VAL_TAINT) {
		a->direct |= b->direct;
		for (int i = 0; i < b->nvia; i++) {
			int k = 0;
			while (k < a->nvia && a->via[k] != b->via[i])
				k++;
			if (k < a->nvia)
				continue;
			if (a->nvia < VAL_SET)
				a->via[a->nvia++] = b->via[i];
			else
				a->direct = 1; /* too many to tell apart: report where it is used */
		}
	}
	if (!a->why[0] && b->why[0]) {
		snprintf(a->why, sizeof(a->why), "%s", b->why);
		a->why_at = b->why_at;
	}
	a->unbound |= b->unbound;
	int all = 1;
	for (int i = 0; i < b->ninst; i++)
		all &= add_index(a->inst, &a->ninst, b->inst[i]);
	for (int i = 0; i < b->ncls; i++)
		all &= add_index(a->cls, &a->ncls, b->cls[i]);
	for (int i = 0; i < b->nfunc; i++)
		all &= add_index(a->func, &a->nfunc, b->func[i]);
	for (int i = 0; i < b->nlam; i++)
		all &= add_lambda(a, b->lam[i]);
	a->f |= b->f;
	if (!all) /* what is not followed when called is not known to be the candidate's own */
		held(a, "a value that may be any of more functions and lambdas than the checks follow", b->why_at);
}

static void set_why(struct pval *v, const char *why, size_t at)
{
	v->direct = 1;
	if (!v->why[0]) {
		snprintf(v->why, sizeof(v->why), "%s", why);
		v->why_at = at;
	}
}

static void held(struct pval *v, const char *why, size_t at)
{
	v->f |= VAL_HELD;
	set_why(v, why, at);
}

/* What a container, a descriptor or any carrier made from v holds: v itself, an op held rather than
 * being one. */
static void carried(struct pval *out, const struct pval *v)
{
	struct pval c = *v;
	if (c.f & VAL_OP) {
		c.f = (c.f & ~VAL_OP) | VAL_HELD;
		if (!(c.f & VAL_TORCH) && !(c.f & VAL_MODULE))
			c.path[0] = '\0';
	}
	join(out, &c);
}

static void torch_value(struct pval *v, const char *path, size_t at)
{
	v->f |= VAL_TORCH;
	snprintf(v->path, sizeof(v->path), "%s", path);
	if (torch_work(path)) {
		v->f |= VAL_OP;
		set_why(v, path, at);
	}
}

/* ---------- memo ---------- */

static void memo_init(struct memo *m, size_t n)
{
	m->state = xcalloc(n + 1, 1);
	m->val = xcalloc(n + 1, sizeof(*m->val));
}

static void memo_release(struct memo *m)
{
	free(m->state);
	free(m->val);
}

struct pvals *pvals_new(const struct pyview *v)
{
	struct pvals *x = xcalloc(1, sizeof(*x));
	x->v = v;
	x->t = v->t;
	memo_init(&x->binds, v->nbinds);
	memo_init(&x->rets, v->nfuncs);
	memo_init(&x->attrs, v->nclasses);
	return x;
}

void pvals_free(struct pvals *x)
{
	if (!x)
		return;
	memo_release(&x->binds);
	memo_release(&x->rets);
	memo_release(&x->attrs);
	free(x);
}

static void eval_expr(struct pvals *x, size_t a, size_t b, struct pval *out);
static size_t eval_primary(struct pvals *x, size_t i, size_t b, struct pval *out);
static void attr(struct pvals *x, const struct pval *v, const char *name, int called, size_t at, struct pval *out);

/* Whether evaluation may go one level deeper; when it may not, out is tainted. */
static int enter(struct pvals *x, struct pval *out, size_t at)
{
	if (x->depth >= MAX_DEPTH) {
		held(out, "a value reached through more names than the checks follow", at);
		return 0;
	}
	x->depth++;
	return 1;
}

static void bind_value(struct pvals *x, size_t b, struct pval *out)
{
	if (x->binds.state[b] == MEMO_DONE) {
		join(out, &x->binds.val[b]);
		return;
	}
	if (x->binds.state[b] == MEMO_BUSY)
		return; /* a cycle: what else reaches the name is joined on the way out */
	struct pval v;
	memset(&v, 0, sizeof(v));
	if (enter(x, &v, x->v->binds[b].at)) {
		x->binds.state[b] = MEMO_BUSY;
		eval_expr(x, x->v->binds[b].rhs, x->v->binds[b].rhs_end, &v);
		x->depth--;
	}
	x->binds.val[b] = v;
	x->binds.state[b] = MEMO_DONE;
	join(out, &v);
}

/* What function f returns or yields. */
static void returns(struct pvals *x, int f, struct pval *out)
{
	if (x->rets.state[f] == MEMO_DONE) {
		join(out, &x->rets.val[f]);
		return;
	}
	if (x->rets.state[f] == MEMO_BUSY)
		return;
	const struct pv_func *fn = &x->v->funcs[f];
	struct pval v;
	memset(&v, 0, sizeof(v));
	if (enter(x, &v, fn->def)) {
		x->rets.state[f] = MEMO_BUSY;
		for (size_t i = fn->body; i < fn->end; i++)
			if ((pytok_is_name(x->t, i, "return") || pytok_is_name(x->t, i, "yield")) && pv_func_at(x->v, i) == (int)f) {
				size_t a = i + 1 + pytok_is_name(x->t, i + 1, "from");
				eval_expr(x, a, pv_stmt_end(x->v, i) < fn->end ? pv_stmt_end(x->v, i) : fn->end, &v);
			}
		x->depth--;
	}
	x->rets.val[f] = v;
	x->rets.state[f] = MEMO_DONE;
	join(out, &v);
}

/* The attributes of class c's instances with a name the file does not show: stored through
 * self.__dict__, setattr with a computed name, object.__setattr__ (pyview binds them as "?" or
 * "__dict__"). */
static void unnamed_attrs(struct pvals *x, int c, struct pval *out)
{
	size_t b[16], n = pv_lookup_attr(x->v, c, "?", b, 16);
	for (size_t j = 0; j < n; j++)
		bind_value(x, b[j], out);
	n = pv_lookup_attr(x->v, c, "__dict__", b, 16);
	for (size_t j = 0; j < n; j++)
		bind_value(x, b[j], out);
}

/* Every attribute of class c: what a lookup by a name the file does not show may return. */
static void all_attrs(struct pvals *x, int c, struct pval *out)
{
	const struct pyview *v = x->v;
	if (x->attrs.state[c] == MEMO_DONE) {
		join(out, &x->attrs.val[c]);
		return;
	}
	if (x->attrs.state[c] == MEMO_BUSY)
		return;
	struct pval acc;
	memset(&acc, 0, sizeof(acc));
	if (enter(x, &acc, v->classes[c].at)) {
		x->attrs.state[c] = MEMO_BUSY;
		int classes[9] = { c };
		size_t nc = 1 + pv_local_bases(v, c, classes + 1, 8);
		for (size_t b = 0; b < v->nbinds; b++)
			for (size_t k = 0; k < nc; k++)
				if (v->binds[b].self_attr && v->binds[b].cls == classes[k])
					bind_value(x, b, &acc);
		/* methods too, but not the dunders nn.Module's machinery calls, which no lookup is needed for */
		for (size_t f = 0; f < v->nfuncs; f++)
			for (size_t k = 0; k < nc; k++)
				if (v->funcs[f].cls == classes[k] && strncmp(v->funcs[f].name, "__", 2)) {
					acc.f |= VAL_FUNC;
					add_index(acc.func, &acc.nfunc, (int)f);
				}
		x->depth--;
	}
	x->attrs.val[c] = acc;
	x->attrs.state[c] = MEMO_DONE;
	join(out, &acc);
}

/* Function f's parameter `name` (innermost first): its default, and anything a caller passes. */
static void param_value(struct pvals *x, const char *name, size_t at, struct pval *out)
{
	const struct pytok_list *t = x->t;
	int f = pv_func_at(x->v, at);
	while (f >= 0 && !pv_is_param(x->v, f, name))
		f = x->v->funcs[f].parent;
	out->f |= VAL_TENSOR;
	if (f < 0)
		return;
	const struct pv_func *fn = &x->v->funcs[f];
	int d = t->v[fn->params].depth;
	for (size_t k = fn->params; k < fn->params_end; k++) {
		if (t->v[k].depth != d || !pytok_is_name(t, k, name) ||
		    !(pytok_is_op(t, k - 1, "(") || pytok_is_op(t, k - 1, ",") || pytok_is_op(t, k - 1, "*")))
			continue;
		size_t e = k + 1;
		while (e < fn->params_end && !(t->v[e].depth == d && (pytok_is_op(t, e, "=") || pytok_is_op(t, e, ","))))
			e++;
		if (e < fn->params_end && pytok_is_op(t, e, "=")) {
			size_t end = e + 1;
			while (end < fn->params_end && !(t->v[end].depth == d && pytok_is_op(t, end, ",")))
				end++;
			struct pval dv;
			memset(&dv, 0, sizeof(dv));
			eval_expr(x, e + 1, end, &dv);
			carried(out, &dv);
		}
		return;
	}
}

/* A lookup by name on v (`name` is NULL when computed): on a tensor or a torch object it reaches what
 * no name in the file spells; on an object of the file it is that attribute, or any of them. */
static void door(struct pvals *x, const struct pval *v, const char *name, size_t at, const char *how, struct pval *out)
{
	if (v->f & (VAL_TENSOR | VAL_TORCH | VAL_MODULE | VAL_TAINT)) {
		char why[128];
		snprintf(why, sizeof(why), "an attribute looked up by name through %s", how);
		held(out, why, at);
	}
	if (v->f & (VAL_INST | VAL_CLASS)) {
		struct pval o;
		memset(&o, 0, sizeof(o));
		o.f = v->f & (VAL_INST | VAL_CLASS);
		memcpy(o.inst, v->inst, sizeof(o.inst));
		memcpy(o.cls, v->cls, sizeof(o.cls));
		o.ninst = v->ninst;
		o.ncls = v->ncls;
		if (name) {
			attr(x, &o, name, 0, at, out);
		} else {
			for (int i = 0; i < v->ninst; i++)
				all_attrs(x, v->inst[i], out);
			for (int i = 0; i < v->ncls; i++)
				all_attrs(x, v->cls[i], out);
		}
	}
}

/* The attribute `name` of an object of the file: a method, what the file binds to it, what was stored
 * under a name it does not show. */
static void class_attr(struct pvals *x, int c, const char *name, struct pval *out)
{
	int m = pv_find_method(x->v, c, name);
	if (m >= 0) {
		out->f |= VAL_FUNC;
		add_index(out->func, &out->nfunc, m);
	}
	size_t b[16], n = pv_lookup_attr(x->v, c, name, b, 16);
	for (size_t j = 0; j < n; j++)
		bind_value(x, b[j], out);
	/* a store under a name the file does not show may be this attribute; where the file binds it by
	 * name too, only a torch op stored that way is taken in, not the layers an honest loop of setattr
	 * makes */
	struct pval u;
	memset(&u, 0, sizeof(u));
	unnamed_attrs(x, c, &u);
	if (m >= 0 || n)
		u.f &= VAL_TAINT;
	join(out, &u);
	if (m < 0 && !n)
		out->f |= VAL_TENSOR; /* set by nn.Module's machinery (register_buffer) or not at all */
}

static int module_call_name(const char *name)
{
	return !strcmp(name, "__call__") || strstr(name, "forward") || strstr(name, "call_impl");
}

static void attr(struct pvals *x, const struct pval *v, const char *name, int called, size_t at, struct pval *out)
{
	int is_door = word_in(name, doors), chain = word_in(name, class_chain);
	char why[160];
	if (v->f & VAL_TAINT) {
		struct pval h = *v;
		h.f = VAL_HELD; /* an attribute of an op or of what holds one: its __call__, a dict's .get */
		join(out, &h);
	}
	if (v->f & VAL_TORCH) {
		if (is_door) {
			snprintf(why, sizeof(why), "%s.%s", v->path, name);
			door(x, &(struct pval){ .f = VAL_TORCH }, NULL, at, why, out);
		} else if (chain) {
			torch_value(out, "torch.Tensor", at);
		} else {
			char p[PV_PATH];
			snprintf(p, sizeof(p), "%s.%s", v->path, name);
			struct pval o;
			memset(&o, 0, sizeof(o));
			torch_value(&o, p, at);
			join(out, &o);
		}
	}
	if (v->f & VAL_MODULE) {
		if (is_door || module_call_name(name)) {
			snprintf(why, sizeof(why), "the nn layer %s's %s", v->path, name);
			held(out, why, at);
		} else {
			out->f |= VAL_TENSOR; /* its parameters and settings */
		}
	}
	if (v->f & VAL_TENSOR) {
		if (is_door) {
			snprintf(why, sizeof(why), "a tensor's %s", name);
			door(x, &(struct pval){ .f = VAL_TENSOR }, NULL, at, why, out);
		} else if (chain) {
			torch_value(out, "torch.Tensor", at);
		} else if (tensor_method_computes(name) && !called) {
			/* a method taken as a value; called on the spot it is tensor-method's to judge */
			char p[PV_PATH];
			snprintf(p, sizeof(p), "torch.Tensor.%s", name);
			out->f |= VAL_OP;
			if (!out->path[0])
				snprintf(out->path, sizeof(out->path), "%s", p);
			snprintf(why, sizeof(why), "the tensor method .%s", name);
			set_why(out, why, at);
		} else {
			out->f |= VAL_TENSOR;
		}
	}
	if (v->f & VAL_EXT)
		out->f |= VAL_EXT;
	for (int i = 0; i < v->ninst && (v->f & VAL_INST); i++) {
		int c = v->inst[i];
		if (!strcmp(name, "__class__")) {
			out->f |= VAL_CLASS;
			add_index(out->cls, &out->ncls, c);
		} else if (!strcmp(name, "__getattribute__") || !strcmp(name, "__getattr__")) {
			out->f |= VAL_LOOKUP;
			add_index(out->inst, &out->ninst, c);
		} else if (is_door) {
			all_attrs(x, c, out);
		} else {
			class_attr(x, c, name, out);
		}
	}
	for (int i = 0; i < v->ncls && (v->f & VAL_CLASS); i++) {
		int c = v->cls[i];
		if (chain) {
			out->f |= VAL_CLASS;
			add_index(out->cls, &out->ncls, c);
		} else if (!strcmp(name, "__getattribute__") || !strcmp(name, "__getattr__")) {
			out->f |= VAL_LOOKUP;
			out->unbound = 1;
		} else if (is_door) {
			all_attrs(x, c, out);
		} else {
			class_attr(x, c, name, out);
		}
	}
	if (v->f & (VAL_FUNC | VAL_LAMBDA)) {
		if (!strcmp(name, "__call__") || !strcmp(name, "__func__") || !strcmp(name, "__wrapped__")) {
			struct pval o = *v;
			o.f &= VAL_FUNC | VAL_LAMBDA;
			join(out, &o);
		}
	}
	if (v->f & VAL_BUILTIN) {
		if (!strcmp(name, "__getattribute__") || !strcmp(name, "__getattr__")) {
			out->f |= VAL_LOOKUP;
			out->unbound = 1;
		} else {
			char b[PV_NAME];
			snprintf(b, sizeof(b), "%s.%s", v->builtin, name);
			out->f |= VAL_BUILTIN;
			if (!out->builtin[0])
				snprintf(out->builtin, sizeof(out->builtin), "%s", b);
		}
	}
	if (v->f & VAL_LOOKUP)
		out->f |= VAL_LOOKUP, out->unbound |= v->unbound;
}

/* v[...]: what a container holds is what it was built from. */
static void subscript(struct pvals *x, const struct pval *v, struct pval *out)
{
	struct pval o = *v;
	o.f &= ~(VAL_INST | VAL_LOOKUP | VAL_BUILTIN);
	o.ninst = 0;
	carried(out, &o);
	for (int i = 0; i < v->ninst && (v->f & VAL_INST); i++) {
		int m = pv_find_method(x->v, v->inst[i], "__getitem__");
		if (m >= 0)
			returns(x, m, out);
	}
}

/* ---------- calls ---------- */

static int constant_name(struct pvals *x, const struct pv_arg *a, char *buf, size_t cap)
{
	char *s = a ? pv_const_string(x->v, a->a, a->b, NULL) : NULL;
	int ok = s && strlen(s) < cap;
	if (ok)
		snprintf(buf, cap, "%s", s);
	free(s);
	return ok;
}

static void builtin_call(struct pvals *x, const char *name, const struct pv_arg *args, size_t n, size_t at,
			 struct pval *out)
{
	struct pval a0;
	memset(&a0, 0, sizeof(a0));
	if (n && !args[0].star)
		eval_expr(x, args[0].a, args[0].b, &a0);
	if (!strcmp(name, "type") && n == 1) {
		if (a0.f & (VAL_TENSOR | VAL_TORCH))
			torch_value(out, "torch.Tensor", at);
		if (a0.f & VAL_MODULE) {
			struct pval o;
			memset(&o, 0, sizeof(o));
			torch_value(&o, a0.path[0] ? a0.path : "torch.nn.Module", at);
			join(out, &o);
		}
		if (a0.f & VAL_INST) {
			out->f |= VAL_CLASS;
			for (int i = 0; i < a0.ninst; i++)
				add_index(out->cls, &out->ncls, a0.inst[i]);
		}
		if (a0.f & VAL_TAINT)
			held(out, a0.why, a0.why_at);
	} else if (!strcmp(name, "vars") && n == 1) {
		door(x, &a0, NULL, at, "vars()", out);
	} else if (!strcmp(name, "getattr") && n >= 2) {
		char attr_name[PV_NAME];
		if (constant_name(x, &args[1], attr_name, sizeof(attr_name)))
			attr(x, &a0, attr_name, 0, at, out);
		else
			door(x, &a0, NULL, at, "getattr with a computed name", out);
		if (n >= 3)
			eval_expr(x, args[2].a, args[2].b, out);
	} else if (word_in(name, namespace_builtins)) {
		char why[96];
		snprintf(why, sizeof(why), "the namespace %s()", name);
		held(out, why, at);
	} else if (word_in(name, plain_builtins) || is_exception_name(name)) {
		/* a plain value */
	} else {
		for (size_t i = 0; i < n; i++) {
			struct pval av;
			memset(&av, 0, sizeof(av));
			eval_expr(x, args[i].a, args[i].b, &av);
			carried(out, &av);
		}
	}
}

/* The value a call of v with the arguments after `open` returns. */
static void call(struct pvals *x, const struct pval *v, size_t open, struct pval *out)
{
	const struct pytok_list *t = x->t;
	struct pv_arg args[32];
	size_t n = pv_call_args(t, open, args, 32);
	struct pval carry;
	memset(&carry, 0, sizeof(carry));
	if (!enter(x, out, open))
		return;
	for (size_t i = 0; i < n; i++) {
		struct pval av;
		memset(&av, 0, sizeof(av));
		eval_expr(x, args[i].a, args[i].b, &av);
		carried(&carry, &av);
	}
	if (v->f & VAL_OP) {
		if (path_in(v->path, op_makers)) {
			held(out, v->why[0] ? v->why : v->path, v->why_at);
		} else if (path_under(v->path, "torch.nn") && path_last(v->path)[0] >= 'A' && path_last(v->path)[0] <= 'Z') {
			out->f |= VAL_MODULE;
			snprintf(out->path, sizeof(out->path), "%s", v->path);
		} else {
			out->f |= VAL_TENSOR;
		}
	}
	if (v->f & VAL_HELD) {
		/* what a holder's call returns may be the op (ops.get("relu")) or its result: held, traced to
		 * this call */
		struct pval h = *v;
		h.f = VAL_HELD;
		h.direct = 0;
		h.nvia = 1;
		h.via[0] = open;
		join(out, &h);
	}
	if (v->f & (VAL_MODULE | VAL_TENSOR | VAL_EXT))
		out->f |= VAL_TENSOR;
	if ((v->f & VAL_TORCH) && !(v->f & VAL_OP)) {
		if (path_under(v->path, "torch.utils.cpp_extension"))
			out->f |= VAL_EXT;
		else if (path_in(v->path, nn_holders))
			join(out, &carry);
		else
			out->f |= VAL_TENSOR;
	}
	for (int i = 0; i < v->ninst && (v->f & VAL_INST); i++) {
		int m = pv_find_method(x->v, v->inst[i], "forward");
		if (m < 0)
			m = pv_find_method(x->v, v->inst[i], "__call__");
		if (m >= 0)
			returns(x, m, out);
		out->f |= VAL_TENSOR;
	}
	if (v->f & VAL_CLASS) {
		out->f |= VAL_INST;
		for (int i = 0; i < v->ncls; i++)
			add_index(out->inst, &out->ninst, v->cls[i]);
		struct pval c = carry;
		c.f &= VAL_TAINT | VAL_MODULE; /* Holder(torch.relu): the instance holds what it was given */
		join(out, &c);
	}
	for (int i = 0; i < v->nfunc && (v->f & VAL_FUNC); i++)
		returns(x, v->func[i], out);
	for (int i = 0; i < v->nlam && (v->f & VAL_LAMBDA); i++) {
		size_t a, b;
		pval_lambda_body(t, v->lam[i], &a, &b);
		eval_expr(x, a, b, out);
		struct pval d;
		memset(&d, 0, sizeof(d));
		eval_expr(x, v->lam[i] + 1, a > v->lam[i] + 1 ? a - 1 : a, &d); /* its defaults */
		carried(out, &d);
	}
	if (v->f & (VAL_FUNC | VAL_LAMBDA))
		join(out, &carry); /* what it was given it may return: (lambda f: f)(torch.relu) */
	if (v->f & VAL_BUILTIN)
		builtin_call(x, v->builtin, args, n, open, out);
	if (v->f & VAL_LOOKUP) {
		char name[PV_NAME];
		const struct pv_arg *recv = v->unbound ? pv_arg_find(args, n, 0, NULL) : NULL;
		const struct pv_arg *key = pv_arg_find(args, n, v->unbound ? 1 : 0, NULL);
		struct pval r;
		memset(&r, 0, sizeof(r));
		if (recv) {
			eval_expr(x, recv->a, recv->b, &r);
		} else if (!v->unbound) {
			r.f = VAL_INST;
			memcpy(r.inst, v->inst, sizeof(r.inst));
			r.ninst = v->ninst;
		}
		door(x, &r, constant_name(x, key, name, sizeof(name)) ? name : NULL, open, "__getattribute__", out);
	}
	if (!v->f)
		join(out, &carry); /* functools.partial, operator.itemgetter, a library's function */
	x->depth--;
}

/* ---------- expressions ---------- */

void pval_lambda_body(const struct pytok_list *t, size_t lam, size_t *a, size_t *b)
{
	int d = t->v[lam].depth;
	size_t k = lam + 1;
	while (k < t->n && !(t->v[k].depth == d && pytok_is_op(t, k, ":")) && t->v[k].kind != PT_NEWLINE &&
	       t->v[k].kind != PT_END)
		k++;
	*a = k + 1 < t->n ? k + 1 : t->n;
	for (k = *a; k < t->n; k++) {
		const struct pytok *x = &t->v[k];
		if (x->depth < d || x->kind == PT_NEWLINE || x->kind == PT_END || (x->depth == d && pytok_is_op(t, k, ",")))
			break;
		if (x->depth == d && x->kind == PT_OP && strchr(")]}", t->src[x->off]))
			break;
	}
	*b = k;
}

/* A reference pv_ref_at resolved, component by component. */
static void ref_value(struct pvals *x, const struct pv_ref *r, struct pval *out)
{
	const struct pytok_list *t = x->t;
	char comps[24][PV_NAME];
	int nc = 0;
	for (const char *p = r->path; *p && nc < 24;) {
		size_t n = strcspn(p, ".");
		snprintf(comps[nc++], PV_NAME, "%.*s", (int)(n < PV_NAME ? n : PV_NAME - 1), p);
		p += n + (p[n] == '.');
	}
	struct pval v;
	memset(&v, 0, sizeof(v));
	if (path_under(r->path, "torch")) {
		torch_value(&v, "torch", r->start);
	} else if (r->head == REF_SELF) {
		int c = pv_self_class(x->v, r->start);
		if (c >= 0) {
			v.f = VAL_INST;
			v.inst[v.ninst++] = c;
		} else {
			v.f = VAL_TENSOR;
		}
	} else if (r->head == REF_BOUND) {
		size_t b[16], n = pv_lookup(x->v, comps[0], r->start, b, 16);
		if (enter(x, &v, r->start)) {
			for (size_t j = 0; j < n; j++)
				bind_value(x, b[j], &v);
			x->depth--;
		}
	} else if (r->head == REF_PARAM) {
		param_value(x, comps[0], r->start, &v);
	} else if (r->head == REF_FUNC && r->target >= 0) {
		v.f = VAL_FUNC;
		v.func[v.nfunc++] = r->target;
	} else if (r->head == REF_CLASS && r->target >= 0) {
		v.f = VAL_CLASS;
		v.cls[v.ncls++] = r->target;
	} else if (r->head == REF_IMPORT) {
		/* a module that is not torch (functools, math, numpy, an extension): its functions carry their
		 * arguments, see pval_call */
	} else if (!strncmp(r->path, "super()", 7)) {
		/* the same instance, its attributes looked up from the base classes on */
		int c = pv_self_class(x->v, r->start);
		if (c >= 0) {
			v.f = VAL_INST;
			v.inst[v.ninst++] = c;
		}
	} else if (word_in(comps[0], plain_builtins) || word_in(comps[0], carrier_builtins) ||
		   word_in(comps[0], namespace_builtins) || !strcmp(comps[0], "type") || !strcmp(comps[0], "getattr") ||
		   is_exception_name(comps[0])) {
		v.f = VAL_BUILTIN;
		snprintf(v.builtin, sizeof(v.builtin), "%s", comps[0]);
	} else {
		v.f = VAL_TENSOR; /* a name the view does not bind: a lambda's parameter, a comprehension's */
	}
	for (int k = 1; k < nc; k++) {
		struct pval o;
		memset(&o, 0, sizeof(o));
		attr(x, &v, comps[k], k == nc - 1 && pytok_is_op(t, r->end, "("), r->start, &o);
		v = o;
	}
	join(out, &v);
}

/* A display: (a, b), [a, b], {k: v}, a comprehension; a parenthesised expression is its content. */
static void display(struct pvals *x, size_t open, size_t close, struct pval *out)
{
	const struct pytok_list *t = x->t;
	struct pval v;
	memset(&v, 0, sizeof(v));
	eval_expr(x, open + 1, close, &v);
	int plain = pytok_is_op(t, open, "(");
	for (size_t k = open + 1; k < close && plain; k++)
		if (t->v[k].depth == t->v[open].depth + 1 && (pytok_is_op(t, k, ",") || pytok_is_name(t, k, "for")))
			plain = 0;
	if (plain && close > open + 1) {
		join(out, &v);
		return;
	}
	/* a container is no torch object: its methods (.get, .sort) are its own, whatever it holds */
	if (v.f & VAL_OP)
		v.f |= VAL_HELD; /* its why is the op's */
	v.f &= ~(VAL_OP | VAL_TORCH);
	join(out, &v);
}

static size_t eval_primary(struct pvals *x, size_t i, size_t b, struct pval *out)
{
	const struct pytok_list *t = x->t;
	struct pval v;
	struct pv_ref r;
	size_t k;
	memset(&v, 0, sizeof(v));
	if (t->v[i].kind == PT_NAME) {
		if (!pv_ref_at(x->v, i, &r))
			return i + 1;
		ref_value(x, &r, &v);
		k = r.end > b ? b : r.end;
	} else if (t->v[i].kind == PT_STRING) {
		for (k = i; k < b && t->v[k].kind == PT_STRING; k++)
			;
	} else if (pytok_is_op(t, i, "(") || pytok_is_op(t, i, "[") || pytok_is_op(t, i, "{")) {
		size_t close = pytok_matching(t, i);
		display(x, i, close < b ? close : b, &v);
		k = close + 1;
	} else {
		return i + 1;
	}
	while (k < b) {
		if (pytok_is_op(t, k, ".") && k + 1 < b && t->v[k + 1].kind == PT_NAME) {
			char name[PV_NAME];
			struct pval o;
			memset(&o, 0, sizeof(o));
			pytok_text(t, k + 1, name, sizeof(name));
			attr(x, &v, name, pytok_is_op(t, k + 2, "("), k + 1, &o);
			v = o;
			k += 2;
		} else if (pytok_is_op(t, k, "[")) {
			struct pval o;
			memset(&o, 0, sizeof(o));
			subscript(x, &v, &o);
			v = o;
			k = pytok_matching(t, k) + 1;
		} else if (pytok_is_op(t, k, "(")) {
			struct pval o;
			memset(&o, 0, sizeof(o));
			call(x, &v, k, &o);
			v = o;
			k = pytok_matching(t, k) + 1;
		} else {
			break;
		}
	}
	join(out, &v);
	return k;
}

static void eval_expr(struct pvals *x, size_t a, size_t b, struct pval *out)
{
	const struct pytok_list *t = x->t;
	for (size_t k = a; k < b && k < t->n;) {
		const struct pytok *tok = &t->v[k];
		if (tok->kind == PT_NEWLINE || tok->kind == PT_END)
			break;
		if (pytok_is_name(t, k, "lambda")) {
			size_t la, lb;
			pval_lambda_body(t, k, &la, &lb);
			out->f |= VAL_LAMBDA;
			if (!add_lambda(out, k))
				held(out, "a value that may be any of more functions and lambdas than the checks follow", k);
			k = lb > k ? lb : k + 1;
		} else if (tok->kind == PT_NAME && pv_is_keyword(t, k)) {
			k++;
		} else if (tok->kind == PT_NAME || tok->kind == PT_STRING || pytok_is_op(t, k, "(") ||
			   pytok_is_op(t, k, "[") || pytok_is_op(t, k, "{")) {
			size_t next = eval_primary(x, k, b, out);
			k = next > k ? next : k + 1;
		} else {
			k++;
		}
	}
}

void pval_expr(struct pvals *x, size_t a, size_t b, struct pval *out)
{
	memset(out, 0, sizeof(*out));
	eval_expr(x, a, b, out);
}

/* ---------- call sites ---------- */

int pval_is_call(const struct pytok_list *t, size_t i)
{
	if (i == 0 || i >= t->n || !pytok_is_op(t, i, "("))
		return 0;
	const struct pytok *p = &t->v[i - 1];
	if (p->kind == PT_NAME)
		return !pv_is_keyword(t, i - 1) &&
		       !(i >= 2 && (pytok_is_name(t, i - 2, "def") || pytok_is_name(t, i - 2, "class")));
	return pytok_is_op(t, i - 1, ")") || pytok_is_op(t, i - 1, "]");
}

size_t pval_callee(const struct pytok_list *t, size_t open)
{
	size_t k = open;
	while (k > 0) {
		size_t p = k - 1;
		if (t->v[p].kind == PT_NAME && !pv_is_keyword(t, p)) {
			k = p;
			if (k > 0 && pytok_is_op(t, k - 1, ".")) {
				k--;
				continue;
			}
			break;
		}
		if (pytok_is_op(t, p, ")") || pytok_is_op(t, p, "]") || pytok_is_op(t, p, "}")) {
			k = pytok_opening(t, p);
			/* a call or a subscript of what comes before it; else a display, which starts here */
			if (!pytok_is_op(t, k, "{") && k > 0 &&
			    ((t->v[k - 1].kind == PT_NAME && !pv_is_keyword(t, k - 1)) || pytok_is_op(t, k - 1, ")") ||
			     pytok_is_op(t, k - 1, "]") || pytok_is_op(t, k - 1, "}")))
				continue;
			break;
		}
		if (t->v[p].kind == PT_STRING) {
			k = p;
			while (k > 0 && t->v[k - 1].kind == PT_STRING)
				k--;
		}
		break;
	}
	return k;
}
