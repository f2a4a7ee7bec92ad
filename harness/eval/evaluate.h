/* evaluate.h - one candidate against one problem, start to finish (DESIGN §5): reference outputs
 * (cached), sandboxed candidate build and correctness trials, paired timing, the verdict. */
#ifndef SB_EVALUATE_H
#define SB_EVALUATE_H

#include "../core/config.h"
#include "../core/error.h"
#include "../core/strbuf.h"
#include "../core/types.h"
#include "verdict.h"

struct candidate_source; /* checks/static.h */

struct eval_env;
struct eval_seeds;
struct worker;

/* The candidate as evaluate() leaves it after the timed calls, for the step its caller adds there: its
 * worker still alive (hostile: what it answers counts only as far as trusted code checks it), its files
 * where this evaluation put them. */
struct eval_live {
	struct worker *worker;          /* the candidate's sandboxed worker */
	const char *dir;                /* its work folder */
	const char *ext_dir;            /* its build (the objects whose kernels are its own) */
	int nsets;                      /* input sets the timing drew */
	const struct eval_seeds *seeds; /* this evaluation's secret */
	const struct candidate_source *src; /* the candidate as read and checked */
	double deadline;                /* the evaluation's */
};

/* A step evaluate() runs on a passing candidate after the timing, with eval_live (harness/profile/ fills it
 * with the CUPTI profile): eval says when, the caller what. It may add findings to v and fail it. */
typedef void eval_after_timing_fn(const struct eval_env *e, const struct config *cfg, const struct eval_live *c,
				  struct verdict *v);

/* What is fixed for a whole `eval` invocation: found once, shared by every evaluation. */
/* How many evaluations ahead a batch starts candidate workers: a worker's Python and `import torch`
 * (1.6-5 s on a GPU node) take longer than a warm level-1 evaluation, so each gets two evaluations. */
#define EVAL_AHEAD 2

struct eval_env {
	char *python;             /* interpreter that imports torch */
	char *worker_script;      /* <home>/harness/worker/worker.py */
	char *cache_root;         /* reference outputs (ref/), builds (ext/), work dirs (work/) */
	char device[24];          /* "cpu" or "cuda:N", resolved from eval.device */
	char gpu[128];
	char sm[8];               /* "90"; empty on the CPU */
	char gpu_uuid[48];        /* torch's form of the GPU's UUID, for NVML; empty on the CPU or unknown */
	char torch[32];
	char torch_cuda[16];      /* CUDA torch was built with; empty for a CPU build */
	char python_version[16];
	long long l2_bytes;
	int compile_available;    /* torch has torch.compile (python_torch_compile) */
	char compile_missing[96]; /* why not, when it has not: "torch 1.13.0a0 has no torch.compile (...)" */
	int keep_workdirs;        /* leave work/ folders behind for inspection */
	char *prof_lib;           /* lib/libstitchprof.so ($STITCHBENCH_PROF_LIB overrides) */
	int profile_only;         /* profile even without the timing loop (stitchbench profile) */
	const char *keep_trace;   /* copy the candidate's trace here (stitchbench profile --trace-out) */
	eval_after_timing_fn *profile; /* the profile step (prof_candidate), run when eval.profile asks for it;
					* NULL: none */
	int prestart_next;        /* another evaluation follows on this device (its workers can start ahead) */
	const struct problem *next_problems[EVAL_AHEAD]; /* the problems of the next evaluations (NULL: none):
							  * a candidate worker is started ahead for each, its
							  * file-size limit sized by that problem's cached outputs */
	int hash_seed;            /* eval.hash_seed: every worker's PYTHONHASHSEED; -1: unset */
	char replay_seeds[33];    /* eval --seeds: the secret of an earlier verdict, to replay it; "": draw one */
	char *home;               /* the checkout: harness/worker/template.py, lib/libsbspawn.so */
	struct eval_forks *forks; /* eval.fork_server: the server candidate workers are forked from, started on
				   * first use (eval_fork_server); NULL when off. Shared by the per-GPU copies of
				   * this environment (run --gpus), released with it */
	char *oprec_lib;          /* on the CPU, the record of ATen operators for this torch and interpreter
				   * (eval_oprec_lib), named once: its source is not read again per evaluation.
				   * NULL on a GPU, or when the source cannot be read */
};

/* Resolves the device ("auto" -> cuda:0 when torch sees a GPU), the interpreter and the cache.
 * Returns 0, SB_EINPUT (bad device) or SB_EENV (no Python with torch, no GPU when one was asked). */
int eval_env_init(struct eval_env *e, const struct config *cfg, const char *home, struct sb_error *err);
void eval_env_release(struct eval_env *e);
/* <cache>/oprec/oprec-<digest>.so, by the digest of harness/worker/oprec.cpp, the torch version and the
 * interpreter (oprec.c; built there on first use); NULL when the source cannot be read. To free. */
char *eval_oprec_lib(const struct eval_env *e);

/* Bytes of the buffer written before each timed GPU call to evict L2 (>= 2x the device's L2,
 * DESIGN §5.5); 0 on the CPU. */
long long eval_flush_bytes(const struct eval_env *e);
/* eval.timing_lead_us on a GPU; 0 on the CPU, where there is no device queue to lead. */
int eval_lead_us(const struct eval_env *e, const struct config *cfg);
/* The CPU both workers' threads are pinned to while they time (eval.timing_cpu), or -1 for none. Auto (-1)
 * pins on a GPU: a call timed end to end is mostly the host's Python and launches, and two processes on
 * two cores run it at the two cores' speeds, which drift apart (the reference as a candidate scores
 * 0.80-1.32 unpinned, 0.97-1.03 pinned; BENCHMARKS.md). The CPU is the last this
 * process may use, counted back by the GPU's index, so evaluations on other GPUs pin elsewhere. Never
 * on the CPU device, where a pin would make a multi-threaded candidate single-threaded. */
int eval_timing_cpu(const struct eval_env *e, const struct config *cfg);

/* What every worker's Python reads once, at its start: no bytecode files, unbuffered output, a UTF-8
 * locale and PYTHONHASHSEED (eval.hash_seed). The fork server gets the same, as its forks cannot change
 * them afterwards. */
void eval_python_env(struct strvec *env, const struct eval_env *e);

/* The fork server candidate workers start from (proc/proc.h), started now if it is not; NULL when
 * eval.fork_server is off or it could not start (said once, as a warning). Thread-safe. Calling it early
 * lets its `import torch` overlap other work. */
struct forkserver *eval_fork_server(const struct eval_env *e);

/* Stops a candidate worker started ahead for an evaluation that did not come (also run at exit). */
void eval_prestart_drain(void);

/* ---------- the one door (entry.c): what every command that judges candidates calls ---------- */

/* The outcome of building a candidate's extensions ahead of its evaluation (builds on all cores first,
 * then one evaluation at a time per device: `eval --samples`, `serve` and `run` on a GPU). */
struct prebuild {
	int done;          /* the build was tried */
	int ok;            /* ... and succeeded (a later build in the evaluation is a cache hit) */
	enum verdict_status status; /* a failed build: compile_error or format_error */
	char *msg;         /* a failed build: one line */
	char *detail;      /* a failed build: the trimmed compiler errors */
};
void prebuild_release(struct prebuild *b);
/* Tries the build (eval_prebuild). A harness failure (no Python) leaves b->done 0 and returns non-zero. */
int prebuild_run(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		 struct prebuild *b, struct sb_error *err);
/* Judges a candidate: with a failed prebuild the verdict is its failure (the build is not paid for twice;
 * b->detail moves into the verdict), otherwise evaluate(); either carries the problem's audit
 * (auditcache.h). b may be NULL. Only a harness failure returns non-zero. */
int eval_candidate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		   struct prebuild *b, struct verdict *v, struct sb_error *err);
/* A verdict decided without evaluating (no code in the answer, a harness failure): the header and the
 * audit a judged candidate's verdict has, then `status` with `message`. */
void eval_failure(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *path,
		  enum verdict_status status, const char *message, struct verdict *v);

/* ---------- the stages behind it ---------- */

/* Evaluates `candidate_path` against `p`. Every candidate fault becomes a verdict status; only a
 * harness failure (cannot create folders, cannot start Python) returns non-zero. With own_ref the
 * reference worker is started for this evaluation alone, never the one eval.keep_reference_worker kept.
 * Callers outside eval/ use eval_candidate. */
int evaluate(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate_path,
	     int own_ref, struct verdict *v, struct sb_error *err);

/* Fills what a verdict says before anything ran: problem, candidate hash, settings, environment. */
void eval_verdict_header(const struct eval_env *e, const struct config *cfg, const struct problem *p,
			 const char *candidate_path, struct verdict *v);

/* Builds the candidate's extensions by the trusted builder (build.c: published under the key of the
 * file's bytes), without a GPU (`eval --samples` runs these in parallel first). Returns 0 and sets *ok; a
 * failed build is *ok = 0 with *status (compile_error, or format_error for a file Python cannot parse or
 * without ModelNew), *msg (one line) and *detail (the trimmed compiler errors). */
int eval_prebuild(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate_path,
		  int *ok, enum verdict_status *status, char **msg, char **detail, struct sb_error *err);

#endif
