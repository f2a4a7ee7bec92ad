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
					      "torch._C.TensorBase", "torch._C._disabled_torch_function_impl",
					      "torch._C.DisableTorchFunction", "torch._C.DisableTorchFunctionSubclass",
					      "torch._C._DisableTorchDispatch", NULL };
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

/* type(torch.empty(0)) as a base: the tensor class reached through one of its objects. */
static int type_of_torch(struct static_ctx *c, const struct pv_ref *r)
{
	if (r->head != REF_FREE || strcmp(r->path, "type") || !pytok_is_op(c->t, r->end, "("))
		return 0;
	struct pv_ref in;
	size_t close = pytok_matching(c->t, r->end);
	for (size_t k = r->end + 1; k < close; k++)
		if (c->t->v[k].kind == PT_NAME && pv_ref_at(c->v, k, &in)) {
			if (path_under(in.path, "torch") && !path_under(in.path, "torch.cuda"))
				return 1;
			k = in.end - 1;
		}
	return 0;
}

/* type("Lazy", (torch.Tensor,), {...}), types.new_class(...), x.as_subclass(cls): a tensor subclass made
 * without a class statement. */
static void dynamic_subclasses(struct static_ctx *c)
{
	const struct pytok_list *t = c->t;
	const char *fix = "return plain dense torch.Tensor outputs computed by your kernels";
	for (size_t i = 0; i + 1 < t->n; i++) {
		if (method_call_at(t, i, (const char *const[]){ "as_subclass", NULL })) {
			static_add(c, "H07", "tensor-subclass", t->v[i + 1].line, t->v[i + 1].col,
				   ".as_subclass (line %d) makes a tensor of a subclass, whose values can be produced when the "
				   "harness reads them, outside the timed call; %s", t->v[i + 1].line, fix);
			continue;
		}
		struct pv_ref r;
		if (t->v[i].kind != PT_NAME || !pv_ref_at(c->v, i, &r) || !r.called ||
		    !((r.head == REF_FREE && !strcmp(r.path, "type")) || !strcmp(r.path, "types.new_class")))
			continue;
		struct pv_arg a[4];
		if (pv_call_args(t, r.end, a, 4) < 2)
			continue;
		for (size_t k = a[1].a; k < a[1].b; k++) {
			struct pv_ref base;
			if (t->v[k].kind != PT_NAME || !pv_ref_at(c->v, k, &base))
				continue;
			if (path_in(base.path, tensor_bases) || type_of_torch(c, &base)) {
				static_add(c, "H07", "tensor-subclass", t->v[i].line, t->v[i].col,
					   "%s (line %d) builds a subclass of %s at run time: its values can be produced "
					   "outside the timed call; %s", r.path, t->v[i].line, base.path, fix);
				break;
			}
			k = base.end - 1;
		}
	}
}

/* "__torch_" + "function__" as a dict key or an attribute name: the same hook by its name. */
static void subclass_strings(struct static_ctx *c, size_t at, const char *value, int assembled, void *arg)
{
	(void)arg, (void)assembled;
	if (word_in(value, subclass_names))
		static_add(c, "H07", "torch-override", c->t->v[at].line, c->t->v[at].col,
			   "the string %s (line %d) names the hook through which torch hands tensor operations to "
			   "a subclass, so results can be computed when they are compared instead of in forward; "
			   "return plain dense tensors computed by your kernels", value, c->t->v[at].line);
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
				if (path_in(r.path, tensor_bases) || type_of_torch(c, &r))
					static_add(c, "H07", "tensor-subclass", c->t->v[cl->at].line, c->t->v[cl->at].col,
						   "class %s (line %d) subclasses %s: its values can be produced outside the "
						   "timed call; %s", cl->name, c->t->v[cl->at].line, r.path, fix);
				i = r.end - 1;
			}
	}
	for_each_ref(c, subclass_refs, NULL);
	dynamic_subclasses(c);
	for_each_const_string(c, subclass_strings, NULL);
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

/* An attribute of a protected module assigned or deleted. */
static void patch_target(struct static_ctx *c, size_t k, size_t rhs, size_t rhs_end, int del, void *arg)
{
	const struct pytok_list *t = c->t;
	struct pv_ref r;
	(void)rhs, (void)rhs_end, (void)arg;
	if (!pv_ref_at(c->v, k, &r))
		return;
	/* `mm = torch.matmul` binds a name of its own; only an attribute of the module is patched */
	int own_name = r.end == r.start + 1 || pytok_is_name(t, r.start, "self");
	if (!own_name && protected_target(&r))
		static_add(c, "H08", "monkey-patch", t->v[k].line, t->v[k].col,
			   "line %d %s %s: replacing library functions can fake timing, synchronisation or "
			   "comparison; leave torch, time and numpy as they are", t->v[k].line, del ? "deletes" : "assigns to",
			   r.path);
}

/* Attributes whose replacement forges a timing or a comparison, whatever object holds them. */
static const char *const watched_attrs[] = { "elapsed_time", "record", "synchronize", "query", "wait", "perf_counter",
					     "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
					     "allclose", "isclose", "equal", "manual_seed", "current_stream", NULL };

/* setattr(X, name, value), object.__setattr__(X, ...), delattr(X, name). */
static void setattr_call(struct static_ctx *c, const struct pv_ref *r)
{
	const struct pytok_list *t = c->t;
	const struct pytok *k = &t->v[r->start];
	struct pv_arg a[4];
	size_t n = pv_call_args(t, r->end, a, 4);
	if (n < 2)
		return;
	struct pv_ref target;
	int have = t->v[a[0].a].kind == PT_NAME && pv_ref_at(c->v, a[0].a, &target);
	if (have && target.head == REF_SELF)
		return; /* setattr(self.fc, name, p): attributes of one's own (aliases of torch resolve elsewhere) */
	struct pv_const_info how;
	char *name = pv_const_string(c->v, a[1].a, a[1].b, &how);
	if (have && path_in(target.path, protected_roots) && !path_under(target.path, "torch.backends") &&
	    target.head == REF_IMPORT)
		static_add(c, "H08", "monkey-patch", k->line, k->col,
			   "%s on %s (line %d) replaces a library attribute, which can fake timing, synchronisation or "
			   "comparison; leave torch, time and numpy as they are", r->path, target.path, k->line);
	else if (!name || how.assembled)
		static_add(c, "H08", "computed-setattr", k->line, k->col,
			   "%s with an attribute name put together at run time (line %d) hides what it replaces, which "
			   "can fake timing or comparison; set attributes of your own objects by their written names",
			   r->path, k->line);
	else if (word_in(name, watched_attrs))
		static_add(c, "H08", "monkey-patch", k->line, k->col,
			   "%s of %s (line %d) replaces what the harness times or compares with; leave torch, time and "
			   "numpy as they are", r->path, name, k->line);
	free(name);
}

static void patch_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	const struct pytok *k = &c->t->v[r->start];
	if (r->called && ((r->head == REF_FREE && (!strcmp(r->path, "setattr") || !strcmp(r->path, "delattr") ||
						 !strcmp(r->path, "object.__setattr__") ||
						 !strcmp(r->path, "type.__setattr__") ||
						 !strcmp(r->path, "object.__delattr__")))))
		setattr_call(c, r);
	else if (r->head == REF_IMPORT && path_in(r->path, patch_tools))
		static_add(c, "H08", "mock", k->line, k->col,
			   "%s (line %d) patches library functions; leave torch, time and numpy as they are", r->path, k->line);
}

/* type(x).attr = f and x.__class__.attr = f: patching a class found through one of its objects. */
static void class_patch_target(struct static_ctx *c, size_t k, size_t rhs, size_t rhs_end, int del, void *arg)
{
	const struct pytok_list *t = c->t;
	(void)rhs, (void)rhs_end, (void)arg;
	size_t end = k;
	int via_type = pytok_is_name(t, k, "type") && pytok_is_op(t, k + 1, "(");
	if (via_type) {
		if (pytok_is_name(t, k + 2, "self") && pytok_is_op(t, k + 3, ")"))
			return;
		end = pytok_matching(t, k + 1) + 1;
	} else {
		while (end + 1 < t->n && (t->v[end].kind == PT_NAME || pytok_is_op(t, end, ".")) &&
		       !pytok_is_name(t, end, "__class__"))
			end++;
		if (!pytok_is_name(t, end, "__class__") || pytok_is_name(t, k, "self"))
			return;
		end++;
	}
	if (!pytok_is_op(t, end, ".") || end + 1 >= t->n || t->v[end + 1].kind != PT_NAME)
		return;
	static_add(c, "H08", "monkey-patch", t->v[k].line, t->v[k].col,
		   "line %d %s an attribute of a class reached through one of its objects (%s), which can fake "
		   "timing, synchronisation or comparison; leave library classes as they are", t->v[k].line,
		   del ? "deletes" : "assigns to", via_type ? "type(...)" : "__class__");
}

static void rule_h08(struct static_ctx *c)
{
	for_each_target(c, patch_target, NULL);
	for_each_target(c, class_patch_target, NULL);
	for_each_ref(c, patch_refs, NULL);
}

/* ---------- H13: reading the checker ---------- */

static const char *const py_introspect[] = { "gc", "inspect", "ctypes", "importlib", "sys._getframe", "sys.settrace",
					     "sys.setprofile", "sys.modules", "threading.settrace", "threading.setprofile",
					     "traceback.extract_stack", "traceback.walk_stack", "traceback.walk_tb",
					     "traceback.extract_tb", "traceback.StackSummary", "builtins.__import__", "ptrace",
					     "cffi", "dis", "_ctypes", "sys.addaudithook", "sys._current_frames", "sys.path",
					     "sys.meta_path", "sys.path_hooks", "sys.?", "builtins.?", NULL };
/* The same reached by name: getattr(sys, "_get" + "frame"), __builtins__["__import__"]. */
static const char *const introspect_names[] = { "__import__", "_getframe", "_current_frames", "f_back", "f_globals",
						"f_locals", "__globals__", "settrace", "setprofile", "get_objects",
						"get_referrers", "get_referents", NULL };
/* Code made from bytes or objects at run time: what runs was never read as source. */
static const char *const py_made_code[] = { "marshal", "types.FunctionType", "types.CodeType", "types.LambdaType",
					    "types.new_class", "pickle.loads", "pickle.Unpickler", "_pickle", "copyreg",
					    "dill", "cloudpickle", "codeop", "runpy", "zipimport", "imp", "pkgutil", "code",
					    "opcode", "builtins.eval", "builtins.exec", "builtins.compile", "timeit.timeit",
					    "timeit.repeat", "timeit.Timer", "torch.utils.benchmark", "doctest", "pdb", "bdb",
					    "trace", NULL };
/* Reading the clock or the random generator's state in forward tells timed calls from checked ones
 * (back-to-back calls, a freshly reseeded generator). */
static const char *const watch_probes[] = { "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
					    "time.monotonic_ns", "time.time", "time.time_ns", "time.process_time",
					    "time.process_time_ns", "time.thread_time", "time.thread_time_ns",
					    "time.clock_gettime", "time.clock_gettime_ns", "timeit.default_timer",
					    "datetime.datetime.now", "datetime.datetime.utcnow", "torch.initial_seed",
					    "torch.get_rng_state", "torch.random.initial_seed", "torch.random.get_rng_state",
					    "torch.default_generator", "torch.cuda.initial_seed", "torch.cuda.get_rng_state",
					    "torch.cuda.get_rng_state_all", "torch.cuda.default_generators",
					    "torch.cuda.Event.elapsed_time", NULL };
/* Setting the state of a random generator anywhere in the file: the harness draws every input with torch's
 * generator, so a candidate that seeds one (the global one, or its own with .manual_seed) can try to
 * replay draws it expects the harness to make and look the answers up. The seeds are the evaluation's
 * secret, so the replay cannot succeed: a flag that marks the attempt, never a rejection (a candidate
 * may seed its own initialisation). */
static const char *const seed_setters[] = { "torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
					    "torch.cuda.manual_seed_all", "torch.set_rng_state", "torch.random.set_rng_state",
					    "torch.cuda.set_rng_state", "torch.cuda.set_rng_state_all", "torch.random.fork_rng",
					    NULL };
static const char *const seed_methods[] = { "manual_seed", "set_state", NULL };
/* The worker's own modules (harness/worker/) and the entry module: the harness in the candidate's process. */
static const char *const harness_modules[] = { "__main__", "worker", "facts", "exchange", "sbtensors", "profiler",
					       "headers", "template", "nvcc_split", "probe", "ncu_target", "sb_candidate",
					       "harness", "stitchbench", NULL };
static const char *const frame_attrs[] = { "f_back", "f_locals", "f_globals", "f_code", "tb_frame", "gi_frame",
					   "cr_frame", "__globals__", "__closure__", "__code__", "gi_code", "cr_code",
					   "f_trace", "findCaller", "currentframe", "_getframe", NULL };
static const char *const code_fields[] = { "co_code", "co_consts", "co_names", "co_varnames", "co_linetable",
					   "co_lnotab", "co_exceptiontable", NULL };
static const char *const dynamic_code[] = { "eval", "exec", "compile", "__import__", NULL };
static const char *const cx_introspect[] = { "ptrace", "process_vm_readv", "process_vm_writev", "dlsym", "dlopen",
					     "RTLD_NEXT", "PTRACE_ATTACH", "PTRACE_PEEKDATA", "PTRACE_TRACEME", "mprotect",
					     "dl_iterate_phdr", NULL };

static const char *const h13_fix = "the expected outputs never enter the candidate's process: compute the result";

static void seed_finding(struct static_ctx *c, int line, int col, const char *what)
{
	size_t n = c->out->n;
	static_add(c, "H13", "seed-replay", line, col,
		   "%s (line %d) sets a random generator's state: the harness draws the inputs with torch's generator "
		   "from secret seeds, and replaying its draws to predict them is an attack that cannot work here; a "
		   "kernel needs no seed (flagged, not rejected)", what, line);
	if (c->out->n > n)
		c->out->v[c->out->n - 1].flag_only = 1;
}

static void introspect_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	const struct pytok *k = &c->t->v[r->start];
	if (r->head == REF_IMPORT && path_in(r->path, py_introspect))
		static_add(c, "H13", "introspection", k->line, k->col,
			   "%s (line %d) inspects the interpreter (frames, objects, memory or loaded modules); %s",
			   r->path, k->line, h13_fix);
	else if (r->head == REF_IMPORT && path_in(r->path, watch_probes) && c->hot[r->start])
		static_add(c, "H13", "watch-probe", k->line, k->col,
			   "forward reads %s (line %d): the clock or the generator's state tells timed calls from checked "
			   "ones, and every call must do the same work; remove it from forward", r->path, k->line);
	else if (r->head == REF_IMPORT && path_in(r->path, py_made_code))
		static_add(c, "H13", "dynamic-code", k->line, k->col,
			   "%s (line %d) makes code or objects from bytes at run time, hidden from the checks; write the "
			   "code out", r->path, k->line);
	else if (r->head == REF_IMPORT && path_in(r->path, seed_setters))
		seed_finding(c, k->line, k->col, r->path);
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
		else if (path_in(m->path, py_made_code))
			static_add(c, "H13", "dynamic-code", t->v[m->at].line, t->v[m->at].col,
				   "imports %s (line %d), which makes code from bytes at run time, hidden from the checks; "
				   "write the code out", m->path, t->v[m->at].line);
		else if (path_in(m->path, harness_modules))
			static_add(c, "H13", "harness-module", t->v[m->at].line, t->v[m->at].col,
				   "imports %s (line %d), a module of the harness itself, whose functions and state a "
				   "candidate could replace; import torch and your extension only", m->path, t->v[m->at].line);
	}
	for_each_ref(c, introspect_refs, NULL);
	for (size_t i = 0; i + 1 < t->n; i++) {
		char name[PV_NAME];
		if (pytok_is_op(t, i, ".") && t->v[i + 1].kind == PT_NAME) {
			pytok_text(t, i + 1, name, sizeof(name));
			if (word_in(name, frame_attrs))
				static_add(c, "H13", "frames", t->v[i + 1].line, t->v[i + 1].col,
					   ".%s (line %d) walks interpreter frames; %s", name, t->v[i + 1].line, h13_fix);
			else if (word_in(name, seed_methods) && pytok_is_op(t, i + 2, "("))
				seed_finding(c, t->v[i + 1].line, t->v[i + 1].col, name);
		}
		if (t->v[i].kind == PT_NAME && word_in((pytok_text(t, i, name, sizeof(name)), name), code_fields))
			static_add(c, "H13", "dynamic-code", t->v[i].line, t->v[i].col,
				   "%s (line %d) reads or rewrites a code object's bytecode, hidden from the checks; write "
				   "the code out", name, t->v[i].line);
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

static void introspect_strings(struct static_ctx *c, size_t at, const char *value, int assembled, void *arg)
{
	(void)assembled, (void)arg;
	if (!pytok_bare_string(c->t, at) && strcasestr(value, "stitchbench") && !strpbrk(value, " \t\n"))
		static_add(c, "H13", "harness-module", c->t->v[at].line, c->t->v[at].col,
			   "the string at line %d names the harness's own files or folders (a path or a marker file); a "
			   "candidate computes from its inputs and leaves the harness alone", c->t->v[at].line);
	else if (word_in(value, introspect_names))
		static_add(c, "H13", "introspection", c->t->v[at].line, c->t->v[at].col,
			   "the string %s (line %d) names a way into the interpreter's frames, objects or imports; %s",
			   value, c->t->v[at].line, h13_fix);
}

void rules_tamper(struct static_ctx *c)
{
	rule_h07(c);
	rule_h08(c);
	rule_h13(c);
	for_each_const_string(c, introspect_strings, NULL);
}
