/* static.h - the static reward-hack checks (DESIGN §5.1, §7 rows marked S) over a candidate's source:
 * findings with the hack id, the rule that matched, where, and a message the agent can act on. */
#ifndef SB_STATIC_H
#define SB_STATIC_H

#include <stddef.h>

#include "../core/error.h"

struct static_finding {
	char id[8];              /* "H01" */
	int line, col;           /* 1-based, in the candidate file */
	char *message;           /* what was found and what to do instead, without the id */
	char rule[32];           /* which rule matched: "torch-op", "nn-module", "side-stream", ... */
	int flag_only;           /* a sign, not proof: a flag whatever checks.policy says of the id */
};

struct static_report {
	struct static_finding *v;
	size_t n;
};

/* Checks one candidate. Findings are sorted by position, at most a few per id. A file Python could
 * not tokenise either (an unterminated string, an unclosed bracket) is SB_EINPUT with the place in
 * err: that is the worker's syntax error to report, not a finding. An unreadable file is SB_EIO. */
int static_check_file(const char *path, struct static_report *out, struct sb_error *err);
/* The same over source in memory; `name` is what error messages call it. */
int static_check_source(const char *name, const char *src, size_t len, struct static_report *out,
			struct sb_error *err);
void static_report_release(struct static_report *r);

/* Whether the C++ a candidate carries calls a CUDA library's API itself (cublasSgemm(, cudnnConvolution
 * Forward(, ...): library kernels in its profile are then its own work, not PyTorch's. 0 when the file
 * cannot be read or tokenised. */
int static_file_calls_library(const char *path);

/* Whether the report holds a finding with this id. */
int static_report_has(const struct static_report *r, const char *id);

#endif
