/* strbuf.h - growable, always NUL-terminated byte strings (git's strbuf idea).
 * Every text the harness builds (messages, paths, JSON snippets) goes through one of these. */
#ifndef SB_STRBUF_H
#define SB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf; /* never NULL after init: points at a shared "" until the first write */
};

extern char strbuf_empty[];
#define STRBUF_INIT { 0, 0, strbuf_empty }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void strbuf_reset(struct strbuf *sb) { strbuf_setlen(sb, 0); }

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addchars(struct strbuf *sb, int c, size_t n);
__attribute__((format(printf, 2, 3)))
void strbuf_addf(struct strbuf *sb, const char *fmt, ...);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);

void strbuf_trim(struct strbuf *sb);
/* Appends the whole file; returns 0 or -errno. */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);
/* Appends everything readable from fd until EOF; returns 0 or -errno. */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t max);

/* A NULL-terminated growable array of owned strings, for argv and lists. */
struct strvec {
	const char **v;
	size_t nr, alloc;
};
#define STRVEC_INIT { NULL, 0, 0 }
void strvec_push(struct strvec *sv, const char *s);
__attribute__((format(printf, 2, 3)))
void strvec_pushf(struct strvec *sv, const char *fmt, ...);
void strvec_clear(struct strvec *sv);

/* Small helpers that every stage needs. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
__attribute__((format(printf, 1, 2)))
char *xstrfmt(const char *fmt, ...);
int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);

#endif
