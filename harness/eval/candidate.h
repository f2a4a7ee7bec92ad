/* candidate.h - the trust boundary (DESIGN §6, docs/threat-model.md): the one module that owns a
 * candidate's worker, from its start (forked from the fork server or exec'd, in its sandbox) through
 * every request and answer (each fault a verdict, never a harness error) to the workers started ahead for
 * a batch's next candidates. Its process runs the candidate's code, so everything it says is a claim.
 *
 * What crosses the boundary, and how each crossing is checked:
 *
 *   into the worker
 *     sandbox   applied before any of its code runs (proc/proc.h): its own network, PID and mount
 *               namespaces with a private /dev/shm (and /tmp where nothing it reads lives there), rlimits
 *               with a memory limit on the CPU, Landlock (it writes only its folder; the reference cache,
 *               the reference workers' folders and the build cache are unreadable), no capabilities, an
 *               allow-listed environment without keys.
 *     file      a copy in its folder with the checked file's SHA-256 (evalctx_candidate_copy).
 *     build     a private copy of what the trusted builder published under the key of those bytes
 *               (build.c); it cannot reach the cache itself.
 *     seeds     derived from the evaluation's secret, each sent in the request that makes it draw
 *               (seeds.h); on the CPU the timed calls' inputs arrive drawn, in a sealed memfd (timing.c).
 *     requests  never carry an expected output, a reference's result or a later call's seed.
 *
 *   out of it
 *     replies   JSON lines of at most 64 MiB, types checked where read (worker_client.c); times, output
 *               facts, build accounts (eval_keep_builds: bounded fields only) are claims.
 *     outputs   frozen before its reply: a sealed memfd (refused without F_SEAL_WRITE), or device memory
 *               the trusted reference worker copies before comparing; every timed call's are compared
 *               with the reference's before it runs again (timedcheck.c).
 *     times     bounded by the parent's own clock around every request (worker.sent_at and replied_at;
 *               trusted_clock in the verdict).
 *     its state read by the parent from /proc, not reported: signal handlers, its other processes, a
 *               stopped worker (proc/proc.h).
 *     its end   the exit status from the kernel or the fork server's status pipe, and a bounded tail of
 *               what it printed (drained as fast as it writes).
 */
#ifndef SB_CANDIDATE_H
#define SB_CANDIDATE_H

#include <jansson.h>

#include "../checks/static.h"
#include "../core/error.h"
#include "verdict.h"
#include "proc/proc.h"

struct eval_ctx;
struct eval_env;
struct config;

/* Starts the candidate's worker in its sandbox, in c->cand_dir (file-size limit from c->out_bytes). */
int evalctx_start_cand(struct eval_ctx *c, struct sb_error *err);
/* The candidate's file-size limit (RLIMIT_FSIZE): room for its largest legitimate output, at least
 * 256 MiB. Its `load` request sets it again (a prestarted worker starts with a higher one). */
long long evalctx_cand_file_bytes(const struct eval_ctx *c);
/* The most bytes of outputs a candidate's call may save: twice the reference's largest, plus 16 MiB. */
long long evalctx_max_output(const struct eval_ctx *c);
/* The candidate file as the worker imports it: a copy in its own folder (c->cand_dir/candidate.py), of
 * exactly the bytes whose hash is `sha256` (the checked file's). NULL with err when they differ (the file
 * changed since it was checked) or cannot be copied. */
char *evalctx_candidate_copy(struct eval_ctx *c, const char *candidate_path, const char *sha256, struct sb_error *err);

/* An answer that is not a candidate at all is format_error in v (1), before any check or worker; 0
 * otherwise: an empty file (blank lines and comments only), one that never names ModelNew, and one that
 * Python's parser (the workers' interpreter, which only parses it: nothing in it runs) rejects, with the
 * SyntaxError's message and line. Not a hack, whatever the static rules would say of the text: there is
 * no program to judge. */
int eval_format_check(const struct eval_env *e, const struct candidate_source *s, struct verdict *v);
/* A candidate whose code runs only on a GPU (candidate_source.needs_gpu) while evaluations here run on the
 * CPU: cannot_judge in v (1), nothing built or run. Not the candidate's failure: a machine with a GPU
 * judges it. 0 otherwise. */
int eval_device_check(const struct eval_env *e, const struct config *cfg, const struct candidate_source *s,
		      struct verdict *v);

/* Sends req (stolen) to the candidate; on a fault, a timeout or an error reply fills the verdict (status,
 * message, detail) and returns -1; else 0 with *reply. `stage` says what was going on ("running trial 2"). */
int eval_cand_ask(struct worker *w, json_t *req, json_t **reply, double deadline, struct verdict *v, const char *stage,
		  int timeout_s);
/* The two halves of eval_cand_ask, for a request sent before the previous reply is judged (the trials
 * run while the parent compares the one before). Same rules. */
int eval_cand_send(struct worker *w, json_t *req, struct verdict *v, const char *stage, int timeout_s);
int eval_cand_receive(struct worker *w, json_t **reply, double deadline, struct verdict *v, const char *stage,
		      int timeout_s);
/* The worker's account of its load_inline builds, into the verdict: only the known fields, with their types
 * checked and their strings bounded (a slow build then says which compiler it waited for). */
void eval_keep_builds(struct verdict *v, json_t *builds);

/* The end of an evaluation: *log_tail gets what the candidate's worker printed, then evalctx_release,
 * except that when another evaluation follows (eval_env.prestart_next) the candidate's worker is only
 * told to quit, and it and the folders are released later by evalctx_retired_settle (called before
 * anything is timed, by the next retire, and at exit). Leaves *c empty. */
void evalctx_retire(struct eval_ctx *c, char **log_tail);
void evalctx_retired_settle(void);

/* eval.prestart_candidate: starts candidate workers for the next two evaluations (eval_env.next_problems)
 * where none was started yet; the next evaluation adopts the oldest (evalctx_adopt).
 *
 * Why: a worker's first second or more is Python and `import torch`, paid again by every candidate of an
 * `eval --samples` batch while the GPU waits. The next candidate's worker does that while the current one
 * runs its trials: a fresh process in its own sandbox, folder and environment, exactly as it would be
 * started later, that runs no candidate code before it is handed to its candidate. It is told nothing but
 * `hello` (on the CPU, so the GPU is left alone) and must have answered before the current candidate is
 * timed, so the timed calls never share the host with a torch import. */
void evalctx_prestart(const struct eval_ctx *c);
/* Waits (until deadline) for the prestarted worker's `hello`, so it is idle while c's candidate is
 * timed; one that fails is dropped. */
void evalctx_prestart_settle(double deadline);
/* Hands the prestarted worker to c as its candidate worker: 0, or -1 when there is none that fits
 * (another invocation or settings, a file-size limit too small for this problem), dropped then. */
int evalctx_adopt(struct eval_ctx *c, double deadline);

#endif
