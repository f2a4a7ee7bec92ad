/* pytok.c - the Python tokenizer behind the static checks. It follows CPython's tokenizer closely
 * enough that a name counts only where Python would run it: not in comments, strings or docstrings. */
#include "pytok.h"

#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

struct lexer {
	struct pytok_list *t;
	const char *s;
	size_t len;
	int depth;               /* open brackets */
	char brackets[256];      /* which ones, for the error message of a stray closer */
	int *indents;
	size_t nindents, aindents;
	int line_has_tokens;
	int fields_open;         /* f-string fields being scanned inside each other */
	struct sb_error *err;
};

/* Python's own parser stops near 200 nested brackets; the limit keeps every recursion here shallow. */
#define MAX_NESTING 200

/* f-string fields found while scanning one literal: lexed as code once the literal is emitted. */
struct ranges {
	size_t (*v)[2];
	size_t n, alloc;
};

static const char *const ops3[] = { "**=", "//=", ">>=", "<<=", "...", NULL };
static const char *const ops2[] = { "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=",
				     "*=", "/=", "%=", "&=", "|=", "^=", "@=", NULL };

static int is_name_start(unsigned char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int is_name_char(unsigned char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* r, b, f, u and t (3.14 template strings, lexed like f) in the combinations Python accepts. */
static int string_prefix(const char *p, size_t n, unsigned *flags)
{
	unsigned f = 0;
	if (n > 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned bit;
		switch (p[i] | 0x20) {
		case 'r': bit = PTS_RAW; break;
		case 'b': bit = PTS_BYTES; break;
		case 'f': case 't': bit = PTS_FORMAT; break;
		case 'u': bit = 0x100; break;
		default: return 0;
		}
		if (f & bit)
			return 0;
		f |= bit;
	}
	if ((f & 0x100) && n > 1)
		return 0;
	if ((f & PTS_BYTES) && (f & PTS_FORMAT))
		return 0;
	*flags = f & ~0x100u;
	return 1;
}

void pytok_position(const struct pytok_list *t, size_t off, int *line, int *col)
{
	size_t lo = 0, hi = t->nlines;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (t->line_off[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	int c = 1;
	for (size_t i = t->line_off[lo]; i < off && i < t->src_len; i++)
		if (((unsigned char)t->src[i] & 0xC0) != 0x80)
			c++;
	*line = (int)lo + 1;
	*col = c;
}

static struct pytok *emit(struct lexer *lx, enum pytok_kind kind, size_t off, size_t len, unsigned flags)
{
	struct pytok_list *t = lx->t;
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 256;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	struct pytok *k = &t->v[t->n++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->off = off;
	k->len = len;
	k->flags = flags;
	k->depth = lx->depth;
	pytok_position(t, off, &k->line, &k->col);
	if (kind != PT_NEWLINE && kind != PT_INDENT && kind != PT_DEDENT && kind != PT_END)
		lx->line_has_tokens = 1;
	return k;
}

static int fail_at(struct lexer *lx, size_t off, const char *what)
{
	int line, col;
	pytok_position(lx->t, off, &line, &col);
	return sb_error_set(lx->err, SB_EINPUT, "line %d, column %d: %s", line, col, what);
}

static int scan_string(struct lexer *lx, size_t q, unsigned flags, size_t *end, struct ranges *fields);
static int scan_field(struct lexer *lx, size_t *p, struct ranges *fields);

/* Skips an identifier at *p inside an f-string field; a string prefix followed by a quote starts a
 * nested literal, which is skipped whole (3.12 allows the outer quote there). */
static int skip_field_token(struct lexer *lx, size_t *p)
{
	size_t a = *p, b = a;
	unsigned flags = 0;
	while (b < lx->len && is_name_char((unsigned char)lx->s[b]))
		b++;
	if (b < lx->len && (lx->s[b] == '"' || lx->s[b] == '\'') && string_prefix(lx->s + a, b - a, &flags))
		return scan_string(lx, b, flags, p, NULL);
	*p = b;
	return 0;
}

/* One replacement field of an f-string, from its '{' at *p to just after its '}'. Records the
 * expression's byte range (and those of fields nested in the format spec). */
static int scan_field_in(struct lexer *lx, size_t *p, struct ranges *fields)
{
	size_t open = *p, i = *p + 1, expr_end = 0;
	int nest = 0, in_spec = 0;
	while (i < lx->len) {
		unsigned char c = (unsigned char)lx->s[i];
		if (!in_spec && (c == '"' || c == '\'')) {
			if (scan_string(lx, i, 0, &i, NULL))
				return -1;
			continue;
		}
		if (!in_spec && is_name_start(c)) {
			if (skip_field_token(lx, &i))
				return -1;
			continue;
		}
		if (in_spec && c == '{') {
			if (scan_field(lx, &i, fields))
				return -1;
			continue;
		}
		if (!in_spec && (c == '(' || c == '[' || c == '{'))
			nest++;
		else if (!in_spec && (c == ')' || c == ']'))
			nest--;
		else if (c == '}' && nest > 0 && !in_spec)
			nest--;
		else if (c == '}') {
			if (!expr_end)
				expr_end = i;
			if (fields) {
				if (fields->n == fields->alloc) {
					fields->alloc = fields->alloc ? 2 * fields->alloc : 8;
					fields->v = xrealloc(fields->v, fields->alloc * sizeof(*fields->v));
				}
				fields->v[fields->n][0] = open + 1;
				fields->v[fields->n][1] = expr_end;
				fields->n++;
			}
			*p = i + 1;
			return 0;
		} else if (!in_spec && nest == 0 && c == '!' && i + 1 < lx->len && lx->s[i + 1] != '=') {
			expr_end = i;
			in_spec = 1; /* the conversion and the spec after it are not code */
		} else if (!in_spec && nest == 0 && c == ':') {
			expr_end = i;
			in_spec = 1;
		}
		i++;
	}
	return fail_at(lx, open, "an f-string field '{' is never closed");
}

static int scan_field(struct lexer *lx, size_t *p, struct ranges *fields)
{
	if (lx->fields_open >= MAX_NESTING)
		return fail_at(lx, *p, "f-strings nested too deeply");
	lx->fields_open++;
	int rc = scan_field_in(lx, p, fields);
	lx->fields_open--;
	return rc;
}

/* A literal whose opening quote is at q; *end is set just after its closing quote. */
static int scan_string(struct lexer *lx, size_t q, unsigned flags, size_t *end, struct ranges *fields)
{
	char quote = lx->s[q];
	int triple = q + 2 < lx->len && lx->s[q + 1] == quote && lx->s[q + 2] == quote;
	size_t i = q + (triple ? 3 : 1);
	while (i < lx->len) {
		char c = lx->s[i];
		if (c == '\\') {
			if ((flags & PTS_FORMAT) && i + 1 < lx->len && (lx->s[i + 1] == '{' || lx->s[i + 1] == '}')) {
				i++; /* the brace is still a field delimiter */
				continue;
			}
			if ((flags & PTS_FORMAT) && !(flags & PTS_RAW) && i + 2 < lx->len && lx->s[i + 1] == 'N' &&
			    lx->s[i + 2] == '{') {
				const char *close = memchr(lx->s + i, '}', lx->len - i);
				i = close ? (size_t)(close - lx->s) + 1 : lx->len;
				continue;
			}
			i += 2; /* even in a raw literal a backslash keeps the next quote from closing it */
			continue;
		}
		if ((flags & PTS_FORMAT) && c == '{') {
			if (i + 1 < lx->len && lx->s[i + 1] == '{') {
				i += 2;
				continue;
			}
			if (scan_field(lx, &i, fields))
				return -1;
			continue;
		}
		if ((flags & PTS_FORMAT) && c == '}' && i + 1 < lx->len && lx->s[i + 1] == '}') {
			i += 2;
			continue;
		}
		if (c == quote) {
			if (!triple) {
				*end = i + 1;
				return 0;
			}
			if (i + 2 < lx->len && lx->s[i + 1] == quote && lx->s[i + 2] == quote) {
				*end = i + 3;
				return 0;
			}
		}
		if (c == '\n' && !triple)
			break;
		i++;
	}
	return fail_at(lx, q, triple ? "unterminated triple-quoted string" : "unterminated string literal");
}

static int lex_range(struct lexer *lx, size_t start, size_t end, int fexpr);

/* A literal starting at `start` (its prefix, if any) with its quote at q. */
static int lex_string(struct lexer *lx, size_t start, size_t q, unsigned flags, size_t *next)
{
	struct ranges fields = { 0 };
	size_t end;
	if (scan_string(lx, q, flags, &end, &fields)) {
		free(fields.v);
		return -1;
	}
	int triple = end - q >= 6 && lx->s[q + 1] == lx->s[q] && lx->s[q + 2] == lx->s[q];
	struct pytok *k = emit(lx, PT_STRING, start, end - start, 0);
	k->sflags = flags | (triple ? PTS_TRIPLE : 0);
	k->body = q + (triple ? 3 : 1);
	k->body_len = end - (triple ? 3 : 1) - k->body;
	int rc = 0;
	for (size_t i = 0; i < fields.n && !rc; i++) {
		lx->depth++;
		rc = lex_range(lx, fields.v[i][0], fields.v[i][1], 1);
		lx->depth--;
	}
	free(fields.v);
	*next = end;
	return rc;
}

static void push_indent(struct lexer *lx, int width)
{
	if (lx->nindents == lx->aindents) {
		lx->aindents = lx->aindents ? 2 * lx->aindents : 16;
		lx->indents = xrealloc(lx->indents, lx->aindents * sizeof(int));
	}
	lx->indents[lx->nindents++] = width;
}

/* At the start of a line outside brackets: INDENT/DEDENT as Python would emit them. Blank and
 * comment-only lines do not count. Returns the offset of the line's first token character. */
static size_t line_start(struct lexer *lx, size_t i, size_t end, int *blank)
{
	int width = 0;
	while (i < end && (lx->s[i] == ' ' || lx->s[i] == '\t' || lx->s[i] == '\f')) {
		width = lx->s[i] == '\t' ? (width / 8 + 1) * 8 : lx->s[i] == '\f' ? 0 : width + 1;
		i++;
	}
	*blank = i >= end || lx->s[i] == '\n' || lx->s[i] == '\r' || lx->s[i] == '#' ||
		 (lx->s[i] == '\\' && i + 1 < end && lx->s[i + 1] == '\n');
	if (*blank)
		return i;
	if (width > lx->indents[lx->nindents - 1]) {
		push_indent(lx, width);
		emit(lx, PT_INDENT, i, 0, 0);
	}
	while (width < lx->indents[lx->nindents - 1]) {
		lx->nindents--;
		emit(lx, PT_DEDENT, i, 0, 0);
	}
	return i;
}

static int lex_op(struct lexer *lx, size_t i, size_t end, int fexpr, size_t *next)
{
	size_t n = 1;
	for (const char *const *o = ops3; *o; o++)
		if (i + 3 <= end && !memcmp(lx->s + i, *o, 3))
			n = 3;
	if (n == 1)
		for (const char *const *o = ops2; *o; o++)
			if (i + 2 <= end && !memcmp(lx->s + i, *o, 2))
				n = 2;
	char c = lx->s[i];
	if (n == 1 && (c == ')' || c == ']' || c == '}')) {
		char want = c == ')' ? '(' : c == ']' ? '[' : '{';
		if (lx->depth <= 0 || lx->brackets[(lx->depth - 1) & 255] != want)
			return fail_at(lx, i, c == ')' ? "unmatched ')'" : c == ']' ? "unmatched ']'" : "unmatched '}'");
		lx->depth--;
	}
	if (n == 1 && (c == '(' || c == '[' || c == '{') && lx->depth >= MAX_NESTING)
		return fail_at(lx, i, "brackets nested too deeply");
	emit(lx, PT_OP, i, n, fexpr ? PTF_FEXPR : 0);
	if (n == 1 && (c == '(' || c == '[' || c == '{')) {
		lx->brackets[lx->depth & 255] = c;
		lx->depth++;
	}
	*next = i + n;
	return 0;
}

/* Lexes [start, end). fexpr: an f-string field, where newlines never end a statement. */
static int lex_range(struct lexer *lx, size_t start, size_t end, int fexpr)
{
	int base_depth = lx->depth, at_line_start = !fexpr;
	size_t i = start;
	while (i < end) {
		if (at_line_start && lx->depth == base_depth) {
			int blank;
			i = line_start(lx, i, end, &blank);
			at_line_start = 0;
			if (blank) {
				while (i < end && lx->s[i] != '\n')
					i++;
				if (i < end)
					i++;
				at_line_start = 1;
				continue;
			}
		}
		unsigned char c = (unsigned char)lx->s[i];
		if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
			i++;
		} else if (c == '#') {
			while (i < end && lx->s[i] != '\n')
				i++;
		} else if (c == '\\' && i + 1 < end && (lx->s[i + 1] == '\n' || lx->s[i + 1] == '\r')) {
			i += lx->s[i + 1] == '\r' && i + 2 < end && lx->s[i + 2] == '\n' ? 3 : 2;
		} else if (c == '\n') {
			if (!fexpr && lx->depth == base_depth) {
				if (lx->line_has_tokens)
					emit(lx, PT_NEWLINE, i, 0, 0);
				lx->line_has_tokens = 0;
				at_line_start = 1;
			}
			i++;
		} else if (is_name_start(c)) {
			size_t a = i;
			unsigned flags = 0;
			while (i < end && is_name_char((unsigned char)lx->s[i]))
				i++;
			if (i < end && (lx->s[i] == '"' || lx->s[i] == '\'') && string_prefix(lx->s + a, i - a, &flags)) {
				if (lex_string(lx, a, i, flags, &i))
					return -1;
				if (fexpr)
					lx->t->v[lx->t->n - 1].flags |= PTF_FEXPR; /* the string itself, not its own fields */
			} else {
				emit(lx, PT_NAME, a, i - a, fexpr ? PTF_FEXPR : 0);
			}
		} else if (is_digit(c) || (c == '.' && i + 1 < end && is_digit((unsigned char)lx->s[i + 1]))) {
			size_t a = i;
			int radix = c == '0' && i + 1 < end && strchr("xXoObB", lx->s[i + 1]) && lx->s[i + 1];
			while (i < end) {
				char d = lx->s[i];
				if (is_name_char((unsigned char)d) || d == '.')
					i++;
				else if (!radix && (d == '+' || d == '-') && (lx->s[i - 1] == 'e' || lx->s[i - 1] == 'E'))
					i++;
				else
					break;
			}
			emit(lx, PT_NUMBER, a, i - a, fexpr ? PTF_FEXPR : 0);
		} else if (c == '"' || c == '\'') {
			if (lex_string(lx, i, i, 0, &i))
				return -1;
			if (fexpr)
				lx->t->v[lx->t->n - 1].flags |= PTF_FEXPR;
		} else {
			if (lex_op(lx, i, end, fexpr, &i))
				return -1;
		}
	}
	if (lx->depth > base_depth) {
		for (size_t k = lx->t->n; k-- > 0;)
			if (lx->t->v[k].kind == PT_OP && lx->t->v[k].depth == base_depth &&
			    strchr("([{", lx->s[lx->t->v[k].off]) && lx->t->v[k].len == 1)
				return fail_at(lx, lx->t->v[k].off, "this bracket is never closed");
		return fail_at(lx, start, "a bracket is never closed");
	}
	return 0;
}

int pytok_tokenize(const char *src, size_t len, struct pytok_list *out, struct sb_error *err)
{
	struct lexer lx = { .t = out, .s = src, .len = len, .err = err };
	memset(out, 0, sizeof(*out));
	out->src = src;
	out->src_len = len;
	size_t alloc = 64;
	out->line_off = xmalloc(alloc * sizeof(size_t));
	out->line_off[out->nlines++] = 0;
	for (size_t i = 0; i < len; i++)
		if (src[i] == '\n') {
			if (out->nlines == alloc)
				out->line_off = xrealloc(out->line_off, (alloc *= 2) * sizeof(size_t));
			out->line_off[out->nlines++] = i + 1;
		}
	push_indent(&lx, 0);
	size_t start = len >= 3 && !memcmp(src, "\xEF\xBB\xBF", 3) ? 3 : 0; /* a UTF-8 byte order mark */
	int rc = lex_range(&lx, start, len, 0);
	if (!rc) {
		if (lx.line_has_tokens)
			emit(&lx, PT_NEWLINE, len, 0, 0);
		while (lx.nindents > 1) {
			lx.nindents--;
			emit(&lx, PT_DEDENT, len, 0, 0);
		}
		emit(&lx, PT_END, len, 0, 0);
	}
	free(lx.indents);
	if (rc) {
		pytok_release(out);
		return SB_EINPUT; /* every failure above is the source's, and err says where */
	}
	return 0;
}

void pytok_release(struct pytok_list *t)
{
	free(t->v);
	free(t->line_off);
	memset(t, 0, sizeof(*t));
}

int pytok_is(const struct pytok_list *t, size_t i, enum pytok_kind kind, const char *text)
{
	if (i >= t->n || t->v[i].kind != kind)
		return 0;
	size_t n = strlen(text);
	return t->v[i].len == n && !memcmp(t->src + t->v[i].off, text, n);
}

size_t pytok_matching(const struct pytok_list *t, size_t open)
{
	int d = t->v[open].depth;
	for (size_t k = open + 1; k < t->n; k++)
		if (t->v[k].depth == d && t->v[k].kind == PT_OP && strchr(")]}", t->src[t->v[k].off]))
			return k;
	return t->n;
}

size_t pytok_opening(const struct pytok_list *t, size_t close)
{
	for (size_t k = close; k-- > 0;)
		if (t->v[k].depth == t->v[close].depth && t->v[k].kind == PT_OP && strchr("([{", t->src[t->v[k].off]))
			return k;
	return 0;
}

void pytok_text(const struct pytok_list *t, size_t i, char *buf, size_t cap)
{
	size_t n = i < t->n ? t->v[i].len : 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, i < t->n ? t->src + t->v[i].off : "", n);
	buf[n] = '\0';
}

static void decode_into(struct strbuf *sb, const char *p, size_t n, int raw)
{
	for (size_t i = 0; i < n; i++) {
		if (raw || p[i] != '\\' || i + 1 >= n) {
			strbuf_addch(sb, p[i]);
			continue;
		}
		char e = p[++i];
		switch (e) {
		case 'n': strbuf_addch(sb, '\n'); break;
		case 't': strbuf_addch(sb, '\t'); break;
		case 'r': strbuf_addch(sb, '\r'); break;
		case '0': strbuf_addch(sb, '\0'); break;
		case '\n': break;
		case 'x':
			if (i + 2 < n) {
				char hex[3] = { p[i + 1], p[i + 2], 0 };
				strbuf_addch(sb, (char)strtol(hex, NULL, 16));
				i += 2;
			}
			break;
		default: strbuf_addch(sb, e); break;
		}
	}
}

char *pytok_string_value(const struct pytok_list *t, size_t i, size_t *next)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k = i;
	int ok = k < t->n && t->v[k].kind == PT_STRING;
	for (; ok && k < t->n && t->v[k].kind == PT_STRING && !(t->v[k].flags & PTF_FEXPR); k++) {
		const struct pytok *s = &t->v[k];
		if (k + 1 < t->n && (t->v[k + 1].flags & PTF_FEXPR) && !(s->flags & PTF_FEXPR))
			ok = 0; /* an f-string with fields: its value is known only at run time */
		decode_into(&sb, t->src + s->body, s->body_len, (s->sflags & PTS_RAW) != 0);
	}
	if (next)
		*next = k;
	if (!ok) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

int pytok_bare_string(const struct pytok_list *t, size_t i)
{
	if (i >= t->n || t->v[i].kind != PT_STRING || t->v[i].depth != 0)
		return 0;
	int starts = i == 0 || t->v[i - 1].kind == PT_NEWLINE || t->v[i - 1].kind == PT_INDENT ||
		     t->v[i - 1].kind == PT_DEDENT;
	size_t k = i + 1;
	while (k < t->n && (t->v[k].kind == PT_STRING || (t->v[k].flags & PTF_FEXPR)))
		k++;
	return starts && k < t->n && (t->v[k].kind == PT_NEWLINE || t->v[k].kind == PT_END);
}
