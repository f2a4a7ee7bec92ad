/* rtchecks.h - the runtime hack checks of one evaluation (docs/checks.md, "Runtime checks"): the facts of
 * every candidate call, the extra calls (rotation, second run, unpoisoned rerun), the floor, and the
 * verdict's `runtime` section. The rules themselves are harness/checks/runtime.c and floor.c. */
#ifndef SB_RTCHECKS_H
#define SB_RTCHECKS_H

#include <jansson.h>

#include "../checks/floor.h"
#include "../checks/runtime.h"
#include "../core/config.h"
#include "check/check.h"
#include "proc/proc.h"
#include "verdict.h"

/* What the verdict shows of the runtime checks (its `runtime` field, docs/verdict.md). */
struct rt_report {
	struct rt_output *outputs;   /* the first trial's outputs as the worker saw them */
	size_t noutputs;
	int threads_known;
	int py_before, py_after, os_before, os_after; /* before the first trial, after the last call */
	double idle_cpu_ms, idle_wall_ms; /* CPU the candidate's process used while idle after timing (0: not read) */
	char determinism[24];        /* "bitwise" | "within_tolerance" | "differs" | "" (not run) */
	char rotation[24];           /* "changed" | "stale" | "" (not run) */
	long long poison_bytes;      /* NaN written into freed device memory before the second run; -1: off */
	int floor_present;
	double floor_bytes, peak_bytes_per_s;
	double floor_time_us;         /* the candidate time the floor was held against */
	int floor_gpu_only;           /* that time is the GPU-only one (timing.gpu_only or a lead) */
	int peak_cached;
	struct floor_result floor;
	struct strvec skipped;       /* "H19: ..." for each check that did not run, and why */
	struct rt_operators ops;     /* the CPU's record of the ATen operators the candidate's calls ran (oprec.c) */
	char ops_note[200];          /* why there is none, where one was asked for */
};
json_t *rt_report_json(const struct rt_report *r);
void rt_report_summary(const struct rt_report *r, struct strbuf *out);
void rt_report_release(struct rt_report *r);

/* Where the extra calls go and what they are compared with. */
struct eval_ctx;

struct rt_io {
	struct worker *cand;
	struct worker *ref;          /* started and loaded by the timing loop; NULL before */
	const char *device;          /* "cpu" | "cuda:N" */
	const char *cand_dir;        /* the candidate's private folder, where its outputs land */
	const char *ref_dir;         /* the reference worker's folder, where its expected outputs land (files) */
	const char *cache_root;
	const uint32_t *seeds;       /* correctness seeds */
	uint32_t rot_seeds[2];
	double deadline;
	int timeout_s;
	long long max_output_bytes;
	long long poison_bytes;      /* 0 on the CPU */
	int keep_files;              /* --keep-workdir: compared outputs stay (outputs_drop) */
	struct eval_ctx *ctx;        /* the evaluation, for its output exchange (check/check.h) */
};

/* One evaluation's runtime checks, from the candidate's load to its last call. */
struct rt_session {
	const struct config *cfg;
	int on;
	struct rt_call *calls;       /* every observed candidate call, in order */
	char **names;                /* "trial 0", "the rotation's second call" */
	size_t ncalls;
	struct rt_call *ref;         /* per correctness trial, the reference's call (rt_observe_ref) */
	size_t nref;
	uint64_t *cand_digest, *ref_digest;
	int *digest_ok, *trial_pass;
	size_t ntrials;
	int ref_reproducible;        /* the reference repeats itself under a seed (the problem's cached facts) */
	struct findings found;
	size_t applied;              /* findings already in the verdict */
	struct proc_view base;       /* the candidate's worker before any of its code ran, as /proc shows it */
	int siglock_noted;           /* the skipped line for signals 32 and 33 without the seccomp filter is in */
	int ops_open;                /* ops_fd is the operator record's read end (oprec.c) */
	int ops_fd;
	struct strbuf ops_pending;   /* bytes read from it that are not a whole line yet */
	size_t ops_read;             /* bytes read from it in all */
	struct rt_report *report;    /* owned by the verdict */
};

/* reproducible: the reference repeats itself under a seed; v receives the report. */
void rt_session_init(struct rt_session *s, const struct config *cfg, int ntrials, int reproducible, struct verdict *v);
/* The reference's own call for trial k (its `run` reply): what the candidate's call is judged beside. */
void rt_observe_ref(struct rt_session *s, size_t k, json_t *reply);
void rt_session_release(struct rt_session *s);
/* H08 right after the candidate's import and construction. */
void rt_observe_load(struct rt_session *s, json_t *reply);
/* The parent's own look at the candidate's worker (proc/proc.h), `pid` its proc_handle's: the first call,
 * before any candidate code runs, is the baseline; each later one finds H06 in signal handlers the
 * candidate installed and in processes of its still alive (`when`: "after its import"). A handler the
 * trusted reference worker (`ref_pid`, 0: none) has too is the harness's own (Python's, the CUDA driver's)
 * and counts for nothing. */
void rt_observe_process(struct rt_session *s, pid_t pid, pid_t ref_pid, const char *when);
/* Trial k's reply and its comparison with the reference (cmp may be NULL when unreadable). */
void rt_observe_trial(struct rt_session *s, size_t k, json_t *reply, const struct outputs_cmp *cmp, const char *device);
/* After the trials were judged: threads, same outputs for different inputs, then the extra calls (rotation
 * when every trial passed; the second run when they all ran; an unpoisoned rerun of a trial whose output
 * held NaN). Returns 0, 1 when the candidate failed during a call (the verdict says how), -1 on a harness
 * error (err). */
int rt_after_trials(struct rt_session *s, const struct rt_io *io, struct verdict *v, struct sb_error *err);
/* Bytes one call must read and write at least, from a reference `run` reply: every tensor input once,
 * every output once, except an output that is a view of an input (nothing is written for it). */
long long rt_io_bytes(json_t *reply);
/* Elements of a JSON shape ([4096, 2048]). */
long long rt_numel(json_t *shape);
/* After the timing loop: the identity check and threads once more, and the floor (H21). */
int rt_after_timing(struct rt_session *s, const struct rt_io *io, json_t *meta, struct verdict *v);
/* At the end of an evaluation: names the checks that never ran (the candidate failed first, or was not
 * timed), so a verdict never passes a check silently. */
void rt_finish(struct rt_session *s, const struct verdict *v);
/* Puts the findings not yet in the verdict there, each with its policy's severity; a reject turns a
 * passing verdict into `rejected`. Returns 1 when the verdict is (now) rejected by a runtime finding. */
int rt_apply(struct rt_session *s, struct verdict *v);

/* oprec.c - the CPU's record of the ATen operators the candidate's calls ran (harness/worker/oprec.cpp).
 * rt_oprec_start, before the candidate's `load`: on the CPU with eval.profile, builds the recorder for this
 * torch once (into the cache), and installs it in the candidate's worker on a pipe whose read end stays
 * here; 0, or -1 with err when the worker failed before any candidate code ran (a harness failure). A
 * recorder that cannot be built or installed is a note in the report and a skipped check, not an error.
 * rt_oprec_drain reads what the pipe holds (after the trials and after the timing, so that it does not fill);
 * rt_oprec_judge, after the candidate's last call: reads the rest and judges it (rt_rule_operators). */
struct eval_env;
int rt_oprec_start(struct rt_session *s, const struct eval_env *e, struct worker *cand, const char *cand_dir,
		   double deadline, struct sb_error *err);
void rt_oprec_drain(struct rt_session *s);
void rt_oprec_judge(struct rt_session *s, const struct verdict *v);

/* The candidate's time per call that H21's floor is held to: the GPU-only median where one was measured and
 * is lower than the end-to-end one; *gpu_only says which it is. */
double rt_floor_time(const struct timing_result *t, int *gpu_only);

#endif
