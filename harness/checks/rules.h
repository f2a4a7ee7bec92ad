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
	struct findings *out;
};

__attribute__((format(printf, 6, 7)))
void static_add(struct static_ctx *c, const char *id, const char *rule, int line, int col, const char *fmt, ...);

/* Whether name is one of the NULL-terminated words. */
int word_in(const char *name, const char *const *words);
/* Whether path is, or lies under, one of the NULL-terminated dotted prefixes. */
int path_in(const char *path, const char *const *prefixes);

/* Each target of an assignment, augmented assignment or `del` at statement level (`x.a = y = v`: x.a
 * and y): fn gets the target's first token and the assigned value [rhs, rhs_end) (empty for del). */
typedef void target_fn(struct static_ctx *c, size_t target, size_t rhs, size_t rhs_end, int del, void *arg);
void for_each_target(struct static_ctx *c, target_fn *fn, void *arg);

/* Each string expression of the module with its value: a literal, or literals put together with `+`
 * and "".join([...]) (assembled). fn gets the first literal's token. */
typedef void const_string_fn(struct static_ctx *c, size_t at, const char *value, int assembled, void *arg);
void for_each_const_string(struct static_ctx *c, const_string_fn *fn, void *arg);

/* Every reference in the module, in order (pv_ref_at at each name that starts one). */
typedef void ref_fn(struct static_ctx *c, const struct pv_ref *r, void *arg);
void for_each_ref(struct static_ctx *c, ref_fn *fn, void *arg);
/* Whether token i is a name from `words`; copies it into buf. */
int name_in(const struct pytok_list *t, size_t i, const char *const *words, char *buf, size_t cap);
/* Whether token i is `.name(`: a method call on anything, named `name`. */
int method_call_at(const struct pytok_list *t, size_t i, const char *const *names);
/* Whether C++ token i is an identifier from `names`. */
int cx_ident_in(const struct cx_list *l, size_t i, const char *const *names);

/* ---------- names (rules_names.c) ---------- */

/* torch.X functions that allocate, reshape, move or configure (NULL-terminated). */
extern const char *const sb_torch_free[];
/* Sorted, NULL-terminated: torch.Tensor methods that compute, those that do not, and the other op names
 * of torch and torch.nn.functional. */
extern const char *const sb_tensor_compute[], *const sb_tensor_free[], *const sb_op_extra[];
/* Whether name is a torch.Tensor method that computes (x.erfc(), x.__matmul__(w), x.addmm(...)). */
int tensor_method_computes(const char *name);
/* Whether name is a torch.Tensor method or attribute that only describes, allocates or reshapes. */
int tensor_method_free(const char *name);
/* Whether name is a PyTorch op that computes: a computing tensor method or a torch / functional op. */
int torch_op_name(const char *name);
/* torch_op_name after the spellings around an op are taken off: _softmax, relu_out, linalg_matmul. */
int torch_op_spelling(const char *name);

/* The C++ the module builds, into cx: every literal that looks like C++ (docstrings aside), every string
 * a build's source arguments reach (docstrings included), and, when a build's sources cannot all be told
 * from the file, every literal that looks like C++. A source that passes through a decoder is H13. */
void static_sources(struct static_ctx *c, struct cx_list *cx);

/* Whether calling `path` (a canonical torch.* path) has PyTorch compute something (rules_work.c). */
int torch_work(const char *path);

/* What to write instead of the PyTorch op at `path` (a GEMM, a convolution, a compiled graph, ...). */
const char *work_advice(const char *path);

/* H01 (PyTorch does the work in forward), H02 (except falls back to PyTorch), H03 (Model), H04 (no kernel). */
void rules_work(struct static_ctx *c);
/* H01 from the extension's C++: ATen ops in any namespace, the dispatcher, calls back into Python. */
void rules_cxx(struct static_ctx *c);
/* H05 (side streams), H06 (threads), H20 (L2 persistence): work that escapes the timed window. */
void rules_async(struct static_ctx *c);
/* H07 (tensor subclasses), H08 (monkey-patching), H13 (introspection of the checker). */
void rules_tamper(struct static_ctx *c);
/* H14 (precision downgrade), H22 (files, network, processes, environment). */
void rules_env(struct static_ctx *c);

#endif
