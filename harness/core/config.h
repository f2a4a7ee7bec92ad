/* config.h - the experiment configuration: one typed struct tree, filled from YAML by config.c
 * and from command-line overrides through the same schema, so both are validated alike. */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include <stddef.h>

#include "error.h"
#include "strbuf.h"

#define SB_HACK_IDS 22 /* H01..H22, DESIGN §7 */

enum tolerance_preset { TOL_KERNELBENCH = 0, TOL_KERNELBENCH_V0 = 1 };
enum timing_statistic { STAT_MEDIAN = 0, STAT_MEAN = 1 };
enum profile_metrics_mode { PM_OFF = 0, PM_CUPTI = 1 }; /* eval.profile_metrics */
enum process_factor_mode { PF_AUTO = 0, PF_ON = 1, PF_OFF = 2 }; /* eval.process_factor: auto = on a GPU */
enum exchange_mode { XCHG_AUTO = 0, XCHG_FILES = 1, XCHG_SHARED = 2 }; /* eval.exchange: auto = shared on a GPU */
enum policy_action { POLICY_FLAG = 0, POLICY_REJECT = 1 };
/* eval.preset: whose protocol an evaluation follows (docs/config.md "Presets"); config.c's preset table
 * says which keys each one sets. */
enum eval_preset { PRESET_STITCHBENCH = 0, PRESET_KERNELBENCH = 1, PRESET_STITCHCUDA = 2 };

/* Where a value came from in the YAML file, for error messages that point at it. */
struct src_pos {
	int line, col; /* 1-based; 0 when the value came from a default or a flag */
};

struct header_kv {
	char *name, *value;
};

struct model_cfg {
	struct src_pos pos;
	char *name;
	char *provider;          /* openai | anthropic | replay */
	char *api_base;
	char *model;
	char *api_key_env;       /* name of the environment variable holding the key; never the key */
	double temperature;
	int max_tokens;
	int max_completion_tokens; /* for reasoning models; 0 = not sent */
	char *reasoning_effort;  /* low | medium | high; NULL = not sent */
	struct header_kv *headers;
	size_t nheaders;
	struct header_kv *headers_env; /* header name -> the environment variable that holds its value */
	size_t nheaders_env;
	int timeout_s;
	int max_concurrent;
	int requests_per_minute; /* 0 = unlimited */
	double price_prompt_per_mtok, price_completion_per_mtok; /* USD per million tokens */
	char *cassette;          /* replay: a run directory or a cassette file */
	int strict;              /* replay: the request must match the recording too */
};

struct agent_cfg {
	struct src_pos pos;
	char *name;
	char *kind;             /* stitchcuda | oneshot | best-of-n | refine | cudaforge | kevin | torch-compile |
	                           torch-eager | samples */
	char *model;            /* a models[].name; unused by agents without an LLM */
	int samples;
	int max_attempts;
	double target_speedup;
	int max_replans;
	int replan_compile_failures;
	int replan_wrong_results;
	double stagnation_pct;
	int replan_stagnant_attempts; /* consecutive correct attempts within stagnation_pct that trigger a replan */
	long max_tokens_total;  /* 0 = unlimited */
	int max_wall_s;         /* 0 = unlimited */
	int n;                  /* best-of-n */
	int max_rounds;         /* cudaforge: Coder rounds per sample, one candidate each */
	int trajectories;       /* kevin: refinement trajectories per sample */
	int turns;              /* kevin: turns per trajectory, one candidate each */
	long history_tokens;    /* kevin: what the previous turns may take of a prompt (estimated tokens) */
	char *samples_dir;      /* samples: a KernelBench generations folder */
	char *prompts_dir;      /* NULL = the built-in templates */
	char *docs;             /* a folder of documents the Coder's repair prompts draw passages from; NULL = none */
	int docs_tokens;        /* the passages' token budget per prompt */
};

struct problems_cfg {
	char *root;             /* NULL = the bundled suite */
	int levels[4];          /* levels[i] != 0: level i+1 selected */
	char **select;          /* selectors like "L1/1-10" or "L3/all-ids"; NULL-terminated, may be NULL */
	size_t nselect;
};

struct eval_cfg {
	enum eval_preset preset; /* sets the defaults of the keys in config.c's preset table */
	char *device;           /* auto | cpu | cuda | cuda:N */
	int trials;
	int robust_trials;      /* trials on shifted inputs once the trials passed (docs/verdict.md); 0 = off */
	int perf_trials;
	enum tolerance_preset tolerance;
	int timeout_s;
	int warmup_ms;
	int warmup_calls;
	int timing_block;
	int timing_prime_ms;
	int timing_lead_us;
	int timing_cpu;
	int timing_gc;         /* let Python's garbage collector run inside timed blocks */
	enum process_factor_mode process_factor; /* time the reference in the candidate's process too, first */
	double process_spread_pct; /* one model's time from process to process, % sd, in the intervals; -1 = auto */
	enum exchange_mode exchange;  /* how outputs reach the comparison: files, or shared with the reference worker */
	int hash_seed;         /* PYTHONHASHSEED of both workers; -1 = Python's random one per process */
	double rse_target;
	int timing_cap_s;
	enum timing_statistic statistic;
	int extra_shapes;
	int compile;            /* also time torch.compile(Model) on the GPU */
	int keep_reference_worker; /* reuse the reference worker for the next evaluation of the problem */
	int prestart_candidate;    /* eval --samples: start the next candidate's worker during this evaluation */
	int fork_server;           /* fork candidate workers from a process that imported torch once */
	int tf32;               /* let cuDNN and cuBLAS use TF32 for fp32 in both workers (PyTorch's cuDNN default) */
	int lean_headers;       /* build CUDA sources with torch/types.h for torch/extension.h (worker.py) */
	int lite_headers;       /* build with a torch/types.h made for the sources (harness/worker/headers.py) */
	int split_nvcc;         /* nvcc's host and device front ends side by side (harness/worker/nvcc_split.py) */
	int seed;
	int build_jobs;         /* 0 = number of cores */
	int profile;            /* on the GPU, profile the candidate with CUPTI after timing (libstitchprof) */
	int profile_trials;     /* profiled calls */
	enum profile_metrics_mode profile_metrics; /* hardware metrics per kernel after the profile (hwmetrics.h) */
};

struct checks_cfg {
	int static_checks;      /* run the static rules on each candidate before its workers start */
	int runtime_checks;     /* the runtime rules: facts of every call, rotation, second run, floor */
	enum policy_action policy[SB_HACK_IDS]; /* index 0 = H01 */
	char *rubric;
	char *judge_model;
	double reward_lambda;   /* how much the rubric's total moves a verdict's reward (rubric_reward) */
};

struct output_cfg {
	char *dir;
	char *run_id;           /* NULL = generated at run time */
	int report;
};

struct run_cfg {
	int repeats;            /* when a run ends, judge each problem's best clean pass per agent this many more
	                           times (docs/metrics.md, "Repeated evaluations"); 0 = never */
};

struct config {
	char *path;             /* the file it was read from, or NULL */
	char *name;
	char *python;
	struct problems_cfg problems;
	struct model_cfg *models;
	size_t nmodels;
	struct agent_cfg *agents;
	size_t nagents;
	struct eval_cfg eval;
	struct checks_cfg checks;
	struct output_cfg output;
	struct run_cfg run;
	/* the keys the file or a --set gave ("eval.trials", "checks.policy.H01"): a preset leaves them be */
	char **given;
	size_t ngiven;
};

/* Fills every field with its documented default. */
void config_init(struct config *c);
/* Turns every fast path (the internal keys of config_schema.h) off: outputs exchanged as files, workers
 * started anew and not ahead, no reference worker kept, candidates built as written one at a time. The
 * verdicts must not change (tests/e2e/test_fastpaths.sh). */
int config_plain_paths(struct config *c, struct sb_error *err);
void config_release(struct config *c);

/* Reads a YAML file over the defaults. Errors name file:line:column and the key. */
int config_load_file(struct config *c, const char *path, struct sb_error *err);
/* Same, from memory; `name` is what error messages call the source. */
int config_load_string(struct config *c, const char *name, const char *yaml, size_t len,
		       struct sb_error *err);
/* Applies one override "dotted.key=value" (e.g. "eval.trials=10", "models.qwen.temperature=0.2"). */
int config_set(struct config *c, const char *assignment, struct sb_error *err);
/* Checks what no single field can: references between sections, unique names. */
int config_validate(const struct config *c, struct sb_error *err);
/* Writes the resolved configuration as YAML that config_load_string() accepts, except that the value of a
 * header whose name looks secret (config_header_secret) is written as CONFIG_REDACTED: what it writes is
 * shown by doctor (CONFIG_DUMP_PUBLIC: the public keys, and any other the file or a --set gave) and
 * stored with a run (CONFIG_DUMP_ALL). */
enum config_dump_keys { CONFIG_DUMP_PUBLIC, CONFIG_DUMP_ALL };
void config_dump(const struct config *c, enum config_dump_keys keys, struct strbuf *out);
#define CONFIG_REDACTED "[REDACTED]"
/* The run's identity: every public and hidden key of eval and checks (config_schema.h) but the policy,
 * as {"eval.trials": 5, ...}. Runs whose identities differ are not resumed, merged or imported as one. */
struct json_t *config_identity(const struct config *c);
/* The identity of a configuration that sets nothing but the preset (NULL or "": none). */
struct json_t *config_identity_default(const char *preset);
/* 1 when a header of this name carries a credential: Authorization, Proxy-Authorization, Cookie, or a name
 * holding "key", "token", "secret" or "password" (any case). */
int config_header_secret(const char *name);

const char *tolerance_name(enum tolerance_preset t);
const char *preset_name(enum eval_preset p);
/* checks.policy's default for hack id i + 1 (H01 is 0). */
enum policy_action config_default_policy(int i);
/* The preset's timing method: 1 when it times KernelBench's way (the speedup is the mean of the
 * reference's calls over the mean of the candidate's, each side's calls in blocks), 0 for paired
 * interleaved calls and the median of their ratios. */
int preset_unpaired_mean(enum eval_preset p);
/* The index into checks.policy of a hack id ("H10", "h10": 9); -1 for a string that is no id. */
int config_hack_index(const char *id);
const struct model_cfg *config_find_model(const struct config *c, const char *name);

#endif
