/* cudaforge.c - the CUDAForge baseline: two LLM roles in a loop over one candidate. The Coder writes a
 * file; the evaluator judges it; the Judge (its own call and templates) reads the verdict, the code and
 * the hardware metrics the verdict carries and answers with one instruction: a correction after a
 * failure, an optimisation after a pass, or stop when it sees nothing left to gain. The Coder applies
 * that instruction in the next round. It ends after max_rounds candidates, when the Judge says stop
 * after a pass, or when the token or wall-time budget is spent (docs/agents.md "cudaforge"). Every
 * decision is a function of the replayed answers and stored verdicts, so a resumed sample retraces it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/agents/extract.h"
#include "../harness/agents/session.h"
#include "../harness/core/fs.h"

/* What the Judge asked for. */
enum forge_action { FORGE_CORRECT, FORGE_OPTIMIZE, FORGE_STOP };

/* The Judge's answer as the Coder gets it. */
struct forge_advice {
	enum forge_action action;
	struct strbuf diagnosis;     /* the bottleneck or the cause of the failure, in the Judge's words */
	struct strbuf instruction;   /* the one change the Coder is to make */
	struct strbuf note;          /* what was wrong with the answer's form, when something was */
};

static const char *const action_names[] = { "correct", "optimize", "stop" };

/* Per-kernel hardware metrics the Judge is shown when a verdict's profile.kernels[] rows carry them.
 * The evaluator fills what it measures (the bound class, the limiter, the distance from the roofline,
 * throughputs as % of peak, occupancy); a field it does not measure is simply absent. A new field
 * plugs in here by its name, with nothing else to change. */
static const struct {
	const char *key, *label;
	int percent;                 /* a number shown with one decimal and a % sign */
} kernel_metrics[] = {
	{ "bound", "bound", 0 },
	{ "roofline_pct", "of roofline", 1 },
	{ "limiter", "limiter", 0 },
	{ "dram_pct", "DRAM throughput", 1 },
	{ "mem_pct", "memory throughput", 1 },
	{ "sm_pct", "SM throughput", 1 },
	{ "tensor_pct", "tensor pipes", 1 },
	{ "occupancy_pct", "achieved occupancy", 1 },
};

#define FORGE_MAX_KERNELS 5
#define FORGE_MAX_ANSWER 4000        /* an answer passed on as the instruction when it is not JSON */

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The kernels of a verdict's profile with every measured field, for the Judge's {{metrics}}. */
static void forge_metrics(const struct agent_session *s, json_t *verdict, struct strbuf *out)
{
	json_t *prof = json_object_get(verdict, "profile");
	json_t *kernels = json_object_get(prof, "kernels"), *k;
	size_t i;
	if (!json_array_size(kernels)) {
		if (!session_shared(s)->hw->gpu)
			strbuf_addstr(out, "None: this run is on the CPU, where no kernel is profiled. Judge from the verdict, "
					   "the timings and the code.\n");
		else if (json_is_object(prof) && json_string_value(json_object_get(prof, "reason")))
			strbuf_addf(out, "None: the profile is unavailable (%s).\n",
				    json_string_value(json_object_get(prof, "reason")));
		else
			strbuf_addstr(out, "None: only a candidate that passed is profiled, and this one was not.\n");
		return;
	}
	double ev = num(prof, "event_us"), ks = num(prof, "kernel_sum_us");
	if (isfinite(ev) && isfinite(ks))
		strbuf_addf(out, "Per call: %.1f us on the GPU clock, %.1f us of it in kernels.\n", ev, ks);
	json_array_foreach(kernels, i, k) {
		if (i >= FORGE_MAX_KERNELS) {
			strbuf_addf(out, "(%zu more kernels)\n", json_array_size(kernels) - i);
			break;
		}
		const char *lib = json_string_value(json_object_get(k, "library"));
		double share = num(k, "share"), mean = num(k, "mean_us");
		strbuf_addf(out, "- %.100s (%s)", json_string_value(json_object_get(k, "name")) ?: "?",
			    lib ? lib : json_is_true(json_object_get(k, "custom")) ? "custom" : "other");
		if (isfinite(share))
			strbuf_addf(out, ": %.1f%% of kernel time", 100 * share);
		if (json_is_integer(json_object_get(k, "calls")))
			strbuf_addf(out, ", %lld calls", (long long)json_integer_value(json_object_get(k, "calls")));
		if (isfinite(mean))
			strbuf_addf(out, ", %.2f us each", mean);
		json_t *grid = json_object_get(k, "grid"), *block = json_object_get(k, "block");
		if (json_array_size(grid) == 3 && json_array_size(block) == 3)
			strbuf_addf(out, ", grid %lldx%lldx%lld block %lldx%lldx%lld",
				    (long long)json_integer_value(json_array_get(grid, 0)),
				    (long long)json_integer_value(json_array_get(grid, 1)),
				    (long long)json_integer_value(json_array_get(grid, 2)),
				    (long long)json_integer_value(json_array_get(block, 0)),
				    (long long)json_integer_value(json_array_get(block, 1)),
				    (long long)json_integer_value(json_array_get(block, 2)));
		if (json_is_integer(json_object_get(k, "registers")))
			strbuf_addf(out, ", %lld registers", (long long)json_integer_value(json_object_get(k, "registers")));
		for (size_t m = 0; m < sizeof(kernel_metrics) / sizeof(kernel_metrics[0]); m++) {
			json_t *v = json_object_get(k, kernel_metrics[m].key);
			if (kernel_metrics[m].percent && json_is_number(v))
				strbuf_addf(out, ", %s %.1f%%", kernel_metrics[m].label, json_number_value(v));
			else if (!kernel_metrics[m].percent && json_is_string(v))
				strbuf_addf(out, ", %s: %.80s", kernel_metrics[m].label, json_string_value(v));
		}
		strbuf_addch(out, '\n');
	}
}

/* The Judge's JSON object (extract_json: reasoning dropped, a ```json block or the braces). */
static json_t *judge_object(const char *text, struct strbuf *why)
{
	json_t *j = extract_json(text, why);
	if (j && !json_is_object(j)) {
		strbuf_addstr(why, "the JSON is not an object");
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* Reads the Judge's answer. failed: the candidate it judged did not pass, and then only a correction
 * makes sense, whatever the Judge called it. An answer that is not the JSON asked for is still used:
 * its text becomes the instruction, so a model that ignores the format still steers the Coder. */
static void forge_advice_read(const char *text, int failed, struct forge_advice *adv)
{
	struct strbuf why = STRBUF_INIT;
	json_t *j = judge_object(text ? text : "", &why);
	const char *act = j ? json_string_value(json_object_get(j, "action")) : NULL;
	const char *ins = j ? json_string_value(json_object_get(j, "instruction")) : NULL;
	const char *dia = j ? json_string_value(json_object_get(j, "diagnosis")) : NULL;
	int k = -1;
	for (int i = 0; act && i < 3; i++)
		if (!strcmp(act, action_names[i]))
			k = i;
	adv->action = failed ? FORGE_CORRECT : FORGE_OPTIMIZE;
	if (!j) {
		strbuf_addf(&adv->note, "not the JSON asked for (%s): its text is the instruction", why.buf);
		struct strbuf answer = STRBUF_INIT;
		extract_answer(text ? text : "", &answer);
		strbuf_add(&adv->instruction, answer.buf, answer.len < FORGE_MAX_ANSWER ? answer.len : FORGE_MAX_ANSWER);
		strbuf_release(&answer);
	} else {
		if (k < 0)
			strbuf_addf(&adv->note, "action %s%s%s is none of correct, optimize, stop; taken as %s",
				    act ? "\"" : "", act ? act : "missing", act ? "\"" : "", action_names[adv->action]);
		else if (failed && k != FORGE_CORRECT)
			strbuf_addf(&adv->note, "action %s after a failed candidate; taken as correct", act);
		else
			adv->action = (enum forge_action)k;
		strbuf_addstr(&adv->instruction, ins ? ins : "");
		strbuf_addstr(&adv->diagnosis, dia ? dia : "");
	}
	strbuf_trim(&adv->instruction);
	if (!adv->instruction.len && adv->action != FORGE_STOP)
		strbuf_addstr(&adv->instruction, adv->action == FORGE_CORRECT
							  ? "(the Judge gave no instruction) Fix what the verdict reports."
							  : "(the Judge gave no instruction) Make it faster.");
	json_decref(j);
	strbuf_release(&why);
}

static void forge_advice_release(struct forge_advice *adv)
{
	strbuf_release(&adv->diagnosis);
	strbuf_release(&adv->instruction);
	strbuf_release(&adv->note);
}

/* samples/.../judge-NN.json: the Judge's reading of attempt `attempt`, kept beside the plans of other
 * agents so that a reader of a run sees every instruction the Coder got. */
static void forge_keep(struct agent_session *s, int attempt, const struct forge_advice *adv)
{
	char name[32];
	snprintf(name, sizeof(name), "judge-%02d.json", attempt);
	char *path = session_path(s, "samples", name);
	json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s?}", "attempt", attempt, "action", action_names[adv->action],
			      "diagnosis", adv->diagnosis.buf, "instruction", adv->instruction.buf, "note",
			      adv->note.len ? adv->note.buf : NULL);
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text || fs_write_atomic(path, text, strlen(text)))
		session_note(s, "cannot write %s", path);
	free(text);
	json_decref(j);
	free(path);
}

/* The placeholders the Judge and the revising Coder share (previous_code is each one's own). */
static void forge_vars(struct agent_session *s, const struct attempt *last, struct tvars *v)
{
	struct strbuf b = STRBUF_INIT;
	tvars_set(v, "feedback", last->feedback);
	session_history_text(s, &b);
	tvars_set(v, "history", b.buf);
	tvars_set(v, "mode", last->sum.cls == CLASS_CORRECT ? "optimisation" : "correction");
	tvars_setf(v, "round", "%d", last->index + 1);
	tvars_setf(v, "max_rounds", "%d", session_task(s)->agent->max_rounds);
	strbuf_release(&b);
}

static enum agent_stage coder_stage(const struct attempt *last)
{
	return last->sum.cls == CLASS_CORRECT ? STAGE_OPTIMIZE
	       : last->sum.cls == CLASS_COMPILE ? STAGE_REPAIR_COMPILE
						: STAGE_REPAIR_CORRECTNESS;
}

/* One round after the first: the Judge on the last attempt, then (unless it says stop) the Coder. */
static int forge_round(struct agent_session *s, int *stopped, struct sb_error *err)
{
	size_t n;
	const struct attempt *last = &session_attempts(s, &n)[n - 1], *a;
	int failed = last->sum.cls != CLASS_CORRECT;
	struct tvars v = TVARS_INIT;
	struct strbuf metrics = STRBUF_INIT;
	struct forge_advice adv = { FORGE_CORRECT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	struct llm_response r;
	forge_vars(s, last, &v);
	forge_metrics(s, last->verdict, &metrics);
	tvars_set(&v, "metrics", metrics.buf);
	/* the Judge reviews the file this verdict is about; the Coder then revises its last readable file */
	tvars_set(&v, "previous_code", last->code ? last->code
						  : "(the answer of this round held no code that could be read; the "
						    "verdict says what was looked for)");
	int rc = session_ask(s, "cudaforge-judge-system", "cudaforge-judge", &v, &r, NULL, err);
	if (!rc) {
		forge_advice_read(r.text, failed, &adv);
		forge_keep(s, last->index, &adv);
		session_note(s, "judge on attempt %d: %s%s%s", last->index, action_names[adv.action],
			     adv.note.len ? "; " : "", adv.note.buf);
	}
	llm_response_release(&r);
	if (!rc && adv.action == FORGE_STOP) {
		*stopped = 1;
	} else if (!rc) {
		const struct attempt *code = session_last_with_code(s);
		tvars_set(&v, "previous_code", code ? code->code : "(no code yet)");
		tvars_set(&v, "instruction", adv.instruction.buf);
		tvars_set(&v, "diagnosis", adv.diagnosis.len ? adv.diagnosis.buf : "(none given)");
		rc = session_ask(s, "system", "cudaforge-coder-revise", &v, &r, NULL, err);
		if (!rc)
			rc = session_submit_answer(s, coder_stage(last), r.text, &a, err);
		llm_response_release(&r);
	}
	forge_advice_release(&adv);
	strbuf_release(&metrics);
	tvars_release(&v);
	return rc;
}

static int cudaforge_run(struct agent_session *s, struct sb_error *err)
{
	struct stage_policy pol = session_policy(s);
	const struct attempt *a;
	struct llm_response r;
	const char *stop = "attempts";
	int stopped = 0;
	/* the rounds are the method: the target does not end it early, the Judge's stop does */
	pol.max_attempts = session_task(s)->agent->max_rounds;
	pol.target_speedup = INFINITY;
	int rc = session_ask(s, "system", "cudaforge-coder", NULL, &r, NULL, err);
	if (!rc)
		rc = session_submit_answer(s, STAGE_DRAFT, r.text, &a, err);
	llm_response_release(&r);
	while (!rc) {
		struct stage_input in = session_input(s, 0, 0);
		enum stop_reason why = stage_should_stop(&pol, &in);
		if (why != STOP_NONE) {
			stop = stop_reason_name(why);
			break;
		}
		if ((rc = forge_round(s, &stopped, err)))
			break;
		if (stopped) {
			stop = "judge_stop";
			break;
		}
	}
	return rc ? rc : session_finish(s, stop, err);
}

const struct agent_kind agent_cudaforge = { "cudaforge", 1, cudaforge_run, 0 };
