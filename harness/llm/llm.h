/* llm.h - the LLM client every agent talks through: OpenAI-compatible chat, Anthropic Messages and
 * replay of recorded runs, with retries, rate limits, accounting and a transcript of every call. */
#ifndef SB_LLM_H
#define SB_LLM_H

#include <stddef.h>

#include "../core/config.h"
#include "../core/error.h"
#include "../core/strbuf.h"
#include "accounting.h"

/* What happened to a call. Agents switch on this; the names (llm_errkind_name) are also what
 * transcripts store, so a replayed call ends exactly as the recorded one did. */
enum llm_errkind {
	LLM_OK = 0,
	LLM_ERR_HTTP,            /* a non-2xx status, after retries where they apply (http_status) */
	LLM_ERR_TIMEOUT,         /* no complete answer within the timeout, on every attempt */
	LLM_ERR_CONNECT,         /* could not connect, resolve, send or receive */
	LLM_ERR_TOO_LARGE,       /* the response exceeded llm_opts.max_response_bytes */
	LLM_ERR_BAD_JSON,        /* a 2xx response that is not JSON */
	LLM_ERR_MISSING_FIELD,   /* valid JSON without the fields a chat response has */
	LLM_ERR_EMPTY,           /* the model answered with no text */
	LLM_ERR_TRUNCATED,       /* cut at the token limit (finish_reason=length); text holds the part */
	LLM_ERR_REPLAY_MISS,     /* replay: nothing recorded under this call's key */
	LLM_ERR_REPLAY_MISMATCH, /* strict replay: the recording answered a different request */
	LLM_ERR_TRANSCRIPT,      /* the transcript could not be written, so the answer is withheld */
	LLM_ERR_INVALID,         /* the request itself is unusable (no messages, no agent or problem) */
};
const char *llm_errkind_name(enum llm_errkind k);
/* The inverse of llm_errkind_name; -1 for an unknown name. */
int llm_errkind_parse(const char *name);

struct llm_message {
	const char *role;    /* system | user | assistant */
	const char *content;
};

/* One call. (agent, problem, sample, call) is the call's key: it names the transcript file and is
 * what replay looks recordings up by, so an agent must number its calls deterministically. */
struct llm_request {
	const struct llm_message *messages;
	size_t nmessages;
	const char *agent;
	const char *problem;  /* a problem ref such as "L1/19" */
	int sample;
	int call;             /* 0, 1, 2, ... within (agent, problem, sample) */
	int max_tokens;       /* > 0: this call's completion limit instead of the model's */
};

struct llm_response {
	enum llm_errkind kind;
	char *text;             /* the answer (also the partial one of a truncated call); NULL when none */
	size_t text_len;
	char *finish_reason;    /* normalised: stop | length | ...; NULL when the endpoint sent none */
	long prompt_tokens, completion_tokens;
	double latency_s;       /* the final attempt's request time */
	double wall_s;          /* the whole call: rate limiting, queueing, retries and backoff included */
	double cost_usd;        /* tokens x the model's price table */
	int attempts;           /* HTTP requests made (0 for a replayed call) */
	long http_status;       /* of the final attempt; 0 when there was no HTTP response */
	int replayed;           /* 1 when served from a recording: tokens, latency and cost are the recorded ones */
	int endpoint_down;      /* 1 when this call made llm_opts.down_after calls in a row that found nothing
	                           listening at the endpoint: asking again now is pointless */
	char *transcript_path;  /* where this call was persisted; NULL without a run directory */
};
void llm_response_release(struct llm_response *r);

/* Knobs that are not configuration: the retry policy and limits. Tests shrink them. */
struct llm_opts {
	double backoff_base_s;      /* first backoff ceiling; doubles per attempt (full jitter) */
	double backoff_cap_s;       /* largest backoff ceiling */
	int max_attempts;           /* HTTP requests per call at most, the first included */
	double retry_after_cap_s;   /* the longest Retry-After honoured */
	int timeout_ms;             /* per request; 0 = the model's timeout_s */
	int rpm_burst;              /* requests the rate limiter lets through back to back */
	size_t max_response_bytes;  /* a larger body is LLM_ERR_TOO_LARGE */
	int down_after;             /* calls in a row finding nothing listening that mark the endpoint down; 0 = never */
	struct llm_accounts *accounts; /* calls are added here; NULL = not accounted */
};
#define LLM_OPTS_INIT { .backoff_base_s = 1.0, .backoff_cap_s = 60.0, .max_attempts = 6, \
			.retry_after_cap_s = 300.0, .timeout_ms = 0, .rpm_burst = 1, \
			.max_response_bytes = (size_t)64 << 20, .down_after = 3, .accounts = NULL }

struct llm_client;

/* Creates a client for one configured model. m must outlive the client. run_dir receives
 * transcripts/ (NULL: calls are not persisted; only for probes, never for a run). The API key is
 * read from m->api_key_env now; it is never written anywhere. A variable api_key_env names that is
 * unset or empty is SB_EENV (llm_check_key), so a run refuses to start rather than fail every call;
 * api_key_env NULL means the endpoint takes no key. A replay client opens its cassette here, so a
 * missing or malformed cassette fails early. opts NULL = LLM_OPTS_INIT. */
int llm_client_new(const struct model_cfg *m, const char *run_dir, const struct llm_opts *opts,
		   struct llm_client **out, struct sb_error *err);
void llm_client_free(struct llm_client *c);

/* One chat completion, safe to call from several threads at once. The call is persisted to its
 * transcript before this returns. Returns 0 when out->kind == LLM_OK; otherwise out->kind says what
 * went wrong, err says it in words (endpoint, model, status, key-scrubbed snippet), and the code is
 * SB_EINPUT for replay misses, mismatches and invalid requests, SB_EIO when the transcript could not
 * be written, SB_EENV for everything else. out always needs llm_response_release(). */
int llm_chat(struct llm_client *c, const struct llm_request *req, struct llm_response *out,
	     struct sb_error *err);

/* sha256 of the request's messages and per-call parameters: what strict replay compares. Model
 * parameters (temperature, ...) are not part of it: a replay model's own are meaningless. */
void llm_request_hash(const struct llm_request *req, char out[65]);

/* For `stitchbench doctor`: GET {api_base}/models (openai and anthropic) and its latency; for replay,
 * checks the cassette and counts its recorded calls. detail receives a short description. */
int llm_check_endpoint(const struct model_cfg *m, double *latency_s, struct strbuf *detail,
		       struct sb_error *err);
/* llm_check_endpoint that also sets *unreachable when the probe failed because nothing listens at the
 * endpoint (connection refused, unknown host): a run's calls there fail at once, so doctor fails it. */
int llm_check_reach(const struct model_cfg *m, double *latency_s, int *unreachable, struct strbuf *detail,
		    struct sb_error *err);
/* The name of the model's API key variable when the model needs one and it is unset; else NULL. */
const char *llm_missing_key_env(const struct model_cfg *m);
/* SB_EENV when llm_missing_key_env(m) names a variable, with a message naming the model and the variable
 * and saying what to do (export it, or api_key_env null for an endpoint that takes no key); else 0. */
int llm_check_key(const struct model_cfg *m, struct sb_error *err);

/* Writes every transcript of a run directory as one JSONL cassette (one call per line, sorted by
 * key path), the format `provider: replay` reads besides run directories. */
int llm_cassette_write(const char *run_dir, const char *path, struct sb_error *err);

#endif
