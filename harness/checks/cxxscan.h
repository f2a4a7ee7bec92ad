/* cxxscan.h - a light C++/CUDA scanner over the sources a candidate carries in Python string literals
 * (load_inline's cpp_sources/cuda_sources): identifiers, includes and literals, located in the .py file. */
#ifndef SB_CXXSCAN_H
#define SB_CXXSCAN_H

#include <stddef.h>

#include "pytok.h"

enum cx_kind {
	CX_IDENT,    /* an identifier or keyword: __global__, cudaStreamCreate, std */
	CX_PUNCT,    /* "::", "(", "<", ... one token each */
	CX_STRING,   /* the contents of a C++ string literal (inline PTX lives here) */
	CX_INCLUDE,  /* the header of an #include: "thread", "sys/ptrace.h" */
	CX_NUMBER,   /* a numeric literal as written: "3", "0x10", "1.5f" */
};

struct cx_tok {
	enum cx_kind kind;
	char *text;
	int line, col;           /* in the Python file */
	size_t pystr;            /* index of the Python string token it came from */
};

struct cx_list {
	struct cx_tok *v;
	size_t n, alloc;
};

/* Whether the literal at token i looks like C++: it has #include, __global__, __device__, torch::,
 * at:: or c10::, or both '{' and ';'. */
int cxx_string_has_markers(const struct pytok_list *t, size_t i);
/* cxx_string_has_markers for a literal that is not a bare string: the C++ the module's strings carry
 * wherever they go. A docstring counts only where code hands it to a build (static_sources.c). */
int cxx_string_is_code(const struct pytok_list *t, size_t i);

/* Appends the C++ tokens of literal i (comments and character literals dropped; f-string fields read
 * as blanks, "{{" as "{"). */
void cxx_scan_string(const struct pytok_list *t, size_t i, struct cx_list *out);
/* The same over several literals read as one text, in the order given: a source assembled from pieces
 * ("torch::re" + "lu(x)") is lexed as the compiler sees it. */
void cxx_scan_joined(const struct pytok_list *t, const size_t *strs, size_t n, struct cx_list *out);
/* The same over text the checks worked out (a template after .format or .replace), every token placed
 * at token `at` of the .py file. */
void cxx_scan_text(const struct pytok_list *t, const char *text, size_t len, size_t at, struct cx_list *out);

void cx_list_release(struct cx_list *l);

/* Index of the first identifier equal to name at or after `from`, or l->n. */
size_t cx_find(const struct cx_list *l, size_t from, const char *name);
int cx_is(const struct cx_list *l, size_t i, enum cx_kind kind, const char *text);

#endif
