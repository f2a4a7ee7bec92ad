/* kclass.c - kernel classification by name patterns (the table below, documented in docs/profile.md)
 * and short kernel names. A name no library pattern claims is the candidate's own. */
#include "kclass.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/strbuf.h"

enum how { PREFIX, CONTAINS, NOCASE };

struct rule {
	enum how how;
	const char *pat;
	const char *library;
	int instantiable;            /* a candidate may compile this library's templates into its own .so */
};

/* First match wins, so the narrower patterns come first (torch's private copy of cub is ATen's). */
static const struct rule rules[] = {
	{ CONTAINS, "at_cuda_detail::", "aten", 0 },
	{ PREFIX, "at::", "aten", 0 },
	{ PREFIX, "c10::", "aten", 0 },
	{ PREFIX, "pytorch_flash::", "aten", 0 },
	{ CONTAINS, "PyTorchMemEffAttention", "aten", 0 },
	{ PREFIX, "fmha_cutlass", "aten", 0 },
	{ PREFIX, "triton_poi_", "triton", 0 },
	{ PREFIX, "triton_red_", "triton", 0 },
	{ PREFIX, "triton_per_", "triton", 0 },
	{ PREFIX, "triton_tem_", "triton", 0 },
	{ PREFIX, "triton_for_", "triton", 0 },
	{ PREFIX, "triton_spl_", "triton", 0 },
	{ NOCASE, "cudnn", "cuDNN", 0 },
	{ CONTAINS, "xmma_fprop", "cuDNN", 0 },
	{ CONTAINS, "xmma_dgrad", "cuDNN", 0 },
	{ CONTAINS, "xmma_wgrad", "cuDNN", 0 },
	{ CONTAINS, "convolve_sgemm", "cuDNN", 0 },
	{ PREFIX, "winogradForward", "cuDNN", 0 },
	{ PREFIX, "generateWinograd", "cuDNN", 0 },
	{ PREFIX, "nchwToNhwcKernel", "cuDNN", 0 },
	{ PREFIX, "nhwcToNchwKernel", "cuDNN", 0 },
	{ PREFIX, "conv2d_grouped_direct_kernel", "cuDNN", 0 },
	{ CONTAINS, "cublasLt", "cuBLASLt", 0 },
	{ NOCASE, "cublas", "cuBLAS", 0 },
	{ PREFIX, "cutlass_", "cuBLAS", 0 },         /* cuBLAS's own CUTLASS kernels: cutlass_80_tensorop_... */
	{ CONTAINS, "Kernel<cutlass_", "cuBLAS", 0 },
	{ CONTAINS, "Kernel2<cutlass_", "cuBLAS", 0 },
	{ PREFIX, "gemv2T_kernel", "cuBLAS", 0 },
	{ PREFIX, "gemv2N_kernel", "cuBLAS", 0 },
	{ PREFIX, "gemvNSP_kernel", "cuBLAS", 0 },
	{ PREFIX, "gemmk1_kernel", "cuBLAS", 0 },
	{ PREFIX, "gemmSN_", "cuBLAS", 0 },
	{ PREFIX, "splitKreduce_kernel", "cuBLAS", 0 },
	{ CONTAINS, "cutlass::", "CUTLASS", 1 },
	{ CONTAINS, "cute::", "CUTLASS", 1 },
	{ CONTAINS, "thrust::", "thrust", 1 },
	{ CONTAINS, "cub::", "cub", 1 },
	{ PREFIX, "flash::", "flash-attn", 1 },
	{ NOCASE, "nccl", "NCCL", 0 },
	{ NOCASE, "cufft", "cuFFT", 0 },
	{ PREFIX, "regular_fft", "cuFFT", 0 },
	{ PREFIX, "vector_fft", "cuFFT", 0 },
	{ NOCASE, "curand", "cuRAND", 0 },
	{ NOCASE, "cusparse", "cuSPARSE", 0 },
	{ NOCASE, "cusolver", "cuSOLVER", 0 },
};

/* ATen kernels that move or fill memory rather than compute the problem (the static checks allow
 * the calls behind them: torch.empty/zeros, .contiguous(), cat, arange, rand*). */
static const char *const utilities[] = {
	"fill", "copy", "arange", "distribution_", "philox", "normal_kernel", "uniform_kernel", "random_",
};

/* Vendor GEMM kernels are named after the architecture: ampere_sgemm_..., sm90_xmma_gemm_...; they are
 * precompiled with plain names, never templates or C++ signatures. */
static int arch_gemm(const char *s)
{
	if (strpbrk(s, "<("))
		return 0;
	static const char *const archs[] = { "maxwell_", "pascal_", "volta_", "turing_", "ampere_", "hopper_",
					     "blackwell_" };
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (starts_with(s, archs[i]) && strstr(s, "gemm"))
			return 1;
	if (s[0] == 's' && s[1] == 'm' && isdigit((unsigned char)s[2])) {
		const char *p = s + 2;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == 'a')
			p++;
		return *p == '_' && strstr(p, "gemm") != NULL;
	}
	return 0;
}

static int contains_nocase(const char *s, const char *pat)
{
	size_t n = strlen(pat);
	for (; *s; s++)
		if (!strncasecmp(s, pat, n))
			return 1;
	return 0;
}

static const char *skip_void(const char *s)
{
	return starts_with(s, "void ") ? s + 5 : s;
}

void kclass_of(const char *demangled, struct kclass *k)
{
	const char *s = skip_void(demangled ? demangled : "");
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		int hit = r->how == PREFIX ? starts_with(s, r->pat)
			: r->how == CONTAINS ? strstr(s, r->pat) != NULL : contains_nocase(s, r->pat);
		if (hit) {
			k->library = r->library;
			k->instantiable = r->instantiable;
			break;
		}
	}
	if (!k->library && arch_gemm(s))
		k->library = "cuBLAS";
	if (!k->library) {
		k->custom = 1;
		return;
	}
	if (!strcmp(k->library, "aten")) {
		for (size_t i = 0; i < sizeof(utilities) / sizeof(utilities[0]) && !k->utility; i++)
			k->utility = contains_nocase(s, utilities[i]);
		k->pytorch_compute = !k->utility;
	} else if (!strcmp(k->library, "triton")) {
		k->pytorch_compute = 1;
	}
}

/* ---------- the candidate's own objects ---------- */

void kclass_objects_load(struct kclass_objects *o, const char *const *paths, size_t n)
{
	memset(o, 0, sizeof(*o));
	o->data = xcalloc(n ? n : 1, sizeof(char *));
	o->len = xcalloc(n ? n : 1, sizeof(size_t));
	for (size_t i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;
		if (strbuf_read_file(&sb, paths[i], 1u << 30) == 0 && sb.len) {
			o->len[o->n] = sb.len;
			o->data[o->n++] = strbuf_detach(&sb, NULL);
		} else {
			strbuf_release(&sb);
		}
	}
}

int kclass_objects_contain(const struct kclass_objects *o, const char *mangled)
{
	size_t n = strlen(mangled);
	if (n < 4) /* too short to identify anything */
		return 0;
	for (size_t i = 0; i < o->n; i++)
		if (memmem(o->data[i], o->len[i], mangled, n + 1)) /* with its NUL: the whole symbol */
			return 1;
	return 0;
}

void kclass_objects_release(struct kclass_objects *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->data[i]);
	free(o->data);
	free(o->len);
	memset(o, 0, sizeof(*o));
}

/* ---------- short names ---------- */

static const char ANON[] = "(anonymous namespace)";

/* Where the parameter list starts: the first '(' outside template brackets that is not
 * "(anonymous namespace)"; the end of the string when there is none. */
static size_t params_at(const char *s)
{
	int angle = 0;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '<')
			angle++;
		else if (s[i] == '>' && angle > 0)
			angle--;
		else if (s[i] == '(' && angle == 0) {
			if (!strncmp(s + i, ANON, sizeof(ANON) - 1)) {
				i += sizeof(ANON) - 2;
				continue;
			}
			return i;
		}
	}
	return strlen(s);
}

char *kname_short(const char *demangled, size_t width)
{
	const char *s = skip_void(demangled ? demangled : "?");
	size_t n = params_at(s);
	struct strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < n;) {
		/* drop every "qualifier::" (identifiers and "(anonymous namespace)") */
		size_t j = i;
		if (!strncmp(s + i, ANON, sizeof(ANON) - 1))
			j = i + sizeof(ANON) - 1;
		else
			while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
				j++;
		if (j > i && j + 1 < n && s[j] == ':' && s[j + 1] == ':' && (i == 0 || !isalnum((unsigned char)s[i - 1]))) {
			i = j + 2;
			continue;
		}
		if (j == i)
			j = i + 1;
		strbuf_add(&out, s + i, j - i);
		i = j;
	}
	if (!out.len)
		strbuf_addstr(&out, s);
	if (width >= 8 && out.len > width) {
		strbuf_setlen(&out, width - 3);
		strbuf_addstr(&out, "...");
	}
	return strbuf_detach(&out, NULL);
}
