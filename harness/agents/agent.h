/* agent.h - the agent interface (DESIGN §8, docs/agents.md): an agent gets one (problem, sample), the
 * hardware context and a budget through its session; asks the LLM, submits candidates, reads verdicts. */
#ifndef SB_AGENT_H
#define SB_AGENT_H

#include <jansson.h>

#include "../core/error.h"

struct agent_session;
struct eval_env;
struct tvars;

/* A negative code of agents: the run was asked to stop (Ctrl-C, SIGTERM) before the sample ended. */
#define AGENT_ESTOPPED (-20)

/* One agent design. run() drives a sample from its first call to a stop rule, through the session;
 * it returns 0 when the sample ended (whatever its results), AGENT_ESTOPPED, or the session's error. */
struct agent_kind {
	const char *name;        /* agents[].kind */
	int uses_llm;
	int (*run)(struct agent_session *s, struct sb_error *err);
	int needs_compile;       /* runs torch.compile: a run without it ends its samples as "unavailable" */
};

extern const struct agent_kind agent_stitchcuda, agent_oneshot, agent_best_of_n, agent_refine,
	agent_cudaforge, agent_kevin, agent_torch_eager, agent_torch_compile, agent_samples;
/* NULL for an unknown kind. */
const struct agent_kind *agent_kind_find(const char *name);

/* What the prompts say about the machine the candidates will run on. */
struct hw_context {
	char device[24];          /* "cpu" or "cuda:N" */
	int gpu;                  /* 1 when device is a GPU */
	char gpu_name[128];
	char sm[8];               /* "90" */
	long long memory_bytes;
	double bandwidth_gbs;     /* 0 = unknown */
	long long l2_bytes;       /* 0 = unknown */
	int sms;                  /* 0 = unknown */
	char torch[32];
	int cpu_cores;
	char cpu_model[128];
};
/* From the evaluator's environment and, on a GPU, gpu_query() for that device. */
void hw_context_fill(struct hw_context *h, const struct eval_env *e);
json_t *hw_context_json(const struct hw_context *h);
/* The placeholders device, gpu_name, sm_arch, gpu_memory, bandwidth, l2_cache, sm_count, cpu, torch_version. */
void hw_context_vars(const struct hw_context *h, struct tvars *v);

#endif
