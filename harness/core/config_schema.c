/* config_schema.c - every configuration key, its type, range, default and one-line meaning.
 * docs/config.md documents the same keys; tests/unit/test_config.c checks that they agree. */
#include "config_schema.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "strbuf.h"

#define F(st, m) offsetof(struct st, m)
#define END { .key = NULL }

static const char *const providers[] = { "openai", "anthropic", "replay", NULL };
static const char *const efforts[] = { "low", "medium", "high", NULL };
static const char *const agent_kinds[] = { "stitchcuda", "oneshot", "best-of-n", "refine", "cudaforge",
					   "kevin", "torch-compile", "torch-eager", "samples", NULL };
static const char *const tolerances[] = { "kernelbench", "kernelbench-v0", NULL };
static const char *const statistics[] = { "median", "mean", NULL };
const char *const config_presets[] = { "stitchbench", "kernelbench", "stitchcuda", NULL }; /* enum eval_preset's order */
static const char *const pf_modes[] = { "auto", "on", "off", NULL }; /* enum process_factor_mode's order */
static const char *const pm_modes[] = { "off", "cupti", NULL }; /* enum profile_metrics_mode's order */
static const char *const xchg_modes[] = { "auto", "files", "shared", NULL }; /* enum exchange_mode's order */

static void model_init(void *p)
{
	struct model_cfg *m = p;
	memset(m, 0, sizeof(*m));
	m->provider = xstrdup("openai");
	m->api_key_env = xstrdup("OPENAI_API_KEY");
	m->temperature = 0.7;
	m->max_tokens = 8192;
	m->timeout_s = 600;
	m->max_concurrent = 4;
}

static void model_release(void *p)
{
	struct model_cfg *m = p;
	free(m->name); free(m->provider); free(m->api_base); free(m->model);
	free(m->api_key_env); free(m->reasoning_effort); free(m->cassette);
	for (size_t i = 0; i < m->nheaders; i++) {
		free(m->headers[i].name);
		free(m->headers[i].value);
	}
	free(m->headers);
	for (size_t i = 0; i < m->nheaders_env; i++) {
		free(m->headers_env[i].name);
		free(m->headers_env[i].value);
	}
	free(m->headers_env);
}

static void agent_init(void *p)
{
	struct agent_cfg *a = p;
	memset(a, 0, sizeof(*a));
	a->kind = xstrdup("stitchcuda");
	a->samples = 1;
	a->max_attempts = 3;
	a->target_speedup = 1.0;
	a->max_replans = 2;
	a->replan_compile_failures = 2;
	a->replan_wrong_results = 2;
	a->stagnation_pct = 5.0;
	a->n = 1;
	a->max_rounds = 10;
	a->trajectories = 4;
	a->turns = 4;
	a->history_tokens = 8000;
	a->replan_stagnant_attempts = 2;
	a->docs_tokens = 1500;
}

static void agent_release(void *p)
{
	struct agent_cfg *a = p;
	free(a->name); free(a->kind); free(a->model); free(a->samples_dir); free(a->prompts_dir);
	free(a->docs);
}

static const struct field model_fields[] = {
	{ "name", FT_STR, F(model_cfg, name), .doc = "name the agents refer to (required, unique)" },
	{ "provider", FT_CHOICE, F(model_cfg, provider), .choices = providers,
	  .doc = "API flavour: openai (any OpenAI-compatible server), anthropic, or replay" },
	{ "api_base", FT_STR, F(model_cfg, api_base), .doc = "endpoint base URL, e.g. http://127.0.0.1:8000/v1" },
	{ "model", FT_STR, F(model_cfg, model), .doc = "model id sent to the endpoint" },
	{ "api_key_env", FT_STR, F(model_cfg, api_key_env),
	  .doc = "environment variable that holds the API key (the key itself never goes in a file)" },
	{ "temperature", FT_DOUBLE, F(model_cfg, temperature), .min = 0, .max = 2, .doc = "sampling temperature" },
	{ "max_tokens", FT_INT, F(model_cfg, max_tokens), .min = 1, .max = 10000000, .doc = "completion token limit" },
	{ "max_completion_tokens", FT_INT, F(model_cfg, max_completion_tokens), .min = 0, .max = 10000000,
	  .doc = "sent instead of max_tokens when > 0 (reasoning models)" },
	{ "reasoning_effort", FT_CHOICE, F(model_cfg, reasoning_effort), .choices = efforts,
	  .doc = "reasoning effort for models that take it; null = not sent" },
	{ "headers", FT_HEADERS, F(model_cfg, headers), F(model_cfg, nheaders), .redact = 1,
	  .doc = "extra HTTP headers (name: value); a secret-looking one is never printed or stored: use headers_env" },
	{ "headers_env", FT_HEADERS, F(model_cfg, headers_env), F(model_cfg, nheaders_env),
	  .doc = "extra HTTP headers whose values come from environment variables (name: VARIABLE), read when the "
		 "client starts, never written anywhere" },
	{ "timeout_s", FT_INT, F(model_cfg, timeout_s), .min = 1, .max = 86400, .doc = "per-request timeout" },
	{ "max_concurrent", FT_INT, F(model_cfg, max_concurrent), .min = 1, .max = 1024,
	  .doc = "requests in flight at once" },
	{ "requests_per_minute", FT_INT, F(model_cfg, requests_per_minute), .min = 0, .max = 1000000,
	  .doc = "rate limit; 0 = none" },
	{ "price_prompt_per_mtok", FT_DOUBLE, F(model_cfg, price_prompt_per_mtok), .min = 0, .max = 1e6,
	  .doc = "USD per million prompt tokens, for cost accounting" },
	{ "price_completion_per_mtok", FT_DOUBLE, F(model_cfg, price_completion_per_mtok), .min = 0, .max = 1e6,
	  .doc = "USD per million completion tokens" },
	{ "cassette", FT_STR, F(model_cfg, cassette), .doc = "replay: a run directory or cassette file to serve from" },
	{ "strict", FT_BOOL, F(model_cfg, strict), .doc = "replay: the rendered request must match the recording" },
	END
};

static const struct field agent_fields[] = {
	{ "name", FT_STR, F(agent_cfg, name), .doc = "agent name in results (required, unique)" },
	{ "kind", FT_CHOICE, F(agent_cfg, kind), .choices = agent_kinds, .doc = "which agent design runs" },
	{ "model", FT_STR, F(agent_cfg, model), .doc = "a models[].name; not used by torch-compile, torch-eager, samples" },
	{ "samples", FT_INT, F(agent_cfg, samples), .min = 1, .max = 10000, .doc = "independent samples per problem" },
	{ "max_attempts", FT_INT, F(agent_cfg, max_attempts), .min = 1, .max = 1000, .doc = "attempt budget per sample" },
	{ "target_speedup", FT_DOUBLE, F(agent_cfg, target_speedup), .min = 0, .max = 1e6,
	  .doc = "stop once a correct candidate reaches this speedup over eager" },
	{ "max_replans", FT_INT, F(agent_cfg, max_replans), .min = 0, .max = 100, .doc = "stitchcuda: replans allowed" },
	{ "replan_compile_failures", FT_INT, F(agent_cfg, replan_compile_failures), .min = 1, .max = 100,
	  .doc = "stitchcuda: consecutive compile failures that trigger a replan" },
	{ "replan_wrong_results", FT_INT, F(agent_cfg, replan_wrong_results), .min = 1, .max = 100,
	  .doc = "stitchcuda: consecutive wrong results that trigger a replan" },
	{ "stagnation_pct", FT_DOUBLE, F(agent_cfg, stagnation_pct), .min = 0, .max = 100,
	  .doc = "stitchcuda: correct attempts closer than this (percent) count as stagnating" },
	{ "replan_stagnant_attempts", FT_INT, F(agent_cfg, replan_stagnant_attempts), .min = 2, .max = 100,
	  .doc = "stitchcuda: consecutive stagnating correct attempts that trigger a replan" },
	{ "max_tokens_total", FT_LONG, F(agent_cfg, max_tokens_total), .min = 0, .max = 1e15,
	  .doc = "token budget per sample; 0 = unlimited" },
	{ "max_wall_s", FT_INT, F(agent_cfg, max_wall_s), .min = 0, .max = 1e9,
	  .doc = "wall-time budget per sample in seconds; 0 = unlimited" },
	{ "n", FT_INT, F(agent_cfg, n), .min = 1, .max = 10000, .doc = "best-of-n: candidates drawn per sample" },
	{ "max_rounds", FT_INT, F(agent_cfg, max_rounds), .min = 1, .max = 1000,
	  .doc = "cudaforge: Coder rounds per sample (one candidate each); the Judge may end it sooner" },
	{ "trajectories", FT_INT, F(agent_cfg, trajectories), .min = 1, .max = 1000,
	  .doc = "kevin: refinement trajectories per sample" },
	{ "turns", FT_INT, F(agent_cfg, turns), .min = 1, .max = 1000, .doc = "kevin: turns per trajectory (one candidate each)" },
	{ "history_tokens", FT_LONG, F(agent_cfg, history_tokens), .min = 100, .max = 1e9,
	  .doc = "kevin: estimated tokens (bytes / 4) the previous turns may take of a prompt" },
	{ "samples_dir", FT_STR, F(agent_cfg, samples_dir), .doc = "samples: a KernelBench generations folder" },
	{ "prompts_dir", FT_STR, F(agent_cfg, prompts_dir), .doc = "templates to use instead of the built-in ones" },
	{ "docs", FT_STR, F(agent_cfg, docs),
	  .doc = "stitchcuda: a folder of Markdown, HTML and text documents; after a compile or correctness failure "
		 "the Coder's prompt gets the passages that best match the error (indexed once, cached by content)" },
	{ "docs_tokens", FT_INT, F(agent_cfg, docs_tokens), .min = 50, .max = 100000,
	  .doc = "stitchcuda: token budget of those passages per prompt" },
	END
};

static const struct field problems_fields[] = {
	{ "root", FT_STR, F(problems_cfg, root),
	  .doc = "suite folder (level1/...) or KernelBench checkout; null = the bundled suite" },
	{ "levels", FT_LEVELS, F(problems_cfg, levels), .doc = "levels to include, from 1..4" },
	{ "select", FT_STRLIST, F(problems_cfg, select), F(problems_cfg, nselect),
	  .doc = "problem selectors such as L1/1-10, L2/7, L3/*; empty = all of the chosen levels" },
	END
};

static const struct field eval_fields[] = {
	{ "preset", FT_ENUM, F(eval_cfg, preset), .choices = config_presets,
	  .doc = "whose protocol: stitchbench (paired interleaved calls, medians, strict policy), kernelbench (its trials, "
		 "block timing and means, its static strictness) or stitchcuda (its verifier's trials); sets the keys of "
		 "docs/config.md's preset table that the file or --set does not give" },
	{ "device", FT_STR, F(eval_cfg, device), .doc = "auto, cpu, cuda or cuda:N" },
	{ "trials", FT_INT, F(eval_cfg, trials), .min = 1, .max = 1000, .doc = "correctness trials (fresh inputs each)" },
	{ "robust_trials", FT_INT, F(eval_cfg, robust_trials), .min = 0, .max = 1000,
	  .doc = "trials on signed, scaled inputs after the correctness trials passed; 0 = off" },
	{ "perf_trials", FT_INT, F(eval_cfg, perf_trials), .min = 0, .max = 100000,
	  .doc = "timed pairs at most (reference and candidate interleaved)" },
	{ "tolerance", FT_ENUM, F(eval_cfg, tolerance), .choices = tolerances,
	  .doc = "kernelbench (fp32 1e-4, fp16/bf16 1e-2) or kernelbench-v0 (1e-2)" },
	{ "timeout_s", FT_INT, F(eval_cfg, timeout_s), .min = 1, .max = 86400, .doc = "wall-clock limit per evaluation" },
	{ "warmup_ms", FT_INT, F(eval_cfg, warmup_ms), .vis = VIS_HIDDEN, .min = 0, .max = 600000,
	  .doc = "warm-up time per side" },
	{ "warmup_calls", FT_INT, F(eval_cfg, warmup_calls), .min = 0, .max = 100000, .doc = "warm-up calls per side, at least" },
	{ "timing_block", FT_INT, F(eval_cfg, timing_block), .vis = VIS_HIDDEN, .min = 1, .max = 1000,
	  .doc = "timed calls per side per round, back to back" },
	{ "timing_prime_ms", FT_INT, F(eval_cfg, timing_prime_ms), .vis = VIS_HIDDEN, .min = 0, .max = 10000,
	  .doc = "GPU warm-up before each block of timed calls" },
	{ "timing_lead_us", FT_INT, F(eval_cfg, timing_lead_us), .min = -1, .max = 100000,
	  .doc = "GPU-side wait queued before each timed call's start event, so the host's launch is not timed; "
		 "-1 = long enough for the host's recent calls; 0 = KernelBench's way" },
	{ "timing_cpu", FT_INT, F(eval_cfg, timing_cpu), .vis = VIS_HIDDEN, .min = -2, .max = 4095,
	  .doc = "pin both workers' threads to this CPU while they time; -1 = auto (on a GPU, the last CPU this process may "
		 "use, counted back by the GPU's index; unpinned on the CPU device); -2 = never" },
	{ "timing_gc", FT_BOOL, F(eval_cfg, timing_gc), .vis = VIS_HIDDEN,
	  .doc = "let Python's garbage collector run inside timed blocks (off: paused there, as timeit does)" },
	{ "process_factor", FT_ENUM, F(eval_cfg, process_factor), .choices = pf_modes,
	  .doc = "time the reference in the candidate's worker against the reference worker before the candidate's "
		 "code loads, and divide the speedup vs eager by that ratio (docs/verdict.md); auto = on a GPU only" },
	{ "process_spread_pct", FT_DOUBLE, F(eval_cfg, process_spread_pct), .vis = VIS_HIDDEN, .min = -1, .max = 100,
	  .doc = "how far one model's time moves from one process to another (a standard deviation, percent), folded "
		 "into the speedups' intervals, which see only the calls of these two processes; -1 = auto (1.4 on a "
		 "GPU, as measured there; 0 on the CPU)" },
	{ "exchange", FT_ENUM, F(eval_cfg, exchange), .vis = VIS_INTERNAL, .choices = xchg_modes,
	  .doc = "how a call's outputs reach the comparison: files (written by the worker, read and compared by "
		 "stitchbench) or shared (handed as a descriptor to the reference worker, which compares on the "
		 "device); auto = shared on a GPU, files on the CPU" },
	{ "hash_seed", FT_INT, F(eval_cfg, hash_seed), .vis = VIS_HIDDEN, .min = -1, .max = 2147483647,
	  .doc = "PYTHONHASHSEED of both workers, the same in both; -1 = a random one per process" },
	{ "rse_target", FT_DOUBLE, F(eval_cfg, rse_target), .vis = VIS_HIDDEN, .min = 0, .max = 1,
	  .doc = "stop timing once the relative standard error of the median ratio is below this" },
	{ "timing_cap_s", FT_INT, F(eval_cfg, timing_cap_s), .vis = VIS_HIDDEN, .min = 1, .max = 86400,
	  .doc = "wall-clock cap on the timing loop" },
	{ "statistic", FT_ENUM, F(eval_cfg, statistic), .choices = statistics,
	  .doc = "per-side statistic reported beside the paired ratio (mean reproduces KernelBench)" },
	{ "extra_shapes", FT_BOOL, F(eval_cfg, extra_shapes), .doc = "also check scaled shapes (H18)" },
	{ "compile", FT_BOOL, F(eval_cfg, compile),
	  .doc = "on the GPU, also time torch.compile(Model) for the speedup vs compiled (costs its compile time)" },
	{ "keep_reference_worker", FT_BOOL, F(eval_cfg, keep_reference_worker), .vis = VIS_INTERNAL,
	  .doc = "keep the trusted reference worker alive for the next evaluation of the same problem on the device" },
	{ "prestart_candidate", FT_BOOL, F(eval_cfg, prestart_candidate), .vis = VIS_INTERNAL,
	  .doc = "eval --samples: start the next candidate's sandboxed worker (Python, torch import) during this evaluation" },
	{ "fork_server", FT_BOOL, F(eval_cfg, fork_server), .vis = VIS_INTERNAL,
	  .doc = "fork each candidate's sandboxed worker from one trusted process that imported torch once, instead of "
		 "starting Python anew (docs/worker.md)" },
	{ "tf32", FT_BOOL, F(eval_cfg, tf32),
	  .doc = "let cuDNN and cuBLAS compute fp32 in TF32 in both workers (PyTorch's default for cuDNN); off: fp32 "
		 "references are exact fp32, as the fp32 tolerance assumes" },
	{ "lean_headers", FT_BOOL, F(eval_cfg, lean_headers), .vis = VIS_INTERNAL,
	  .doc = "compile a candidate's CUDA sources with torch/types.h where they include torch/extension.h (twice as fast; "
		 "the sources as written when that fails)" },
	{ "lite_headers", FT_BOOL, F(eval_cfg, lite_headers), .vis = VIS_INTERNAL,
	  .doc = "build load_inline extensions with torch/types.h and torch/extension.h read as headers made for the "
		 "sources (the Tensor class and the ATen functions they call; then lean_headers, then the sources as written "
		 "when that fails)" },
	{ "split_nvcc", FT_BOOL, F(eval_cfg, split_nvcc), .vis = VIS_INTERNAL,
	  .doc = "compile CUDA sources with nvcc's host and device front ends at once (nvcc_split.py; torch 2.x "
		 "reads PYTORCH_NVCC, torch 1.13 ignores it)" },
	{ "seed", FT_INT, F(eval_cfg, seed), .min = 0, .max = 2147483647, .doc = "initialisation seed (KernelBench uses 42)" },
	{ "build_jobs", FT_INT, F(eval_cfg, build_jobs), .vis = VIS_INTERNAL, .min = 0, .max = 4096,
	  .doc = "parallel candidate builds; 0 = all cores" },
	{ "profile", FT_BOOL, F(eval_cfg, profile),
	  .doc = "on the GPU, trace the candidate's kernels with CUPTI after timing (verdict profile, H01/H04/H05); on "
		 "the CPU, record the ATen operators of its calls (runtime.operators, H01/H08)" },
	{ "profile_trials", FT_INT, F(eval_cfg, profile_trials), .vis = VIS_HIDDEN, .min = 1, .max = 10000,
	  .doc = "calls profiled" },
	{ "profile_metrics", FT_ENUM, F(eval_cfg, profile_metrics), .vis = VIS_REPORT, .choices = pm_modes,
	  .doc = "with profile: hardware metrics per kernel from one more call (CUPTI range profiler, kernel replay): "
		 "DRAM and SM throughput, occupancy, bound class and % of roofline (docs/profile.md); off or cupti" },
	END
};

static const struct field checks_fields[] = {
	{ "static", FT_BOOL, F(checks_cfg, static_checks),
	  .doc = "run the static hack rules on each candidate, and on what its build imports, before its workers start (docs/checks.md)" },
	{ "policy", FT_POLICY, F(checks_cfg, policy), .doc = "H01..H22 -> reject or flag" },
	{ "runtime", FT_BOOL, F(checks_cfg, runtime_checks),
	  .doc = "run the runtime hack rules (output kinds, aliasing, threads, identity, rotation, second run, floor)" },
	{ "rubric", FT_STR, F(checks_cfg, rubric), .doc = "rubric YAML for the optional judge; null = off" },
	{ "judge_model", FT_STR, F(checks_cfg, judge_model), .doc = "a models[].name that scores the rubric" },
	{ "reward_lambda", FT_DOUBLE, F(checks_cfg, reward_lambda), .min = 0, .max = 10,
	  .doc = "weight of the rubric in a verdict's reward: (min(speedup, 5) + 0.3) x (1 + lambda x (total - 0.5))" },
	END
};

static const struct field output_fields[] = {
	{ "dir", FT_STR, F(output_cfg, dir), .doc = "where run directories are created" },
	{ "run_id", FT_STR, F(output_cfg, run_id), .doc = "run directory name; null = generated" },
	{ "report", FT_BOOL, F(output_cfg, report), .doc = "write a report when a run ends" },
	END
};

static const struct field run_fields[] = {
	{ "repeats", FT_INT, F(run_cfg, repeats), .min = 0, .max = 1000,
	  .doc = "when the run ends, judge each problem's best clean pass per agent this many more times, stored as "
		 "repeats: metrics and reports widen every speed interval by the spread between evaluations; 0 = never" },
	END
};

const struct field config_schema[] = {
	{ "name", FT_STR, F(config, name), .doc = "experiment name" },
	{ "python", FT_STR, F(config, python), .doc = "Python interpreter for the workers; null = discover one" },
	{ "problems", FT_SECTION, F(config, problems), .sub = problems_fields, .doc = "which problems" },
	{ "models", FT_LIST, F(config, models), F(config, nmodels), .sub = model_fields,
	  .elem_size = sizeof(struct model_cfg), .elem_init = model_init, .elem_release = model_release,
	  .doc = "LLM endpoints" },
	{ "agents", FT_LIST, F(config, agents), F(config, nagents), .sub = agent_fields,
	  .elem_size = sizeof(struct agent_cfg), .elem_init = agent_init, .elem_release = agent_release,
	  .doc = "agents to run" },
	{ "eval", FT_SECTION, F(config, eval), .sub = eval_fields, .doc = "evaluation protocol" },
	{ "checks", FT_SECTION, F(config, checks), .sub = checks_fields, .doc = "reward-hack policy" },
	{ "output", FT_SECTION, F(config, output), .sub = output_fields, .doc = "where results go" },
	{ "run", FT_SECTION, F(config, run), .sub = run_fields, .doc = "what a run does when it ends" },
	END
};
