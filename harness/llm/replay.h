/* replay.h - serving recorded calls instead of asking an endpoint: from a run directory's
 * transcripts/ or from a JSONL cassette, looked up by (agent, problem, sample, call). */
#ifndef SB_LLM_REPLAY_H
#define SB_LLM_REPLAY_H

#include <jansson.h>

#include "llm.h"

struct replay;

/* Opens a run directory (or its transcripts/ folder) or a JSONL cassette file. A cassette file is
 * read and indexed now, so a malformed line fails here with its line number. */
int replay_open(const char *cassette, struct replay **out, struct sb_error *err);
void replay_close(struct replay *r);
/* Serves one call: out is filled exactly as the recorded call ended, and *record receives what to
 * persist in this run (the recording, marked replayed_from, with this request's hash). Returns the
 * kind; on a miss or a strict mismatch *record is NULL and msg names the key. Thread-safe. */
enum llm_errkind replay_serve(struct replay *r, int strict, const struct llm_request *req, const char *hash,
			      struct llm_response *out, json_t **record, struct strbuf *msg);
/* The number of recorded calls in a cassette (run directory or file), or a negative code. */
long replay_count(const char *cassette, struct sb_error *err);
/* Every call-*.json below dir, sorted; used for counting and for writing cassettes. */
void replay_list_transcripts(const char *dir, struct strvec *out);

#endif
