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

/* Whether the literal at token i carries C++: it has #include, __global__, __device__, torch::,
 * at:: or c10::, or both '{' and ';'. A string that is a statement by itself (a docstring) never
 * does: nothing can pass it to a compiler. */
int cxx_string_is_code(const struct pytok_list *t, size_t i);

/* Appends the C++ tokens of literal i (comments, character literals and numbers dropped; f-string
 * fields read as blanks, "{{" as "{"). */
void cxx_scan_string(const struct pytok_list *t, size_t i, struct cx_list *out);

void cx_list_release(struct cx_list *l);

/* Index of the first identifier equal to name at or after `from`, or l->n. */
size_t cx_find(const struct cx_list *l, size_t from, const char *name);
int cx_is(const struct cx_list *l, size_t i, enum cx_kind kind, const char *text);

#endif
