/* run_setup.c - what a run decides before its first sample: which agents, problems and samples (from the
 * command line, the configuration, or on resume the run's own run.json), the run directory, its
 * hardware.json, one LLM client per model, and the samples that already ended. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../agents/session.h"
#include "../core/fs.h"
#include "../llm/transcript.h"
#include "../profile/session.h"
#include "../store/store.h"
#include "../sched/gpus.h"
#include "run_int.h"

char *run_dir_for(const char *output_dir, const char *run)
{
	struct stat st;
	char *probe = xstrfmt("%s/%s", run, RUN_FILE);
	int is_dir = stat(probe, &st) == 0;
	free(probe);
	if (is_dir || strchr(run, '/'))
		return xstrdup(run);
	return xstrfmt("%s/%s", output_dir, run);
}

static void push_strings(json_t *array, struct strvec *out)
{
	json_t *v;
	size_t i;
	json_array_foreach(array, i, v)
		strvec_push(out, json_string_value(v) ?: "");
}

/* The selection a resumed run keeps unless the command line gives another. */
static json_t *load_run_json(const char *dir, struct sb_error *err)
{
	char *path = xstrfmt("%s/%s", dir, RUN_FILE);
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	if (!j)
		sb_error_set(err, SB_EINPUT, "%s: %s; is %s a run directory made by 'stitchbench run'?", path, jerr.text, dir);
	free(path);
	return j;
}

static int select_agents(struct run_state *st, json_t *saved, struct sb_error *err)
{
	const struct run_request *rq = st->rq;
	const struct config *cfg = rq->cfg;
	struct strvec names = STRVEC_INIT;
	for (size_t i = 0; i < rq->agents.nr; i++)
		strvec_push(&names, rq->agents.v[i]);
	if (!names.nr && saved)
		push_strings(json_object_get(saved, "agents"), &names);
	if (!names.nr)
		for (size_t i = 0; i < cfg->nagents; i++)
			strvec_push(&names, cfg->agents[i].name);
	if (!names.nr) {
		strvec_clear(&names);
		return sb_error_set(err, SB_EINPUT, "%s: no agents: add an agents: list (docs/config.md)",
				    cfg->path ? cfg->path : "the configuration");
	}
	st->agents = xcalloc(names.nr, sizeof(*st->agents));
	for (size_t i = 0; i < names.nr; i++) {
		const struct agent_cfg *a = NULL;
		for (size_t j = 0; j < cfg->nagents && !a; j++)
			if (!strcmp(cfg->agents[j].name, names.v[i]))
				a = &cfg->agents[j];
		if (!a) {
			struct strbuf known = STRBUF_INIT;
			for (size_t j = 0; j < cfg->nagents; j++)
				strbuf_addf(&known, "%s%s", j ? ", " : "", cfg->agents[j].name);
			sb_error_set(err, SB_EINPUT, "--agents: no agent named '%s' in %s (agents: %s)", names.v[i],
				     cfg->path ? cfg->path : "the configuration", known.len ? known.buf : "none");
			strbuf_release(&known);
			strvec_clear(&names);
			return SB_EINPUT;
		}
		struct run_agent *ra = &st->agents[st->nagents++];
		ra->cfg = a;
		ra->kind = agent_kind_find(a->kind);
		ra->samples = rq->samples > 0 ? rq->samples : a->samples;
		json_t *saved_n = json_object_get(json_object_get(saved, "samples"), a->name);
		if (rq->samples <= 0 && json_is_integer(saved_n))
			ra->samples = (int)json_integer_value(saved_n);
		if (!ra->kind) {
			strvec_clear(&names);
			return sb_error_set(err, SB_EINPUT, "agent %s: kind '%s' is not built into this stitchbench", a->name,
					    a->kind);
		}
	}
	strvec_clear(&names);
	return 0;
}

static int select_problems(struct run_state *st, json_t *saved, struct sb_error *err)
{
	const struct run_request *rq = st->rq;
	static const int all_levels[4] = { 1, 1, 1, 1 };
	struct strvec sel = STRVEC_INIT;
	const int *levels = all_levels;
	for (size_t i = 0; i < rq->problems.nr; i++)
		strvec_push(&sel, rq->problems.v[i]);
	if (!sel.nr && saved)
		push_strings(json_object_get(saved, "problems"), &sel);
	if (!sel.nr) {
		/* the configuration's own selection, under its levels */
		for (size_t i = 0; i < rq->cfg->problems.nselect; i++)
			strvec_push(&sel, rq->cfg->problems.select[i]);
		levels = rq->cfg->problems.levels;
	}
	int rc = suite_select(rq->suite, levels, (char *const *)sel.v, sel.nr, &st->problems, &st->nproblems, err);
	strvec_clear(&sel);
	if (!rc && !st->nproblems)
		rc = sb_error_set(err, SB_EINPUT, "no problems selected in %s", rq->suite->root);
	if (rc)
		sb_error_prefix(err, "selecting problems");
	return rc;
}

/* Adds s to the JSON array of strings a unless it is there. */
static void add_unique(json_t *a, const char *s)
{
	json_t *v;
	size_t i;
	json_array_foreach(a, i, v)
		if (!strcmp(json_string_value(v) ?: "", s))
			return;
	json_array_append_new(a, json_string(s));
}

/* run.json: the selection (agents, problems, samples per agent; a resume that adds some extends it) and
 * one entry per process that worked on the run. */
static int write_run_json(struct run_state *st, json_t *saved, json_t **merged, struct sb_error *err)
{
	char now[32];
	transcript_timestamp(now);
	json_t *j = saved ? json_incref(saved)
			  : json_pack("{s:s, s:s, s:s, s:s, s:[], s:[], s:{}, s:[]}", "format", "stitchbench-run/1", "run_id",
				      st->run_id, "created", now, "stitchbench", SB_VERSION " (" SB_GIT ")", "agents", "problems",
				      "samples", "sessions");
	if (!saved && st->shard.count > 0) {
		char text[32];
		shard_text(&st->shard, text, sizeof(text));
		json_object_set_new(j, "shard", json_string(text));
	}
	for (size_t i = 0; i < st->nagents; i++) {
		/* a resume with fewer --samples works on fewer; the run keeps the ones it has */
		json_t *had = json_object_get(json_object_get(j, "samples"), st->agents[i].cfg->name);
		int n = st->agents[i].samples;
		if (json_is_integer(had) && json_integer_value(had) > n)
			n = (int)json_integer_value(had);
		add_unique(json_object_get(j, "agents"), st->agents[i].cfg->name);
		json_object_set_new(json_object_get(j, "samples"), st->agents[i].cfg->name, json_integer(n));
	}
	for (size_t i = 0; i < st->nproblems; i++) {
		char ref[16];
		snprintf(ref, sizeof(ref), "L%d/%d", st->problems[i]->level, st->problems[i]->id);
		add_unique(json_object_get(j, "problems"), ref);
	}
	json_array_append_new(json_object_get(j, "sessions"),
			      json_pack("{s:s, s:b, s:i, s:s}", "started", now, "resumed", st->rq->resume, "pid",
					(int)getpid(), "stitchbench", SB_VERSION " (" SB_GIT ")"));
	char *path = xstrfmt("%s/%s", st->run_dir, RUN_FILE);
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int rc = fs_write_atomic(path, text, strlen(text));
	if (rc)
		sb_error_set(err, SB_EIO, "cannot write %s: %s", path, strerror(-rc));
	free(text);
	free(path);
	*merged = j;
	return rc ? SB_EIO : 0;
}

static int write_hardware(struct run_state *st, struct sb_error *err)
{
	char *path = xstrfmt("%s/hardware.json", st->run_dir);
	struct stat sb;
	int rc = 0;
	if (stat(path, &sb) != 0) {
		json_t *j = json_pack("{s:o, s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "context", hw_context_json(&st->hw),
				      "evaluator", "device", st->env.device, "python", st->env.python, "python_version",
				      st->env.python_version, "torch", st->env.torch, "torch_cuda", st->env.torch_cuda,
				      "cache", st->env.cache_root);
		char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if ((rc = fs_write_atomic(path, text, strlen(text))))
			sb_error_set(err, SB_EIO, "cannot write %s: %s", path, strerror(-rc));
		free(text);
		json_decref(j);
	}
	free(path);
	return rc ? SB_EIO : 0;
}

static void generated_id(const struct config *cfg, char *out, size_t cap)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	const char *name = cfg->name && *cfg->name ? cfg->name : "run";
	snprintf(out, cap, "%s-%s", name, stamp);
	for (char *p = out; *p; p++)
		if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			*p = '_';
}

/* The store of a resumed run is the truth of what ended: one that is missing or empty is made anew,
 * and the samples it does not hold run again (sample_ended); one that cannot be read stops the resume
 * with a way forward, since samples cannot be judged ended or not without it. */
static int check_store(struct run_state *st, struct sb_error *err)
{
	struct stat sb;
	char *db = xstrfmt("%s/%s", st->run_dir, STORE_FILE);
	st->store_new = st->store_new || (stat(db, &sb) == 0 && sb.st_size == 0);
	int damaged = store_health(db, err);
	if (!damaged) {
		free(db);
		return 0;
	}
	char what[SB_ERR_MAX], *complete = xstrfmt("%s/%s", st->run_dir, RUN_COMPLETE_FILE);
	snprintf(what, sizeof(what), "%s", err->msg);
	unlink(complete); /* what the run holds is not all readable: submit.sh must not skip it */
	free(complete);
	sb_error_set(err, SB_EINPUT, "--resume %s: %s; move it aside (mkdir %s/damaged && mv %s* %s/damaged/) and resume "
		     "again: the samples it held run again, every LLM call the run recorded served from its transcripts "
		     "and every candidate judged again", st->run_id, what, st->run_dir, db, st->run_dir);
	free(db);
	return SB_EINPUT;
}

/* The run directory: a new one must not hold a store yet; a resumed one must hold run.json. */
static int locate(struct run_state *st, struct sb_error *err)
{
	const struct run_request *rq = st->rq;
	const char *id = rq->run_id ? rq->run_id : rq->cfg->output.run_id;
	struct stat sb;
	if (rq->resume) {
		st->run_dir = run_dir_for(rq->cfg->output.dir, id);
		const char *base = strrchr(st->run_dir, '/');
		snprintf(st->run_id, sizeof(st->run_id), "%s", base ? base + 1 : st->run_dir);
	} else {
		if (id)
			snprintf(st->run_id, sizeof(st->run_id), "%s", id);
		else if (st->shard.count > 0) /* every shard must find the same base without talking to the others */
			snprintf(st->run_id, sizeof(st->run_id), "%s", rq->cfg->name && *rq->cfg->name ? rq->cfg->name : "run");
		else
			generated_id(rq->cfg, st->run_id, sizeof(st->run_id));
		if (st->shard.count > 0) {
			char base[128];
			snprintf(base, sizeof(base), "%s", st->run_id);
			shard_run_id(&st->shard, base, st->run_id, sizeof(st->run_id));
		}
		st->run_dir = xstrfmt("%s/%s", rq->cfg->output.dir, st->run_id);
	}
	int rc = run_id_check(st->run_id, err);
	if (rc)
		return rc;
	char *db = xstrfmt("%s/%s", st->run_dir, STORE_FILE), *rj = xstrfmt("%s/%s", st->run_dir, RUN_FILE);
	int exists = stat(db, &sb) == 0, begun = stat(rj, &sb) == 0;
	free(rj);
	if (rq->resume && !exists && !begun)
		rc = sb_error_set(err, SB_EINPUT, "--resume %s: %s holds no %s nor %s; start it with 'stitchbench run' first",
				  id, st->run_dir, STORE_FILE, RUN_FILE);
	else if (!rq->resume && (exists || begun))
		rc = sb_error_set(err, SB_EINPUT, "run %s exists in %s; continue it with --resume %s, or choose another "
				  "--run-id", st->run_id, st->run_dir, st->run_id);
	st->store_new = !exists;
	free(db);
	return rc;
}

static int open_clients(struct run_state *st, struct sb_error *err)
{
	struct llm_opts o = LLM_OPTS_INIT;
	for (size_t i = 0; i < st->nagents; i++) {
		struct run_agent *ra = &st->agents[i];
		if (!ra->kind->uses_llm)
			continue;
		const struct model_cfg *m = config_find_model(st->rq->cfg, ra->cfg->model);
		for (size_t k = 0; k < st->nclients && !ra->llm; k++)
			if (st->client_models[k] == m)
				ra->llm = st->clients[k];
		if (ra->llm)
			continue;
		st->clients = xrealloc(st->clients, (st->nclients + 1) * sizeof(*st->clients));
		st->client_models = xrealloc(st->client_models, (st->nclients + 1) * sizeof(*st->client_models));
		int rc = llm_client_new(m, st->run_dir, &o, &st->clients[st->nclients], err);
		if (rc) {
			sb_error_prefix(err, "agent %s", ra->cfg->name);
			return rc;
		}
		st->client_models[st->nclients] = m;
		ra->llm = st->clients[st->nclients++];
	}
	return 0;
}

/* An agent this environment cannot run at all is decided here, once, from what the probe found (not
 * from a candidate failing per problem, which would read as an agent that scored 0%). */
static void mark_unavailable(struct run_state *st)
{
	for (size_t i = 0; i < st->nagents; i++)
		if (st->agents[i].kind->needs_compile && !st->env.compile_available)
			st->agents[i].unavailable = st->env.compile_missing;
}

static int register_all(struct run_state *st, struct sb_error *err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < st->nagents; i++) {
		const struct agent_cfg *a = st->agents[i].cfg;
		rc = store_add_agent(st->sh.store, a->name, a->kind, st->agents[i].kind->uses_llm ? a->model : NULL, err);
		if (!rc && st->agents[i].unavailable)
			rc = store_put_unavailable(st->sh.store, a->name, st->agents[i].unavailable, err);
	}
	for (size_t i = 0; !rc && i < st->nproblems; i++) {
		const struct problem *p = st->problems[i];
		char ref[16];
		snprintf(ref, sizeof(ref), "L%d/%d", p->level, p->id);
		rc = store_add_problem(st->sh.store, ref, p->name, p->sha256, err);
	}
	return rc;
}

/* Whether a sample ended: its summary.json exists (session_finish) and the store holds every attempt it
 * lists, since the store, not the summary, is what the numbers come from; an emptied or replaced store
 * makes the sample run again (*stale), its LLM calls served from the run's transcripts. best: the best
 * speedup the summary records (NAN when none). Returns 1 ended, 0 not, negative on a store error. */
static int sample_ended(struct run_state *st, const char *agent, const char *ref, int sample, double *best, int *stale,
			struct sb_error *err)
{
	char *root = xstrfmt("%s/samples", st->run_dir);
	char *p = transcript_path(root, agent, ref, sample, 0);
	strcpy(strrchr(p, '/') + 1, "summary.json");
	json_t *j = json_load_file(p, 0, NULL);
	free(p);
	free(root);
	*stale = 0;
	if (best) {
		json_t *b = json_object_get(json_object_get(j, "best"), "speedup_eager");
		*best = json_is_number(b) ? json_number_value(b) : NAN;
	}
	int listed = (int)json_integer_value(json_object_get(j, "attempts")), stored = 0, rc = 0;
	if (j && listed > 0 && (rc = store_count_attempts(st->sh.store, agent, ref, sample, &stored, err)) == 0)
		*stale = stored < listed;
	json_decref(j);
	return rc ? rc : j && !*stale;
}

/* The samples of the run's whole selection (run.json after this process joined it) that lie outside this
 * process's selection and have not ended: a narrowed resume (--agents, --problems, --samples) leaves
 * them waiting, so the run is not complete when it ends. */
static int count_outside(struct run_state *st, json_t *run, struct sb_error *err)
{
	static const int all_levels[4] = { 1, 1, 1, 1 };
	struct strvec sel = STRVEC_INIT;
	const struct problem **probs = NULL;
	size_t nprobs = 0;
	push_strings(json_object_get(run, "problems"), &sel);
	int rc = suite_select(st->rq->suite, all_levels, (char *const *)sel.v, sel.nr, &probs, &nprobs, err);
	strvec_clear(&sel);
	json_t *agents = json_object_get(run, "agents"), *samples = json_object_get(run, "samples"), *v;
	size_t i;
	for (size_t p = 0; !rc && p < nprobs; p++) {
		int mine = 0;
		for (size_t q = 0; q < st->nproblems && !mine; q++)
			mine = st->problems[q] == probs[p];
		char ref[16];
		snprintf(ref, sizeof(ref), "L%d/%d", probs[p]->level, probs[p]->id);
		json_array_foreach(agents, i, v) {
			const char *name = json_string_value(v) ?: "";
			int total = (int)json_integer_value(json_object_get(samples, name)), from = 0;
			for (size_t a = 0; mine && a < st->nagents; a++) /* samples 0..from-1 are this process's */
				if (!strcmp(st->agents[a].cfg->name, name))
					from = st->agents[a].samples < total ? st->agents[a].samples : total;
			for (int k = from; !rc && k < total; k++) {
				int stale, ended = sample_ended(st, name, ref, k, NULL, &stale, err);
				if (ended < 0)
					rc = ended;
				st->outside += ended == 0;
			}
		}
	}
	free(probs);
	return rc;
}

/* A resumed run keeps the shard its run.json records; its selection must stay as it was, since the
 * partition is taken over the selection's item order. */
static int resumed_shard(struct run_state *st, json_t *saved, struct sb_error *err)
{
	const struct run_request *rq = st->rq;
	const char *text = json_string_value(json_object_get(saved, "shard"));
	if (!text || !*text)
		return 0;
	int rc = shard_parse(text, &st->shard, err);
	if (rc) {
		sb_error_prefix(err, "%s/%s", st->run_dir, RUN_FILE);
		return rc;
	}
	if (rq->agents.nr || rq->problems.nr || rq->samples > 0)
		return sb_error_set(err, SB_EINPUT, "--resume %s: the run is shard %s, whose items depend on its selection; "
				    "drop --agents, --problems and --samples (start another sharded run for more work)",
				    st->run_id, text);
	return 0;
}

/* One process at a time on a run: two would judge the same samples at once and one's session would be
 * lost from run.json. Taken before the store is opened (on a resume before anything else is done);
 * held until the process ends. */
static int lock_run(struct run_state *st, struct sb_error *err)
{
	char held[512], *path = xstrfmt("%s/run.lock", st->run_dir);
	int rc = lockfile_take(&st->lock, path, 0, st->rq->resume ? "stitchbench run --resume" : "stitchbench run", held,
			       sizeof(held), err);
	free(path);
	if (rc == 1)
		rc = sb_error_set(err, SB_EINPUT, "run %s is in use by %s; wait for it to end, or stop it (Ctrl-C, or kill -INT "
				  "with that pid) and resume then", st->run_id, held);
	return rc;
}

/* The cache's owner lock and sweep, and a lock on each slot's GPU (eval/sweep.h). */
static int claim_cache(struct run_state *st, struct sb_error *err)
{
	int rc = eval_claim_begin(&st->claim, st->env.cache_root, err);
	if (!rc && st->claim.swept)
		strbuf_addf(&st->notes, "removed %zu work folders and temporary entries that ended processes left in %s\n",
			    st->claim.swept, st->env.cache_root);
	struct strbuf warn = STRBUF_INIT;
	for (int i = 0; !rc && i < (st->gpu_envs ? st->nslots : 1); i++)
		rc = eval_claim_device(&st->claim, st->env.cache_root, st->gpu_envs ? st->gpu_envs[i].device : st->env.device,
				       &warn, err);
	if (warn.len)
		strbuf_addf(&st->notes, "%s\n", warn.buf);
	strbuf_release(&warn);
	return rc;
}

int run_setup(struct run_state *st, struct sb_error *err)
{
	const struct run_request *rq = st->rq;
	json_t *saved = NULL;
	st->shard = rq->shard;
	int rc = locate(st, err);
	if (!rc && rq->resume) /* before anything else: a second process must not do any work */
		rc = lock_run(st, err);
	if (!rc && rq->resume)
		rc = check_store(st, err);
	if (!rc && rq->resume && !(saved = load_run_json(st->run_dir, err)))
		rc = SB_EINPUT;
	if (!rc && saved)
		rc = resumed_shard(st, saved, err);
	if (!rc)
		rc = select_agents(st, saved, err);
	if (!rc)
		rc = select_problems(st, saved, err);
	/* the LLM clients before anything else is done or made: a missing cassette or an unset API key
	 * variable must not leave a half-made run, nor wait for the Python probe to be found */
	if (!rc)
		rc = open_clients(st, err);
	if (!rc) /* likewise a missing rubric file; the judge's transcripts go to the run like the agents' */
		rc = judge_open(&st->judge, rq->cfg, rq->ctx->home, st->run_dir, err);
	if (!rc && (rc = eval_env_init(&st->env, rq->cfg, rq->ctx->home, err)) == 0) {
		st->env.profile = prof_candidate; /* copied into each GPU's environment (gpus_resolve) */
		st->env_ready = 1;
		mark_unavailable(st);
	}
	if (!rc && rq->gpus && (rc = gpus_resolve(rq->gpus, &st->env, rq->ctx->home, &st->gpu_envs, &st->nslots, err)) == 0)
		gpus_use_first(&st->env, &st->gpu_envs[0]);
	if (!rc)
		rc = claim_cache(st, err);
	if (!rc && !rq->resume) /* a new run's folder is made by rundir_open, just below */
		rc = lock_run(st, err);
	if (!rc) {
		struct store_run run;
		hw_context_fill(&st->hw, &st->env);
		store_run_from_config(&run, st->run_id, rq->cfg, st->env.device, st->env.gpu, st->env.sm, st->env.torch,
				      rq->suite->root);
		rc = rundir_open(&st->sh.store, st->run_dir, rq->cfg, &run, err);
		store_run_release(&run);
	}
	json_t *run = NULL;
	if (!rc)
		rc = write_run_json(st, saved, &run, err);
	if (!rc)
		rc = write_hardware(st, err);
	if (!rc)
		rc = register_all(st, err);
	if (!rc && rq->resume)
		rc = count_outside(st, run, err);
	json_decref(saved);
	json_decref(run);
	if (rc)
		return rc;

	/* the tasks, problem by problem so early results cover every agent; a shard keeps its own items of
	 * this order (shard.h) */
	size_t item = 0;
	for (size_t p = 0; p < st->nproblems; p++)
		for (size_t a = 0; a < st->nagents; a++)
			for (int k = 0; k < st->agents[a].samples; k++) {
				if (!shard_holds(&st->shard, item++))
					continue;
				struct agent_task t = { st->agents[a].cfg, st->agents[a].kind, st->agents[a].llm,
							st->agents[a].kind->uses_llm ? st->agents[a].cfg->model : NULL,
							st->problems[p], "", k };
				snprintf(t.ref, sizeof(t.ref), "L%d/%d", st->problems[p]->level, st->problems[p]->id);
				st->nsamples++;
				double best;
				int stale, ended = sample_ended(st, t.agent->name, t.ref, k, &best, &stale, err);
				if (ended < 0)
					return ended;
				st->rerun += stale;
				if (ended) {
					st->finished_before++;
					st->seed_best = xrealloc(st->seed_best, (st->nseed + 1) * sizeof(*st->seed_best));
					st->seed_best[st->nseed].agent = a;
					st->seed_best[st->nseed++].best = best;
					continue;
				}
				if (st->agents[a].unavailable) {
					st->skipped = xrealloc(st->skipped, (st->nskipped + 1) * sizeof(*st->skipped));
					st->skipped[st->nskipped++] = t;
					continue;
				}
				st->tasks = xrealloc(st->tasks, (st->ntasks + 1) * sizeof(*st->tasks));
				st->tasks[st->ntasks++] = t;
			}
	return 0;
}

int run_end_skipped(struct run_state *st, size_t *ended, struct sb_error *err)
{
	int rc = 0;
	*ended = 0;
	for (size_t a = 0; a < st->nagents; a++)
		for (size_t i = 0; !rc && st->agents[a].unavailable && i < st->nskipped; i++) {
			if (st->skipped[i].agent != st->agents[a].cfg)
				continue;
			struct agent_session *s = session_new(&st->sh, &st->skipped[i]);
			session_note(s, "not run: %s", st->agents[a].unavailable);
			if ((rc = session_finish(s, "unavailable", err)) == 0)
				(*ended)++;
			session_free(s);
		}
	return rc;
}
