/* accounting.h - tokens, latency and cost of LLM calls summed per (agent, problem), shared by all
 * clients of a run and safe to update from several threads. */
#ifndef SB_LLM_ACCOUNTING_H
#define SB_LLM_ACCOUNTING_H

#include "../core/strbuf.h"

struct llm_response;

struct llm_totals {
	long calls;             /* every llm_chat call, failed ones included */
	long failed;            /* calls whose kind was not LLM_OK */
	long prompt_tokens, completion_tokens;
	double latency_s;       /* sum of the calls' final-attempt latencies */
	double wall_s;          /* sum of the calls' wall times (retries and waits included) */
	double cost_usd;
};

struct llm_accounts;

struct llm_accounts *llm_accounts_new(void);
void llm_accounts_free(struct llm_accounts *a);
void llm_accounts_add(struct llm_accounts *a, const char *agent, const char *problem,
		      const struct llm_response *r);
/* Sums the entries matching agent and problem; NULL matches any. */
struct llm_totals llm_accounts_total(struct llm_accounts *a, const char *agent, const char *problem);
/* A table for people: one row per (agent, problem), a total per agent and one for the run. */
void llm_accounts_format(struct llm_accounts *a, struct strbuf *out);
/* The same numbers as JSON: {"entries": [{agent, problem, calls, ...}], "total": {...}}. */
void llm_accounts_json(struct llm_accounts *a, struct strbuf *out);

/* Cost of tokens at USD-per-million prices. */
double llm_cost_usd(long prompt_tokens, long completion_tokens, double prompt_per_mtok,
		    double completion_per_mtok);

#endif
