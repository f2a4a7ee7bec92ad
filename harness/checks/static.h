/* static.h - the static reward-hack checks (DESIGN §5.1, §7 rows marked S) over a candidate's source:
 * findings with the hack id, the rule that matched, where, and a message the agent can act on. */
#ifndef SB_STATIC_H
#define SB_STATIC_H

#include <stddef.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "finding.h"
#include "pytok.h"

/* Static findings are struct findings (finding.h) with the place (line, col: 1-based, in the candidate
 * file) and the rule that matched ("torch-op", "nn-module", "side-stream", ...); flag_only marks a sign
 * that is not proof. */

/* A candidate file as one evaluation sees it: read once, in trusted code before any worker starts, and
 * tokenised once; the format check, the static rules and the profile's library rule all read this, so
 * they judge the same bytes. */
struct candidate_source {
	char *path;
	struct strbuf text;          /* the file's bytes */
	int read_errno;              /* 0; else why the file could not be read (text is then empty) */
	int tokenised;               /* tokens hold the module; else err says where Python's tokenizer fails */
	struct sb_error err;
	struct pytok_list tokens;    /* `if __name__ == "__main__":` blocks left out: they never run */
	int calls_library;           /* its C++ calls a CUDA library's API itself (static_file_calls_library) */
	char needs_gpu[96];          /* what in it runs only on a GPU and where ("a __global__ CUDA kernel
				      * (line 12)"); "" for code a CPU can run */
};

/* Reads and tokenises path into s. Never fails: what could not be done is in s (read_errno, tokenised). */
void candidate_source_load(struct candidate_source *s, const char *path);
void candidate_source_release(struct candidate_source *s);

/* Checks one candidate. Findings are sorted by position, at most a few per id. A file Python could
 * not tokenise either (an unterminated string, an unclosed bracket) is SB_EINPUT with the place in
 * err: that is the worker's syntax error to report, not a finding. An unreadable file is SB_EIO. */
int static_check(const struct candidate_source *s, struct findings *out, struct sb_error *err);
int static_check_file(const char *path, struct findings *out, struct sb_error *err);
/* The same over source in memory; `name` is what error messages call it. */
int static_check_source(const char *name, const char *src, size_t len, struct findings *out, struct sb_error *err);

/* Whether the C++ a candidate carries calls a CUDA library's API itself (cublasSgemm(, cudnnConvolution
 * Forward(, ...): library kernels in its profile are then its own work, not PyTorch's. 0 when the file
 * cannot be read or tokenised. */
int static_file_calls_library(const char *path);

#endif
