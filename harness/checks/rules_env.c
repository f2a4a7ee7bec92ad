/* rules_env.c - precision the problem did not ask for (H14: half types, TF32, autocast) and the world
 * outside the inputs (H22: files, network, processes, environment), in Python and in the C++ strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

/* ---------- H14: precision downgrade ---------- */

static const char *const py_lowp[] = { "torch.float16", "torch.half", "torch.bfloat16", "torch.cuda.amp", "torch.amp",
				       "torch.autocast", "torch.cuda.HalfTensor", "torch.cuda.BFloat16Tensor",
				       "torch.HalfTensor", "torch.BFloat16Tensor", "numpy.float16", "numpy.half", NULL };
static const char *const lowp_methods[] = { "half", "bfloat16", NULL };
static const char *const tf32_flags[] = { "allow_tf32", "allow_fp16_reduced_precision_reduction",
					  "allow_bf16_reduced_precision_reduction", NULL };
static const char *const cx_lowp[] = {
	"__half", "__half2", "half2", "__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16", "nv_bfloat162", "kHalf",
	"kBFloat16", "kFloat16", "__float2half", "__float2half_rn", "__half2float", "__float2bfloat16",
	"__float2bfloat16_rn", "__bfloat162float", "__hmul", "__hadd", "__hfma", "__hmul2", "__hfma2", "CUDA_R_16F",
	"CUDA_R_16BF", "CUBLAS_COMPUTE_16F", "CUBLAS_COMPUTE_32F_FAST_16F", "CUBLAS_COMPUTE_32F_FAST_16BF",
	"CUBLAS_COMPUTE_32F_FAST_TF32", "CUBLAS_TF32_TENSOR_OP_MATH", "CUBLAS_TENSOR_OP_MATH", "tf32",
	"__float_to_tf32", "CUDNN_DATA_HALF", "CUDNN_DATA_BFLOAT16", "CUDNN_TENSOR_OP_MATH",
	"CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION", NULL,
};
/* ATen's precision switches, from C++ (at::globalContext()) or Python's private bindings: on unless
 * given false or "highest". */
static const char *const precision_switches[] = { "setAllowTF32CuBLAS", "setAllowTF32CuDNN", "setFloat32MatmulPrecision",
						  "setAllowFP16ReductionCuBLAS", "setAllowBF16ReductionCuBLAS",
						  "_set_cublas_allow_tf32", "_set_cudnn_allow_tf32",
						  "_set_float32_matmul_precision",
						  "_set_cublas_allow_fp16_reduced_precision_reduction",
						  "_set_cublas_allow_bf16_reduced_precision_reduction", NULL };
static const char *const ptx_lowp[] = { ".f16", ".bf16", ".tf32", ".e4m3", ".e5m2", NULL };

static const char *const h14_fix = "the problem is fp32: keep fp32 arithmetic (FMA-heavy fp32 kernels are fine)";

/* Whether an argument switches precision off: false, False, 0, "highest". */
static int keeps_fp32(const char *arg)
{
	return arg && (!strcmp(arg, "false") || !strcmp(arg, "False") || !strcmp(arg, "0") || !strcmp(arg, "highest"));
}

static void lowp_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	const struct pytok *k = &c->t->v[r->start];
	if (path_under(r->path, "torch") && word_in(path_last(r->path), precision_switches) && r->called) {
		struct pv_arg a[2];
		char first[PV_NAME] = "";
		if (pv_call_args(c->t, r->end, a, 2) >= 1) {
			char *v = pytok_string_value(c->t, a[0].a, NULL);
			if (v)
				snprintf(first, sizeof(first), "%s", v);
			else
				pytok_text(c->t, a[0].a, first, sizeof(first));
			free(v);
		}
		if (!keeps_fp32(first))
			static_add(c, "H14", "tf32", k->line, k->col, "%s (line %d) lets fp32 matmuls or convolutions run in "
				   "TF32 or reduced precision; %s", r->path, k->line, h14_fix);
		return;
	}
	int f8 = path_under(r->path, "torch") && starts_with(path_last(r->path), "float8");
	if ((r->head == REF_IMPORT && path_in(r->path, py_lowp)) || f8) {
		static_add(c, "H14", "half-type", k->line, k->col, "%s (line %d) computes in reduced precision; %s", r->path,
			   k->line, h14_fix);
	} else if (path_under(r->path, "torch.set_float32_matmul_precision") && r->called) {
		char *arg0 = pytok_string_value(c->t, r->end + 1, NULL);
		if (!arg0 || strcmp(arg0, "highest"))
			static_add(c, "H14", "tf32", k->line, k->col,
				   "torch.set_float32_matmul_precision (line %d) lets fp32 matmuls run as TF32 or bf16; %s",
				   k->line, h14_fix);
		free(arg0);
	}
}

/* setattr(torch.backends.cuda.matmul, "allow_tf32", True): the flag by name. */
static void tf32_setattr(struct static_ctx *c)
{
	const struct pytok_list *t = c->t;
	for (size_t i = 0; i + 1 < t->n; i++) {
		struct pv_arg a[4];
		if (!pytok_is_name(t, i, "setattr") || !pytok_is_op(t, i + 1, "(") || pv_call_args(t, i + 1, a, 4) != 3)
			continue;
		char *name = pv_const_string(c->v, a[1].a, a[1].b, NULL);
		if (name && word_in(name, tf32_flags) && !pytok_is_name(t, a[2].a, "False") && !pytok_is(t, a[2].a, PT_NUMBER, "0"))
			static_add(c, "H14", "tf32", t->v[i].line, t->v[i].col,
				   "setattr of %s (line %d) lets fp32 matmuls and convolutions run in TF32; %s", name,
				   t->v[i].line, h14_fix);
		free(name);
	}
}

/* `...allow_tf32 = True`: the only way to ask for TF32 from Python without a call. */
static void tf32_assignments(struct static_ctx *c)
{
	const struct pytok_list *t = c->t;
	for (size_t i = 0; i + 2 < t->n; i++) {
		char name[PV_NAME];
		if (!pytok_is_op(t, i, ".") || t->v[i + 1].kind != PT_NAME || !pytok_is_op(t, i + 2, "="))
			continue;
		pytok_text(t, i + 1, name, sizeof(name));
		if (word_in(name, tf32_flags) && !pytok_is_name(t, i + 3, "False") && !pytok_is(t, i + 3, PT_NUMBER, "0"))
			static_add(c, "H14", "tf32", t->v[i + 1].line, t->v[i + 1].col,
				   "%s = True (line %d) lets fp32 matmuls and convolutions run in TF32; %s", name,
				   t->v[i + 1].line, h14_fix);
	}
}

/* A bare `half` is often a variable (half = n / 2); it counts only where it is a type. */
static int cx_half_type(const struct cx_list *x, size_t i)
{
	if (!cx_is(x, i, CX_IDENT, "half"))
		return 0;
	int next_ident = i + 1 < x->n && x->v[i + 1].kind == CX_IDENT;
	int prev_lt = i > 0 && cx_is(x, i - 1, CX_PUNCT, "<"), prev_const = i > 0 && cx_is(x, i - 1, CX_IDENT, "const");
	int next_star = cx_is(x, i + 1, CX_PUNCT, "*"), next_close = cx_is(x, i + 1, CX_PUNCT, ">");
	int templ = i > 0 && cx_is(x, i - 1, CX_PUNCT, ",") && (cx_is(x, i + 1, CX_PUNCT, ",") || next_close);
	return next_ident || templ || (prev_lt && (next_star || next_close || cx_is(x, i + 1, CX_PUNCT, ","))) ||
	       (prev_const && next_star) || (i > 0 && cx_is(x, i - 1, CX_PUNCT, "(") && next_star);
}

/* Numbers of the precision enums that keep fp32 arithmetic (cublasMath_t: default, pedantic and the no-
 * reduced-precision-reduction flag; cublasComputeType_t: 32F, 32F_PEDANTIC, 64F, 64F_PEDANTIC; cudaDataType:
 * R_32F, R_64F, C_32F, C_64F; cudnnMathType_t: default and FMA). */
struct mode_enum {
	const char *type;
	const char *fp32[6];
};

static const struct mode_enum mode_enums[] = {
	{ "cublasMath_t", { "0", "2", "16", "18", NULL } },
	{ "cublasComputeType_t", { "68", "69", "70", "71", NULL } },
	{ "cudaDataType", { "0", "1", "4", "5", NULL } },
	{ "cudaDataType_t", { "0", "1", "4", "5", NULL } },
	{ "cudnnMathType_t", { "0", "3", NULL } },
	{ "cudnnDataType_t", { "0", "1", NULL } },
};
static const char *const fp32_math_names[] = { "CUBLAS_DEFAULT_MATH", "CUBLAS_PEDANTIC_MATH",
					       "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION", NULL };
static const char *const lt_precision_attrs[] = { "CUBLASLT_MATMUL_DESC_COMPUTE_TYPE", "CUBLASLT_MATMUL_DESC_SCALE_TYPE",
						  "CUBLASLT_MATMUL_DESC_FAST_ACCUM", NULL };

/* The tokens of the argument list opening at '(' i: [i + 1, close). */
static size_t cx_close(const struct cx_list *x, size_t open)
{
	int depth = 0;
	for (size_t k = open; k < x->n; k++) {
		depth += cx_is(x, k, CX_PUNCT, "(") - cx_is(x, k, CX_PUNCT, ")");
		if (!depth)
			return k;
	}
	return x->n;
}

/* A number cast to a precision enum, `(cublasMath_t)3`, `static_cast<cublasMath_t>(3)`, `cublasMath_t(3)`:
 * the mode asked for by its value, where the name would be seen. */
static const char *cx_mode_cast(const struct cx_list *x, size_t i)
{
	for (size_t e = 0; e < sizeof(mode_enums) / sizeof(*mode_enums); e++) {
		if (!cx_is(x, i, CX_IDENT, mode_enums[e].type))
			continue;
		size_t v = 0;
		if (i > 0 && cx_is(x, i - 1, CX_PUNCT, "(") && cx_is(x, i + 1, CX_PUNCT, ")"))
			v = i + 2; /* (cublasMath_t)3 */
		else if (cx_is(x, i + 1, CX_PUNCT, ">") && cx_is(x, i + 2, CX_PUNCT, "("))
			v = i + 3; /* static_cast<cublasMath_t>(3) */
		else if (cx_is(x, i + 1, CX_PUNCT, "(") && !(i > 0 && x->v[i - 1].kind == CX_IDENT))
			v = i + 2; /* cublasMath_t(3) */
		if (!v || v >= x->n)
			return NULL;
		if (cx_is(x, v, CX_PUNCT, "("))
			v++;
		if (x->v[v].kind == CX_NUMBER && word_in(x->v[v].text, mode_enums[e].fp32) &&
		    (cx_is(x, v + 1, CX_PUNCT, ")") || cx_is(x, v + 1, CX_PUNCT, ",") || cx_is(x, v + 1, CX_PUNCT, ";")))
			return NULL;
		return mode_enums[e].type;
	}
	return NULL;
}

/* cublasSetMathMode(h, mode) with a mode other than the fp32 ones (a variable filled by cublasGetMathMode
 * puts back what was there); cublasLtMatmulDescSetAttribute on the compute or scale type. */
static const char *cx_mode_call(const struct cx_list *x, size_t i)
{
	if (cx_is(x, i, CX_IDENT, "cublasLtMatmulDescSetAttribute") && cx_is(x, i + 1, CX_PUNCT, "(")) {
		size_t close = cx_close(x, i + 1), arg = 0;
		for (size_t k = i + 2; k < close; k++) {
			arg += cx_is(x, k, CX_PUNCT, ",");
			if (arg == 1 && (cx_ident_in(x, k, lt_precision_attrs) || x->v[k].kind == CX_NUMBER))
				return "cublasLtMatmulDescSetAttribute";
		}
		return NULL;
	}
	if (!cx_is(x, i, CX_IDENT, "cublasSetMathMode") || !cx_is(x, i + 1, CX_PUNCT, "("))
		return NULL;
	size_t close = cx_close(x, i + 1), comma = close;
	for (size_t k = i + 2; k < close; k++)
		if (cx_is(x, k, CX_PUNCT, ",")) {
			comma = k;
			break;
		}
	if (comma + 2 == close && x->v[comma + 1].kind == CX_IDENT) {
		const char *m = x->v[comma + 1].text;
		if (word_in(m, fp32_math_names))
			return NULL;
		/* cublasGetMathMode(h, &saved); ... cublasSetMathMode(h, saved) */
		for (size_t k = 0; k + 1 < x->n; k++)
			if (cx_is(x, k, CX_IDENT, "cublasGetMathMode"))
				for (size_t j = k + 1; j < x->n && !cx_is(x, j, CX_PUNCT, ";"); j++)
					if (cx_is(x, j, CX_IDENT, m) && cx_is(x, j - 1, CX_PUNCT, "&"))
						return NULL;
	}
	if (comma + 2 == close && x->v[comma + 1].kind == CX_NUMBER && !strcmp(x->v[comma + 1].text, "0"))
		return NULL;
	for (size_t k = comma + 1; k < close; k++)
		if (cx_ident_in(x, k, fp32_math_names) && k + 1 == close)
			return NULL;
	/* a cast inside is judged by cx_mode_cast; what is left is a mode the checks cannot read as fp32 */
	for (size_t k = comma + 1; k < close; k++)
		if (cx_mode_cast(x, k) || (x->v[k].kind == CX_IDENT && !strcmp(x->v[k].text, "cublasMath_t")))
			return NULL;
	return "cublasSetMathMode";
}

static void rule_h14(struct static_ctx *c)
{
	for_each_ref(c, lowp_refs, NULL);
	tf32_assignments(c);
	tf32_setattr(c);
	for (size_t i = 0; i < c->t->n; i++)
		if (method_call_at(c->t, i, lowp_methods))
			static_add(c, "H14", "half-cast", c->t->v[i + 1].line, c->t->v[i + 1].col,
				   "a cast to fp16/bf16 (line %d) computes in reduced precision; %s", c->t->v[i + 1].line, h14_fix);
	const struct cx_list *x = c->cx;
	for (size_t i = 0; i < x->n; i++) {
		const char *hit = NULL;
		if (cx_ident_in(x, i, cx_lowp) || cx_half_type(x, i))
			hit = x->v[i].text;
		else if ((cx_is(x, i, CX_IDENT, "Half") || cx_is(x, i, CX_IDENT, "BFloat16")) && i > 0 &&
			 cx_is(x, i - 1, CX_PUNCT, "::"))
			hit = x->v[i].text;
		for (const char *const *p = ptx_lowp; !hit && x->v[i].kind == CX_STRING && *p; p++)
			if (strstr(x->v[i].text, *p))
				hit = *p;
		if (cx_ident_in(x, i, precision_switches) && cx_is(x, i + 1, CX_PUNCT, "(")) {
			const char *first = i + 2 < x->n ? x->v[i + 2].text : NULL;
			if (!keeps_fp32(first))
				static_add(c, "H14", "cxx-math-mode", x->v[i].line, x->v[i].col,
					   "%s (line %d) lets fp32 matmuls or convolutions run in TF32 or reduced precision; %s",
					   x->v[i].text, x->v[i].line, h14_fix);
			continue;
		}
		const char *cast = cx_mode_cast(x, i), *call = cx_mode_call(x, i);
		if (cast)
			static_add(c, "H14", "cxx-math-mode", x->v[i].line, x->v[i].col,
				   "a value cast to %s (line %d) asks for a precision mode by its number, which may be TF32 "
				   "or reduced precision; %s", cast, x->v[i].line, h14_fix);
		else if (call)
			static_add(c, "H14", "cxx-math-mode", x->v[i].line, x->v[i].col,
				   "%s (line %d) sets a math mode other than plain fp32 (TF32 or reduced-precision tensor "
				   "ops); %s", call, x->v[i].line, h14_fix);
		if (hit)
			static_add(c, "H14", "cxx-half", x->v[i].line, x->v[i].col,
				   "the CUDA source uses %s (line %d), a reduced-precision type or mode; %s", hit, x->v[i].line, h14_fix);
	}
}

/* ---------- H22: files, network, processes, environment ---------- */

static const char *const py_world[] = {
	"subprocess", "socket", "requests", "urllib", "urllib3", "http", "httpx", "aiohttp", "ftplib", "smtplib",
	"telnetlib", "paramiko", "websocket", "websockets", "shutil", "pty", "glob", "shelve", "sqlite3",
	"safetensors", "pickle.load", "pickle.dump", "torch.save", "torch.load", "torch.hub", "numpy.load",
	"numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.fromfile", "numpy.loadtxt", "numpy.savetxt",
	"numpy.genfromtxt", "numpy.memmap", "os.system", "os.popen", "os.execv", "os.execve", "os.execvp", "os.execvpe",
	"os.execl", "os.execle", "os.execlp", "os.execlpe", "os.spawnv", "os.spawnve", "os.spawnvp", "os.spawnl",
	"os.spawnlp", "os.posix_spawn", "os.posix_spawnp", "os.kill", "os.killpg", "os.remove", "os.unlink",
	"os.rename", "os.replace", "os.rmdir", "os.removedirs", "os.truncate", "os.listdir", "os.scandir", "os.walk",
	"os.symlink", "os.link", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv", "os.environ", "os.environb",
	"io.open", "codecs.open", "os.open", "os.fdopen", "builtins.open", "linecache", "fileinput", "mmap", "zipfile",
	"tarfile", "os.dup", "os.dup2", "os.write", "os.read", "os.pipe", "os.pipe2", "os.fstat", "os.openpty",
	"os.set_inheritable", "os.sendfile", "os.pwrite", "os.pread", "os.readv", "os.writev", NULL,
};
/* Build settings a candidate may read or set for load_inline: building is normal. */
static const char *const build_env[] = { "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "CUDA_HOME",
					 "CUDA_PATH", "CUDA_ROOT", "CXX", "CC", "NVCC", "NVCC_APPEND_FLAGS",
					 "NVCC_PREPEND_FLAGS", "TORCH_NVCC_FLAGS", "CUDAHOSTCXX", "TORCH_USE_CUDA_DSA",
					 "TORCH_DONT_CHECK_COMPILER_ABI", "PYTORCH_NVCC", NULL };
static const char *const py_reads[] = { "read_text", "read_bytes", "tofile", NULL };
static const char *const py_writes[] = { "write_text", "write_bytes", NULL };
static const char *const py_binary_writes[] = { "write_bytes", NULL };
static const char *const cx_world[] = { "fopen", "freopen", "ifstream", "ofstream", "fstream", "popen", "getenv",
					"secure_getenv", "setenv", "putenv", "unsetenv", "execv", "execve", "execvp", "execl",
					"execlp", "execle", "opendir", "readdir", "filesystem", NULL };
static const char *const cx_world_calls[] = { "system", "socket", "connect", "unlink", "dup2", "dup3", "socketpair",
					      "sendmsg", "recvmsg", NULL };

static const char *const h22_fix = "a candidate computes from its inputs only: no files, network, processes or "
				   "environment (building the extension with load_inline is fine)";

/* The mode of open(path, mode) / open(path, mode=...): NULL when none is given (read). */
static char *open_mode(const struct pytok_list *t, size_t paren)
{
	size_t close = pytok_matching(t, paren);
	int d = t->v[paren].depth + 1, arg = 0;
	for (size_t k = paren + 1; k < close; k++) {
		if (t->v[k].depth != d)
			continue;
		if (pytok_is_op(t, k, ","))
			arg++;
		else if (pytok_is_name(t, k, "mode") && pytok_is_op(t, k + 1, "="))
			return pytok_string_value(t, k + 2, NULL);
		else if (arg == 1 && t->v[k].kind == PT_STRING && pytok_is_op(t, k - 1, ","))
			return pytok_string_value(t, k, NULL);
	}
	return NULL;
}

/* The key of os.environ["KEY"], os.environ.get("KEY"), os.getenv("KEY"), os.putenv("KEY", ...). */
static char *env_key(const struct pytok_list *t, const struct pv_ref *r)
{
	size_t k = r->end;
	if (!pytok_is_op(t, k, "[") && !pytok_is_op(t, k, "("))
		return NULL;
	return pytok_string_value(t, k + 1, NULL);
}

static int env_key_is(const struct pytok_list *t, const struct pv_ref *r, const char *name)
{
	char *key = env_key(t, r);
	int is = key && !strcmp(key, name);
	free(key);
	return is;
}

/* os.environ["TORCH_CUDA_ARCH_LIST"] = ..., os.environ.setdefault("MAX_JOBS", ...), os.getenv("CUDA_HOME"). */
static int build_setting(const struct pytok_list *t, const struct pv_ref *r)
{
	char *key = env_key(t, r);
	int ok = key && word_in(key, build_env);
	free(key);
	return ok;
}

/* Where builds go is the harness's choice: a build the candidate places itself, or a binary it loads,
 * is not the source that was checked. */
static void build_refs(struct static_ctx *c, const struct pv_ref *r)
{
	const struct pytok_list *t = c->t;
	const struct pytok *k = &t->v[r->start];
	if (!r->called)
		return;
	if (path_under(r->path, "torch.utils.cpp_extension") && path_last(r->path)[0] == '_') {
		static_add(c, "H22", "build-files", k->line, k->col,
			   "%s (line %d) is a private part of the extension builder (it can build or import files "
			   "the checks never read); build with load_inline and nothing else", r->text, k->line);
	} else if (!strcmp(r->path, "torch.utils.cpp_extension.load")) {
		static_add(c, "H22", "build-files", k->line, k->col,
			   "%s (line %d) builds source files read at run time, not the source that was checked; pass "
			   "the C++/CUDA source to load_inline as a string", r->text, k->line);
	} else if (path_under(r->path, "torch.ops.load_library") || path_under(r->path, "torch.classes.load_library")) {
		static_add(c, "H22", "build-files", k->line, k->col,
			   "%s (line %d) loads a binary the checks never read; build your kernels from source with "
			   "load_inline", r->text, k->line);
	}
	if (!path_under(r->path, "torch.utils.cpp_extension"))
		return;
	struct pv_arg a[32];
	size_t n = pv_call_args(t, r->end, a, 32);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].kw, "build_directory"))
			static_add(c, "H22", "build-dir", t->v[a[i].a].line, t->v[a[i].a].col,
				   "build_directory (line %d) chooses where the extension is built, which is the harness's "
				   "to choose (a build placed elsewhere can stand in for another source's); leave it out",
				   t->v[a[i].a].line);
}

static void world_refs(struct static_ctx *c, const struct pv_ref *r, void *arg)
{
	(void)arg;
	const struct pytok_list *t = c->t;
	const struct pytok *k = &t->v[r->start];
	build_refs(c, r);
	int is_open = (r->head == REF_FREE && !strcmp(r->path, "open")) || path_in(r->path, (const char *const[]){
		"io.open", "codecs.open", "os.open", "os.fdopen", "builtins.open", NULL });
	if (is_open && r->called) {
		char *mode = open_mode(t, r->end);
		int writes = mode && strpbrk(mode, "wax+"), binary = writes && strchr(mode, 'b');
		if (binary && !c->hot[r->start])
			static_add(c, "H22", "file-write", k->line, k->col,
				   "%s (line %d) writes a binary file: the extension is built by the harness from the source "
				   "in this file, so a candidate writes no binaries; %s", r->text, k->line, h22_fix);
		else if (!writes || c->hot[r->start])
			static_add(c, "H22", writes ? "file-write" : "file-read", k->line, k->col,
				   "%s (line %d) %s a file%s; %s", r->text, k->line, writes ? "writes" : "reads",
				   writes ? " while forward runs" : "", h22_fix);
		free(mode);
		return;
	}
	if (r->ncomp > 1 && !strcmp(path_last(r->path), "__file__")) {
		/* ext.__file__, torch.__file__: where a build or a library lies on disk */
		static_add(c, "H22", "build-dir", k->line, k->col,
			   "%s (line %d) finds where a module or a build lies on disk, which a candidate has no use for "
			   "(a build placed there can stand in for another source's); leave the files alone", r->text,
			   k->line);
		return;
	}
	if (r->head != REF_IMPORT || !path_in(r->path, py_world))
		return;
	if ((path_under(r->path, "os.environ") || path_under(r->path, "os.getenv")) && build_setting(t, r))
		return;
	if (env_key_is(t, r, "TORCH_EXTENSIONS_DIR")) {
		static_add(c, "H22", "build-dir", k->line, k->col,
			   "TORCH_EXTENSIONS_DIR (line %d) is where extensions are built, which is the harness's to "
			   "choose (a build placed elsewhere can stand in for another source's); leave it alone", k->line);
		return;
	}
	static_add(c, "H22", "outside-world", k->line, k->col, "%s (line %d) reaches outside the inputs; %s", r->path,
		   k->line, h22_fix);
}

static void rule_h22(struct static_ctx *c)
{
	const struct pytok_list *t = c->t;
	for (size_t i = 0; i < c->v->nimports; i++) {
		const struct pv_import *m = &c->v->imports[i];
		if (path_in(m->path, py_world) && strcmp(m->path, "os") != 0)
			static_add(c, "H22", "outside-world", t->v[m->at].line, t->v[m->at].col,
				   "imports %s (line %d); %s", m->path, t->v[m->at].line, h22_fix);
	}
	for_each_ref(c, world_refs, NULL);
	for (size_t i = 0; i < t->n; i++)
		if (method_call_at(t, i, py_reads) || (method_call_at(t, i, py_writes) && c->hot[i + 1]) ||
		    method_call_at(t, i, py_binary_writes))
			static_add(c, "H22", "file-method", t->v[i + 1].line, t->v[i + 1].col,
				   "a file operation (line %d); %s", t->v[i + 1].line, h22_fix);
	const struct cx_list *x = c->cx;
	for (size_t i = 0; i < x->n; i++)
		if (cx_ident_in(x, i, cx_world) || (cx_ident_in(x, i, cx_world_calls) && cx_is(x, i + 1, CX_PUNCT, "(")))
			static_add(c, "H22", "cxx-outside-world", x->v[i].line, x->v[i].col,
				   "the C++ source calls %s (line %d); %s", x->v[i].text, x->v[i].line, h22_fix);
}

void rules_env(struct static_ctx *c)
{
	rule_h14(c);
	rule_h22(c);
}
