/* api.h - the JSON of serve's API (docs/serve.md): a request body read strictly into a serve_request, and
 * jobs, verdicts and rewards written back. No transport here: http.c carries it. */
#ifndef SB_SERVE_API_H
#define SB_SERVE_API_H

#include <jansson.h>
#include <stddef.h>

#include "../core/suite.h"
#include "queue.h"

/* What a request may ask of this server. */
struct api_limits {
	const struct suite *suite;
	const char *preset;         /* the server's eval.preset: a request may name it, no other */
	enum reward_kind reward;    /* the default reward */
	double lambda;              /* the default lambda (checks.reward_lambda) */
	size_t max_batch;           /* candidates per request */
	size_t max_source;          /* bytes per candidate source */
};

/* Why a body was refused: the HTTP status (400: not the API's JSON, 422: well-formed but naming what this
 * server does not have) and a message that says where. */
struct api_error {
	int status;
	char msg[512];
};

/* Reads a request body (POST /v1/evaluate and /v1/jobs). Returns 0, or -1 with e filled. */
int api_parse_request(const char *body, size_t len, const struct api_limits *lim, struct serve_request *out,
		      struct api_error *e);

/* A job as JSON: {job_id, state, done, total, created, candidates: [...]}, each candidate with its state,
 * status, reward and, when full, its whole verdict. */
json_t *api_job_json(const struct job_view *v, int full);

/* {"error": msg, "status": status}: every refusal's body. */
json_t *api_error_json(int status, const char *msg);

#endif
