/* kclass.h - which kernels the candidate wrote and which came from a library (ATen, cuBLAS, cuDNN,
 * CUTLASS, Triton from inductor, cub/thrust, ...), judged from kernel names; and short names for tables. */
#ifndef SB_KCLASS_H
#define SB_KCLASS_H

#include <stddef.h>

struct kclass {
	int custom;              /* compiled from the candidate */
	const char *library;     /* "aten", "cuBLAS", ...; NULL when custom */
	int pytorch_compute;     /* PyTorch's own compute (ATen or inductor's Triton): H01 evidence */
	int utility;             /* ATen fill, copy, concatenation, arange, random draws: not the work */
	int instantiable;        /* a template library a candidate compiles into itself (cub, thrust, CUTLASS) */
};

/* Classifies by the demangled name (the mangled one is used when that does not demangle). */
void kclass_of(const char *demangled, struct kclass *k);

/* The candidate's built extensions, read once, to recognise template kernels (cub, CUTLASS, ...) it
 * instantiated itself: their mangled names are inside its .so files. */
struct kclass_objects {
	char **data;
	size_t *len;
	size_t n;
};
void kclass_objects_load(struct kclass_objects *o, const char *const *paths, size_t n);
int kclass_objects_contain(const struct kclass_objects *o, const char *mangled);
void kclass_objects_release(struct kclass_objects *o);

/* A short, readable kernel name of at most `width` bytes: no return type, no parameter list, no
 * namespaces, template arguments kept while they fit. The caller frees it. */
char *kname_short(const char *demangled, size_t width);

#endif
