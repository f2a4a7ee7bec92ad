/* pyview.h - a small symbol view of one Python module for the static checks: imports and their aliases,
 * classes, functions, what each name or self attribute is bound to, except handlers; and name resolution. */
#ifndef SB_PYVIEW_H
#define SB_PYVIEW_H

#include <stddef.h>

#include "pytok.h"

#define PV_NAME 64
#define PV_PATH 256
#define PV_NONE ((size_t)-1)

struct pv_func {
	char name[PV_NAME];
	size_t deco;             /* its first decorator's '@', or the 'def' token */
	size_t def;
	size_t params, params_end; /* tokens between the parentheses */
	size_t body, end;        /* [body, end) */
	int cls;                 /* the class it is a method of, or -1 */
	int parent;              /* the function it is nested in, or -1 */
	int triton;              /* @triton.jit and friends: GPU code, never run as Python */
};

struct pv_class {
	char name[PV_NAME];
	size_t at;               /* the 'class' token */
	size_t bases, bases_end; /* tokens between the parentheses (bases == bases_end: none) */
	size_t body, end;
	int parent_func;         /* a class defined inside a function, or -1 */
};

/* Something a name is bound to: `x = e`, `x += e`, `for x in e`, `with e as x`, `x.append(e)`,
 * `self.x = e` (self_attr, in a method of cls), a class-body `x = e` (also self_attr). */
struct pv_bind {
	char name[PV_NAME];
	size_t at;               /* the target's token */
	size_t rhs, rhs_end;     /* the bound expression */
	int self_attr;
	int cls;                 /* self_attr: the class */
	int func;                /* the innermost function it is in, or -1 */
};

struct pv_import {
	char name[PV_NAME];      /* the name it binds; "*" for `from m import *` */
	char path[PV_PATH];      /* the dotted module path it stands for */
	size_t at;
};

struct pv_handler {
	size_t at;               /* the 'except' token */
	size_t body, end;
};

struct pyview {
	const struct pytok_list *t;
	struct pv_func *funcs;
	size_t nfuncs;
	struct pv_class *classes;
	size_t nclasses;
	struct pv_bind *binds;
	size_t nbinds;
	struct pv_import *imports;
	size_t nimports;
	struct pv_handler *handlers;
	size_t nhandlers;
	int model_new;           /* index of class ModelNew, or -1 */
	unsigned char *stmt;     /* per token: starts a statement, ends a compound header (pyview.c) */
};

void pyview_build(const struct pytok_list *t, struct pyview *v);
void pyview_release(struct pyview *v);

/* The innermost function whose body holds token i, or -1. */
int pv_func_at(const struct pyview *v, size_t i);
/* The class whose body holds token i directly (not inside one of its methods), or -1. */
int pv_class_body_at(const struct pyview *v, size_t i);
/* The class whose methods see token i as `self` (through nested functions too), or -1. */
int pv_self_class(const struct pyview *v, size_t i);
/* A function named `name` defined at module level (cls < 0, parent < 0), or -1. */
int pv_find_func(const struct pyview *v, const char *name);
int pv_find_class(const struct pyview *v, const char *name);
/* Method `name` of class c or of a class it inherits from in this file, or -1. */
int pv_find_method(const struct pyview *v, int cls, const char *name);
/* The classes among c's bases that this file defines (up to cap). */
size_t pv_local_bases(const struct pyview *v, int c, int *out, size_t cap);
/* Whether class c is, or inherits in this file from, a class named `name` (depth-limited). */
int pv_class_inherits(const struct pyview *v, int cls, const char *name);
/* Whether `name` is a parameter of function f. */
int pv_is_param(const struct pyview *v, int f, const char *name);
const struct pv_import *pv_find_import(const struct pyview *v, const char *name);

/* Whether token i starts a statement (simple, or a compound statement's header). */
int pv_stmt_start(const struct pyview *v, size_t i);
/* The end of the statement starting at i: its NEWLINE, its ';', or the end of the simple suite. */
size_t pv_stmt_end(const struct pyview *v, size_t i);

/* ---------- references ---------- */

enum pv_head { REF_IMPORT, REF_SELF, REF_BOUND, REF_FUNC, REF_CLASS, REF_PARAM, REF_FREE };

/* A dotted reference as code uses it: `c`, `F.conv2d`, `self.fc.weight`, `getattr(torch, "matmul")`,
 * `torch.__dict__["mm"]`, resolved through imports and aliases to a canonical dotted path. */
struct pv_ref {
	char path[PV_PATH];      /* "torch.nn.functional.conv2d", "self.fc.weight", "x.softmax"; "?" for a computed name */
	char text[96];           /* as written, for messages */
	char via[96];            /* the alias it went through ("mm", "self.mm"), or "" */
	size_t start, end;       /* tokens [start, end) */
	int called;              /* followed by '(' (possibly after a subscript: layers[0](x)) */
	enum pv_head head;
	int target;              /* REF_FUNC / REF_CLASS: the index; REF_BOUND: -1 */
	int dynamic;             /* getattr with a name computed at run time */
	int ncomp;               /* dotted components after resolution */
};

/* Parses the reference starting at token i (a NAME not preceded by '.'). Returns 0 when there is none. */
int pv_ref_at(const struct pyview *v, size_t i, struct pv_ref *r);
/* Bindings of `name` visible from token i (Python's scoping: the innermost function, then the
 * enclosing ones, then the module). Fills idx (up to cap) and returns how many. */
size_t pv_lookup(const struct pyview *v, const char *name, size_t at, size_t *idx, size_t cap);
/* Bindings of self attribute `name` in class c or the classes it inherits from in this file. */
size_t pv_lookup_attr(const struct pyview *v, int cls, const char *name, size_t *idx, size_t cap);

/* Whether token i is a Python keyword. */
int pv_is_keyword(const struct pytok_list *t, size_t i);

/* ---------- calls, docstrings, constant strings ---------- */

/* One argument of a call: tokens [a, b), its keyword ("" when positional), `*x` / `**x` (star). */
struct pv_arg {
	size_t a, b;
	char kw[PV_NAME];
	int star;
};
/* The arguments of the call whose '(' is at `open` (up to cap); 0 when `open` is no '('. */
size_t pv_call_args(const struct pytok_list *t, size_t open, struct pv_arg *args, size_t cap);
/* The argument at position pos, or the one named kw (may be NULL); NULL when there is neither. */
const struct pv_arg *pv_arg_find(const struct pv_arg *args, size_t n, size_t pos, const char *kw);
/* The docstring token of function f, class c, or the module; PV_NONE when there is none. */
size_t pv_func_doc(const struct pyview *v, int f);
size_t pv_class_doc(const struct pyview *v, int c);
size_t pv_module_doc(const struct pyview *v);
/* How a constant string was written: from more than one piece, with str methods or `%` applied. */
struct pv_const_info {
	int pieces;
	int transformed;         /* .format, .replace, `%`, .strip and the like */
	int assembled;           /* not written as the one literal it is: pieces > 1 or transformed */
};
/* The value of [a, b) when it is a constant string: literals joined with `+`, names bound once to such
 * a value, and str's join, replace, format, strip and `%` over constants. NULL otherwise. info (may be
 * NULL) says how it was written. The caller frees it. */
char *pv_const_string(const struct pyview *v, size_t a, size_t b, struct pv_const_info *info);

/* Whether a path is `prefix` itself or starts with "prefix.". */
int path_under(const char *path, const char *prefix);
/* The last dotted component of a path. */
const char *path_last(const char *path);

#endif
