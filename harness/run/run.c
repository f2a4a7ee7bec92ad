/* run.c - carrying out a run: sample threads (each runs one agent on one problem and sample at a time),
 * the progress thread, and what happens when a sample ends, fails or is stopped. The LLM clients cap
 * requests in flight per model (their gate); the device slots let one evaluation run at a time on each
 * device (one slot, or one per GPU with --gpus). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../agents/session.h"
#include "../core/fs.h"
#include "../store/store.h"
#include "halt.h"
#include "run_int.h"

void run_result_release(struct run_result *r)
{
	free(r->run_dir);
	free(r->ref_failed_problems);
	memset(r, 0, sizeof(*r));
}

static size_t agent_index(const struct run_state *st, const struct agent_cfg *a)
{
	for (size_t i = 0; i < st->nagents; i++)
		if (st->agents[i].cfg == a)
			return i;
	return 0;
}

static void on_attempt(void *arg, const struct agent_session *s, size_t idx)
{
	struct run_state *st = arg;
	size_t n;
	const struct attempt *a = &session_attempts(s, &n)[idx];
	const struct agent_task *t = session_task(s);
	progress_attempt(st->prog, agent_index(st, t->agent), t->ref, t->sample, a->index, stage_name(a->stage),
			 a->status, a->sum.speedup, a->resumed);
}

static double sample_best(const struct agent_session *s)
{
	struct stage_input in = session_input(s, 0, 0);
	return stage_best(in.hist, in.n, NULL);
}

/* Why the problem's reference failed in this process, or NULL. The caller holds st->mu. */
static const char *badref_why(const struct run_state *st, const struct problem *p)
{
	for (size_t i = 0; i < st->nbadref; i++)
		if (st->badref[i].problem == p)
			return st->badref[i].why;
	return NULL;
}

/* A sample left unfinished because nothing could judge it, recorded in the store's reference_failures
 * (why), which metrics and reports count as nobody's failure. The store failing is the harness's: every
 * other sample would fail alike, so the run stops. Returns holding st->mu (taken after the store's lock
 * is released: the two are never nested). */
static void record_not_judged(struct run_state *st, const struct agent_task *t, const char *why)
{
	struct sb_error serr;
	pthread_mutex_lock(&st->sh.store_mu);
	int src = store_put_reference_failure(st->sh.store, t->agent->name, t->ref, t->sample, why, &serr);
	pthread_mutex_unlock(&st->sh.store_mu);
	pthread_mutex_lock(&st->mu);
	st->unfinished++;
	if (src && !st->fatal_rc) {
		st->fatal_rc = src;
		st->fatal = serr;
		atomic_fetch_or(st->rq->stop, RUN_STOP_FATAL);
	}
}

/* A sample its problem's reference kept from being judged (ran: it got as far as an evaluation; else it
 * was not started). It is left unfinished, as the failure may pass (a resume tries it again). The first
 * one of a problem says so once; the run goes on with the other problems. */
static void sample_ref_failed(struct run_state *st, const struct agent_task *t, const char *why, int ran, double best)
{
	record_not_judged(st, t, why);
	st->ref_failed++;
	int first = !badref_why(st, t->problem);
	if (first) {
		st->badref = xrealloc(st->badref, (st->nbadref + 1) * sizeof(*st->badref));
		st->badref[st->nbadref].problem = t->problem;
		st->badref[st->nbadref++].why = xstrdup(why);
	}
	pthread_mutex_unlock(&st->mu);
	if (first)
		progress_line(st->prog, "%s: %s; its samples are left unfinished and the run goes on (--resume tries "
			      "them again: the failure may pass)", t->ref, why);
	char outcome[SB_ERR_MAX + 96];
	snprintf(outcome, sizeof(outcome), "unfinished: reference_failed: %s: the reference of %s failed",
		 ran ? "not judged" : "not run", t->ref);
	progress_sample(st->prog, agent_index(st, t->agent), t->ref, t->sample, outcome, best, 0);
}

/* A sample whose attempt this machine cannot run (cannot_judge: CUDA code, no GPU): left unfinished for
 * --resume on a machine that can run it. Its problem stays open to other samples. */
static void sample_cannot_judge(struct run_state *st, const struct agent_task *t, const char *why, double best)
{
	record_not_judged(st, t, why);
	int first = !st->cannot_judge++;
	pthread_mutex_unlock(&st->mu);
	if (first)
		progress_line(st->prog, "%s %s s%d: %s; such samples are left unfinished (--resume on a machine that can "
			      "run them judges them)", t->agent->name, t->ref, t->sample, why);
	char outcome[SB_ERR_MAX + 64];
	snprintf(outcome, sizeof(outcome), "unfinished: cannot_judge: %.900s", why);
	progress_sample(st->prog, agent_index(st, t->agent), t->ref, t->sample, outcome, best, 0);
}

/* After an agent returned: ended, stopped, ended by an LLM failure that asking again cannot fix, or
 * left unfinished (an endpoint that gave no answer; --resume asks again). A harness failure stops the run. */
static void sample_done(struct run_state *st, struct agent_session *s, int rc, struct sb_error *err)
{
	const struct agent_task *t = session_task(s);
	size_t ai = agent_index(st, t->agent);
	enum llm_errkind k = session_llm_failure(s);
	char outcome[SB_ERR_MAX + 64];
	int ended = 0;
	if (rc == 0) {
		size_t n;
		session_attempts(s, &n);
		snprintf(outcome, sizeof(outcome), "stop: %s, %zu attempts, %d LLM calls", session_stop_reason(s), n,
			 session_calls(s));
		ended = 1;
	} else if (rc == AGENT_ESTOPPED) {
		snprintf(outcome, sizeof(outcome), "stopped before it ended; --resume continues it");
	} else if (k == LLM_OK && session_eval_failure(s) == SB_EINPUT) {
		sample_ref_failed(st, t, err->msg, 1, sample_best(s));
		return;
	} else if (k == LLM_OK && session_eval_failure(s) == SB_EENV) {
		sample_cannot_judge(st, t, err->msg, sample_best(s));
		return;
	} else if (k != LLM_OK && !session_llm_kind_retryable(k)) {
		struct sb_error ferr;
		session_note(s, "ended by an LLM failure: %s", err->msg);
		if (session_finish(s, "llm_error", &ferr) == 0) {
			snprintf(outcome, sizeof(outcome), "llm_error: %.900s", err->msg);
			ended = 1;
		} else {
			snprintf(outcome, sizeof(outcome), "unfinished: %.900s", ferr.msg);
		}
	} else if (k != LLM_OK) {
		snprintf(outcome, sizeof(outcome), "unfinished: the LLM gave no answer (%s): %.900s; --resume asks again",
			 llm_errkind_name(k), err->msg);
	} else {
		snprintf(outcome, sizeof(outcome), "unfinished: %.900s", err->msg);
	}
	if (ended) { /* a record of an earlier reference failure no longer holds */
		struct sb_error serr;
		pthread_mutex_lock(&st->sh.store_mu);
		if (store_clear_reference_failure(st->sh.store, t->agent->name, t->ref, t->sample, &serr))
			session_note(s, "cannot forget an earlier reference failure: %s", serr.msg);
		pthread_mutex_unlock(&st->sh.store_mu);
	}
	pthread_mutex_lock(&st->mu);
	if (ended)
		st->finished++;
	else
		st->unfinished++;
	st->llm_failed += k != LLM_OK;
	if (rc && rc != AGENT_ESTOPPED && k == LLM_OK && !st->fatal_rc) {
		/* not the agent's fault nor the endpoint's: every other sample would fail alike */
		st->fatal_rc = rc;
		st->fatal = *err;
		atomic_fetch_or(st->rq->stop, RUN_STOP_FATAL);
	}
	pthread_mutex_unlock(&st->mu);
	progress_sample(st->prog, ai, t->ref, t->sample, outcome, sample_best(s), ended);
}

struct sample_worker {
	struct run_state *st;
	size_t k; /* its entry in st->running */
};

static void *sample_thread(void *arg)
{
	struct sample_worker *w = arg;
	struct run_state *st = w->st;
	for (;;) {
		pthread_mutex_lock(&st->mu);
		int stop = atomic_load(st->rq->stop) != 0;
		size_t i = st->next;
		if (!stop && i < st->ntasks)
			st->next++;
		const char *bad = !stop && i < st->ntasks ? badref_why(st, st->tasks[i].problem) : NULL;
		char *why = bad ? xstrdup(bad) : NULL;
		if (!stop && i < st->ntasks && !why)
			st->running[w->k] = &st->tasks[i];
		pthread_mutex_unlock(&st->mu);
		if (stop || i >= st->ntasks)
			return NULL;
		if (why) { /* the same reference would fail again: its LLM calls would be spent for nothing */
			sample_ref_failed(st, &st->tasks[i], why, 0, NAN);
			free(why);
			continue;
		}
		struct agent_session *s = session_new(&st->sh, &st->tasks[i]);
		struct sb_error err = { 0 };
		int rc = st->tasks[i].kind->run(s, &err);
		sample_done(st, s, rc, &err);
		session_free(s);
		pthread_mutex_lock(&st->mu);
		st->running[w->k] = NULL;
		pthread_mutex_unlock(&st->mu);
	}
}

/* Evaluations on the run's device slots now. */
static int evaluations_running(struct run_state *st)
{
	struct sched_stats s = { 0 };
	pthread_mutex_lock(&st->sh.sched_mu);
	if (st->sh.sched)
		sched_stats(st->sh.sched, &s);
	pthread_mutex_unlock(&st->sh.sched_mu);
	return (int)s.running;
}

/* What a stopping run still waits for: "stopping: waiting for 1 evaluation to end (...) and 1 LLM call to
 * answer (...); samples at work: one L1/2 s0, one L1/2 s3". The counts are the run's; which sample holds
 * which is the session's alone to know, so the samples still at work are listed together. */
static void stopping_text(struct run_state *st, int stop, struct strbuf *out)
{
	int ev = evaluations_running(st), llm = atomic_load(&st->sh.llm_in_flight);
	struct strbuf who = STRBUF_INIT;
	size_t n = 0;
	pthread_mutex_lock(&st->mu);
	for (size_t k = 0; k < st->nrunning; k++) {
		const struct agent_task *t = st->running[k];
		if (t && ++n <= 6)
			strbuf_addf(&who, "%s%s %s s%d", n > 1 ? ", " : "", t->agent->name, t->ref, t->sample);
	}
	pthread_mutex_unlock(&st->mu);
	if (n > 6)
		strbuf_addf(&who, " and %zu more", n - 6);
	strbuf_addstr(out, "stopping: waiting for ");
	if (ev)
		strbuf_addf(out, "%d evaluation%s to end%s", ev, ev == 1 ? "" : "s",
			    stop & RUN_STOP_SIGNAL ? " (killed: --resume judges again)" : "");
	if (ev && llm)
		strbuf_addstr(out, " and ");
	if (llm)
		strbuf_addf(out, "%d LLM call%s to answer (kept for --resume)", llm, llm == 1 ? "" : "s");
	if (!ev && !llm)
		strbuf_addf(out, "%zu sample%s to end", n, n == 1 ? "" : "s");
	if (n)
		strbuf_addf(out, "; samples at work: %s", who.buf);
	strbuf_release(&who);
}

struct ticker {
	struct run_state *st;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

/* The progress line's clock. Once the run stops it also says what the run waits for, and after Ctrl-C it
 * kills every process below the run on each tick: the workers of the evaluations in flight (and any an
 * evaluation starts while it ends) and builds. An evaluation can last minutes, and its workers do not see
 * the Ctrl-C (each runs in a session of its own); what it would have found is judged again on --resume.
 * The fork server (harness/worker/template.py, evalenv.c) is spared: it only forks, and killed it would
 * be reported as a failure; the evaluation environment stops it at the end. */
static void *tick_thread(void *arg)
{
	struct ticker *tk = arg;
	struct run_state *st = tk->st;
	char *fork_server = xstrfmt("%s/harness/worker/template.py", st->env.home ? st->env.home : st->rq->ctx->home);
	pthread_mutex_lock(&tk->mu);
	while (!tk->done) {
		int stop = atomic_load(st->rq->stop);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (stop ? 200 : 500) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&tk->cv, &tk->mu, &ts);
		if (tk->done)
			break;
		stop = atomic_load(st->rq->stop);
		if (stop) { /* said before the kill, so that the line names the evaluations it ends */
			struct strbuf sb = STRBUF_INIT;
			stopping_text(st, stop, &sb);
			progress_stopping(st->prog, sb.buf);
			strbuf_release(&sb);
		} else {
			progress_tick(st->prog, evaluations_running(st), atomic_load(&st->sh.llm_in_flight));
		}
		if (stop & RUN_STOP_SIGNAL)
			halt_descendants(fork_server);
	}
	pthread_mutex_unlock(&tk->mu);
	free(fork_server);
	return NULL;
}

static int thread_count(const struct run_state *st)
{
	if (st->rq->jobs > 0)
		return st->rq->jobs;
	/* one sample per device slot preparing or evaluating beside those waiting on the LLM */
	int n = st->nslots > 0 ? st->nslots : 1;
	for (size_t i = 0; i < st->nclients; i++)
		n += st->client_models[i]->max_concurrent;
	return n;
}

static void shared_init(struct run_state *st)
{
	const struct config *cfg = st->rq->cfg;
	st->refcfg = *cfg;
	st->refcfg.checks.static_checks = 0;
	for (int i = 0; i < SB_HACK_IDS; i++)
		st->refcfg.checks.policy[i] = POLICY_FLAG;
	struct run_shared *sh = &st->sh;
	sh->home = st->rq->ctx->home;
	sh->cfg = cfg;
	sh->cfg_reference = &st->refcfg;
	sh->env = &st->env;
	sh->hw = &st->hw;
	sh->judge = &st->judge;
	pthread_mutex_init(&sh->store_mu, NULL);
	pthread_mutex_init(&sh->sched_mu, NULL);
	sh->stop = st->rq->stop;
	sh->on_attempt = on_attempt;
	sh->on_arg = st;
	pthread_mutex_init(&st->mu, NULL);
}

static void state_release(struct run_state *st)
{
	for (size_t i = 0; i < st->nclients; i++)
		llm_client_free(st->clients[i]);
	free(st->clients);
	free(st->client_models);
	judge_close(&st->judge);
	store_close(st->sh.store);
	if (st->env_ready)
		eval_env_release(&st->env);
	eval_claim_release(&st->claim);
	lockfile_release(&st->lock);
	strbuf_release(&st->notes);
	free(st->agents);
	free(st->problems);
	free(st->tasks);
	free(st->skipped);
	free(st->seed_best);
	free(st->running);
	for (size_t i = 0; i < st->nbadref; i++)
		free(st->badref[i].why);
	free(st->badref);
	progress_free(st->prog);
	if (st->logfile)
		fclose(st->logfile);
	pthread_mutex_destroy(&st->sh.store_mu);
	sched_stop(st->sh.sched);
	st->sh.sched = NULL;
	pthread_mutex_destroy(&st->sh.sched_mu);
	free(st->gpu_envs);
	pthread_mutex_destroy(&st->mu);
}

/* "device cpu" or "3 GPU slots: cuda:0, cuda:1, cuda:3". */
static void slots_text(const struct run_state *st, char *out, size_t cap)
{
	if (!st->gpu_envs) {
		snprintf(out, cap, "device %s", st->env.device);
		return;
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%d GPU slot%s:", st->nslots, st->nslots == 1 ? "" : "s");
	for (int i = 0; i < st->nslots; i++)
		strbuf_addf(&sb, "%s %s", i ? "," : "", st->gpu_envs[i].device);
	snprintf(out, cap, "%s", sb.buf);
	strbuf_release(&sb);
}

/* One line per agent this environment cannot run, whatever its number of samples: the reason is the
 * environment's, so repeating it per problem would only bury it. Skipped samples are ended, not failed:
 * they leave the exit code alone. */
static void log_unavailable(struct run_state *st)
{
	for (size_t i = 0; i < st->nagents; i++) {
		if (!st->agents[i].unavailable)
			continue;
		size_t n = 0;
		for (size_t k = 0; k < st->nskipped; k++)
			n += st->skipped[k].agent == st->agents[i].cfg;
		if (!n) /* a resume: the session that ended them said so */
			continue;
		progress_line(st->prog, "%s: skipped: %s; %zu sample%s ended as \"unavailable\" with no attempts, and "
			      "metrics show the agent as unavailable, not as 0%%", st->agents[i].cfg->name,
			      st->agents[i].unavailable, n, n == 1 ? "" : "s");
	}
}

/* RUN/complete: what `scripts/slurm/submit.sh` reads to skip a shard on re-submission. A failure to
 * write it only costs a re-run that finds every sample ended, so it is not an error. */
static void mark_complete(const char *path, size_t samples)
{
	char text[64];
	int n = snprintf(text, sizeof(text), "%zu samples ended\n", samples);
	fs_write_atomic(path, text, (size_t)n);
}

int run_execute(const struct run_request *rq, struct run_result *r, struct sb_error *err)
{
	struct run_state st;
	memset(&st, 0, sizeof(st));
	memset(r, 0, sizeof(*r));
	st.lock.fd = st.claim.owner.fd = -1;
	strbuf_init(&st.notes, 0);
	st.rq = rq;
	shared_init(&st);
	int rc = run_setup(&st, err);
	if (rc) {
		r->run_dir = st.run_dir;
		state_release(&st);
		return rc;
	}
	st.sh.run_dir = st.run_dir;
	/* the evaluation queue: one evaluator per device slot, builders ahead of them; a Ctrl-C's evaluations
	 * in flight are killed (tick_thread) and their outcome dropped */
	static const struct sched_ops run_ops = { NULL, NULL, NULL };
	struct sched_opts so = { .ctx = rq->ctx, .cfg = rq->cfg, .envs = st.gpu_envs ? st.gpu_envs : &st.env,
				 .nenvs = st.gpu_envs ? st.nslots : 1, .lock = &st.sh.sched_mu, .ops = &run_ops,
				 .stop = rq->stop, .kill_bits = RUN_STOP_SIGNAL };
	if (!(st.sh.sched = sched_start(&so, err))) {
		r->run_dir = st.run_dir;
		st.run_dir = NULL;
		state_release(&st);
		return SB_EINTERNAL;
	}
	char *complete = xstrfmt("%s/%s", st.run_dir, RUN_COMPLETE_FILE);
	unlink(complete); /* this process may add samples or fail: only its own end says complete again */
	size_t skipped = 0;
	if ((rc = run_end_skipped(&st, &skipped, err)) != 0) {
		free(complete);
		r->run_dir = st.run_dir;
		st.run_dir = NULL;
		state_release(&st);
		return rc;
	}
	char *log_path = xstrfmt("%s/run.log", st.run_dir);
	st.logfile = fopen(log_path, "a");
	free(log_path);
	int tty = isatty(2) && !rq->ctx->quiet;
	const char **names = xcalloc(st.nagents ? st.nagents : 1, sizeof(*names));
	for (size_t i = 0; i < st.nagents; i++)
		names[i] = st.agents[i].cfg->name;
	st.prog = progress_new(tty ? stderr : NULL, !tty && !rq->ctx->quiet ? stderr : NULL, st.logfile, names,
			       st.nagents, st.nsamples, st.finished_before + skipped);
	for (size_t i = 0; i < st.nseed; i++)
		progress_seed_best(st.prog, st.seed_best[i].agent, st.seed_best[i].best);
	char shard[32] = "", devices[256];
	if (st.shard.count > 0)
		snprintf(shard, sizeof(shard), ", shard %d/%d", st.shard.index, st.shard.count);
	slots_text(&st, devices, sizeof(devices));
	progress_line(st.prog, "run %s in %s: %zu samples (%zu agents x %zu problems%s), %zu ended earlier; %s", st.run_id,
		      st.run_dir, st.nsamples, st.nagents, st.nproblems, shard, st.finished_before, devices);
	if (st.store_new)
		progress_line(st.prog, "%s/%s was missing or empty: a new one is made, and every sample it does not hold "
			      "runs again", st.run_dir, STORE_FILE);
	if (st.rerun)
		progress_line(st.prog, "%zu sample%s whose summary.json says ended but whose attempts %s lacks run again: "
			      "recorded LLM calls are served from the transcripts, the candidates are judged again", st.rerun,
			      st.rerun == 1 ? "" : "s", STORE_FILE);
	log_unavailable(&st);
	for (const char *p = st.notes.buf; *p;) {
		size_t len = strcspn(p, "\n");
		progress_line(st.prog, "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
	}

	int nthreads = thread_count(&st);
	if ((size_t)nthreads > st.ntasks)
		nthreads = (int)st.ntasks;
	pthread_t *th = xcalloc((size_t)(nthreads ? nthreads : 1), sizeof(*th));
	struct sample_worker *workers = xcalloc((size_t)(nthreads ? nthreads : 1), sizeof(*workers));
	st.running = xcalloc((size_t)(nthreads ? nthreads : 1), sizeof(*st.running));
	st.nrunning = (size_t)nthreads;
	struct ticker tk = { &st, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
	pthread_t ticker;
	pthread_create(&ticker, NULL, tick_thread, &tk);
	for (int i = 0; i < nthreads; i++) {
		workers[i] = (struct sample_worker){ &st, (size_t)i };
		pthread_create(&th[i], NULL, sample_thread, &workers[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	sched_stop(st.sh.sched); /* no session waits on it any more */
	st.sh.sched = NULL;
	pthread_mutex_lock(&tk.mu);
	tk.done = 1;
	pthread_cond_signal(&tk.cv);
	pthread_mutex_unlock(&tk.mu);
	pthread_join(ticker, NULL);
	free(th);
	free(workers);

	struct progress_counts c;
	progress_counts(st.prog, &c);
	size_t never_started = st.ntasks - st.next;
	r->stopped = atomic_load(rq->stop) && (never_started || st.unfinished);
	snprintf(r->run_id, sizeof(r->run_id), "%s", st.run_id);
	r->samples = st.nsamples;
	r->finished = st.finished_before + st.finished + skipped;
	r->unavailable = skipped;
	r->unfinished = st.unfinished + never_started;
	r->llm_failed = st.llm_failed;
	r->attempts = c.attempts;
	r->pass = c.pass;
	r->outside = st.outside;
	r->ref_failed = st.ref_failed;
	char unavail[48] = "";
	if (skipped)
		snprintf(unavail, sizeof(unavail), " (%zu unavailable)", skipped);
	struct strbuf why = STRBUF_INIT;
	for (size_t i = 0; i < st.nbadref; i++)
		strbuf_addf(&why, "%sL%d/%d", i ? ", " : "", st.badref[i].problem->level, st.badref[i].problem->id);
	if (st.nbadref)
		r->ref_failed_problems = xstrdup(why.buf);
	strbuf_reset(&why);
	if (st.ref_failed)
		strbuf_addf(&why, " (%zu because the reference of %s failed)", st.ref_failed, r->ref_failed_problems);
	if (st.cannot_judge)
		strbuf_addf(&why, " (%zu with an attempt this machine cannot judge: cannot_judge)", st.cannot_judge);
	progress_line(st.prog, "%s: %zu of %zu samples ended%s, %zu unfinished%s; %zu attempts in this session, %zu pass",
		      r->stopped ? "stopped" : "finished", r->finished, r->samples, unavail, r->unfinished, why.buf, c.attempts,
		      c.pass);
	strbuf_release(&why);
	if (st.outside)
		progress_line(st.prog, "the run is not complete: %zu of its samples outside this selection (--agents, "
			      "--problems, --samples) have not ended; 'stitchbench run --resume %s' continues them",
			      st.outside, st.run_dir);
	progress_end(st.prog);
	rc = st.fatal_rc;
	if (rc)
		*err = st.fatal;
	else if (!r->unfinished && !st.outside)
		mark_complete(complete, r->samples);
	free(complete);
	r->run_dir = st.run_dir;
	st.run_dir = NULL;
	free(names);
	state_release(&st);
	return rc;
}
