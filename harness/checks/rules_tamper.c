/* rules_tamper.c - code that bends the measurement rather than doing the work: tensor subclasses that
 * compute late (H07), monkey-patched torch/time/numpy (H08), and reading the checker's frames or memory (H13). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

/* ---------- H07: tensor subclasses ---------- */

static const char *const subclass_names[] = { "__torch_function__", "__torch_dispatch__", "_make_subclass",
					      "_make_wrapper_subclass", NULL };
static const char *const subclass_paths[] = { "torch.overrides", "torch.utils._python_dispatch", "torch._C._TensorBase",
					      "torch._C.TensorBase", "torch._C._disabled_torch_function_impl", NULL };
static const char *const tensor_bases[] = { "torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase",
					    "torch.nn.Parameter", "torch.nn.parameter.Parameter", NULL };

static void subclass_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	if (!path_in(r->path, subclass_paths) && strcmp(path_last(r->path), "TorchDispatchMode") &&
	    strcmp(path_last(r->path), "TorchFunctionMode"))
		return;
	const struct pytok *k = &c->t->v[r->start];
	static_add(c, "H07", "torch-override", k->line, k->col,
		   "%s (line %d) intercepts torch operations, so results can be computed when they are compared "
		   "instead of in forward; return plain dense tensors computed by your kernels", r->path, k->line);
}

static void rule_h07(struct static_ctx *c)
{
	const char *fix = "return plain dense torch.Tensor outputs computed by your kernels";
	char name[PV_NAME];
	for (size_t i = 0; i < c->t->n; i++)
		if (name_in(c->t, i, subclass_names, name, sizeof(name)))
			static_add(c, "H07", "tensor-subclass", c->t->v[i].line, c->t->v[i].col,
				   "%s (line %d) makes a tensor whose values can be computed when the harness reads them, "
				   "outside the timed call; %s", name, c->t->v[i].line, fix);
	for (size_t k = 0; k < c->v->nclasses; k++) {
		const struct pv_class *cl = &c->v->classes[k];
		struct pv_ref r;
		for (size_t i = cl->bases; i < cl->bases_end; i++)
			if (c->t->v[i].kind == PT_NAME && pv_ref_at(c->v, i, &r)) {
				if (path_in(r.path, tensor_bases))
					static_add(c, "H07", "tensor-subclass", c->t->v[cl->at].line, c->t->v[cl->at].col,
						   "class %s (line %d) subclasses %s: its values can be produced outside the "
						   "timed call; %s", cl->name, c->t->v[cl->at].line, r.path, fix);
				i = r.end - 1;
			}
	}
	for_each_ref(c, subclass_refs, NULL);
}

/* ---------- H08: monkey-patching ---------- */

static const char *const protected_roots[] = { "torch", "time", "numpy", "math", "statistics", "builtins", "timeit",
					       "sys.modules", "__builtins__", "gc", NULL };
static const char *const patch_tools[] = { "unittest.mock", "mock", "pytest.MonkeyPatch", NULL };

static int protected_target(const struct pv_ref *r)
{
	if (!path_in(r->path, protected_roots) || r->head == REF_SELF || r->head == REF_BOUND || r->head == REF_PARAM)
		return 0;
	if (path_under(r->path, "torch.backends"))
		return 0; /* settings, not functions; H14 judges the precision ones */
	return strchr(r->path, '.') != NULL || !strcmp(r->path, "__builtins__");
}

/* Assignment, augmented assignment and `del` targets at statement level. */
static void assigned_targets(struct static_ctx *c)
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
			struct pv_ref r;
			int item_start = k == s + del || (t->v[k - 1].depth == 0 && (pytok_is_op(t, k - 1, ",") ||
										    pytok_is_op(t, k - 1, "=")));
			if (!item_start || t->v[k].kind != PT_NAME || !pv_ref_at(c->v, k, &r))
				continue;
			/* `mm = torch.matmul` binds a name of its own; only an attribute of the module is patched */
			int own_name = r.end == r.start + 1 || pytok_is_name(t, r.start, "self");
			if (!own_name && protected_target(&r))
				static_add(c, "H08", "monkey-patch", t->v[k].line, t->v[k].col,
					   "line %d %s %s: replacing library functions can fake timing, synchronisation or "
					   "comparison; leave torch, time and numpy as they are", t->v[k].line,
					   del ? "deletes" : "assigns to", r.path);
			k = r.end - 1;
		}
	}
}

static void patch_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	const struct pytok *k = &c->t->v[r->start];
	if (!strcmp(r->path, "setattr") && r->called && r->head == REF_FREE) {
		struct pv_ref target;
		if (pv_ref_at(c->v, r->start + 2, &target) && path_in(target.path, protected_roots) &&
		    !path_under(target.path, "torch.backends") && target.head == REF_IMPORT)
			static_add(c, "H08", "monkey-patch", k->line, k->col,
				   "setattr on %s (line %d) replaces a library attribute, which can fake timing, "
				   "synchronisation or comparison; leave torch, time and numpy as they are", target.path, k->line);
	} else if (r->head == REF_IMPORT && path_in(r->path, patch_tools)) {
		static_add(c, "H08", "mock", k->line, k->col,
			   "%s (line %d) patches library functions; leave torch, time and numpy as they are", r->path, k->line);
	}
}

static void rule_h08(struct static_ctx *c)
{
	assigned_targets(c);
	for_each_ref(c, patch_refs, NULL);
}

/* ---------- H13: reading the checker ---------- */

static const char *const py_introspect[] = { "gc", "inspect", "ctypes", "importlib", "sys._getframe", "sys.settrace",
					     "sys.setprofile", "sys.modules", "threading.settrace", "threading.setprofile",
					     "traceback.extract_stack", "traceback.walk_stack", "traceback.walk_tb",
					     "traceback.extract_tb", "traceback.StackSummary", "builtins.__import__", "ptrace",
					     "cffi", "dis", "_ctypes", NULL };
static const char *const frame_attrs[] = { "f_back", "f_locals", "f_globals", "f_code", "tb_frame", "gi_frame",
					   "cr_frame", "__globals__", "__closure__", NULL };
static const char *const dynamic_code[] = { "eval", "exec", "compile", "__import__", NULL };
static const char *const cx_introspect[] = { "ptrace", "process_vm_readv", "process_vm_writev", "dlsym", "dlopen",
					     "RTLD_NEXT", "PTRACE_ATTACH", "PTRACE_PEEKDATA", "PTRACE_TRACEME", NULL };

static const char *const h13_fix = "the expected outputs never enter the candidate's process: compute the result";

static void introspect_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	const struct pytok *k = &c->t->v[r->start];
	if (r->head == REF_IMPORT && path_in(r->path, py_introspect))
		static_add(c, "H13", "introspection", k->line, k->col,
			   "%s (line %d) inspects the interpreter (frames, objects, memory or loaded modules); %s",
			   r->path, k->line, h13_fix);
	else if (r->head == REF_FREE && r->called && word_in(r->path, dynamic_code))
		static_add(c, "H13", "dynamic-code", k->line, k->col,
			   "%s() (line %d) runs code built at run time, hidden from the checks; write the code out", r->path,
			   k->line);
}

static void rule_h13(struct static_ctx *c)
{
	const struct pytok_list *t = c->t;
	for (size_t i = 0; i < c->v->nimports; i++) {
		const struct pv_import *m = &c->v->imports[i];
		if (path_in(m->path, py_introspect))
			static_add(c, "H13", "introspection", t->v[m->at].line, t->v[m->at].col,
				   "imports %s (line %d), which can read the harness's frames, objects or memory; %s", m->path,
				   t->v[m->at].line, h13_fix);
	}
	for_each_ref(c, introspect_refs, NULL);
	for (size_t i = 0; i + 1 < t->n; i++) {
		char name[PV_NAME];
		if (pytok_is_op(t, i, ".") && t->v[i + 1].kind == PT_NAME) {
			pytok_text(t, i + 1, name, sizeof(name));
			if (word_in(name, frame_attrs))
				static_add(c, "H13", "frames", t->v[i + 1].line, t->v[i + 1].col,
					   ".%s (line %d) walks interpreter frames; %s", name, t->v[i + 1].line, h13_fix);
		}
		if (t->v[i].kind == PT_STRING) {
			char *s = pytok_string_value(t, i, NULL);
			if (s && starts_with(s, "/proc"))
				static_add(c, "H13", "proc", t->v[i].line, t->v[i].col,
					   "the path %.40s (line %d) reads process state from /proc; %s", s, t->v[i].line, h13_fix);
			free(s);
		}
	}
	const struct cx_list *x = c->cx;
	for (size_t i = 0; i < x->n; i++)
		if (cx_ident_in(x, i, cx_introspect) || (x->v[i].kind == CX_INCLUDE && strstr(x->v[i].text, "ptrace")) ||
		    (x->v[i].kind == CX_STRING && starts_with(x->v[i].text, "/proc")))
			static_add(c, "H13", "cxx-introspection", x->v[i].line, x->v[i].col,
				   "the C++ source uses %.40s (line %d) to read another process's or library's state; %s",
				   x->v[i].text, x->v[i].line, h13_fix);
}

void rules_tamper(struct static_ctx *c)
{
	rule_h07(c);
	rule_h08(c);
	rule_h13(c);
}
