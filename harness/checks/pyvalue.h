/* pyvalue.h - what a Python expression may hold, for H01: one value lattice over names, attributes,
 * containers and calls, so that a torch op taken as a value stays a torch op whatever carries it. */
#ifndef SB_PYVALUE_H
#define SB_PYVALUE_H

#include <stddef.h>

#include "pyview.h"

/* What a value may be; a value is the join (union) of everything that may reach it. */
enum {
	VAL_OP = 1u << 0,        /* a torch function, nn layer class or tensor method that computes */
	VAL_HELD = 1u << 1,      /* holds or yields one: a container, descriptor, partial, iterator, lookup door */
	VAL_MODULE = 1u << 2,    /* an nn layer built from such a class: calling it computes */
	VAL_TENSOR = 1u << 3,    /* may be a tensor, or a value nothing is known of (a parameter) */
	VAL_TORCH = 1u << 4,     /* an object of torch at `path`: a module, a class, a helper */
	VAL_EXT = 1u << 5,       /* a built extension: its functions are the candidate's own */
	VAL_INST = 1u << 6,      /* an instance of a class of the file (inst[]) */
	VAL_CLASS = 1u << 7,     /* a class of the file (cls[]) */
	VAL_FUNC = 1u << 8,      /* a function of the file (func[]) */
	VAL_LAMBDA = 1u << 9,    /* a lambda (lam[]: its token) */
	VAL_BUILTIN = 1u << 10,  /* a builtin (`builtin`: "iter", "object.__getattribute__") */
	VAL_LOOKUP = 1u << 11,   /* an attribute lookup by name: self.__getattribute__ (of inst[]), or
				  * object.__getattribute__ (unbound: of its first argument) */
};
/* Calling a tainted value has PyTorch compute. */
#define VAL_TAINT (VAL_OP | VAL_HELD)

#define VAL_SET 16               /* functions, lambdas, classes one value keeps track of; a value that
				  * may be more is tainted */

struct pval {
	unsigned f;
	char path[PV_PATH];      /* VAL_TORCH, VAL_OP, VAL_MODULE: the torch path */
	char builtin[PV_NAME];
	char why[128];           /* tainted: the op or door it came from, for messages */
	size_t why_at;           /* and the token where it was taken */
	int direct;              /* some taint is not only the result of calling a tainted value */
	int nvia;                /* the '(' of the calls of tainted values whose results the rest is: */
	size_t via[VAL_SET];     /* those calls are the place to report it */
	int unbound;             /* VAL_LOOKUP */
	int ninst, ncls, nfunc, nlam;
	int inst[VAL_SET], cls[VAL_SET], func[VAL_SET];
	size_t lam[VAL_SET];
};

struct pvals;

/* The values of one module, memoised per binding, function and class. */
struct pvals *pvals_new(const struct pyview *v);
void pvals_free(struct pvals *x);

/* The value of the expression [a, b). */
void pval_expr(struct pvals *x, size_t a, size_t b, struct pval *out);
/* The first token of the callee of the call whose '(' is at open: `ops.get` in `ops.get("relu")(x)`. */
size_t pval_callee(const struct pytok_list *t, size_t open);
/* Whether token i is the '(' of a call (not of a def, a class statement or a parenthesised expression). */
int pval_is_call(const struct pytok_list *t, size_t i);
/* The body [*a, *b) of the lambda whose keyword is at token lam. */
void pval_lambda_body(const struct pytok_list *t, size_t lam, size_t *a, size_t *b);

#endif
