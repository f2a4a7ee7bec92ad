/* rules_work.c - who does the work when ModelNew.forward runs: follows forward's call tree (functions,
 * methods, self attributes built in __init__, aliases) for PyTorch ops (H01) and except fallbacks (H02). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "pyvalue.h"
#include "rules.h"

/* Tensor methods that are the operators spelled out (x.mul(2) is x * 2): by a scalar they are glue, like
 * the operators themselves; with a tensor they are PyTorch's arithmetic. Dunders always count. */
static const char *const arith_methods[] = { "add", "add_", "sub", "sub_", "subtract", "subtract_", "mul", "mul_",
					     "multiply", "multiply_", "div", "div_", "divide", "divide_", "true_divide",
					     "true_divide_", "floor_divide", "floor_divide_", "remainder", "remainder_",
					     "pow", "pow_", "neg", "neg_", "negative", "negative_", NULL };
/* What the scalar arguments of those may call. */
static const char *const scalar_calls[] = { "float", "int", "abs", "min", "max", "round", "len", "pow", NULL };
static const char *const scalar_methods[] = { "item", "size", "numel", "dim", "element_size", "nelement", "ndim",
					      "shape", NULL };
/* operator's functions that compute nothing on a tensor. */
static const char *const operator_free[] = { "itemgetter", "index", "length_hint", "contains", "is_",
					     "is_not", "not_", "truth", "getitem", "setitem", "delitem", "concat",
					     "iconcat", "countOf", "indexOf", NULL };

/* nn classes that hold or arrange modules without computing anything themselves. */
static const char *const nn_free[] = { "Module", "Parameter", "Buffer", "ParameterList", "ParameterDict", "ModuleList",
				       "ModuleDict", "Sequential", "Identity", "Flatten", "Unflatten", NULL };

static const char *const torch_consts[] = { "float16", "float32", "float64", "half", "float", "double", "bfloat16",
					    "int", "long", "short", "int8", "int16", "int32", "int64", "uint8", "bool",
					    "complex64", "complex128", "strided", "channels_last", "contiguous_format",
					    "preserve_format", "inf", "nan", "pi", "e", NULL };

static const char *const work_prefixes[] = { "torch.linalg", "torch.fft", "torch.special", "torch.sparse", "torch._VF",
					     "torch._C._nn", "torch._C._VariableFunctions", "torch._C._linalg",
					     "torch._C._fft", "torch._C._special", "torch.ops.aten", "torch.ops.prims",
					     "torch._refs", "torch._prims", "torch._decomp", "torch.jit", "torch._dynamo",
					     "torch._inductor", "torch.compiler", "torch.func", "torch.vmap", NULL };

/* Subtrees of torch that hold settings, devices, tooling and other rules' matters, not operators. */
static const char *const torch_tooling[] = { "torch.cuda", "torch.backends", "torch.utils", "torch.autograd.graph",
					     "torch.library", "torch.testing", "torch.profiler", "torch.random", "torch.hub",
					     "torch.serialization", "torch.distributed", "torch.multiprocessing",
					     "torch.overrides", "torch.types", "torch.version", "torch.storage", "torch.ops",
					     "torch.classes", "torch.cpu", "torch.mps", "torch.xpu", "torch.fx", "torch.onnx",
					     "torch.package", "torch.export", "torch.amp", "torch.nn.init", "torch.nn.utils",
					     "torch.nn.parameter", "torch.futures", "torch.cuda.amp", "torch.distributions",
					     NULL };
/* Components through which torch re-exports its functional ops (torch.nn.modules.activation.F.relu). */
static const char *const functional_parts[] = { "F", "functional", "_VF", "_VariableFunctions", "_nn", "_refs", "_prims",
						"_decomp", "_ops", NULL };
static const char *const tensor_parts[] = { "Tensor", "TensorBase", "_TensorBase", NULL };

int torch_work(const char *path)
{
	if (!path_under(path, "torch") || !strcmp(path, "torch"))
		return 0;
	const char *tail = path_last(path);
	if (!strcmp(tail, "__call__") || !strcmp(tail, "__wrapped__") || !strcmp(tail, "__func__")) {
		/* torch.relu.__call__(x) is torch.relu(x) */
		char shorter[PV_PATH];
		snprintf(shorter, sizeof(shorter), "%.*s", (int)(tail - path - 1), path);
		return torch_work(shorter);
	}
	for (const char *const *p = work_prefixes; *p; p++)
		if (path_under(path, *p) && strcmp(path, *p))
			return 1;
	if (!strcmp(path, "torch.compile") || !strcmp(path, "torch.?"))
		return 1;
	const char *last = path_last(path);
	if (path_under(path, "torch.nn.functional"))
		return strcmp(path, "torch.nn.functional") && strcmp(last, "pad");
	if (path_in(path, torch_tooling))
		return 0; /* cuda, backends, utils, library, testing, ops.<yours>: other rules */
	/* a method reached through the class: torch.Tensor.erfc(x), torch._C.TensorBase.__matmul__(x, w) */
	char part[PV_NAME];
	int functional = 0, tensor = 0;
	for (const char *p = strchr(path, '.'); p; p = strchr(p + 1, '.')) {
		snprintf(part, sizeof(part), "%.*s", (int)strcspn(p + 1, "."), p + 1);
		if (p + 1 == last)
			break;
		functional |= word_in(part, functional_parts);
		tensor |= word_in(part, tensor_parts);
	}
	if (tensor)
		return !strcmp(last, "?") || tensor_method_computes(last);
	if (path_under(path, "torch.nn") && !functional) {
		/* torch.nn.Linear, torch.nn.modules.linear.Linear */
		return last[0] >= 'A' && last[0] <= 'Z' && !word_in(last, nn_free);
	}
	if (last[0] >= 'A' && last[0] <= 'Z')
		return 0; /* classes: torch.Size, torch.Generator; nn layers above */
	if (word_in(last, sb_torch_free) || word_in(last, torch_consts))
		return 0;
	/* a re-export (torch.functional.F.relu, torch.nn.modules.activation.F.gelu), a private spelling
	 * (torch._softmax), or any op name under torch (torch.functional.einsum) */
	if (functional)
		return strcmp(last, "pad") != 0;
	if (strchr(path + 6, '.') || last[0] == '_')
		return torch_op_spelling(last);
	return 1;
}

const char *work_advice(const char *path)
{
	const char *op = path_last(path);
	if (strstr(op, "mm") || strstr(op, "matmul") || strstr(op, "einsum") || strstr(op, "linear") ||
	    strstr(op, "Linear") || !strcmp(op, "@") || strstr(op, "dot"))
		return "write the GEMM as a CUDA kernel or call cuBLAS from the extension";
	if (strstr(op, "conv") || strstr(op, "Conv"))
		return "write the convolution as a CUDA kernel (or call cuDNN from the extension)";
	if (strstr(op, "compile") || path_under(path, "torch.jit"))
		return "the kernels torch.compile or TorchScript generate are PyTorch's: write your own";
	return "compute it in your own CUDA kernel and call that from forward";
}

/* ---------- the walk over forward's call tree ---------- */

struct walk {
	struct static_ctx *c;
	const char *id;          /* "H01", or "H02" for an except branch */
	int handler_line;
	const char *through;     /* H02: the function the except branch carries on in, after its try statement */
	unsigned char *seen_func, *seen_bind, *seen_class, *seen_lambda;
	unsigned char *judged;   /* per token: the '(' of a call check_call has judged */
	struct pvals *vals;      /* what expressions may hold (pyvalue.c), shared by every walk of the module */
	int hot;                 /* mark what it visits as running in forward */
	int depth;               /* calls followed inside each other */
};

/* Deeper call chains than this are not followed (a limit of the analysis, documented). */
#define MAX_WALK_DEPTH 48

/* Where a finding is shown: at the call in forward that led to it (`self.fc(x)`), when there is one. */
struct site {
	size_t at;
	char name[96];           /* what that call named: "self.fc", "layer" */
};

/* obj: what runs, e.g. "torch.matmul", "the tensor method x.sum()"; path picks the advice. */
static void report(struct walk *w, size_t at, const struct site *s, const char *rule, const char *obj, const char *path)
{
	const struct pytok_list *t = w->c->t;
	const struct pytok *k = &t->v[s ? s->at : at];
	char what[320];
	if (s)
		snprintf(what, sizeof(what), "calls %s (line %d), which runs %s (line %d)", s->name, k->line, obj,
			 t->v[at].line);
	else
		snprintf(what, sizeof(what), "calls %s (line %d)", obj, k->line);
	if (!strcmp(w->id, "H02") && w->through)
		static_add(w->c, "H02", rule, k->line, k->col,
			   "the except branch at line %d neither returns nor raises, so %s() carries on after the try "
			   "statement, where PyTorch does the work: it %s; re-raise the error instead of computing the "
			   "result with PyTorch", w->handler_line, w->through, what);
	else if (!strcmp(w->id, "H02"))
		static_add(w->c, "H02", rule, k->line, k->col,
			   "the except branch at line %d falls back to PyTorch: it %s; re-raise the error instead of "
			   "computing the result with PyTorch", w->handler_line, what);
	else
		static_add(w->c, "H01", rule, k->line, k->col, "forward %s; %s", what, work_advice(path));
}

static void scan(struct walk *w, size_t a, size_t b, int called_ctx, const struct site *s);

/* A function's own lines are where its findings show, whatever call led there. */
static void follow_func(struct walk *w, int f)
{
	const struct pv_func *fn = &w->c->v->funcs[f];
	if (w->seen_func[f] || fn->triton || w->depth >= MAX_WALK_DEPTH)
		return;
	w->seen_func[f] = 1;
	w->depth++;
	scan(w, fn->deco, fn->end, 0, NULL);
	w->depth--;
}

static void follow_class(struct walk *w, int c)
{
	if (w->seen_class[c])
		return;
	w->seen_class[c] = 1;
	int m;
	if ((m = pv_find_method(w->c->v, c, "forward")) >= 0)
		follow_func(w, m);
	if ((m = pv_find_method(w->c->v, c, "__call__")) >= 0)
		follow_func(w, m);
}

static void follow_bind(struct walk *w, size_t b, const struct site *s)
{
	const struct pv_bind *x = &w->c->v->binds[b];
	if (w->seen_bind[b] || w->depth >= MAX_WALK_DEPTH)
		return;
	w->seen_bind[b] = 1;
	w->depth++;
	scan(w, x->rhs, x->rhs_end, 1, s);
	w->depth--;
}

/* BK_PLAIN: a Python value that is no tensor (a list, a set, a string, a number, a logger). */
enum bound_kind { BK_VALUE, BK_EXTENSION, BK_INSTANCE, BK_PLAIN };

static enum bound_kind kind_of_binds(const struct pyview *v, const size_t *b, size_t nb, int *cls, int depth);

static int builds_extension(const struct pyview *v, int f)
{
	struct pv_ref r;
	for (size_t i = v->funcs[f].body; i < v->funcs[f].end; i++)
		if (v->t->v[i].kind == PT_NAME && pv_ref_at(v, i, &r) && path_under(r.path, "torch.utils.cpp_extension"))
			return 1;
	return 0;
}

/* Builtins whose result is never a tensor. */
static const char *const plain_builtins[] = { "set", "dict", "list", "tuple", "str", "int", "float", "bool", "len",
					      "range", "sorted", "frozenset", "bytes", "bytearray", "enumerate", "zip",
					      "object", "repr", "format", "id", "hash", NULL };

/* A display or literal: [..], {..}, a tuple, a string, a number. */
static int plain_literal(const struct pytok_list *t, size_t a, size_t b)
{
	if (t->v[a].kind == PT_STRING || t->v[a].kind == PT_NUMBER || pytok_is_op(t, a, "[") || pytok_is_op(t, a, "{"))
		return 1;
	if (!pytok_is_op(t, a, "("))
		return 0;
	size_t close = pytok_matching(t, a);
	if (close == a + 1)
		return 1;
	for (size_t k = a + 1; k < close && k < b; k++)
		if (t->v[k].depth == t->v[a].depth + 1 && pytok_is_op(t, k, ","))
			return 1;
	return 0;
}

/* What a binding holds, judged by the start of its right side: an extension module, an instance of a
 * class of this file, a plain Python value, or a value that may be a tensor. */
static enum bound_kind bound_kind(const struct pyview *v, size_t b, int *cls, int depth)
{
	struct pv_ref r;
	size_t more[16], n;
	if (depth > 4)
		return BK_VALUE;
	if (plain_literal(v->t, v->binds[b].rhs, v->binds[b].rhs_end))
		return BK_PLAIN;
	if (!pv_ref_at(v, v->binds[b].rhs, &r))
		return BK_VALUE;
	if (r.head == REF_CLASS && r.called) {
		*cls = r.target;
		return BK_INSTANCE;
	}
	if (r.head == REF_FUNC && r.called) /* ext = _get_ext(): a function that builds the extension */
		return builds_extension(v, r.target) ? BK_EXTENSION : BK_VALUE;
	if (path_under(r.path, "torch.utils.cpp_extension") || path_under(r.path, "importlib") ||
	    (path_under(r.path, "torch.ops") && !path_under(r.path, "torch.ops.aten") && !path_under(r.path, "torch.ops.prims")))
		return BK_EXTENSION;
	if (r.head == REF_IMPORT && !path_under(r.path, "torch") && r.ncomp == 1)
		return BK_EXTENSION; /* another name for a module that is not torch */
	if (r.head == REF_IMPORT && !path_under(r.path, "torch") && r.called && r.end < v->binds[b].rhs_end &&
	    pytok_matching(v->t, r.end) + 1 == v->binds[b].rhs_end)
		return BK_PLAIN; /* logging.getLogger(...), collections.deque(), queue.Queue() */
	if (r.head == REF_FREE && r.called && word_in(r.path, plain_builtins))
		return BK_PLAIN;
	if (r.called || r.end != v->binds[b].rhs_end)
		return BK_VALUE;
	if (r.head == REF_BOUND && r.ncomp == 1) /* ext2 = ext */
		n = pv_lookup(v, r.path, r.start, more, 16);
	else if (r.head == REF_SELF && r.ncomp == 2) /* self.ext = self._ext */
		n = pv_lookup_attr(v, v->binds[b].cls, path_last(r.path), more, 16);
	else
		return BK_VALUE;
	return kind_of_binds(v, more, n, cls, depth + 1);
}

/* An extension or an instance where any binding says so; plain only when every binding is plain, so
 * that `y = 0` before `y = x @ w` leaves y a tensor. */
static enum bound_kind kind_of_binds(const struct pyview *v, const size_t *b, size_t nb, int *cls, int depth)
{
	size_t plain = 0;
	for (size_t j = 0; j < nb; j++) {
		enum bound_kind k = bound_kind(v, b[j], cls, depth);
		if (k == BK_PLAIN)
			plain++;
		else if (k != BK_VALUE)
			return k;
	}
	return nb && plain == nb ? BK_PLAIN : BK_VALUE;
}

/* Whether [a, b) is a Python number: literals, arithmetic, math.*, x.size(0), .item(), names and self
 * attributes bound to such values, and the constructor's parameters (KernelBench passes numbers there). */
static int scalar_expr(const struct pyview *v, size_t a, size_t b, int depth)
{
	const struct pytok_list *t = v->t;
	if (depth > 4 || a >= b)
		return depth > 4 ? 0 : 1;
	for (size_t k = a; k < b; k++) {
		const struct pytok *x = &t->v[k];
		struct pv_ref r;
		size_t bind[16], nb;
		if (x->kind == PT_NUMBER || pytok_is_name(t, k, "True") || pytok_is_name(t, k, "False"))
			continue;
		if (x->kind == PT_OP) {
			if (pytok_is_op(t, k, "[") && k > a && (t->v[k - 1].kind == PT_NAME || pytok_is_op(t, k - 1, ")")))
				k = pytok_matching(t, k); /* x.shape[0], sizes[1] */
			else if (pytok_is_op(t, k, "[") || pytok_is_op(t, k, "{") || pytok_is_op(t, k, "@"))
				return 0;
			continue;
		}
		if (x->kind != PT_NAME || !pv_ref_at(v, k, &r))
			return 0;
		const char *last = path_last(r.path);
		if (path_under(r.path, "math") || (r.head == REF_FREE && word_in(r.path, scalar_calls))) {
			k = r.end - 1; /* the call's arguments are judged in turn */
			continue;
		}
		if (r.ncomp > 1 && word_in(last, scalar_methods) && r.head != REF_IMPORT) {
			k = r.called ? pytok_matching(t, r.end) : r.end - 1;
			continue;
		}
		k = r.end - 1;
		if (r.head == REF_PARAM && r.ncomp == 1) {
			int f = pv_func_at(v, r.start);
			if (f < 0 || strcmp(v->funcs[f].name, "__init__"))
				return 0;
			continue;
		}
		int cls = pv_self_class(v, r.start);
		if (r.head == REF_BOUND && r.ncomp == 1)
			nb = pv_lookup(v, r.path, r.start, bind, 16);
		else if (r.head == REF_SELF && r.ncomp == 2 && cls >= 0)
			nb = pv_lookup_attr(v, cls, last, bind, 16);
		else
			return 0;
		if (!nb)
			return 0;
		for (size_t j = 0; j < nb; j++)
			if (!scalar_expr(v, v->binds[bind[j]].rhs, v->binds[bind[j]].rhs_end, depth + 1))
				return 0;
	}
	return 1;
}

/* Whether calling method `name` with the arguments after `open` has PyTorch compute: a computing tensor
 * method (one looked up by a computed name too), except the operators' spelled-out forms by a scalar. */
static int method_computes(const struct pyview *v, const char *name, size_t open)
{
	if (!strcmp(name, "?"))
		return 1;
	if (!tensor_method_computes(name))
		return 0;
	if (!word_in(name, arith_methods))
		return 1;
	struct pv_arg args[8];
	size_t n = pv_call_args(v->t, open, args, 8);
	for (size_t i = 0; i < n; i++)
		if (args[i].star || !scalar_expr(v, args[i].a, args[i].b, 0))
			return 1;
	return 0;
}

/* The receiver of x.name(...): a method of an instance of a class of this file is followed, an
 * extension's functions are not PyTorch's, anything else may be a tensor. Returns 1 when the
 * receiver is not a tensor. */
static int not_a_tensor(struct walk *w, const size_t *b, size_t nb, const char *rest, int called)
{
	int cls = -1;
	char method[PV_NAME];
	snprintf(method, sizeof(method), "%.*s", (int)strcspn(rest, "."), rest);
	enum bound_kind k = kind_of_binds(w->c->v, b, nb, &cls, 0);
	if (k == BK_INSTANCE && called) {
		int m = pv_find_method(w->c->v, cls, method);
		if (m >= 0)
			follow_func(w, m);
	}
	return k != BK_VALUE;
}

static void tensor_method(struct walk *w, const struct pv_ref *r, const struct site *s)
{
	char obj[160];
	snprintf(obj, sizeof(obj), "the tensor method %s()", r->text);
	report(w, r->start, s, "tensor-method", obj, r->path);
}

/* Calling what `name` is bound to (`self.fc`, `layer`): each binding's right side runs, reported at
 * this call unless an outer call is already the place to show. */
static void call_binds(struct walk *w, const struct pv_ref *r, const char *name, const size_t *b, size_t nb,
		       const struct site *s)
{
	struct site here = { r->start, "" };
	snprintf(here.name, sizeof(here.name), "%s", name);
	for (size_t j = 0; j < nb; j++)
		follow_bind(w, b[j], s ? s : &here);
}

/* Whether token i is an argument of isinstance(...) or issubclass(...): a class named there is compared
 * with, never called (`isinstance(m, nn.Linear)` to pick a module's weights). */
static int in_type_test(const struct pytok_list *t, size_t i)
{
	for (size_t k = i; k-- > 0;) {
		if (t->v[k].depth >= t->v[i].depth)
			continue;
		if (!pytok_is_op(t, k, "(") || k == 0)
			return 0;
		if (pytok_is_name(t, k - 1, "isinstance") || pytok_is_name(t, k - 1, "issubclass"))
			return 1;
		/* a tuple of classes, isinstance(m, (nn.Linear, nn.Conv2d)): look at what holds the tuple */
		if (!pytok_is_op(t, k - 1, ",") && !pytok_is_op(t, k - 1, "("))
			return 0;
		i = k;
	}
	return 0;
}

static void handle_torch(struct walk *w, const struct pv_ref *r, int called, const struct site *s)
{
	const char *last = path_last(r->path);
	int constant = word_in(last, torch_consts) || (last[0] == '_' && !torch_op_spelling(last));
	char obj[200];
	if (!torch_work(r->path) || (!called && constant) || (!called && in_type_test(w->c->t, r->start)))
		return;
	if (r->dynamic || !strcmp(path_last(r->path), "?"))
		snprintf(obj, sizeof(obj), "a function of %.*s looked up by a name computed at run time (%s)",
			 (int)(strlen(r->path) - 2), r->path, r->via[0] ? r->via : r->text);
	else if (r->via[0])
		snprintf(obj, sizeof(obj), "%s through the alias %s", r->path, r->via);
	else
		snprintf(obj, sizeof(obj), "%s%s", r->path, called ? "" : " (passed as a function)");
	report(w, r->start, s, strchr(r->path, '?') ? "torch-getattr" : r->via[0] ? "torch-alias" : "torch-op", obj, r->path);
}

/* operator.matmul(a, b), functools.reduce(operator.add, xs), operator.methodcaller("erfc"): the
 * operators and tensor methods by another name. */
static void handle_operator(struct walk *w, const struct pv_ref *r, const struct site *s)
{
	const char *fn = path_last(r->path);
	char obj[200];
	if (!strcmp(fn, "methodcaller") || !strcmp(fn, "attrgetter")) {
		struct pv_arg args[4];
		size_t n = r->called ? pv_call_args(w->c->t, r->end, args, 4) : 0;
		char *name = n ? pv_const_string(w->c->v, args[0].a, args[0].b, NULL) : NULL;
		if (!n || !name || tensor_method_computes(name)) {
			snprintf(obj, sizeof(obj), "the tensor method %s() through operator.%s", name ? name : "?", fn);
			report(w, r->start, s, "tensor-method", obj, name ? name : "?");
		}
		free(name);
	} else if (!word_in(fn, operator_free)) {
		snprintf(obj, sizeof(obj), "%s, PyTorch's %s on tensors", r->path, fn);
		report(w, r->start, s, "torch-op", obj, strstr(fn, "matmul") ? "@" : fn);
	}
}

static void handle_ref(struct walk *w, const struct pv_ref *r, int called_ctx, const struct site *s)
{
	const struct pyview *v = w->c->v;
	int called = r->called || called_ctx;
	size_t b[16], nb;
	const char *dot = strchr(r->path, '.');
	if (path_under(r->path, "torch")) {
		handle_torch(w, r, called, s);
	} else if (r->head == REF_IMPORT && path_under(r->path, "operator") && r->ncomp == 2) {
		handle_operator(w, r, s);
	} else if (r->head == REF_FUNC) {
		follow_func(w, r->target);
	} else if (r->head == REF_CLASS) {
		follow_class(w, r->target);
	} else if (r->head == REF_SELF && dot) {
		char attr[PV_NAME], name[PV_NAME + 8];
		snprintf(attr, sizeof(attr), "%.*s", (int)strcspn(dot + 1, "."), dot + 1);
		const char *more = dot + 1 + strlen(attr);
		int cls = pv_self_class(v, r->start), m = pv_find_method(v, cls, attr);
		if (m >= 0) {
			follow_func(w, m);
			return;
		}
		nb = pv_lookup_attr(v, cls, attr, b, 16);
		snprintf(name, sizeof(name), "self.%s", attr);
		if (!*more || !strcmp(more, ".forward") || !strcmp(more, ".__call__")) {
			if (called)
				call_binds(w, r, name, b, nb, s);
		} else if (!not_a_tensor(w, b, nb, more + 1, called) && called && method_computes(v, path_last(r->path), r->end)) {
			tensor_method(w, r, s);
		}
	} else if (r->head == REF_BOUND) {
		char name[PV_NAME];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->path, "."), r->path);
		nb = pv_lookup(v, name, r->start, b, 16);
		if (!dot) {
			if (called)
				call_binds(w, r, name, b, nb, s);
		} else if (!not_a_tensor(w, b, nb, dot + 1, called) && called && method_computes(v, path_last(r->path), r->end)) {
			tensor_method(w, r, s);
		}
	} else if ((r->head == REF_PARAM || r->head == REF_FREE) && dot && called && !starts_with(r->path, "super()") &&
		   method_computes(v, path_last(r->path), r->end)) {
		tensor_method(w, r, s);
	}
}

/* x(...).name(...): a method on what a call returned. A function of this file may return anything
 * (an extension module, say); everything else returns tensors here. */
static void result_method(struct walk *w, size_t dot, const struct site *s)
{
	const struct pytok_list *t = w->c->t;
	char m[PV_NAME], obj[160];
	pytok_text(t, dot + 1, m, sizeof(m));
	if (!method_computes(w->c->v, m, dot + 2))
		return;
	if (pytok_is_op(t, dot - 1, ")")) {
		size_t open = pytok_opening(t, dot - 1), k = open;
		while (k > 0 && (t->v[k - 1].kind == PT_NAME || pytok_is_op(t, k - 1, ".")))
			k--;
		struct pv_ref r;
		if (k < open && pv_ref_at(w->c->v, k, &r) && (r.head == REF_FUNC || r.head == REF_CLASS))
			return;
	}
	snprintf(obj, sizeof(obj), "the tensor method .%s()", m);
	report(w, dot + 1, s, "tensor-method", obj, m);
}

/* Builtins that call what they are given. */
static const char *const calling_builtins[] = { "map", "filter", "sorted", "min", "max", NULL };

/* Tensor methods that call what they are given. */
static const char *const calling_methods[] = { "apply_", "map_", "map2_", "register_hook", NULL };

/* Whether the call of v whose '(' is at open may call its arguments: anything but a builtin that only
 * stores, converts or inspects them (len, isinstance, dict, iter), or a tensor's method (out.copy_(y)). */
static int calls_its_arguments(const struct pytok_list *t, const struct pval *v, size_t open)
{
	char m[PV_NAME];
	if (v->f == VAL_BUILTIN)
		return word_in(v->builtin, calling_builtins);
	if (v->f == VAL_TENSOR && open >= 2 && pytok_is_op(t, open - 2, ".") && t->v[open - 1].kind == PT_NAME) {
		pytok_text(t, open - 1, m, sizeof(m));
		return (!tensor_method_free(m) && !tensor_method_computes(m)) || word_in(m, calling_methods);
	}
	return 1;
}

/* What a value may be, when it is called, runs as forward does: the functions, lambdas and classes of
 * the file it may hold. */
static void follow_values(struct walk *w, const struct pval *v, size_t at, const struct site *s)
{
	struct site here = { at, "" };
	const struct pytok_list *t = w->c->t;
	if (w->depth >= MAX_WALK_DEPTH)
		return;
	for (int i = 0; i < v->nfunc && (v->f & VAL_FUNC); i++)
		follow_func(w, v->func[i]);
	for (int i = 0; i < v->ncls && (v->f & VAL_CLASS); i++)
		follow_class(w, v->cls[i]);
	for (int i = 0; i < v->ninst && (v->f & VAL_INST); i++)
		follow_class(w, v->inst[i]);
	for (int i = 0; i < v->nlam && (v->f & VAL_LAMBDA); i++) {
		size_t a, b, lam = v->lam[i];
		if (w->seen_lambda[lam])
			continue;
		w->seen_lambda[lam] = 1;
		pval_lambda_body(t, lam, &a, &b);
		snprintf(here.name, sizeof(here.name), "the lambda of line %d", t->v[lam].line);
		w->depth++;
		scan(w, a, b, 0, s ? s : &here);
		w->depth--;
	}
}

/* Whether the walk's id already has a finding on the line where one at token `at` would show. */
static int already_reported(struct walk *w, size_t at, const struct site *s)
{
	int line = w->c->t->v[s ? s->at : at].line;
	for (size_t i = 0; i < w->c->out->n; i++)
		if (!strcmp(w->c->out->v[i].id, w->id) && w->c->out->v[i].line == line)
			return 1;
	return 0;
}

/* A call of the tainted value at tokens [a, b), or (callee not NULL) that value handed to the call of
 * `callee`. */
static void report_value(struct walk *w, size_t a, size_t b, const struct pval *v, const char *callee,
			 const struct site *s)
{
	const struct pytok_list *t = w->c->t;
	char text[72], reach[200], obj[360];
	size_t from = t->v[a].off, to = t->v[b - 1].off + t->v[b - 1].len;
	int via_hot = v->nvia && !v->direct;
	for (int i = 0; i < v->nvia; i++)
		via_hot &= w->c->hot[v->via[i]] || w->judged[v->via[i]];
	if (already_reported(w, a, s) || via_hot)
		return; /* the calls whose results this is, in forward's call tree, are reported there */
	snprintf(text, sizeof(text), "%.*s%s", (int)(to - from > 60 ? 60 : to - from), t->src + from,
		 to - from > 60 ? "..." : "");
	if (v->why[0] && t->v[v->why_at].line != t->v[a].line)
		snprintf(reach, sizeof(reach), "%s from line %d", v->why, t->v[v->why_at].line);
	else if (v->why[0])
		snprintf(reach, sizeof(reach), "%s", v->why);
	else
		snprintf(reach, sizeof(reach), "the nn layer %s", v->path[0] ? v->path : "of torch.nn");
	if (callee)
		snprintf(obj, sizeof(obj), "%s with %s as an argument, which reaches %s", callee, text, reach);
	else
		snprintf(obj, sizeof(obj), "%s, which reaches %s", text, reach);
	report(w, a, s, "torch-value", obj, (v->f & VAL_OP) && v->path[0] ? v->path : v->why);
}

/* Whether what reference r names has a binding handle_ref follows: a name or self attribute bound by
 * name (not only through setattr with a computed name), or anything else it resolves. */
static int named_binding(const struct pyview *v, const struct pv_ref *r)
{
	size_t b[1];
	char first[PV_NAME];
	const char *dot = strchr(r->path, '.');
	if (r->head == REF_BOUND) {
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(r->path, "."), r->path);
		return pv_lookup(v, first, r->start, b, 1) > 0;
	}
	if (r->head == REF_SELF && dot && !strchr(dot + 1, '.'))
		return pv_lookup_attr(v, pv_self_class(v, r->start), dot + 1, b, 1) > 0;
	return 1;
}

/* A call in forward's call tree, judged by the values that reach it (pyvalue.c): calling a torch op
 * that a container, a descriptor, a class attribute or a lookup door carried there, or handing one to
 * something that may call it. The torch ops named on the spot are handle_ref's; this finds them
 * whatever carries them. */
static void check_call(struct walk *w, size_t open, size_t lo, const struct site *s)
{
	const struct pytok_list *t = w->c->t;
	size_t start = pval_callee(t, open);
	struct pval cv;
	if (start < lo || start >= open)
		return;
	struct pv_ref r;
	w->judged[open] = 1;
	pval_expr(w->vals, start, open, &cv);
	follow_values(w, &cv, start, s);
	/* a layer called by the name it is bound to (self.fc(x), layer(x)) is handle_ref's, once per binding */
	if ((cv.f & VAL_MODULE) && pv_ref_at(w->c->v, start, &r) && r.end == open && named_binding(w->c->v, &r))
		cv.f &= ~VAL_MODULE;
	if (cv.f & (VAL_TAINT | VAL_MODULE))
		report_value(w, start, open, &cv, NULL, s);
	if (!calls_its_arguments(t, &cv, open))
		return;
	struct pv_arg args[32];
	size_t n = pv_call_args(t, open, args, 32);
	char callee[72];
	size_t from = t->v[start].off, to = t->v[open - 1].off + t->v[open - 1].len;
	snprintf(callee, sizeof(callee), "%.*s", (int)(to - from > 60 ? 60 : to - from), t->src + from);
	for (size_t i = 0; i < n; i++) {
		struct pval av;
		if (args[i].a >= args[i].b)
			continue;
		pval_expr(w->vals, args[i].a, args[i].b, &av);
		follow_values(w, &av, args[i].a, s);
		if (av.f & VAL_TAINT)
			report_value(w, args[i].a, args[i].b, &av, callee, s);
	}
}

static const struct pv_handler *handler_at(const struct pyview *v, size_t i)
{
	for (size_t h = 0; h < v->nhandlers; h++)
		if (v->handlers[h].at == i)
			return &v->handlers[h];
	return NULL;
}

/* `x = ...`, `x += ...`: the target of an assignment is not a use of what x held. */
static int assigned(const struct pytok_list *t, const struct pyview *v, const struct pv_ref *r)
{
	if (!pv_stmt_start(v, r->start) || r->end >= t->n || t->v[r->end].kind != PT_OP)
		return 0;
	const char *op = t->src + t->v[r->end].off;
	size_t n = t->v[r->end].len;
	return op[n - 1] == '=' && !(n == 2 && (op[0] == '=' || op[0] == '!' || op[0] == '<' || op[0] == '>'));
}

static void scan(struct walk *w, size_t a, size_t b, int called_ctx, const struct site *s)
{
	const struct pytok_list *t = w->c->t;
	const struct pyview *v = w->c->v;
	for (size_t i = a; i < b && i < t->n; i++) {
		const struct pv_handler *h = !strcmp(w->id, "H01") ? handler_at(v, i) : NULL;
		if (h) { /* an except branch is H02's to judge */
			for (size_t k = i; k < h->end && w->hot; k++)
				w->c->hot[k] = 1;
			i = h->end - 1;
			continue;
		}
		if (w->hot)
			w->c->hot[i] = 1;
		for (size_t f = 0; f < v->nfuncs; f++)
			if (v->funcs[f].triton && v->funcs[f].deco == i && v->funcs[f].end > i)
				i = v->funcs[f].end - 1; /* GPU code written in Python: never run by the interpreter */
		struct pv_ref r;
		if (t->v[i].kind == PT_NAME && pv_ref_at(v, i, &r)) {
			if (!assigned(t, v, &r))
				handle_ref(w, &r, called_ctx, s);
			for (size_t k = i; k < r.end && w->hot; k++)
				w->c->hot[k] = 1;
			i = r.end - 1;
		} else if ((pytok_is_op(t, i, "@") || pytok_is_op(t, i, "@=")) && !pv_stmt_start(v, i)) {
			report(w, i, s, "matmul-operator", "the @ operator (torch.matmul)", "@");
		} else if (pytok_is_op(t, i, ".") && i > a && i + 2 < t->n && t->v[i + 1].kind == PT_NAME &&
			   pytok_is_op(t, i + 2, "(") && (pytok_is_op(t, i - 1, ")") || pytok_is_op(t, i - 1, "]"))) {
			result_method(w, i, s);
		} else if (pytok_is_op(t, i, ")")) {
			size_t open = pytok_opening(t, i);
			if (open >= a && pval_is_call(t, open))
				check_call(w, open, a, s); /* at its end: what its arguments name is reported first */
		}
	}
}

/* ---------- the rules ---------- */

static void walk_init(struct walk *w, struct static_ctx *c, const char *id)
{
	memset(w, 0, sizeof(*w));
	w->c = c;
	w->id = id;
	w->seen_func = xcalloc(c->v->nfuncs + 1, 1);
	w->seen_bind = xcalloc(c->v->nbinds + 1, 1);
	w->seen_class = xcalloc(c->v->nclasses + 1, 1);
	w->seen_lambda = xcalloc(c->t->n + 1, 1);
	w->judged = xcalloc(c->t->n + 1, 1);
}

static void walk_release(struct walk *w)
{
	free(w->seen_func);
	free(w->seen_bind);
	free(w->seen_class);
	free(w->seen_lambda);
	free(w->judged);
}

/* ---------- code that runs in the timed call without being forward's body ---------- */

/* nn.Module.__call__ runs these around forward. */
static const char *const hook_names[] = { "register_forward_hook", "register_forward_pre_hook",
					  "register_module_forward_hook", "register_module_forward_pre_hook",
					  "_forward_hooks", "_forward_pre_hooks", "_global_forward_hooks",
					  "_global_forward_pre_hooks", "_forward_hooks_with_kwargs",
					  "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called", NULL };
/* What nn.Module.__call__ calls: rebinding one of them replaces forward. */
static const char *const call_names[] = { "forward", "__call__", "_call_impl", "_wrapped_call_impl", NULL };

/* Code that runs when the model is called: judged as forward is, findings shown at `at`. */
static void root(struct walk *w, size_t at, size_t a, size_t b, const char *what)
{
	struct site s = { at, "" };
	snprintf(s.name, sizeof(s.name), "%s", what);
	scan(w, a, b, 1, &s);
}

static void hook_strings(struct static_ctx *c, size_t at, const char *value, int assembled, void *arg)
{
	(void)assembled, (void)arg;
	if (word_in(value, hook_names))
		static_add(c, "H01", "forward-hook", c->t->v[at].line, c->t->v[at].col,
			   "the string %s (line %d) names a hook that runs inside the timed call, outside forward; do all "
			   "the work in forward and install no hooks", value, c->t->v[at].line);
}

static void hooks(struct walk *w)
{
	for_each_const_string(w->c, hook_strings, NULL);
	const struct pytok_list *t = w->c->t;
	char name[PV_NAME];
	for (size_t i = 0; i < t->n; i++) {
		if (!name_in(t, i, hook_names, name, sizeof(name)))
			continue;
		static_add(w->c, "H01", "forward-hook", t->v[i].line, t->v[i].col,
			   "%s (line %d) installs a hook that runs inside the timed call, outside forward, where the "
			   "checks do not follow it; do all the work in forward and install no hooks", name, t->v[i].line);
		if (pytok_is_op(t, i + 1, "("))
			root(w, i, i + 2, pytok_matching(t, i + 1), "the forward hook");
	}
}

/* `self.forward = self._fast` in a method: the instance picks one of its class's own methods, which are
 * judged as forward is; nothing is hidden, so it is no finding (a choice made after the class, or of
 * something else, is). */
static int own_method_choice(struct static_ctx *c, size_t k, int ncomp, size_t rhs, size_t rhs_end)
{
	struct pv_ref r;
	int cls = pv_self_class(c->v, k);
	if (ncomp != 2 || !pytok_is_name(c->t, k, "self") || cls < 0 || !pv_ref_at(c->v, rhs, &r) || r.end != rhs_end ||
	    r.called || r.head != REF_SELF || r.ncomp != 2)
		return 0;
	return pv_find_method(c->v, cls, path_last(r.path)) >= 0;
}

static void rebind_target(struct static_ctx *c, size_t k, size_t rhs, size_t rhs_end, int del, void *arg)
{
	struct walk *w = arg;
	const struct pytok_list *t = c->t;
	const struct pytok *x = &t->v[k];
	struct pv_ref r;
	if (del || !pv_ref_at(c->v, k, &r))
		return;
	/* the target as written, where an alias would lead elsewhere: resolving it would follow the very
	 * binding being made (self.__dict__["forward"] keeps its resolved path self.forward) */
	const char *raw = r.via[0] ? r.text : r.path;
	const char *last = path_last(raw);
	r.ncomp = 1;
	for (const char *p = raw; *p; p++)
		r.ncomp += *p == '.';
	if (pytok_is_name(t, k, "type") && pytok_is_op(t, k + 1, "(")) {
		/* type(self).forward = f */
		size_t close = pytok_matching(t, k + 1);
		if (pytok_is_op(t, close + 1, ".") && name_in(t, close + 2, call_names, (char[PV_NAME]){ 0 }, PV_NAME) &&
		    close + 3 == rhs - 1) {
			static_add(c, "H01", "forward-rebound", x->line, x->col,
				   "line %d rebinds forward on the model's class, so the code that runs when the model is "
				   "called is not forward's body; define forward in ModelNew's class body", x->line);
			root(w, k, rhs, rhs_end, "forward");
		}
		return;
	}
	int in_class = pv_class_body_at(c->v, k) >= 0 && r.ncomp == 1;
	if (in_class && word_in(last, call_names)) {
		root(w, k, rhs, rhs_end, "forward"); /* `forward = make_forward()` in the class body */
	} else if (r.ncomp > 1 && word_in(last, call_names)) {
		if (!own_method_choice(c, k, r.ncomp, rhs, rhs_end))
			static_add(c, "H01", "forward-rebound", x->line, x->col,
				   "line %d rebinds %s, so the code that runs when the model is called is not forward's "
				   "body; define forward in ModelNew's class body and leave it there", x->line, r.text);
		root(w, k, rhs, rhs_end, r.text);
	} else if (r.ncomp > 1 && (!strcmp(last, "__class__") || !strcmp(last, "__bases__"))) {
		static_add(c, "H13", "class-swap", x->line, x->col,
			   "line %d assigns %s: an object that changes class runs code other than the code that was "
			   "checked; keep every object the class it was built as", x->line, r.text);
		root(w, k, rhs, rhs_end, r.text);
	} else if (r.ncomp > 1 && word_in(last, hook_names)) {
		root(w, k, rhs, rhs_end, "the forward hook"); /* self._forward_hooks[0] = f */
	} else if (!strcmp(r.text, "ModelNew") && pv_func_at(c->v, k) < 0 && pv_class_body_at(c->v, k) < 0) {
		static_add(c, "H01", "model-rebound", x->line, x->col,
			   "line %d binds the name ModelNew to something other than its class statement, so the model "
			   "the harness builds is not the class that was checked; define ModelNew once, as a class", x->line);
		root(w, k, rhs, rhs_end, "ModelNew");
	}
	/* globals()["ModelNew"] = ..., vars(mod)["forward"] = ... */
	for (size_t j = r.end; j < rhs && j < t->n; j++) {
		if (!pytok_is_op(t, j, "[") || t->v[j + 1].kind != PT_STRING)
			continue;
		char *key = pytok_string_value(t, j + 1, NULL);
		if (key && (!strcmp(key, "ModelNew") || word_in(key, call_names))) {
			static_add(c, "H01", "model-rebound", x->line, x->col,
				   "line %d binds %s through a namespace's dictionary, so what runs is not the code that "
				   "was checked; define ModelNew and its forward as written code", x->line, key);
			root(w, k, rhs, rhs_end, key);
		}
		free(key);
	}
}

/* setattr(X, "forward", f), object.__setattr__(X, "forward", f), self.__setattr__("forward", f),
 * setattr(module, "ModelNew", cls). */
static void rebind_setattr(struct walk *w)
{
	const struct pytok_list *t = w->c->t;
	for (size_t i = 0; i + 1 < t->n; i++) {
		int plain = pytok_is_name(t, i, "setattr") && !(i > 0 && pytok_is_op(t, i - 1, "."));
		if (!(plain || pytok_is_name(t, i, "__setattr__")) || !pytok_is_op(t, i + 1, "("))
			continue;
		struct pv_arg a[4];
		size_t n = pv_call_args(t, i + 1, a, 4);
		if (n != 3 && !(n == 2 && !plain && i > 0 && pytok_is_op(t, i - 1, ".")))
			continue;
		if (n == 2) { /* obj.__setattr__(name, value): the receiver is the object */
			a[2] = a[1];
			a[1] = a[0];
		}
		char *name = pv_const_string(w->c->v, a[1].a, a[1].b, NULL);
		if (name && (word_in(name, call_names) || !strcmp(name, "ModelNew"))) {
			static_add(w->c, "H01", "forward-rebound", t->v[i].line, t->v[i].col,
				   "setattr (line %d) rebinds %s, so the code that runs when the model is called is not the "
				   "code that was checked; define ModelNew and its forward in the class statement",
				   t->v[i].line, name);
			root(w, i, a[2].a, a[2].b, name);
		}
		free(name);
	}
}

/* __new__ or a metaclass on ModelNew: constructing it may return another object. Decorators on the
 * class may replace it. __getattribute__ and __getattr__ run when forward is looked up. */
static void model_construction(struct walk *w, int mn)
{
	const struct pyview *v = w->c->v;
	const struct pytok_list *t = w->c->t;
	const struct pv_class *cl = &v->classes[mn];
	int m;
	if ((m = pv_find_method(v, mn, "__new__")) >= 0) {
		const struct pytok *k = &t->v[v->funcs[m].def];
		static_add(w->c, "H01", "model-new", k->line, k->col,
			   "ModelNew defines __new__ (line %d), so building it may return another object than a ModelNew; "
			   "remove __new__ and let nn.Module build the model", k->line);
		follow_func(w, m);
	}
	for (size_t i = cl->bases; i < cl->bases_end; i++)
		if (pytok_is_name(t, i, "metaclass") && pytok_is_op(t, i + 1, "=")) {
			static_add(w->c, "H01", "model-new", t->v[i].line, t->v[i].col,
				   "ModelNew has a metaclass (line %d), which decides what building the model returns; "
				   "derive ModelNew from nn.Module only", t->v[i].line);
			root(w, i, i + 2, cl->bases_end, "the metaclass");
		}
	for (size_t k = cl->at; k > 0 && t->v[k - 1].kind == PT_NEWLINE;) {
		size_t p = k - 1;
		while (p > 0 && !pv_stmt_start(v, p))
			p--;
		if (!pytok_is_op(t, p, "@"))
			break;
		root(w, p, p + 1, k - 1, "the class decorator");
		k = p;
	}
	if ((m = pv_find_method(v, mn, "__getattribute__")) >= 0)
		follow_func(w, m);
	if ((m = pv_find_method(v, mn, "__getattr__")) >= 0)
		follow_func(w, m);
}

/* Whether an except branch leaves its function or re-raises somewhere in its body. */
static int handler_exits(const struct pytok_list *t, const struct pv_handler *h)
{
	for (size_t i = h->body; i < h->end && i < t->n; i++)
		if (pytok_is_name(t, i, "raise") || pytok_is_name(t, i, "return"))
			return 1;
	return 0;
}

static void rule_h01_h02(struct static_ctx *c)
{
	struct walk w;
	struct pvals *vals = pvals_new(c->v);
	int mn = c->v->model_new;
	walk_init(&w, c, "H01");
	w.vals = vals;
	w.hot = 1;
	if (mn >= 0) {
		int m = pv_find_method(c->v, mn, "forward");
		if (m >= 0)
			follow_func(&w, m);
		if ((m = pv_find_method(c->v, mn, "__call__")) >= 0)
			follow_func(&w, m);
		model_construction(&w, mn);
	}
	hooks(&w);
	for_each_target(c, rebind_target, &w);
	rebind_setattr(&w);
	walk_release(&w);
	for (size_t h = 0; h < c->v->nhandlers; h++) {
		const struct pv_handler *hd = &c->v->handlers[h];
		walk_init(&w, c, "H02");
		w.vals = vals;
		w.handler_line = c->t->v[hd->at].line;
		scan(&w, hd->body, hd->end, 0, NULL);
		walk_release(&w);
		/* A branch that only notes the failure (sets a flag, logs) lets its function carry on after the
		 * try statement: PyTorch code there is the fallback as much as code inside the branch. */
		int f = pv_func_at(c->v, hd->at);
		if (f < 0 || handler_exits(c->t, hd) || c->v->funcs[f].end <= hd->end)
			continue;
		walk_init(&w, c, "H02");
		w.vals = vals;
		w.handler_line = c->t->v[hd->at].line;
		w.through = c->v->funcs[f].name;
		scan(&w, hd->end, c->v->funcs[f].end, 0, NULL);
		walk_release(&w);
	}
	pvals_free(vals);
}

/* The reference by name: "Model" put together or written as a string (globals()["Model"],
 * getattr(module, "Mo" + "del")), and the module the worker imports the problem as. */
static void model_strings(struct static_ctx *c, size_t at, const char *value, int assembled, void *arg)
{
	(void)assembled, (void)arg;
	const struct pytok *k = &c->t->v[at];
	if (!strcmp(value, "Model") || !strcmp(value, "sb_problem"))
		static_add(c, "H03", "names-model", k->line, k->col,
			   "the string \"%s\" (line %d) names the reference implementation or its module; ModelNew "
			   "must compute the result with its own kernels, not look the reference up", value, k->line);
}

/* H03: ModelNew built on the reference, or any use of the name Model outside its own definition. */
static void rule_h03(struct static_ctx *c)
{
	for_each_const_string(c, model_strings, NULL);
	for (size_t i = 0; i < c->v->nimports; i++)
		if (path_under(c->v->imports[i].path, "sb_problem")) {
			const struct pytok *k = &c->t->v[c->v->imports[i].at];
			static_add(c, "H03", "names-model", k->line, k->col,
				   "imports sb_problem (line %d), the module the harness loads the reference from; ModelNew "
				   "must compute the result with its own kernels", k->line);
		}
	const struct pyview *v = c->v;
	int mn = v->model_new, model = pv_find_class(v, "Model");
	if (mn >= 0 && pv_class_inherits(v, mn, "Model")) {
		const struct pytok *k = &c->t->v[v->classes[mn].at];
		static_add(c, "H03", "inherits-model", k->line, k->col,
			   "ModelNew inherits from Model (line %d), so the reference's code runs in its place; derive "
			   "ModelNew from nn.Module and call your own kernels", k->line);
	}
	for (size_t i = 0; i < c->t->n; i++) {
		if (pytok_is_name(c->t, i, "__subclasses__")) {
			const struct pytok *k = &c->t->v[i];
			static_add(c, "H03", "finds-model", k->line, k->col,
				   "__subclasses__ (line %d) lists the classes derived from a class, the reference Model "
				   "among them; ModelNew must compute with its own kernels, not find the reference", k->line);
			continue;
		}
		if (!pytok_is_name(c->t, i, "Model") || (i > 0 && pytok_is_op(c->t, i - 1, ".")))
			continue;
		if (model >= 0 && i >= v->classes[model].at && i < v->classes[model].end)
			continue;
		if (mn >= 0 && i >= v->classes[mn].bases && i < v->classes[mn].bases_end)
			continue;
		const struct pytok *k = &c->t->v[i];
		static_add(c, "H03", "uses-model", k->line, k->col,
			   "line %d uses Model, the reference implementation; ModelNew must compute the result with its "
			   "own kernels, not by calling or importing the reference", k->line);
	}
}

/* H04: nothing in the file could be a custom kernel. */
static void rule_h04(struct static_ctx *c)
{
	const struct pyview *v = c->v;
	for (size_t i = 0; i < c->cx->n; i++)
		if (cx_is(c->cx, i, CX_IDENT, "__global__"))
			return;
	for (size_t f = 0; f < v->nfuncs; f++)
		if (v->funcs[f].triton)
			return;
	for (size_t i = 0; i < c->t->n; i++) {
		struct pv_ref r;
		if (c->t->v[i].kind != PT_NAME || !pv_ref_at(v, i, &r) || !r.called)
			continue;
		if (path_under(r.path, "torch.utils.cpp_extension") || path_under(r.path, "cupy.RawKernel") ||
		    path_under(r.path, "cupy.RawModule") || path_under(r.path, "cupy.ElementwiseKernel") ||
		    path_under(r.path, "torch.cuda.jiterator") || path_under(r.path, "torch.ops.load_library"))
			return;
	}
	int line = v->model_new >= 0 ? c->t->v[v->classes[v->model_new].at].line : 1;
	int col = v->model_new >= 0 ? c->t->v[v->classes[v->model_new].at].col : 1;
	static_add(c, "H04", "no-kernel", line, col,
		   "the candidate has no custom kernel: no __global__ function in a CUDA source, no load_inline or "
		   "cpp_extension build, no @triton.jit; write the computation as a kernel and build it with load_inline");
}

void rules_work(struct static_ctx *c)
{
	rule_h01_h02(c);
	rule_h03(c);
	rule_h04(c);
}
