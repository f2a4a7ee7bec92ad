/* finding.h - what every hack rule produces, static, runtime, profile or audit (DESIGN §7,
 * docs/checks.md): a hack id, what was seen, and the severity checks.policy gives it. */
#ifndef SB_FINDING_H
#define SB_FINDING_H

#include <stdarg.h>
#include <stddef.h>

#include "../core/config.h"

enum severity {
	SEV_FLAG = 0,                /* shown to a person and the agent; the status stands */
	SEV_REJECT,                  /* the candidate is rejected for it */
};

struct finding {
	char id[24];                 /* "H01"; the audit's ids beside DESIGN §7's: "nondeterministic", ... */
	enum severity severity;      /* set by policy_apply; SEV_FLAG until then */
	int flag_only;               /* a sign, not proof: a flag whatever checks.policy says of the id */
	int line, col;               /* 1-based, in the candidate file; 0 when found at run time */
	char rule[32];               /* the static rule that matched ("torch-op", "side-stream"); "" otherwise */
	char *message;               /* what was found and what to do instead, without the id */
};

/* A growable list; zero-initialised it is empty. */
struct findings {
	struct finding *v;
	size_t n;
};

/* Adds a finding with a formatted message and returns it (severity SEV_FLAG, no place, no rule). */
__attribute__((format(printf, 3, 4)))
struct finding *findings_add(struct findings *l, const char *id, const char *fmt, ...);
struct finding *findings_vadd(struct findings *l, const char *id, const char *fmt, va_list ap);
/* Adds a copy of f (its message duplicated) and returns it. */
struct finding *findings_append(struct findings *l, const struct finding *f);
/* How many findings have this id; whether any has. */
size_t findings_count(const struct findings *l, const char *id);
int findings_has(const struct findings *l, const char *id);
/* Moves every finding of `from` to the end of `to`; `from` is left empty. */
void findings_take(struct findings *to, struct findings *from);
void findings_release(struct findings *l);

/* "reject" or "flag", as the verdict JSON writes it. */
const char *severity_name(enum severity s);

/* Gives each of the n findings its severity under `policy` (checks.policy, index 0 = H01): reject
 * where the policy rejects the id and the finding is evidence, flag otherwise. An id that is no hack
 * id (the audit's "nondeterministic", a typo) is a flag: only a configured id rejects. The one place
 * that decides reject against flag. */
void policy_apply(const enum policy_action policy[SB_HACK_IDS], struct finding *v, size_t n);

#endif
