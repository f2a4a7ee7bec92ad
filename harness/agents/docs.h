/* docs.h - documentation retrieval for the Coder (docs/agents.md "Documentation retrieval"): a folder of
 * Markdown, HTML and text files split into passages, indexed once into an SQLite FTS5 database in the
 * cache (keyed by the folder's content), and searched with BM25 for the terms of a failed attempt's
 * compiler error or mismatch, the top passages kept within a token budget. Nothing leaves the machine. */
#ifndef SB_DOCS_H
#define SB_DOCS_H

#include <jansson.h>

#include "../core/error.h"
#include "../core/strbuf.h"

/* Bumped whenever splitting or the schema changes, so an old cache entry is never read as a new one. */
#define DOCS_INDEX_FORMAT 1
#define DOCS_MAX_TERMS 32
#define DOCS_MAX_PASSAGES 8
#define DOCS_PASSAGE_TARGET 900   /* bytes: paragraphs of one section are joined up to about this */
#define DOCS_PASSAGE_MAX 1600     /* bytes: a longer paragraph is cut at a line or sentence end */

/* One passage: a run of paragraphs under one heading of one file. */
struct docs_passage {
	char *file;       /* relative to the folder */
	int line;         /* where it starts in the file (in the stripped text for HTML) */
	char *heading;    /* the heading path, "Guide > Memory > Coalescing"; "" before any heading */
	char *body;
	double score;     /* BM25 (higher is better) when it comes from a search */
	int tokens;       /* estimated tokens of the passage as rendered */
};

struct docs_passages {
	struct docs_passage *v;
	size_t nr, alloc;
};
#define DOCS_PASSAGES_INIT { NULL, 0, 0 }
void docs_passages_release(struct docs_passages *p);

enum docs_format { DOCS_TEXT, DOCS_MARKDOWN, DOCS_HTML };
/* The format of a file by its extension; -1 for files that are not documents. */
int docs_format_of(const char *path);

/* HTML to Markdown-ish text: tags go, headings become "#" lines, block elements end paragraphs, <pre>
 * becomes a fenced block, script/style/comments vanish, entities are decoded. A "<" that does not start
 * a tag is text, so broken markup loses nothing. */
void docs_strip_html(const char *html, struct strbuf *out);

/* Splits a document into passages: a heading always starts one; paragraphs (blank-line separated, fenced
 * code kept whole) are joined up to DOCS_PASSAGE_TARGET bytes and cut above DOCS_PASSAGE_MAX. */
void docs_split(const char *file, const char *text, enum docs_format fmt, struct docs_passages *out);

/* Search terms from diagnostic text: lower-cased identifiers and words, in order of first appearance,
 * without paths, flags, source locations, numbers, hashes, short words and diagnostic boilerplate;
 * at most DOCS_MAX_TERMS (terms already in *terms count). */
void docs_query_terms(const char *text, struct strvec *terms);
/* The terms for a failed attempt: its compiler diagnostics ("error:" lines), the exception of a
 * runtime error, the mismatch of an incorrect one or the rule text of a rejection, then a word for
 * the stage that failed (compile, runtime, correctness). Nothing for a pass. */
void docs_query_from_verdict(json_t *verdict, struct strvec *terms);

/* An indexed folder: an open, read-only connection to its cache database. */
struct docs_index {
	char *folder;
	char *db_path;    /* <cache>/docs/<key>.db */
	char key[65];     /* sha256 over the documents' paths and contents and DOCS_INDEX_FORMAT */
	int built;        /* indexed by this call rather than found in the cache */
	long files, passages;
	void *db;         /* sqlite3 *, serialized mode: threads may share one index */
};

/* Hashes the folder's documents and opens <cache_root>/docs/<key>.db, indexing them first when no
 * entry has this key. The entry is written to a temporary file and renamed into place, so processes
 * that index the same folder at once leave one whole database. SB_EINPUT when the folder cannot be
 * read or holds no document. */
int docs_open(const char *folder, const char *cache_root, struct docs_index **out, struct sb_error *err);
void docs_close(struct docs_index *ix);
/* docs_open once per process and folder; the index stays open for every session that asks again. */
int docs_shared(const char *folder, const char *cache_root, struct docs_index **out, struct sb_error *err);

/* The best passages for terms by BM25 (a heading match counts more than a body match), taken in rank
 * order while they fit in max_tokens, at most DOCS_MAX_PASSAGES. No terms, no passages. */
int docs_search(struct docs_index *ix, const struct strvec *terms, int max_tokens, struct docs_passages *out,
		struct sb_error *err);

/* The passages as the prompt shows them; "" when there are none. */
void docs_render(const struct docs_passages *hits, const struct strvec *terms, struct strbuf *out);
/* Estimated tokens of text: bytes / 4, rounded up (the estimate the cassette tools use). */
int docs_tokens(const char *text);

#endif
