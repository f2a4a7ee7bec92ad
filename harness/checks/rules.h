/* rules.h - what the static rule files share: the analysed module (tokens, C++ in its strings, symbol
 * view), the tokens that run in forward's call tree, and how a rule records a finding. */
#ifndef SB_RULES_H
#define SB_RULES_H

#include "cxxscan.h"
#include "pyview.h"
#include "static.h"

struct static_ctx {
	const struct pytok_list *t;
	const struct pyview *v;
	const struct cx_list *cx;
	unsigned char *hot;      /* per token: runs when ModelNew.forward runs (filled by rules_work) */
	struct static_report *out;
};

__attribute__((format(printf, 6, 7)))
void static_add(struct static_ctx *c, const char *id, const char *rule, int line, int col, const char *fmt, ...);

/* Whether name is one of the NULL-terminated words. */
int word_in(const char *name, const char *const *words);
/* Whether path is, or lies under, one of the NULL-terminated dotted prefixes. */
int path_in(const char *path, const char *const *prefixes);

/* Every reference in the module, in order (pv_ref_at at each name that starts one). */
typedef void ref_fn(struct static_ctx *c, const struct pv_ref *r, void *arg);
void for_each_ref(struct static_ctx *c, ref_fn *fn, void *arg);
/* Whether token i is a name from `words`; copies it into buf. */
int name_in(const struct pytok_list *t, size_t i, const char *const *words, char *buf, size_t cap);
/* Whether token i is `.name(`: a method call on anything, named `name`. */
int method_call_at(const struct pytok_list *t, size_t i, const char *const *names);
/* Whether C++ token i is an identifier from `names`. */
int cx_ident_in(const struct cx_list *l, size_t i, const char *const *names);

/* H01 (PyTorch does the work in forward), H02 (except falls back to PyTorch), H03 (Model), H04 (no kernel). */
void rules_work(struct static_ctx *c);
/* H05 (side streams), H06 (threads), H20 (L2 persistence): work that escapes the timed window. */
void rules_async(struct static_ctx *c);
/* H07 (tensor subclasses), H08 (monkey-patching), H13 (introspection of the checker). */
void rules_tamper(struct static_ctx *c);
/* H14 (precision downgrade), H22 (files, network, processes, environment). */
void rules_env(struct static_ctx *c);

#endif
