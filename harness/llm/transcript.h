/* transcript.h - the persisted record of one LLM call: where it lives, what it holds, and how it is
 * written (atomically, before the answer is used) and read back (by replay). */
#ifndef SB_LLM_TRANSCRIPT_H
#define SB_LLM_TRANSCRIPT_H

#include <jansson.h>

#include "llm.h"
#include "secret.h"

#define TRANSCRIPT_FORMAT "stitchbench-transcript/1"

/* Everything one call produced; the record is built from it. Pointers are borrowed. */
struct transcript_call {
	const struct model_cfg *m;
	const struct llm_request *req;
	const char *request_hash;
	const char *url;             /* key-scrubbed */
	json_t *request;             /* the body as sent (no headers) */
	const struct strbuf *raw;    /* the final attempt's response body, key-scrubbed; may be NULL */
	const struct llm_response *resp;
	const char *error;           /* the final error message, NULL when kind is LLM_OK */
	json_t *attempt_log;         /* [{status, kind, latency_s, wait_s}, ...] */
	const char *started_at;      /* UTC, ISO 8601 */
};

/* {transcripts_root}/<agent>/<problem, '/' -> '_'>/s<sample>/call-<call, 4 digits>.json, with
 * names reduced to [A-Za-z0-9._-] so no key can point outside the root. */
char *transcript_path(const char *transcripts_root, const char *agent, const char *problem, int sample,
		      int call);
json_t *transcript_record(const struct transcript_call *t);
/* The messages as [{"role", "content"}, ...]; the caller has checked they are valid UTF-8. */
json_t *transcript_messages(const struct llm_request *req);
/* {"messages": [...], "max_tokens": override}: what request_hash hashes (keys sorted, compact), and
 * what a replayed call without a recording stores as its request. */
json_t *transcript_canonical_request(const struct llm_request *req);
/* Writes the record to path: folders created, temp file, fsync, rename, fsync of the folder. The
 * serialised text is scrubbed of s's secrets once more (s may be NULL: a replayed record), whatever its
 * fields hold. */
int transcript_write(const char *path, json_t *record, const struct secrets *s, struct sb_error *err);
/* Fills out from a record (text, finish_reason, tokens, latency, cost, status, kind) and returns the
 * recorded kind; msg receives the recorded error message, if any. -1 when the record is malformed. */
int transcript_to_response(json_t *record, struct llm_response *out, char *msg, size_t cap);
/* "agent=A problem=P sample=S call=C": how error messages name a key. */
void transcript_key_text(const char *agent, const char *problem, int sample, int call, struct strbuf *out);
/* Appends s as valid UTF-8 (what JSON strings must be): a sequence that is broken, or cut by len,
 * becomes U+FFFD. */
void transcript_add_utf8(struct strbuf *out, const char *s, size_t len);
/* The first max bytes of a response body on one line, as valid UTF-8, for error messages. */
void transcript_add_snippet(struct strbuf *out, const char *body, size_t len, size_t max);
/* The UTC time now as 2026-01-31T12:00:00Z. */
void transcript_timestamp(char out[32]);

#endif
