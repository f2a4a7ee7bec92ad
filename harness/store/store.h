/* store.h - the results store of a run, results/RUN_ID/results.db: SQLite in WAL mode with a versioned
 * schema (docs/store.md). A verdict and its trials and findings go in together or not at all. */
#ifndef SB_STORE_H
#define SB_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/error.h"
#include "../core/strbuf.h"
#include "../core/types.h"

#define STORE_SCHEMA 2          /* the schema this build writes; older stores are migrated on open */
/* The oldest schema a reader (STORE_READ) takes as it is: schema 1 lacks only `repeats`, which readers
 * find missing and read as empty. */
#define STORE_SCHEMA_READS 1
#define STORE_FILE "results.db"

struct store;

enum store_mode {
	STORE_READ,    /* an existing store, read-only (export, metrics, merge inputs) */
	STORE_WRITE,   /* an existing store, or a new one created with the current schema */
};

/* Opens path (a results.db file). Sets WAL, synchronous=FULL and foreign keys; creates or migrates the
 * schema in STORE_WRITE. A store written by a newer schema is refused (SB_EINPUT, saying which). */
int store_open(struct store **out, const char *path, enum store_mode mode, struct sb_error *err);
void store_close(struct store *s);
int store_schema_version(struct store *s);
/* The database path for a command-line RUN: a run directory (RUN/results.db) or the file itself. */
char *store_path_for(const char *run);
/* PRAGMA integrity_check, foreign_key_check, and every verdict has all its trials and findings.
 * Returns 0 or SB_EINPUT naming the first problem. */
int store_check(struct store *s, struct sb_error *err);

/* Whether the file at path can serve as a store: 0 when it can, or when it is missing or empty (a new
 * store is made there); 1 when it cannot be read as one (not an SQLite database, a damaged or truncated
 * one, another program's database), err saying what is wrong. It does not judge the schema version. */
int store_health(const char *path, struct sb_error *err);

/* Test hook: called with an increasing step number after each statement of a verdict's transaction,
 * so a test can kill the process at every point of it. NULL removes it. */
void store_set_step_hook(struct store *s, void (*fn)(void *arg, int step), void *arg);

/* A bulk transaction (merge, tests). store_put_verdict() nests inside it as a savepoint; without one
 * every verdict is its own transaction. */
int store_begin(struct store *s, struct sb_error *err);
int store_commit(struct store *s, struct sb_error *err);
void store_rollback(struct store *s);

/* ---------- runs ---------- */

/* One row of `runs`: the settings that decide the numbers, as columns, and everything else of the
 * configuration as JSON, whose "identity" (config_identity) is what merge, resume and import compare
 * beside the device, GPU, torch and policy columns. */
struct store_run {
	int64_t id;                /* runs.id in this store */
	char run_id[128];          /* the run directory's name */
	char created[32];          /* ISO 8601 UTC */
	char version[48];          /* stitchbench version (and git revision) that created it */
	int trials, perf_trials, seed;
	char tolerance[24];
	char preset[24];           /* eval.preset; "" for a run stored before presets existed */
	char device[24];           /* cpu | cuda:N as evaluated; compared by kind only */
	char gpu[128];             /* empty on the CPU */
	char torch[48];
	char policy[SB_HACK_IDS + 1]; /* checks.policy: 'r' (reject) or 'f' (flag) for H01..H22 */
	char *suite_root;
	char *settings;            /* JSON object */
};
void store_run_release(struct store_run *r);
/* A run's settings from the configuration and what the evaluator found (device, GPU, torch). */
void store_run_from_config(struct store_run *r, const char *run_id, const struct config *cfg, const char *device,
			   const char *gpu, const char *sm, const char *torch, const char *suite_root);
/* A run's settings from a verdict JSON (what `import` knows); the policy comes from cfg. */
int store_run_from_verdict(struct store_run *r, const char *run_id, json_t *verdict, const struct config *cfg,
			   struct sb_error *err);

#define STORE_DIFF_ALL 0      /* every compared setting */
#define STORE_DIFF_VERDICT 1  /* only what a verdict carries of its run's (no checks keys, no policy) */
#define STORE_DIFF_CONFIG 2   /* the configuration's keys and policy only, not the machine (GPU, torch, device) */
/* Appends one line per setting that changes numbers and differs ("eval.trials: 5 in A vs 3 in B");
 * returns how many differ. */
int store_run_diff(const struct store_run *a, const char *a_name, const struct store_run *b, const char *b_name,
		   int mask, struct strbuf *out);

/* The runs of several stores (merge inputs, metrics inputs), each store named as the user gave it. */
struct store_runs_of {
	const char *name;
	const struct store_run *runs;
	size_t nruns;
};
/* Compares every run with the first of all on what mask names (STORE_DIFF_ALL or STORE_DIFF_CONFIG); a run
 * is called by its store's name, or "run ID of NAME" when its store holds several. Returns how many
 * settings differ. */
int store_compare_runs(const struct store_runs_of *v, size_t n, int mask, struct strbuf *out);

/* Makes the run named r->run_id the one later writes go to: adds it, or finds it and refuses (SB_EINPUT,
 * naming each setting) when its stored settings differ from r's. Sets r->id. */
int store_use_run(struct store *s, struct store_run *r, struct sb_error *err);
/* Adds r as a new row even if its run_id is taken (merge copies shards that share a name). */
int store_add_run(struct store *s, struct store_run *r, struct sb_error *err);
int store_load_runs(struct store *s, struct store_run **out, size_t *n, struct sb_error *err);
void store_runs_free(struct store_run *r, size_t n);

/* ---------- problems, agents ---------- */

/* Adds the problem, or fills its name; SB_EINPUT when the store holds another sha256 for its ref. */
int store_add_problem(struct store *s, const char *ref, const char *name, const char *sha256, struct sb_error *err);
/* Adds the agent; SB_EINPUT when one of that name is stored with another kind or model. */
int store_add_agent(struct store *s, const char *name, const char *kind, const char *model, struct sb_error *err);

struct store_problem { char ref[16]; int level, id; char name[128]; char sha256[65]; };
struct store_agent { char name[128]; char kind[32]; char model[128]; };
int store_load_problems(struct store *s, struct store_problem **out, size_t *n, struct sb_error *err);
int store_load_agents(struct store *s, struct store_agent **out, size_t *n, struct sb_error *err);

/* ---------- verdicts ---------- */

struct store_key {
	const char *agent;
	const char *problem;       /* "L1/19" */
	int sample, attempt;
};

struct store_put {
	const char *agent;         /* added with store_add_agent() first */
	int sample, attempt;
	const char *stage;         /* the agent's stage for the attempt (repair_compile, ...); NULL for none */
	const char *created;       /* ISO 8601 UTC; NULL = now */
	int64_t run;               /* runs.id; 0 = the run of store_use_run() */
	int force;                 /* merge --force: accept a problem sha256 that differs from the stored one */
};

/* Stores one verdict (schema-1 JSON, docs/verdict.md) with its trials and findings in one transaction.
 * The problem comes from the verdict. SB_EEXIST when (agent, problem, sample, attempt) is already stored:
 * a key is written once, and the caller may treat that as "already done". SB_EINPUT when the verdict is
 * malformed, or its settings differ from its run's. */
int store_put_verdict(struct store *s, const struct store_put *p, json_t *verdict, struct sb_error *err);
/* 1 when the key is stored (candidate_sha, if not NULL, receives its candidate's sha256), 0 when not. */
int store_lookup(struct store *s, const struct store_key *k, char candidate_sha[65], struct sb_error *err);
/* The stored verdict JSON of a key (*out, a new reference) and its attempt's stage (stage may be NULL;
 * "" when none): 1 when stored, 0 when not (*out NULL), negative on error. A resumed run reads its
 * finished attempts back through this instead of evaluating them again. */
int store_load_verdict(struct store *s, const struct store_key *k, json_t **out, char stage[32], struct sb_error *err);

/* How many verdicts the store holds for one sample (agent, problem, sample). */
int store_count_attempts(struct store *s, const char *agent, const char *problem, int sample, int *n,
			 struct sb_error *err);

/* One verdict as the readers see it; strings live until the callback returns. */
struct store_verdict_row {
	int64_t run;
	const char *run_id, *agent, *agent_kind, *model;
	const char *problem, *problem_sha256;
	int level, problem_id, sample, attempt;
	const char *status, *stage;
	int hack;                  /* status rejected, or a finding with severity reject */
	double speedup_eager, speedup_compiled; /* NAN when not timed or unavailable */
	const char *candidate_sha256, *created;
	const char *json;          /* the verdict exactly as stored */
	const char *finding_ids;   /* its findings' ids in order, space-separated ("H14 H21"); "" when none */
	double speedup_lo, speedup_hi; /* speedup.vs_eager_ci95, the verdict's own interval; NAN when absent */
	double reward;             /* the verdict's reward (docs/verdict.md); NAN when null or absent */
	int robust_failed;         /* its robust.passed is false (docs/verdict.md); older verdicts have none */
	int noisy;                 /* it was timed on a busy machine (timing.noise.noisy) */
};
typedef int (*store_verdict_fn)(void *arg, const struct store_verdict_row *row, struct sb_error *err);
/* Every verdict in (agent, level, problem id, sample, attempt) order; a non-zero return stops. */
int store_each_verdict(struct store *s, store_verdict_fn fn, void *arg, struct sb_error *err);

/* One finding of a stored verdict, with the verdict's key; strings live until the callback returns. */
struct store_finding_row {
	const char *agent, *problem;
	int sample, attempt;
	const char *id;            /* "H10" */
	const char *severity;      /* reject | flag */
	const char *message;
	int line, col;             /* 0 for findings made at run time */
};
typedef int (*store_finding_fn)(void *arg, const struct store_finding_row *f, struct sb_error *err);
/* Every finding in (agent, level, problem id, sample, attempt, index) order; a non-zero return stops. */
int store_each_finding(struct store *s, store_finding_fn fn, void *arg, struct sb_error *err);

/* A problem flagged by `stitchbench audit` (DESIGN §7, D findings such as H15-H17). */
struct store_audit_row {
	const char *problem;       /* "L1/19" */
	const char *id;            /* "H16" */
	const char *message;       /* "" when the audit gave none */
};
typedef int (*store_audit_fn)(void *arg, const struct store_audit_row *a, struct sb_error *err);
/* The rows of the store's `audit` table, when it has one (*present = 1); schema 1 has none, so a store
 * without it is not an error (*present = 0, no calls). The columns problem and id are required, message
 * is optional, others are ignored (docs/store.md). */
int store_each_audit(struct store *s, store_audit_fn fn, void *arg, int *present, struct sb_error *err);

/* Records the audit of one problem (findings: [{"id", "message"}], possibly empty: audited, no flaw) in
 * the table `audit`, created on first use, replacing what it held for that problem; adds the problem. */
int store_put_audit(struct store *s, const char *problem, const char *name, const char *sha256, json_t *findings,
		    struct sb_error *err);

/* ---------- repeated evaluations ---------- */

/* A stored candidate judged again (the table `repeats`, docs/store.md): its rows sit beside its verdict and
 * never change it, so the verdict, the attempt and the pick of a problem's best candidate stay what the
 * first evaluation made them. Repeat i of a key is numbered from 1 (the verdict is evaluation 0). */

/* Stores repeat `idx` (1, 2, ...) of the verdict at key k: the verdict JSON of that evaluation, which must
 * judge the same candidate file (sha256) and problem as the stored verdict, with the settings of the
 * verdict's run. SB_EEXIST when (key, idx) is stored (written once, like a verdict); SB_EINPUT when the key
 * has no verdict or the evaluation does not match it. created NULL = now. */
int store_put_repeat(struct store *s, const struct store_key *k, int idx, json_t *verdict, const char *created,
		     struct sb_error *err);
/* How many repeats of key k the store holds (0 in a store of schema 1, which has no table for them), and
 * the highest number among them (last, may be NULL; 0 with none). */
int store_count_repeats(struct store *s, const struct store_key *k, int *n, int *last, struct sb_error *err);

struct store_repeat_row {
	const char *agent, *problem;
	int sample, attempt, idx;
	const char *status;
	double speedup_eager;        /* NAN when not timed */
	double speedup_lo, speedup_hi; /* speedup.vs_eager_ci95; NAN when absent */
	const char *candidate_sha256, *created;
	const char *json;            /* the repeat's verdict as stored */
};
typedef int (*store_repeat_fn)(void *arg, const struct store_repeat_row *r, struct sb_error *err);
/* Every repeat in (agent, level, problem id, sample, attempt, idx) order; a non-zero return stops. */
int store_each_repeat(struct store *s, store_repeat_fn fn, void *arg, struct sb_error *err);

/* ---------- agents a run could not run ---------- */

/* Records that the run could not run the agent at all here (reason: "torch 1.13.0a0 has no torch.compile
 * (needs torch 2.0 or later)") in the table `unavailable`, created on first use; the agent must be stored. */
int store_put_unavailable(struct store *s, const char *agent, const char *reason, struct sb_error *err);
typedef int (*store_unavailable_fn)(void *arg, const char *agent, const char *reason, struct sb_error *err);
/* Every unavailable agent by name; a store without the table has none. */
int store_each_unavailable(struct store *s, store_unavailable_fn fn, void *arg, struct sb_error *err);

/* ---------- samples a problem's reference kept from being judged ---------- */

/* Records that the sample could not be judged because its problem's reference failed (message: why), in
 * the table `reference_failures`, created on first use, replacing what it held for the sample; agent and
 * problem must be stored. Such a sample is unfinished, and its missing verdicts are the problem's
 * failure, not the candidate's. */
int store_put_reference_failure(struct store *s, const char *agent, const char *problem, int sample,
				const char *message, struct sb_error *err);
/* Forgets the sample's record (it ended after all); nothing to do when there is none. */
int store_clear_reference_failure(struct store *s, const char *agent, const char *problem, int sample,
				  struct sb_error *err);
struct store_reference_failure {
	const char *agent, *problem;
	int sample;
	const char *message, *created;
};
typedef int (*store_reference_failure_fn)(void *arg, const struct store_reference_failure *f, struct sb_error *err);
/* Every record in (agent, problem, sample) order; a store without the table has none. */
int store_each_reference_failure(struct store *s, store_reference_failure_fn fn, void *arg, struct sb_error *err);

/* ---------- LLM calls (filled by the LLM client of a run) ---------- */

struct store_llm_call {
	const char *agent, *problem; /* both already stored */
	int sample, attempt;         /* the attempt the call served (a first plan serves attempt 0) */
	int call;                    /* numbered within (agent, problem, sample) from 0 */
	const char *model;
	long prompt_tokens, completion_tokens;
	double latency_s, cost_usd;
	const char *created;         /* NULL = now */
	int64_t run;                 /* 0 = the run of store_use_run() */
};
/* SB_EEXIST when (agent, problem, sample, call) is already stored. */
int store_put_llm_call(struct store *s, const struct store_llm_call *c, struct sb_error *err);
typedef int (*store_call_fn)(void *arg, const struct store_llm_call *c, struct sb_error *err);
int store_each_llm_call(struct store *s, store_call_fn fn, void *arg, struct sb_error *err);

/* ---------- merging ---------- */

/* Copies every run, problem, agent, verdict and LLM call of the inputs (run directories or results.db
 * files) into the new store out_dir/results.db, written as results.db.partial and renamed when complete.
 * Refuses (SB_EINPUT, naming each setting with both values) inputs that differ in a setting that changes
 * the numbers, unless force, when `overridden` receives those differences instead; refuses always a key
 * stored by two inputs. */
struct store_merge_stats {
	size_t runs, verdicts, calls;
};
int store_merge(const char *out_dir, char *const *inputs, size_t n, int force, struct strbuf *overridden,
		struct store_merge_stats *stats, struct sb_error *err);

/* ---------- run directories ---------- */

/* A run id names a folder: letters, digits, '.', '_', '-', not starting with '.'. */
int run_id_check(const char *id, struct sb_error *err);
/* Opens dir/results.db for writing, creating dir and, when it has none, dir/config.yaml (the resolved
 * configuration) on the way, then selects the run r (store_use_run). */
int rundir_open(struct store **out, const char *dir, const struct config *cfg, struct store_run *r,
		struct sb_error *err);

#endif
