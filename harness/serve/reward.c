/* reward.c - rewards from a stored verdict: the facts a reward depends on, read from the verdict JSON, then
 * the number for the kind a request asked for (reward.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../checks/rubric.h"
#include "reward.h"

static const char *const kind_names[] = { "stitchcuda", "speedup", "pass" };

const char *reward_kind_name(enum reward_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(*kind_names) ? kind_names[k] : "?";
}

int reward_kind_parse(const char *name, enum reward_kind *out)
{
	for (size_t i = 0; name && i < sizeof(kind_names) / sizeof(*kind_names); i++)
		if (!strcmp(name, kind_names[i])) {
			*out = (enum reward_kind)i;
			return 0;
		}
	return -1;
}

int reward_facts_from_verdict(const json_t *verdict, struct reward_facts *f)
{
	const char *status = json_string_value(json_object_get(verdict, "status"));
	memset(f, 0, sizeof(*f));
	f->speedup = NAN;
	f->rubric_total = NAN;
	if (!status)
		return -1;
	snprintf(f->status, sizeof(f->status), "%s", status);
	f->judged = strcmp(status, "cannot_judge") && strcmp(status, "harness_error");
	f->pass = !strcmp(status, "pass");
	f->rejected = !strcmp(status, "rejected");

	const char *first_reject = NULL, *first_flag = NULL;
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(verdict, "findings"), i, x) {
		const char *sev = json_string_value(json_object_get(x, "severity"));
		const char *id = json_string_value(json_object_get(x, "id"));
		if (sev && !strcmp(sev, "reject")) {
			f->rejected = 1;
			if (!first_reject)
				first_reject = id ? id : "?";
		} else if (sev && !strcmp(sev, "flag")) {
			f->flagged = 1;
			if (!first_flag)
				first_flag = id ? id : "?";
		}
	}
	snprintf(f->first_finding, sizeof(f->first_finding), "%s",
		 first_reject ? first_reject : first_flag ? first_flag : "");

	json_t *s = json_object_get(json_object_get(verdict, "speedup"), "vs_eager");
	if (json_is_number(s))
		f->speedup = json_number_value(s);

	json_t *rubric = json_object_get(verdict, "rubric");
	if (json_is_object(rubric)) {
		f->rubric = 1;
		json_t *total = json_object_get(rubric, "total");
		/* a judge that failed leaves an error and no total: nothing stands in for its score */
		if (json_is_number(total) && !json_string_value(json_object_get(rubric, "error")))
			f->rubric_total = json_number_value(total);
		json_array_foreach(json_object_get(rubric, "criteria"), i, x) {
			const char *name = json_string_value(json_object_get(x, "name"));
			json_t *score = json_object_get(x, "score");
			if (name && !strcmp(name, RUBRIC_ANTI_HACKING) && json_is_number(score) && json_number_value(score) <= 0)
				f->rejected = 1;
		}
	}
	return 0;
}

#define NOTE(...) (note ? (void)snprintf(note, note_len, __VA_ARGS__) : (void)0)

double reward_compute(enum reward_kind k, const struct reward_facts *f, double lambda, char *note, size_t note_len)
{
	if (!f->judged) {
		NOTE("%s: the candidate was not judged, so it has no reward", f->status);
		return NAN;
	}
	if (f->rejected) {
		NOTE("rejected%s%s: a reject earns nothing", f->first_finding[0] ? " by " : "", f->first_finding);
		return 0;
	}
	if (!f->pass) {
		NOTE("%s: only a pass earns a reward", f->status);
		return 0;
	}
	if (k == REWARD_PASS) {
		if (f->flagged)
			NOTE("pass flagged %s: correct, so it counts as a pass", f->first_finding);
		else
			NOTE("pass");
		return 1;
	}
	int timed = isfinite(f->speedup) && f->speedup > 0;
	if (k == REWARD_SPEEDUP) {
		if (f->flagged) {
			NOTE("pass flagged %s: a flagged pass earns no speedup reward", f->first_finding);
			return 0;
		}
		if (!timed) {
			NOTE("pass, not timed: there is no speedup to reward");
			return NAN;
		}
		NOTE("pass: the speedup vs eager");
		return f->speedup;
	}
	double r = 0.5;
	if (f->rubric) {
		if (!isfinite(f->rubric_total)) {
			NOTE("the rubric judge gave no score, so the reward has no rubric part to use");
			return NAN;
		}
		r = f->rubric_total;
	}
	double s;
	if (f->flagged) {
		s = 0;
		NOTE("pass flagged %s: no speedup credit, the base only", f->first_finding);
	} else if (!timed) {
		NOTE("pass, not timed: there is no speedup to reward");
		return NAN;
	} else {
		s = fmin(f->speedup, RUBRIC_SPEEDUP_CAP);
		NOTE("pass: min(speedup, %g) + %g%s", RUBRIC_SPEEDUP_CAP, RUBRIC_REWARD_BASE,
		     f->rubric ? ", scaled by the rubric" : " (no rubric: r = 0.5)");
	}
	return (s + RUBRIC_REWARD_BASE) * (1 + lambda * (r - 0.5));
}
