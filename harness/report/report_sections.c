/* report_sections.c - the tables and text of a report: the runs and their settings, the results tables of
 * metrics.c, each problem's outcome per agent, flagged passes, attempts by stage, hack findings by id, and
 * the audit. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../audit/audit.h"
#include "hacks.h"

#define MESSAGE_MAX 160 /* characters of a finding's message shown as an example */

void report_section_runs(const struct report_data *d, struct doc *doc)
{
	doc_heading(doc, 2, "runs", "Runs");
	static const char *const head[] = { "input", "run", "created", "stitchbench", "device", "GPU", "torch",
					    "tolerance", "trials", "perf_trials", "seed" };
	struct table *t = doc_table(doc, "runs-table", TABLE_COLS(head));
	table_head(t, head, TABLE_COLS(head));
	for (size_t i = 0; i < d->nin; i++)
		for (size_t j = 0; j < d->in[i].nruns; j++) {
			const struct store_run *r = &d->in[i].runs[j];
			table_text(t, d->in[i].arg);
			table_text(t, r->run_id);
			table_text(t, r->created);
			table_text(t, r->version);
			table_text(t, r->device);
			table_text(t, *r->gpu ? r->gpu : "-");
			table_text(t, r->torch);
			table_text(t, r->tolerance);
			table_cellf(t, "%d", r->trials);
			table_cellf(t, "%d", r->perf_trials);
			table_cellf(t, "%d", r->seed);
		}
	if (d->settings_diff.len)
		doc_note(doc, "These runs were made with settings that change the numbers, so their rows are not strictly "
			      "comparable: %s", d->settings_diff.buf);
	if (d->coverage.len)
		doc_note(doc, "Some agents lack verdicts for problems of their run; %s: %s",
			 d->m.denominator == METRICS_ALL ? "those problems count as failures in their rates"
							 : "their rates are over the problems they have",
			 d->coverage.buf);
}

void report_section_summary(const struct report_data *d, struct doc *doc)
{
	const struct metrics *m = &d->m;
	doc_heading(doc, 2, "summary", "Results");
	if (!m->nagents && !m->nunavailable) {
		doc_para(doc, "No verdicts are stored in these runs yet.");
		return;
	}
	struct strbuf scope = STRBUF_INIT;
	metrics_scope_note(m, &scope);
	doc_para(doc, "Each cell: correct %% / fast_1 %% / geometric-mean speedup vs eager over the clean passes, "
		      "agents as rows and levels as columns; \"(N flagged)\": N of the correct problems pass with a hack "
		      "finding (listed under \"Flagged passes\"). %s See docs/metrics.md.", scope.buf);
	strbuf_release(&scope);
	struct strbuf unjudged = STRBUF_INIT;
	metrics_unjudged_note(m, &unjudged);
	if (unjudged.len)
		doc_para(doc, "%s", unjudged.buf);
	strbuf_release(&unjudged);
	struct strbuf noise = STRBUF_INIT;
	metrics_noise_note(m, &noise);
	if (noise.len)
		doc_para(doc, "%s", noise.buf);
	strbuf_release(&noise);
	metrics_summary_table(m, doc_table(doc, "summary-table", 1));
	struct strbuf note = STRBUF_INIT;
	metrics_intervals_note(&note);
	doc_para(doc, "Every metric per agent and level, with its interval, is in \"Results per agent\" after the plots%s. "
		      "%s", m->npairs ? ", and what the data shows of the differences between agents, problem by problem, in "
				      "\"Agents compared in pairs\" before it" : "", note.buf);
	strbuf_release(&note);
	if (metrics_best_agent(m) >= 0)
		doc_para(doc, "\"(best)\": the agent with the highest geometric mean over all levels, faster than every "
			      "other agent by the intervals of \"Agents compared in pairs\".");
}

void report_section_stitchcuda(const struct report_data *d, struct doc *doc)
{
	const struct metrics *m = &d->m;
	if (m->protocol != METRICS_PROTOCOL_STITCHCUDA || (!m->nagents && !m->nunavailable))
		return;
	doc_heading(doc, 2, "stitchcuda", "StitchCUDA's protocol");
	struct strbuf note = STRBUF_INIT;
	metrics_stitchcuda_note(m, &note);
	doc_para(doc, "%s See docs/metrics.md, \"StitchCUDA's protocol\".", note.buf);
	strbuf_release(&note);
	metrics_stitchcuda_table(m, doc_table(doc, "stitchcuda-table", 1));
}

/* The agents compared in pairs, one paragraph per pair, after the plots with the other long sections (their
 * number grows with the square of the agents'); nothing with fewer than two agents. */
static void report_pairs(const struct metrics *m, struct doc *doc)
{
	if (!m->npairs)
		return;
	doc_heading(doc, 2, "pairs", "Agents compared in pairs");
	struct strbuf text = STRBUF_INIT;
	metrics_pairs_note(&text);
	doc_para(doc, "%s See docs/metrics.md, \"Agents compared in pairs\".", text.buf);
	for (size_t i = 0; i < m->npairs; i++) {
		strbuf_reset(&text);
		metrics_pair_sentence(m, i, &text, NULL);
		doc_para(doc, "%s", text.buf);
	}
	strbuf_release(&text);
}

void report_section_details(const struct report_data *d, struct doc *doc)
{
	const struct metrics *m = &d->m;
	if (!m->nagents && !m->nunavailable)
		return;
	report_pairs(m, doc);
	doc_heading(doc, 2, "details", "Results per agent");
	for (size_t a = 0; a < m->nagents; a++) {
		char id[32];
		snprintf(id, sizeof(id), "agent-%zu", a + 1);
		doc_heading(doc, 3, id, m->agents[a].name);
		snprintf(id, sizeof(id), "agent-%zu-table", a + 1);
		metrics_detail_table(m, a, doc_table(doc, id, 1));
	}
	for (size_t u = 0; u < m->nunavailable; u++) {
		char id[32];
		snprintf(id, sizeof(id), "agent-%zu", m->nagents + u + 1);
		doc_heading(doc, 3, id, m->unavailable[u].agent);
		struct strbuf note = STRBUF_INIT;
		metrics_unavailable_note(m, u, &note);
		doc_para(doc, "%s", note.buf);
		strbuf_release(&note);
	}
}

static void outcome(struct strbuf *out, const struct report_data *d, const struct metric_row *r)
{
	const char *status = report_extra_of(d, r)->status;
	if (r->correct && isfinite(r->speedup_eager))
		strbuf_addf(out, "pass %.2fx", r->speedup_eager);
	else if (r->correct)
		strbuf_addstr(out, "pass (not timed)");
	else
		strbuf_addstr(out, *status ? status : "not correct");
	if (r->hack && strcmp(status, "rejected"))
		strbuf_addstr(out, " (hack)");
	else if (r->correct && r->flagged)
		strbuf_addf(out, " (flagged %s)", r->hack_ids);
}

/* The first sample of the agent on the problem whose reference failed, or NULL. */
static const struct metric_reffail *unjudged_of(const struct metrics *m, const char *agent, const char *problem)
{
	for (size_t i = 0; i < m->nunjudged; i++)
		if (!strcmp(m->unjudged[i].agent, agent) && !strcmp(m->unjudged[i].problem, problem))
			return &m->unjudged[i];
	return NULL;
}

void report_section_problems(const struct report_data *d, struct doc *doc)
{
	const struct metrics *m = &d->m;
	const char **probs;
	size_t np = report_problems(d, &probs);
	if (!np) {
		free(probs);
		return;
	}
	doc_heading(doc, 2, "outcomes", "Outcome per problem");
	doc_para(doc, "Each problem's representative candidate per agent: its status, and its speedup vs eager "
		      "when it is correct and timed. '(hack)': a finding rejected it; '(flagged H..)': it passes with a hack "
		      "finding, so it counts as correct and nothing more (see \"Flagged passes\"); 'no verdict': the run "
		      "selected the problem and the agent has no verdict for it; 'reference failed': the problem's "
		      "reference failed, and 'not judged': the machine could not run the candidate (cannot_judge), so "
		      "it is left out of the agent's rates.");
	struct table *t = doc_table(doc, "problems-table", m->nagents + 2);
	table_cell(t, "problem");
	table_cell(t, "name");
	for (size_t a = 0; a < m->nagents; a++)
		table_text(t, m->agents[a].name);
	for (size_t i = 0; i < np; i++) {
		table_text(t, probs[i]);
		table_text(t, report_problem_name(d, probs[i]));
		for (size_t a = 0; a < m->nagents; a++) {
			const struct metric_agent *ag = &m->agents[a];
			struct strbuf cell = STRBUF_INIT;
			size_t k = 0;
			while (k < ag->nproblems && strcmp(ag->problems[k].rep->problem, probs[i]))
				k++;
			if (k < ag->nproblems)
				outcome(&cell, d, ag->problems[k].rep);
			else if (unjudged_of(m, ag->name, probs[i]))
				strbuf_addstr(&cell, starts_with(unjudged_of(m, ag->name, probs[i])->message, "not judged:")
							     ? "not judged" : "reference failed");
			else
				strbuf_addch(&cell, '-');
			table_text(t, cell.buf);
			strbuf_release(&cell);
		}
	}
	free(probs);
}

/* ---------- flagged passes ---------- */

/* The findings of one candidate with a hack id, "H21 (flag): message; ..." with each message cut short. */
static void candidate_findings(struct strbuf *out, const struct report_data *d, const struct metric_row *r)
{
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct report_finding *f = &d->findings[i];
		if (strcmp(f->agent, r->agent) || strcmp(f->problem, r->problem) || f->sample != r->sample ||
		    f->attempt != r->attempt || !hack_title(f->id))
			continue;
		size_t len = strlen(f->message);
		strbuf_addf(out, "%s%s %s (%s): %.*s%s", out->len ? "; " : "", f->id, hack_title(f->id), f->severity,
			    (int)(len > MESSAGE_MAX ? MESSAGE_MAX : len), f->message, len > MESSAGE_MAX ? "..." : "");
	}
}

/* 1 when r represents its problem for its agent. */
static int represents(const struct report_data *d, const struct metric_row *r)
{
	int a = report_agent_index(d, r->agent);
	for (size_t i = 0; a >= 0 && i < d->m.agents[a].nproblems; i++)
		if (d->m.agents[a].problems[i].rep == r)
			return 1;
	return 0;
}

void report_section_flagged(const struct report_data *d, struct doc *doc)
{
	size_t n = 0;
	for (size_t i = 0; i < d->mi.nrows; i++)
		n += d->sorted[i]->correct && d->sorted[i]->flagged;
	doc_heading(doc, 2, "flagged", "Flagged passes");
	if (!n) {
		doc_para(doc, "No candidate passes with a hack finding: every pass is a clean one.");
		return;
	}
	doc_para(doc, "Candidates that pass but carry a hack finding (one that checks.policy flags rather than rejects: "
		      "H17 output equal to an input on a flawed problem, H21 faster than the physical floor allows or more "
		      "than 10x eager, H14 precision, ...). They count as correct and in nothing after it: not in fast_p, "
		      "not in the geometric means, not in the speedup plots (docs/metrics.md). 'represents': the "
		      "candidate is the one its problem is counted by.");
	static const char *const head[] = { "agent", "problem", "sample", "attempt", "speedup vs eager", "represents",
					    "findings" };
	struct table *t = doc_table(doc, "flagged-table", TABLE_COLS(head));
	table_head(t, head, TABLE_COLS(head));
	for (size_t i = 0; i < d->mi.nrows; i++) {
		const struct metric_row *r = d->sorted[i];
		if (!r->correct || !r->flagged)
			continue;
		struct strbuf f = STRBUF_INIT;
		candidate_findings(&f, d, r);
		table_text(t, r->agent);
		table_text(t, r->problem);
		table_cellf(t, "%d", r->sample);
		table_cellf(t, "%d", r->attempt);
		if (isfinite(r->speedup_eager))
			table_cellf(t, "%.2fx", r->speedup_eager);
		else
			table_cell(t, "not timed");
		table_cell(t, represents(d, r) ? "yes" : "no");
		table_text(t, f.len ? f.buf : r->hack_ids);
		strbuf_release(&f);
	}
}

/* ---------- attempts by stage ---------- */

struct stage_tally {
	const char *agent, *stage;
	size_t n, compiled, correct, hack, timed;
	double logsum;
};

void report_section_stages(const struct report_data *d, struct doc *doc)
{
	struct stage_tally *v = NULL;
	size_t nv = 0;
	for (size_t i = 0; i < d->mi.nrows; i++) {
		const struct metric_row *r = d->sorted[i];
		const char *stage = report_extra_of(d, r)->stage;
		if (!stage)
			continue;
		size_t j = 0;
		while (j < nv && (strcmp(v[j].agent, r->agent) || strcmp(v[j].stage, stage)))
			j++;
		if (j == nv) {
			v = xrealloc(v, (nv + 1) * sizeof(*v));
			v[nv++] = (struct stage_tally){ .agent = r->agent, .stage = stage };
		}
		v[j].n++;
		v[j].compiled += (size_t)r->compiled;
		v[j].correct += (size_t)r->correct;
		v[j].hack += (size_t)r->hack;
		if (metrics_clean(r) && isfinite(r->speedup_eager) && r->speedup_eager > 0) {
			v[j].timed++;
			v[j].logsum += log(r->speedup_eager);
		}
	}
	doc_heading(doc, 2, "stages", "Attempts by stage");
	if (!nv) {
		doc_note(doc, "No attempt in these runs records an agent stage (samples and single-shot agents have none), "
			      "so there is no table of attempts by stage.");
		return;
	}
	doc_para(doc, "Every attempt by the stage the agent was in when it wrote it (draft, repair_compile, "
		      "repair_correctness, optimize_performance, ...), in the order the stages first appear.");
	static const char *const head[] = { "agent", "stage", "attempts", "compiled %", "correct %", "hack %",
					    "geomean speedup of clean passes (n)" };
	struct table *t = doc_table(doc, "stages-table", TABLE_COLS(head));
	table_head(t, head, TABLE_COLS(head));
	for (size_t j = 0; j < nv; j++) {
		double n = (double)v[j].n;
		table_text(t, v[j].agent);
		table_text(t, v[j].stage);
		table_cellf(t, "%zu", v[j].n);
		table_cellf(t, "%.1f", 100.0 * (double)v[j].compiled / n);
		table_cellf(t, "%.1f", 100.0 * (double)v[j].correct / n);
		table_cellf(t, "%.1f", 100.0 * (double)v[j].hack / n);
		if (v[j].timed)
			table_cellf(t, "%.3fx (%zu)", exp(v[j].logsum / (double)v[j].timed), v[j].timed);
		else
			table_cell(t, "n/a (0)");
	}
	free(v);
}

/* ---------- findings and audit ---------- */

static void example(struct strbuf *out, const struct report_data *d, const char *agent, const char *id)
{
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct report_finding *f = &d->findings[i];
		if (strcmp(f->agent, agent) || strcmp(f->id, id))
			continue;
		size_t len = strlen(f->message);
		strbuf_addf(out, "%s sample %d attempt %d: %.*s%s", f->problem, f->sample, f->attempt,
			    (int)(len > MESSAGE_MAX ? MESSAGE_MAX : len), f->message, len > MESSAGE_MAX ? "..." : "");
		return;
	}
}

void report_section_findings(const struct report_data *d, struct doc *doc)
{
	const char **ids;
	size_t nid = report_findings_ids(d, &ids);
	if (!nid) {
		free(ids);
		return;
	}
	doc_heading(doc, 2, "findings-by-agent", "Hack findings by agent");
	doc_para(doc, "Candidates with a finding, per hack id (DESIGN §7) and agent, with the first one as an example. "
		      "Found by: S from the source, R at run time, D a property of the problem.");
	static const char *const head[] = { "id", "hack", "found by", "agent", "rejected", "flagged only", "example" };
	struct table *t = doc_table(doc, "findings-table", TABLE_COLS(head));
	table_head(t, head, TABLE_COLS(head));
	for (size_t i = 0; i < nid; i++)
		for (size_t a = 0; a < d->m.nagents; a++) {
			size_t r, f;
			report_findings_count(d, d->m.agents[a].name, ids[i], &r, &f);
			if (!r && !f)
				continue;
			struct strbuf ex = STRBUF_INIT;
			example(&ex, d, d->m.agents[a].name, ids[i]);
			table_text(t, ids[i]);
			table_cell(t, hack_title(ids[i]) ? hack_title(ids[i]) : "(not in the taxonomy)");
			table_cell(t, hack_found_by(ids[i]));
			table_text(t, d->m.agents[a].name);
			table_cellf(t, "%zu", r);
			table_cellf(t, "%zu", f);
			table_text(t, ex.buf);
			strbuf_release(&ex);
		}
	free(ids);
}

/* What an audit flag means for a problem's results. The kinds differ, so one sentence cannot fit them all:
 * H15-H17 let a candidate skip the work, randomness changes how outputs are compared, integer inputs only
 * weaken the audit's own checks. */
static const struct {
	const char *id, *flaw, *meaning;
} audit_kinds[] = {
	{ "H15", NULL, NULL },
	{ "H16", NULL, NULL },
	{ "H17", NULL, "Constant output (H15), output below the tolerance (H16), output equal to an input (H17): a "
		       "candidate can pass these problems without doing the work (returning a constant, zeros or its "
		       "input), so a pass there says little." },
	{ AUDIT_NONDETERMINISTIC, "randomness in forward",
	  "Randomness in forward: the reference draws random numbers (Dropout in training mode, randn) or is not "
	  "reproducible at all. The evaluation reseeds torch's RNG with the same seed before each call of either "
	  "side, so a candidate passes only if it draws the same numbers in the same order; where even the same "
	  "seed gives different outputs, correctness trials compare against luck." },
	{ AUDIT_INTEGER_INPUTS, "integer inputs",
	  "Integer inputs: the problem takes integer or boolean tensors (indices, counts). The audit's signed-input "
	  "runs leave them as drawn, so its checks that rely on perturbing float inputs are weaker there; a "
	  "candidate must keep them integer." },
};

/* The index of id's kind, H15 and H16 sharing H17's sentence; -1 for an id this build does not know. */
static int audit_kind(const char *id)
{
	for (size_t i = 0; i < sizeof(audit_kinds) / sizeof(audit_kinds[0]); i++)
		if (!strcmp(audit_kinds[i].id, id))
			return !audit_kinds[i].meaning ? 2 : (int)i;
	return -1;
}

static const char *audit_flaw(const char *id)
{
	int k = audit_kind(id);
	return hack_title(id) ? hack_title(id) : k >= 0 ? audit_kinds[k].flaw : "(not a flag this stitchbench knows)";
}

/* One paragraph per kind of flag present, in audit_kinds' order. */
static void audit_meanings(const struct report_data *d, struct doc *doc)
{
	int unknown = 0;
	for (size_t k = 0; k < sizeof(audit_kinds) / sizeof(audit_kinds[0]); k++) {
		if (!audit_kinds[k].meaning)
			continue;
		size_t i = 0;
		while (i < d->naudit && audit_kind(d->audit[i].id) != (int)k)
			i++;
		if (i < d->naudit)
			doc_para(doc, "%s", audit_kinds[k].meaning);
	}
	for (size_t i = 0; i < d->naudit; i++)
		unknown |= audit_kind(d->audit[i].id) < 0;
	if (unknown)
		doc_para(doc, "Ids this stitchbench does not know come from another tool or a newer version: read their "
			      "message.");
}

void report_section_audit(const struct report_data *d, struct doc *doc)
{
	doc_heading(doc, 2, "audit", "Problems flagged by the audit");
	if (!d->audit_inputs) {
		doc_note(doc, "No audit data: none of these stores has an audit table, so no problem is known to be flawed "
			      "(constant output H15, output below tolerance H16, trivial inputs H17, randomness in forward, "
			      "integer inputs). Problems the audit flags will be listed here once it has written its table "
			      "(docs/report.md).");
	} else if (!d->naudit) {
		doc_para(doc, "The audit ran on %zu of these %zu stores and flagged no problem.", d->audit_inputs, d->nin);
	} else {
		doc_para(doc, "Problems the audit flagged (from %zu of these %zu stores). What each kind of flag means "
			      "for their results:", d->audit_inputs, d->nin);
		audit_meanings(d, doc);
		static const char *const head[] = { "problem", "name", "id", "flaw", "message" };
		struct table *t = doc_table(doc, "audit-table", TABLE_COLS(head));
		table_head(t, head, TABLE_COLS(head));
		for (size_t i = 0; i < d->naudit; i++) {
			const struct report_audit *a = &d->audit[i];
			table_text(t, a->problem);
			table_text(t, report_problem_name(d, a->problem));
			table_text(t, a->id);
			table_cell(t, audit_flaw(a->id));
			table_text(t, a->message);
		}
	}
	/* the same flaws seen in candidates at evaluation time (H16, H17 have run-time checks too) */
	struct strbuf seen = STRBUF_INIT;
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct report_finding *f = &d->findings[i];
		if (strcmp(f->id, "H15") && strcmp(f->id, "H16") && strcmp(f->id, "H17"))
			continue;
		char key[48];
		snprintf(key, sizeof(key), "%s %s", f->problem, f->id);
		if (!strstr(seen.buf, key))
			strbuf_addf(&seen, "%s%s", seen.len ? ", " : "", key);
	}
	if (seen.len)
		doc_para(doc, "At evaluation time, candidates of these problems had findings of a problem flaw: %s.", seen.buf);
	strbuf_release(&seen);
}
