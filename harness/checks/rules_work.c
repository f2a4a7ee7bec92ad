/* rules_work.c - who does the work when ModelNew.forward runs: follows forward's call tree (functions,
 * methods, self attributes built in __init__, aliases) for PyTorch ops (H01) and except fallbacks (H02). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

/* torch.X that only allocate, reshape, move or configure: not the work being benchmarked. */
static const char *const torch_free[] = {
	"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
	"arange", "range", "linspace", "logspace", "tensor", "as_tensor", "asarray", "as_strided", "from_numpy",
	"frombuffer", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
	"manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "is_tensor", "is_floating_point",
	"is_complex", "numel", "result_type", "promote_types", "can_cast", "finfo", "iinfo", "get_default_dtype",
	"set_default_dtype", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_grad_enabled",
	"is_inference_mode_enabled", "device", "dtype", "cat", "concat", "concatenate", "stack", "hstack",
	"vstack", "split", "tensor_split", "chunk", "narrow", "reshape", "flatten", "unflatten", "squeeze",
	"unsqueeze", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "t", "broadcast_to",
	"broadcast_tensors", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d", "view_as_real",
	"view_as_complex", "clone", "get_device", "set_num_threads", "get_num_threads", "use_deterministic_algorithms",
	"set_printoptions", "is_nonzero", "save", "load", "autocast", "set_float32_matmul_precision",
	"get_float32_matmul_precision", "empty_cache", "chunk", "unbind", NULL,
};

/* Tensor methods that compute (x.softmax(-1), a.matmul(b)); shape and dtype methods are left alone. */
static const char *const tensor_work[] = {
	"matmul", "mm", "bmm", "addmm", "addmm_", "baddbmm", "baddbmm_", "addbmm", "addmv", "mv", "dot", "outer",
	"inner", "softmax", "log_softmax", "relu", "relu_", "sigmoid", "sigmoid_", "tanh", "tanh_", "exp", "exp_",
	"log", "log1p", "sum", "mean", "var", "std", "norm", "amax", "amin", "max", "min", "logsumexp", "cumsum",
	"cumprod", "prod", "sqrt", "rsqrt", "erf", "topk", "argmax", "argmin", "gelu", "silu", "clamp", "clamp_",
	"clamp_min", "clamp_max", "maximum", "minimum", NULL,
};

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
					     "torch._inductor", "torch.compiler", NULL };

/* Whether calling `path` (a canonical torch.* path) has PyTorch compute something. */
static int torch_work(const char *path)
{
	char comp[PV_NAME];
	if (!path_under(path, "torch") || !strcmp(path, "torch"))
		return 0;
	for (const char *const *p = work_prefixes; *p; p++)
		if (path_under(path, *p) && strcmp(path, *p))
			return 1;
	if (!strcmp(path, "torch.compile") || !strcmp(path, "torch.?"))
		return 1;
	if (path_under(path, "torch.nn.functional"))
		return strcmp(path, "torch.nn.functional") && strcmp(path_last(path), "pad");
	if (path_under(path, "torch.nn.init") || path_under(path, "torch.nn.utils") || path_under(path, "torch.nn.parameter"))
		return 0;
	if (path_under(path, "torch.nn")) {
		const char *cls = path_last(path); /* torch.nn.Linear, torch.nn.modules.linear.Linear */
		return cls[0] >= 'A' && cls[0] <= 'Z' && !word_in(cls, nn_free);
	}
	if (path_under(path, "torch.Tensor"))
		return word_in(path_last(path), tensor_work);
	const char *rest = path + 6;
	if (strchr(rest, '.'))
		return 0; /* cuda, backends, utils, autograd, library, testing, ops.<yours>: other rules */
	snprintf(comp, sizeof(comp), "%s", rest);
	return !(comp[0] >= 'A' && comp[0] <= 'Z') && !word_in(comp, torch_free) && !word_in(comp, torch_consts) &&
	       comp[0] != '_';
}

static const char *advice(const char *path)
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
	unsigned char *seen_func, *seen_bind, *seen_class;
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
	if (!strcmp(w->id, "H02"))
		static_add(w->c, "H02", rule, k->line, k->col,
			   "the except branch at line %d falls back to PyTorch: it %s; re-raise the error instead of "
			   "computing the result with PyTorch", w->handler_line, what);
	else
		static_add(w->c, "H01", rule, k->line, k->col, "forward %s; %s", what, advice(path));
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

enum bound_kind { BK_VALUE, BK_EXTENSION, BK_INSTANCE };

static enum bound_kind kind_of_binds(const struct pyview *v, const size_t *b, size_t nb, int *cls, int depth);

static int builds_extension(const struct pyview *v, int f)
{
	struct pv_ref r;
	for (size_t i = v->funcs[f].body; i < v->funcs[f].end; i++)
		if (v->t->v[i].kind == PT_NAME && pv_ref_at(v, i, &r) && path_under(r.path, "torch.utils.cpp_extension"))
			return 1;
	return 0;
}

/* What a binding holds, judged by the start of its right side: an extension module, an instance of a
 * class of this file, or a value (a tensor, a torch module, anything else). */
static enum bound_kind bound_kind(const struct pyview *v, size_t b, int *cls, int depth)
{
	struct pv_ref r;
	size_t more[16], n;
	if (depth > 4 || !pv_ref_at(v, v->binds[b].rhs, &r))
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

static enum bound_kind kind_of_binds(const struct pyview *v, const size_t *b, size_t nb, int *cls, int depth)
{
	for (size_t j = 0; j < nb; j++) {
		enum bound_kind k = bound_kind(v, b[j], cls, depth);
		if (k != BK_VALUE)
			return k;
	}
	return BK_VALUE;
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

static int class_of_method(const struct pyview *v, size_t i)
{
	int f = pv_func_at(v, i);
	while (f >= 0 && v->funcs[f].cls < 0)
		f = v->funcs[f].parent;
	return f >= 0 ? v->funcs[f].cls : -1;
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
	int constant = word_in(path_last(r->path), torch_consts) || path_last(r->path)[0] == '_';
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

static void handle_ref(struct walk *w, const struct pv_ref *r, int called_ctx, const struct site *s)
{
	const struct pyview *v = w->c->v;
	int called = r->called || called_ctx;
	size_t b[16], nb;
	const char *dot = strchr(r->path, '.');
	if (path_under(r->path, "torch")) {
		handle_torch(w, r, called, s);
	} else if (r->head == REF_FUNC) {
		follow_func(w, r->target);
	} else if (r->head == REF_CLASS) {
		follow_class(w, r->target);
	} else if (r->head == REF_SELF && dot) {
		char attr[PV_NAME], name[PV_NAME + 8];
		snprintf(attr, sizeof(attr), "%.*s", (int)strcspn(dot + 1, "."), dot + 1);
		const char *more = dot + 1 + strlen(attr);
		int cls = class_of_method(v, r->start), m = pv_find_method(v, cls, attr);
		if (m >= 0) {
			follow_func(w, m);
			return;
		}
		nb = pv_lookup_attr(v, cls, attr, b, 16);
		snprintf(name, sizeof(name), "self.%s", attr);
		if (!*more || !strcmp(more, ".forward") || !strcmp(more, ".__call__")) {
			if (called)
				call_binds(w, r, name, b, nb, s);
		} else if (!not_a_tensor(w, b, nb, more + 1, called) && r->called && word_in(path_last(r->path), tensor_work)) {
			tensor_method(w, r, s);
		}
	} else if (r->head == REF_BOUND) {
		char name[PV_NAME];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->path, "."), r->path);
		nb = pv_lookup(v, name, r->start, b, 16);
		if (!dot) {
			if (called)
				call_binds(w, r, name, b, nb, s);
		} else if (!not_a_tensor(w, b, nb, dot + 1, called) && r->called && word_in(path_last(r->path), tensor_work)) {
			tensor_method(w, r, s);
		}
	} else if ((r->head == REF_PARAM || r->head == REF_FREE) && dot && r->called && !starts_with(r->path, "super()") &&
		   word_in(path_last(r->path), tensor_work)) {
		tensor_method(w, r, s);
	}
}

/* The '(' whose ')' is at `close`. */
static size_t opener(const struct pytok_list *t, size_t close)
{
	for (size_t k = close; k-- > 0;)
		if (t->v[k].depth == t->v[close].depth && pytok_is_op(t, k, "("))
			return k;
	return 0;
}

/* x(...).name(...): a method on what a call returned. A function of this file may return anything
 * (an extension module, say); everything else returns tensors here. */
static void result_method(struct walk *w, size_t dot, const struct site *s)
{
	const struct pytok_list *t = w->c->t;
	char m[PV_NAME], obj[160];
	pytok_text(t, dot + 1, m, sizeof(m));
	if (!word_in(m, tensor_work))
		return;
	if (pytok_is_op(t, dot - 1, ")")) {
		size_t open = opener(t, dot - 1), k = open;
		while (k > 0 && (t->v[k - 1].kind == PT_NAME || pytok_is_op(t, k - 1, ".")))
			k--;
		struct pv_ref r;
		if (k < open && pv_ref_at(w->c->v, k, &r) && (r.head == REF_FUNC || r.head == REF_CLASS))
			return;
	}
	snprintf(obj, sizeof(obj), "the tensor method .%s()", m);
	report(w, dot + 1, s, "tensor-method", obj, m);
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
}

static void walk_release(struct walk *w)
{
	free(w->seen_func);
	free(w->seen_bind);
	free(w->seen_class);
}

static void rule_h01_h02(struct static_ctx *c)
{
	struct walk w;
	int mn = c->v->model_new;
	walk_init(&w, c, "H01");
	w.hot = 1;
	if (mn >= 0) {
		int m = pv_find_method(c->v, mn, "forward");
		if (m >= 0)
			follow_func(&w, m);
		if ((m = pv_find_method(c->v, mn, "__call__")) >= 0)
			follow_func(&w, m);
	}
	walk_release(&w);
	for (size_t h = 0; h < c->v->nhandlers; h++) {
		const struct pv_handler *hd = &c->v->handlers[h];
		walk_init(&w, c, "H02");
		w.handler_line = c->t->v[hd->at].line;
		scan(&w, hd->body, hd->end, 0, NULL);
		walk_release(&w);
	}
}

/* ATen ops called from the extension's C++ (torch::matmul, at::conv2d, x.softmax(...)): the same
 * PyTorch kernels as from Python, so H01 too. cuBLAS and cuDNN called directly are fine. */
static const char *const cxx_aten_ops[] = {
	"matmul", "mm", "bmm", "addmm", "addmm_", "baddbmm", "addbmm", "mv", "dot", "einsum", "tensordot", "conv1d",
	"conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution", "_convolution",
	"cudnn_convolution", "linear", "softmax", "log_softmax", "_softmax", "relu", "relu_", "gelu", "silu", "sigmoid",
	"tanh", "layer_norm", "native_layer_norm", "batch_norm", "native_batch_norm", "group_norm", "instance_norm",
	"embedding", "dropout", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
	"adaptive_avg_pool2d", "adaptive_max_pool2d", "scaled_dot_product_attention", "sum", "mean", "amax", "amin",
	"prod", "cumsum", "logsumexp", "exp", "log", "sqrt", "rsqrt", "pow", "erf", "clamp", "clamp_min", "maximum",
	"minimum", "norm", "var", "std", "hardtanh", "leaky_relu", "elu", "softplus", NULL,
};
static const char *const cxx_aten_methods[] = { "matmul", "mm", "bmm", "addmm", "baddbmm", "softmax", "log_softmax",
						"relu", "relu_", "sigmoid", "tanh", "sum", "mean", "exp", "clamp",
						"clamp_min", NULL };

static void rule_h01_cxx(struct static_ctx *c)
{
	const struct cx_list *x = c->cx;
	for (size_t i = 2; i < x->n; i++) {
		int ns = cx_is(x, i - 1, CX_PUNCT, "::") && (cx_is(x, i - 2, CX_IDENT, "torch") || cx_is(x, i - 2, CX_IDENT, "at") ||
							     cx_is(x, i - 2, CX_IDENT, "functional") ||
							     cx_is(x, i - 2, CX_IDENT, "native"));
		int method = cx_is(x, i - 1, CX_PUNCT, ".") && cx_ident_in(x, i, cxx_aten_methods);
		if (!cx_is(x, i + 1, CX_PUNCT, "(") || !(method || (ns && cx_ident_in(x, i, cxx_aten_ops))))
			continue;
		static_add(c, "H01", "cxx-aten-op", x->v[i].line, x->v[i].col,
			   "the extension calls %s%s (line %d), so ATen does the work; %s", method ? "the tensor method ." : "ATen's ",
			   x->v[i].text, x->v[i].line, advice(x->v[i].text));
	}
}

/* H03: ModelNew built on the reference, or any use of the name Model outside its own definition. */
static void rule_h03(struct static_ctx *c)
{
	const struct pyview *v = c->v;
	int mn = v->model_new, model = pv_find_class(v, "Model");
	if (mn >= 0 && pv_class_inherits(v, mn, "Model")) {
		const struct pytok *k = &c->t->v[v->classes[mn].at];
		static_add(c, "H03", "inherits-model", k->line, k->col,
			   "ModelNew inherits from Model (line %d), so the reference's code runs in its place; derive "
			   "ModelNew from nn.Module and call your own kernels", k->line);
	}
	for (size_t i = 0; i < c->t->n; i++) {
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
	rule_h01_cxx(c);
	rule_h03(c);
	rule_h04(c);
}
