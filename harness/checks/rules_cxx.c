/* rules_cxx.c - PyTorch doing the work from the extension's C++ (H01): ATen ops in any namespace, through
 * namespace aliases and using-declarations, the c10 dispatcher, tensor methods, and calls back into Python. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

#define MAX_COMPS 10
#define MAX_ALIASES 16

/* A qualified name as written (`at::native::relu`, `F::linear` expanded to torch::nn::functional::linear). */
struct qname {
	char comp[MAX_COMPS][PV_NAME];
	int typed[MAX_COMPS];    /* the component is followed by template arguments: it names a type */
	int n;
	size_t start, last;      /* the first and the last identifier's tokens */
	int called;              /* `(` follows (after template arguments) */
};

/* `namespace F = torch::nn::functional;` and `using namespace at;` / `using at::relu;`. */
struct cxx_names {
	char alias[MAX_ALIASES][PV_NAME];
	struct qname target[MAX_ALIASES];
	size_t nalias;
	int using_aten;          /* a using-directive brings an ATen namespace in: bare op names are ATen's */
	char used[MAX_ALIASES][PV_NAME]; /* names brought in one by one from ATen */
	size_t nused;
	int vectorized;          /* at::vec::Vectorized is used: its math methods are the candidate's own loop */
	const char **defined;    /* names the candidate's C++ declares (not owned: the tokens' text) */
	size_t ndefined;
	const char **pyobjs;     /* variables of pybind11 object types: calling one runs Python */
	size_t npyobjs;
};

static const char *const pybind_object_types[] = { "object", "function", "handle", "callable", "module", "module_",
						   NULL };

static const char *const aten_roots[] = { "at", "torch", "aten", "c10", "caffe2", NULL };
/* Namespaces that hold only operators (per backend, structured kernels, the op structs of at::_ops). */
static const char *const op_namespaces[] = { "native", "cpu", "cuda", "mps", "meta", "_ops", "compositeexplicitautograd",
					     "compositeimplicitautograd", "compositeexplicitautogradnonfunctional",
					     "linalg", "fft", "special", "functional", "jit", "sparse", "quantized", NULL };
/* Helpers of those namespaces that compute nothing: streams, handles, devices, guards. */
static const char *const helper_prefixes[] = { "get", "set", "current", "device", "stream", "is_", "check", "memcpy",
					       "philox", "synchronize", "empty", "zeros", "ones", "full", "from_", "make_",
					       "init", "resize", "assert", "infer", "maybe_", "borrow", "launch", "parallel",
					       "in_parallel", "irange", "integer_range", "to_string", "toString", "ceil_div",
					       "cudnn_is", "manual_seed", NULL };
/* torch::nn classes that hold modules or options and compute nothing themselves. */
static const char *const nn_holders[] = { "Module", "ModuleHolder", "ModuleList", "ModuleDict", "Sequential",
					  "ParameterList", "ParameterDict", "AnyModule", "Cloneable", "Functional", NULL };
static const char *const dispatcher_names[] = { "Dispatcher", "OperatorHandle", "TypedOperatorHandle", "KernelFunction",
						"BoxedKernel", "findSchema", "findSchemaOrThrow", "findOp", "callBoxed",
						"redispatch", "redispatchBoxed", "callUnboxed", NULL };
static const char *const pybind_calls[] = { "import", "eval", "exec", "eval_file", "globals", NULL };
static const char *const python_c_api[] = { "PyImport_", "PyRun_", "Py_CompileString", "PyEval_EvalCode",
					    "PyEval_CallObject", "PyEval_CallFunction", "PyEval_GetBuiltins",
					    "PyEval_GetGlobals", "PyObject_Call", "PyObject_GetAttr", "PyObject_Vectorcall",
					    "PyObject_GetItem", "PySys_GetObject", "PyModule_GetDict", "PyDict_GetItemString",
					    "PyFunction_", "PyMethod_", NULL };
/* The old list: tensor methods that are the benchmarked ops themselves, never excused by a function of
 * the candidate's with the same name. */
static const char *const strong_methods[] = { "matmul", "mm", "bmm", "addmm", "addmm_", "baddbmm", "addbmm", "softmax",
					      "log_softmax", "relu", "relu_", "sigmoid", "tanh", "sum", "mean", "exp",
					      "clamp", "clamp_min", NULL };
/* Methods of at::vec::Vectorized, the vector type of a CPU kernel's own loop. */
static const char *const vec_methods[] = { "abs", "angle", "acos", "asin", "atan", "atan2", "ceil", "copysign", "cos",
					   "cosh", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "floor", "frac", "hypot",
					   "i0", "igamma", "igammac", "lgamma", "log", "log10", "log1p", "log2", "neg",
					   "nextafter", "pow", "reciprocal", "round", "rsqrt", "sigmoid", "sin", "sinh",
					   "sqrt", "tan", "tanh", "trunc", "fmod", "maximum", "minimum", "clamp", "clamp_min",
					   "clamp_max", "eq", "ne", "lt", "le", "gt", "ge", "sgn", "conj", "real", "imag",
					   NULL };
/* C and CUDA math functions: a bare call is the device library's, whatever namespace is in use. */
static const char *const math_names[] = { "abs", "fabs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
					  "sqrt", "rsqrt", "cbrt", "pow", "sin", "cos", "tan", "asin", "acos", "atan",
					  "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
					  "erfinv", "erfcinv", "lgamma", "tgamma", "floor", "ceil", "round", "rint",
					  "trunc", "fmod", "remainder", "copysign", "fmax", "fmin", "max", "min", "fma",
					  "hypot", "ldexp", "frexp", "nextafter", "isnan", "isinf", "isfinite", "signbit",
					  "clamp", "sign", NULL };
static const char *const not_a_type[] = { "return", "else", "case", "throw", "new", "delete", "sizeof", "co_return",
					  "co_yield", "goto", "do", "using", "namespace", "operator", "typedef", NULL };

static int upper(const char *s)
{
	return s[0] >= 'A' && s[0] <= 'Z';
}

static int starts_in(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (starts_with(s, *prefixes))
			return 1;
	return 0;
}

/* The token after template arguments opening at i (`<` ... `>`), or i when there are none. */
static size_t skip_template(const struct cx_list *x, size_t i)
{
	if (!cx_is(x, i, CX_PUNCT, "<"))
		return i;
	int depth = 0;
	for (size_t k = i; k < x->n && k < i + 64; k++) {
		if (cx_is(x, k, CX_PUNCT, "<"))
			depth++;
		else if (cx_is(x, k, CX_PUNCT, ">") && --depth == 0)
			return k + 1;
		else if (cx_is(x, k, CX_PUNCT, ";") || cx_is(x, k, CX_PUNCT, "{") || cx_is(x, k, CX_PUNCT, "}"))
			break;
	}
	return i;
}

/* Reads the qualified name starting at identifier i; returns the token after it. */
static size_t read_qname(const struct cx_list *x, size_t i, struct qname *q)
{
	memset(q, 0, sizeof(*q));
	q->start = i;
	size_t k = i;
	while (k < x->n && x->v[k].kind == CX_IDENT && q->n < MAX_COMPS) {
		snprintf(q->comp[q->n], PV_NAME, "%s", x->v[k].text);
		q->last = k;
		size_t after = skip_template(x, k + 1);
		q->typed[q->n] = after != k + 1;
		q->n++;
		if (!cx_is(x, after, CX_PUNCT, "::") || after + 1 >= x->n || x->v[after + 1].kind != CX_IDENT) {
			q->called = cx_is(x, after, CX_PUNCT, "(");
			return after;
		}
		k = after + 1;
	}
	return k;
}

static void expand_alias(const struct cxx_names *nm, struct qname *q)
{
	if (!strcmp(q->comp[0], "py"))
		snprintf(q->comp[0], PV_NAME, "pybind11");
	for (size_t a = 0; a < nm->nalias; a++) {
		if (strcmp(q->comp[0], nm->alias[a]))
			continue;
		const struct qname *t = &nm->target[a];
		struct qname out = *q;
		out.n = 0;
		for (int i = 0; i < t->n && out.n < MAX_COMPS; i++, out.n++) {
			snprintf(out.comp[out.n], PV_NAME, "%s", t->comp[i]);
			out.typed[out.n] = 0;
		}
		for (int i = 1; i < q->n && out.n < MAX_COMPS; i++, out.n++) {
			snprintf(out.comp[out.n], PV_NAME, "%s", q->comp[i]);
			out.typed[out.n] = q->typed[i];
		}
		*q = out;
		return;
	}
}

static int has_comp(const struct qname *q, const char *name, int from, int to)
{
	for (int i = from; i < to && i < q->n; i++)
		if (!strcmp(q->comp[i], name))
			return 1;
	return 0;
}

/* Whether identifier i is declared here, as a function or a variable: `float relu(float x)`. */
static int declares(const struct cx_list *x, size_t i)
{
	if (i == 0 || x->v[i].kind != CX_IDENT || !cx_is(x, i + 1, CX_PUNCT, "("))
		return 0;
	const struct cx_tok *p = &x->v[i - 1];
	return (p->kind == CX_IDENT && !word_in(p->text, not_a_type)) || cx_is(x, i - 1, CX_PUNCT, "*") ||
	       cx_is(x, i - 1, CX_PUNCT, "&") || cx_is(x, i - 1, CX_PUNCT, ">");
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the candidate's C++ defines a function (or a variable) called name (nm->defined is sorted). */
static int defined_here(const struct cxx_names *nm, const char *name)
{
	return nm->ndefined && bsearch(&name, nm->defined, nm->ndefined, sizeof(*nm->defined), by_text) != NULL;
}

/* namespace F = torch::nn::functional;  using namespace at;  using torch::relu; */
static void read_names(const struct cx_list *x, struct cxx_names *nm)
{
	memset(nm, 0, sizeof(*nm));
	for (size_t i = 0; i < x->n; i++) {
		struct qname q;
		if (declares(x, i)) {
			nm->defined = xrealloc(nm->defined, (nm->ndefined + 1) * sizeof(*nm->defined));
			nm->defined[nm->ndefined++] = x->v[i].text;
		}
		/* py::object fn, const py::function &fn, py::handle h */
		if ((cx_is(x, i, CX_IDENT, "py") || cx_is(x, i, CX_IDENT, "pybind11")) && cx_is(x, i + 1, CX_PUNCT, "::") &&
		    cx_ident_in(x, i + 2, pybind_object_types)) {
			size_t k = i + 3;
			while (cx_is(x, k, CX_PUNCT, "&") || cx_is(x, k, CX_PUNCT, "*") || cx_is(x, k, CX_IDENT, "const"))
				k++;
			if (k < x->n && x->v[k].kind == CX_IDENT) {
				nm->pyobjs = xrealloc(nm->pyobjs, (nm->npyobjs + 1) * sizeof(*nm->pyobjs));
				nm->pyobjs[nm->npyobjs++] = x->v[k].text;
			}
		}
		if (cx_is(x, i, CX_IDENT, "Vectorized"))
			nm->vectorized = 1;
		if (cx_is(x, i, CX_IDENT, "namespace") && i + 3 < x->n && x->v[i + 1].kind == CX_IDENT &&
		    cx_is(x, i + 2, CX_PUNCT, "=") && x->v[i + 3].kind == CX_IDENT && nm->nalias < MAX_ALIASES) {
			read_qname(x, i + 3, &q);
			snprintf(nm->alias[nm->nalias], PV_NAME, "%s", x->v[i + 1].text);
			nm->target[nm->nalias++] = q;
		} else if (cx_is(x, i, CX_IDENT, "using") && cx_is(x, i + 1, CX_IDENT, "namespace") && i + 2 < x->n &&
			   x->v[i + 2].kind == CX_IDENT) {
			read_qname(x, i + 2, &q);
			expand_alias(nm, &q);
			nm->using_aten |= word_in(q.comp[0], aten_roots) && strcmp(q.comp[0], "c10");
		} else if (cx_is(x, i, CX_IDENT, "using") && i + 1 < x->n && x->v[i + 1].kind == CX_IDENT &&
			   !cx_is(x, i + 1, CX_IDENT, "namespace")) {
			size_t after = read_qname(x, i + 1, &q);
			expand_alias(nm, &q);
			if (q.n > 1 && cx_is(x, after, CX_PUNCT, ";") && word_in(q.comp[0], aten_roots) &&
			    torch_op_spelling(q.comp[q.n - 1]) && nm->nused < MAX_ALIASES)
				snprintf(nm->used[nm->nused++], PV_NAME, "%s", q.comp[q.n - 1]);
		}
	}
	if (nm->ndefined)
		qsort(nm->defined, nm->ndefined, sizeof(*nm->defined), by_text);
}

/* Whether a name is missing at token i, to be filled in when the source is put together: the `{`, `%` or
 * `$` of a template field, or the `(` that follows a field read as blank. */
static int name_filled_in_later(const struct cx_list *x, size_t i)
{
	return cx_is(x, i, CX_PUNCT, "{") || cx_is(x, i, CX_PUNCT, "%") || cx_is(x, i, CX_PUNCT, "$") ||
	       cx_is(x, i, CX_PUNCT, "(");
}

static int word_in_n(const char *name, const char **words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(words[i], name))
			return 1;
	return 0;
}

static int used_name(const struct cxx_names *nm, const char *name)
{
	for (size_t i = 0; i < nm->nused; i++)
		if (!strcmp(nm->used[i], name))
			return 1;
	return 0;
}

static void found(struct static_ctx *c, const struct cx_tok *k, const char *rule, const char *fmt, const char *what,
		  const char *advice)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, fmt, what, k->line);
	static_add(c, "H01", rule, k->line, k->col, "%s; %s", sb.buf, advice);
	strbuf_release(&sb);
}

static const char *const op_fmt = "the extension calls %s (line %d), so ATen does the work";
static const char *const dispatch_fmt = "the extension reaches ATen's operators through the dispatcher (%s, line %d), "
					"so PyTorch's kernels do the work";
static const char *const python_fmt = "the extension calls back into Python (%s, line %d), so Python and PyTorch "
				      "code run in its place";
static const char *const own_code = "compute the result in the extension's own C++/CUDA code";

/* A qualified name: ATen's op, its dispatcher, a torch::nn module, or pybind11 calling into Python. */
static void judge_qname(struct static_ctx *c, const struct qname *q)
{
	const struct cx_tok *k = &c->cx->v[q->last];
	const char *last = q->comp[q->n - 1];
	char what[PV_PATH] = "";
	for (int i = 0; i < q->n; i++)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s", i ? "::" : "", q->comp[i]);
	if (!strcmp(q->comp[0], "pybind11")) {
		if (word_in(last, pybind_calls))
			found(c, k, "cxx-python", python_fmt, what, own_code);
		return;
	}
	if (!word_in(q->comp[0], aten_roots) || q->n < 2)
		return;
	for (int i = 0; i < q->n; i++)
		if (word_in(q->comp[i], dispatcher_names)) {
			found(c, k, "cxx-dispatch", dispatch_fmt, what, own_code);
			return;
		}
	if (has_comp(q, "_ops", 1, q->n - 1)) {
		found(c, k, "cxx-aten-op", op_fmt, what, work_advice(what));
		return;
	}
	if (!strcmp(q->comp[0], "c10"))
		return; /* c10::cuda streams and guards, c10::Half (H14), c10::irange */
	int ty = -1;
	for (int i = 1; i < q->n && ty < 0; i++)
		if (upper(q->comp[i]) || q->typed[i])
			ty = i;
	if (ty >= 0 && ty < q->n - 1) {
		/* a member of a type: &at::Tensor::relu is the method itself */
		if ((!strcmp(q->comp[ty], "Tensor") || !strcmp(q->comp[ty], "TensorBase")) && tensor_method_computes(last))
			found(c, k, "cxx-aten-op", op_fmt, what, work_advice(last));
		return;
	}
	if (ty == q->n - 1) {
		if (has_comp(q, "nn", 1, q->n - 1) && !has_comp(q, "functional", 1, q->n) && !word_in(last, nn_holders) &&
		    !ends_with(last, "Options") && !ends_with(last, "Impl"))
			found(c, k, "cxx-aten-op", "the extension builds %s (line %d), a PyTorch module, so PyTorch does the work",
			      what, work_advice(last));
		return;
	}
	if ((last[0] == 'k' && upper(last + 1)) || starts_in(last, helper_prefixes) || word_in(last, sb_torch_free) ||
	    has_comp(q, "vec", 1, q->n) || has_comp(q, "indexing", 1, q->n) || has_comp(q, "detail", 1, q->n))
		return;
	int op_ns = 0;
	for (int i = 1; i < q->n - 1; i++)
		op_ns |= word_in(q->comp[i], op_namespaces);
	if ((op_ns && q->called) || torch_op_spelling(last))
		found(c, k, "cxx-aten-op", op_fmt, what, work_advice(last));
}

static void rule_h01_cxx(struct static_ctx *c)
{
	const struct cx_list *x = c->cx;
	struct cxx_names nm;
	read_names(x, &nm);
	for (size_t i = 0; i < x->n; i++) {
		const struct cx_tok *k = &x->v[i];
		if (k->kind == CX_STRING) {
			if (starts_with(k->text, "aten::") || starts_with(k->text, "prims::"))
				found(c, k, "cxx-dispatch", dispatch_fmt, k->text, own_code);
			continue;
		}
		if (k->kind != CX_IDENT || word_in(k->text, not_a_type))
			continue; /* `return ::at::relu(x)`: the keyword is no part of the name */
		int after_dot = i > 0 && (cx_is(x, i - 1, CX_PUNCT, ".") ||
					  (cx_is(x, i - 1, CX_PUNCT, ">") && i > 1 && cx_is(x, i - 2, CX_PUNCT, "-")));
		/* `::at::relu` starts at the global scope; `a::b` continues a name read already */
		int after_scope = i > 0 && cx_is(x, i - 1, CX_PUNCT, "::") && i > 1 &&
				  ((x->v[i - 2].kind == CX_IDENT && !word_in(x->v[i - 2].text, not_a_type)) ||
				   cx_is(x, i - 2, CX_PUNCT, ">"));
		/* at::{op}(x), at::%s, x.{method}(): a name filled in when the source is put together (an
		 * f-string field reads as a blank, so `(` follows) */
		int hidden_name = (word_in(k->text, aten_roots) && cx_is(x, i + 1, CX_PUNCT, "::") &&
				   name_filled_in_later(x, i + 2)) ||
				  (i + 1 < x->n && (cx_is(x, i + 1, CX_PUNCT, ".") ||
						    (cx_is(x, i + 1, CX_PUNCT, "-") && cx_is(x, i + 2, CX_PUNCT, ">"))) &&
				   name_filled_in_later(x, i + (cx_is(x, i + 1, CX_PUNCT, ".") ? 2 : 3)));
		if (hidden_name && !after_dot) {
			found(c, k, "cxx-aten-op", "the extension calls a function of %s whose name is filled in when its "
			      "source is put together (line %d), where the checks cannot read it", k->text, own_code);
			continue;
		}
		if (starts_in(k->text, python_c_api) && cx_is(x, i + 1, CX_PUNCT, "(")) {
			found(c, k, "cxx-python", python_fmt, k->text, own_code);
		} else if (after_dot) {
			size_t after = skip_template(x, i + 1);
			if (!cx_is(x, after, CX_PUNCT, "("))
				continue;
			if (!strcmp(k->text, "attr"))
				found(c, k, "cxx-python", python_fmt, ".attr()", own_code);
			else if (!strcmp(k->text, "call") || word_in(k->text, dispatcher_names))
				found(c, k, "cxx-dispatch", dispatch_fmt, k->text, own_code);
			else if (tensor_method_computes(k->text) && !(nm.vectorized && word_in(k->text, vec_methods)) &&
				 (word_in(k->text, strong_methods) || !defined_here(&nm, k->text))) {
				char what[PV_NAME + 24];
				snprintf(what, sizeof(what), "the tensor method .%s()", k->text);
				found(c, k, "cxx-aten-op", op_fmt, what, work_advice(k->text));
			}
		} else if (!after_scope) {
			struct qname q;
			size_t next = read_qname(x, i, &q);
			if (q.n > 1) {
				expand_alias(&nm, &q);
				judge_qname(c, &q);
				i = next - 1;
			} else if (q.called && !after_dot && word_in_n(k->text, nm.pyobjs, nm.npyobjs)) {
				found(c, k, "cxx-python", python_fmt, k->text, own_code); /* fn(x) on a py::object */
			} else if (q.called && (used_name(&nm, k->text) ||
						(nm.using_aten && torch_op_spelling(k->text) && !word_in(k->text, math_names) &&
						 !defined_here(&nm, k->text)))) {
				/* a bare op name where a using-declaration made ATen's names plain */
				found(c, k, "cxx-aten-op", op_fmt, k->text, work_advice(k->text));
			}
		}
	}
	free(nm.defined);
	free(nm.pyobjs);
}

void rules_cxx(struct static_ctx *c)
{
	rule_h01_cxx(c);
}
