/* kevin.c - Kevin-style multi-turn refinement: `trajectories` independent trajectories of `turns` turns
 * each. A trajectory's first turn is the plain problem; every later turn's prompt carries that
 * trajectory's earlier turns: the code, the evaluator's feedback (compile errors, the mismatch, the
 * speedup) and the model's own summary of what it did, its reasoning dropped. Older turns shrink to one
 * line, then drop out, so the history fits agents[].history_tokens. The sample stands for its best
 * correct attempt over all trajectories (docs/agents.md "kevin").
 *
 * Trajectories are interleaved turn by turn (turn 0 of each, then turn 1 of each, ...), so attempt
 * t * trajectories + j is turn t of trajectory j: the call and attempt numbering depends on nothing but
 * the configuration, a resumed sample retraces it, and a budget that runs out leaves every trajectory
 * equally deep. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/agents/extract.h"
#include "../harness/agents/session.h"
#include "../harness/core/fs.h"

#define KEVIN_SUMMARY_BYTES 600     /* the model's summary of one turn, as later turns see it */
#define KEVIN_LINE_BYTES 160        /* a summary shrunk to one line for an older turn */

/* One turn of one trajectory as later turns see it. */
struct kevin_turn {
	int attempt;                 /* the session's attempt index */
	char *summary;               /* the answer's prose: reasoning and code blocks dropped, bounded */
};

/* The prose of an answer: reasoning (<think>...</think>, or anything before a lone </think>) and fenced
 * blocks dropped, blank runs collapsed, at most KEVIN_SUMMARY_BYTES. Kevin keeps the model's summary of
 * its reasoning instead of the reasoning itself, which would outgrow any context in a few turns. */
static char *kevin_summary(const char *text)
{
	struct strbuf sb = STRBUF_INIT, answer = STRBUF_INIT;
	extract_answer(text ? text : "", &answer);
	const char *p = answer.buf;
	int fence = 0, blank = 1;
	while (*p && sb.len < KEVIN_SUMMARY_BYTES) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *s = p;
		while (len && isspace((unsigned char)*s))
			s++, len--;
		if (len >= 3 && !strncmp(s, "```", 3)) {
			fence = !fence;
		} else if (!fence && len) {
			strbuf_add(&sb, s, len);
			strbuf_addch(&sb, '\n');
			blank = 0;
		} else if (!fence && !blank) {
			strbuf_addch(&sb, '\n');
			blank = 1;
		}
		p = nl ? nl + 1 : p + strlen(p);
	}
	if (sb.len > KEVIN_SUMMARY_BYTES) {
		strbuf_setlen(&sb, KEVIN_SUMMARY_BYTES);
		strbuf_addstr(&sb, "...");
	}
	strbuf_release(&answer);
	strbuf_trim(&sb);
	if (!sb.len)
		strbuf_addstr(&sb, "(no summary given)");
	return strbuf_detach(&sb, NULL);
}

static void turn_head(const struct attempt *a, int turn, struct strbuf *out)
{
	strbuf_addf(out, "Turn %d (attempt %d): %s", turn + 1, a->index, a->status);
	if (isfinite(a->sum.speedup))
		strbuf_addf(out, ", %.3fx vs eager", a->sum.speedup);
}

static void turn_full(const struct attempt *a, int turn, const char *summary, struct strbuf *out)
{
	strbuf_addstr(out, "### ");
	turn_head(a, turn, out);
	strbuf_addf(out, "\nYour summary then:\n%s\n\n", summary);
	if (a->code)
		strbuf_addf(out, "Your code:\n```python\n%s```\n\n", a->code);
	else
		strbuf_addstr(out, "Your code: none could be read from the answer.\n\n");
	strbuf_addf(out, "The evaluator's feedback:\n%s\n", a->feedback);
}

static void turn_line(const struct attempt *a, int turn, const char *summary, struct strbuf *out)
{
	size_t n = strcspn(summary, "\n");
	strbuf_addstr(out, "- ");
	turn_head(a, turn, out);
	strbuf_addf(out, ": %.*s%s\n", (int)(n < KEVIN_LINE_BYTES ? n : KEVIN_LINE_BYTES), summary,
		    n > KEVIN_LINE_BYTES ? "..." : "");
}

/* The history of one trajectory for its next turn, within `budget` estimated tokens (bytes / 4, the
 * cassettes' estimate). The last turn is always whole: it is the code to revise and the feedback to act
 * on. Earlier turns go in whole from the newest back while they fit, then as one line each, then not at
 * all; an older turn never gets more room than a newer one, and the text says what was left out. */
static void kevin_history(const struct agent_session *s, const struct kevin_turn *turns, int n, long budget,
			  struct strbuf *out)
{
	size_t natt;
	const struct attempt *att = session_attempts(s, &natt);
	long left = budget * 4;
	struct strbuf *part = xcalloc((size_t)n, sizeof(*part));
	int mode = 0, lines = 0, dropped = 0; /* mode 0: whole, 1: one line, 2: left out */
	for (int k = n - 1; k >= 0; k--) {
		const struct attempt *a = &att[turns[k].attempt];
		strbuf_init(&part[k], 0);
		if (mode == 0)
			turn_full(a, k, turns[k].summary, &part[k]);
		if (k < n - 1 && mode == 0 && (long)part[k].len > left) {
			strbuf_reset(&part[k]);
			mode = 1;
		}
		if (mode == 1) {
			turn_line(a, k, turns[k].summary, &part[k]);
			if ((long)part[k].len > left) {
				strbuf_reset(&part[k]);
				mode = 2;
			} else {
				lines++;
			}
		}
		if (mode == 2)
			dropped++;
		left -= (long)part[k].len;
	}
	if (dropped)
		strbuf_addf(out, "(%d earlier turn%s left out to fit the context)\n", dropped, dropped > 1 ? "s" : "");
	if (lines)
		strbuf_addstr(out, "Earlier turns, one line each:\n");
	for (int k = 0, whole = 0; k < n; k++) {
		if (part[k].len && part[k].buf[0] == '#')
			strbuf_addstr(out, whole++ || lines ? "\n" : "");
		strbuf_add(out, part[k].buf, part[k].len);
		strbuf_release(&part[k]);
	}
	free(part);
}

/* samples/.../trajectories.json: which attempt is which turn of which trajectory, and the best. The
 * store keeps attempts by index only; this is where a reader finds the trajectories. */
static void kevin_keep(struct agent_session *s, const struct kevin_turn *all, int done, int ntraj, int nturns)
{
	size_t natt;
	const struct attempt *att = session_attempts(s, &natt);
	json_t *list = json_array(), *best = json_null();
	double best_sp = -INFINITY;
	for (int i = 0; i < done; i++) {
		const struct attempt *a = &att[all[i].attempt];
		json_array_append_new(list, json_pack("{s:i, s:i, s:i, s:s, s:o}", "attempt", a->index, "trajectory",
						      i % ntraj, "turn", i / ntraj, "status", a->status, "speedup_eager",
						      isfinite(a->sum.speedup) ? json_real(a->sum.speedup) : json_null()));
		double sp = isfinite(a->sum.speedup) ? a->sum.speedup : 0;
		if (a->sum.cls == CLASS_CORRECT && (json_is_null(best) || sp > best_sp)) {
			json_decref(best);
			best = json_pack("{s:i, s:i, s:i}", "attempt", a->index, "trajectory", i % ntraj, "turn", i / ntraj);
			best_sp = sp;
		}
	}
	json_t *j = json_pack("{s:i, s:i, s:o, s:o}", "trajectories", ntraj, "turns", nturns, "attempts", list, "best", best);
	char *path = session_path(s, "samples", "trajectories.json");
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text || fs_write_atomic(path, text, strlen(text)))
		session_note(s, "cannot write %s", path);
	free(text);
	free(path);
	json_decref(j);
}

static int kevin_turn(struct agent_session *s, const struct kevin_turn *all, int traj, int turn, int ntraj,
		      struct kevin_turn *out, struct sb_error *err)
{
	const struct agent_cfg *c = session_task(s)->agent;
	struct tvars v = TVARS_INIT;
	struct strbuf hist = STRBUF_INIT;
	struct llm_response r;
	const struct attempt *a;
	int rc;
	tvars_setf(&v, "trajectory", "%d", traj + 1);
	tvars_setf(&v, "trajectories", "%d", ntraj);
	tvars_setf(&v, "turn", "%d", turn + 1);
	tvars_setf(&v, "turns", "%d", c->turns);
	if (turn == 0) {
		rc = session_ask(s, "system", "kevin", &v, &r, NULL, err);
	} else {
		struct kevin_turn *mine = xcalloc((size_t)turn, sizeof(*mine));
		for (int k = 0; k < turn; k++)
			mine[k] = all[k * ntraj + traj];
		kevin_history(s, mine, turn, c->history_tokens, &hist);
		free(mine);
		tvars_set(&v, "history", hist.buf);
		rc = session_ask(s, "system", "kevin-refine", &v, &r, NULL, err);
	}
	if (!rc)
		rc = session_submit_answer(s, turn ? STAGE_REFINE : STAGE_ONESHOT, r.text, &a, err);
	if (!rc) {
		out->attempt = a->index;
		out->summary = kevin_summary(r.text);
	}
	llm_response_release(&r);
	strbuf_release(&hist);
	tvars_release(&v);
	return rc;
}

static int kevin_run(struct agent_session *s, struct sb_error *err)
{
	const struct agent_cfg *c = session_task(s)->agent;
	int ntraj = c->trajectories, nturns = c->turns, done = 0, rc = 0;
	struct stage_policy pol = session_policy(s);
	enum stop_reason stop = STOP_NONE;
	struct kevin_turn *all = xcalloc((size_t)ntraj * (size_t)nturns, sizeof(*all));
	/* the grid is the method: the target does not end it early; the token and wall-time budgets do */
	pol.max_attempts = ntraj * nturns;
	pol.target_speedup = INFINITY;
	for (int t = 0; !rc && stop == STOP_NONE && t < nturns; t++)
		for (int j = 0; j < ntraj; j++) {
			struct stage_input in = session_input(s, 0, 0);
			if ((stop = stage_should_stop(&pol, &in)) != STOP_NONE)
				break;
			if ((rc = kevin_turn(s, all, j, t, ntraj, &all[done], err)))
				break;
			done++;
			kevin_keep(s, all, done, ntraj, nturns);
		}
	for (int i = 0; i < done; i++)
		free(all[i].summary);
	free(all);
	return rc ? rc : session_finish(s, stop == STOP_NONE ? "attempts" : stop_reason_name(stop), err);
}

const struct agent_kind agent_kevin = { "kevin", 1, kevin_run, 0 };
