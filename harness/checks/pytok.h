/* pytok.h - a Python tokenizer for the static hack checks: names, numbers, operators and strings
 * (prefixes, triple quotes, f-strings) with line and column, so comments and strings never pass for code. */
#ifndef SB_PYTOK_H
#define SB_PYTOK_H

#include <stddef.h>

#include "../core/error.h"

enum pytok_kind {
	PT_NAME,
	PT_NUMBER,
	PT_STRING,   /* one literal; the bytes between its quotes are [body, body + body_len) */
	PT_OP,       /* operators and brackets, longest match: "**=", "->", ":=", "(" */
	PT_NEWLINE,  /* the end of a logical line (never inside brackets or after a backslash) */
	PT_INDENT,
	PT_DEDENT,
	PT_END,
};

/* String flags. */
#define PTS_RAW    1u
#define PTS_BYTES  2u
#define PTS_FORMAT 4u /* f-string (or t-string): its {expressions} follow it as tokens with PTF_FEXPR */
#define PTS_TRIPLE 8u

/* Token flags. */
#define PTF_FEXPR  1u /* part of an expression inside an f-string's braces */

struct pytok {
	enum pytok_kind kind;
	int line, col;           /* 1-based; col counts characters, not bytes */
	size_t off, len;         /* the token's bytes in the source (strings: prefix and quotes included) */
	size_t body, body_len;   /* PT_STRING: the contents between the quotes */
	unsigned sflags;         /* PT_STRING: PTS_* */
	unsigned flags;          /* PTF_* */
	int depth;               /* bracket nesting at the token (the opener itself is outside) */
};

struct pytok_list {
	const char *src;         /* not owned: the source outlives the tokens */
	size_t src_len;
	struct pytok *v;
	size_t n, alloc;
	size_t *line_off;        /* line_off[i] = byte offset where line i + 1 starts */
	size_t nlines;
};

/* Tokenises src. An unterminated string or a bracket left open is an SB_EINPUT error naming the line;
 * the harness leaves such files to Python, which reports the syntax error better. */
int pytok_tokenize(const char *src, size_t len, struct pytok_list *out, struct sb_error *err);
void pytok_release(struct pytok_list *t);

/* Line and column (1-based, characters) of a byte offset into the source. */
void pytok_position(const struct pytok_list *t, size_t off, int *line, int *col);

/* Token helpers used by every rule. */
int pytok_is(const struct pytok_list *t, size_t i, enum pytok_kind kind, const char *text);
static inline int pytok_is_op(const struct pytok_list *t, size_t i, const char *op)
{
	return pytok_is(t, i, PT_OP, op);
}
static inline int pytok_is_name(const struct pytok_list *t, size_t i, const char *name)
{
	return pytok_is(t, i, PT_NAME, name);
}
/* Whether token i is a string that is a statement by itself: a docstring, or a string used as a comment. */
int pytok_bare_string(const struct pytok_list *t, size_t i);
/* The bracket that closes the one opened at token `open` (t->n when none does). */
size_t pytok_matching(const struct pytok_list *t, size_t open);
/* The bracket that opens the one closed at token `close` (0 when none does). */
size_t pytok_opening(const struct pytok_list *t, size_t close);
/* Copies a token's text (at most cap - 1 bytes) into buf. */
void pytok_text(const struct pytok_list *t, size_t i, char *buf, size_t cap);
/* The value of the string literal at i joined with the literals right after it ("mat" "mul"),
 * escapes resolved; NULL when i is no literal or one is an f-string with fields (its value exists
 * only at run time). *next (may be NULL) is set to the first token after them. The caller frees it. */
char *pytok_string_value(const struct pytok_list *t, size_t i, size_t *next);

#endif
