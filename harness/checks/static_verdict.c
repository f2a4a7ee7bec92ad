/* static_verdict.c - turns static findings into verdict findings: severity from checks.policy, H14
 * dropped when the problem itself computes in half precision, and a reject one as the verdict. */
#include "static_verdict.h"

#include <stdlib.h>
#include <string.h>

#include "static.h"

static int reject(const struct config *cfg, const char *id)
{
	const char *p = config_policy(cfg, id);
	return p && !strcmp(p, "reject");
}

/* H14 is about precision the problem did not ask for: a problem in fp16/bf16 allows it. */
static int problem_is_low_precision(const char *problem_path)
{
	struct static_report r;
	struct sb_error err = { 0 };
	if (!problem_path || static_check_file(problem_path, &r, &err))
		return 0;
	int low = static_report_has(&r, "H14");
	static_report_release(&r);
	return low;
}

int static_judge(const struct config *cfg, const char *problem_path, const char *candidate_path, struct verdict *v)
{
	struct static_report r;
	struct sb_error err = { 0 };
	if (!cfg->checks.static_checks || static_check_file(candidate_path, &r, &err))
		return 0;
	int low = static_report_has(&r, "H14") && problem_is_low_precision(problem_path);
	const struct static_finding *first = NULL;
	struct strbuf detail = STRBUF_INIT;
	for (size_t i = 0; i < r.n; i++) {
		const struct static_finding *f = &r.v[i];
		if (low && !strcmp(f->id, "H14"))
			continue;
		int rej = reject(cfg, f->id) && !f->flag_only;
		verdict_add_finding(v, f->id, rej ? "reject" : "flag", f->line, f->col, f->message);
		strbuf_addf(&detail, "%d:%d %s %s (%s) %s\n", f->line, f->col, f->id, rej ? "reject" : "flag", f->rule,
			    f->message);
		if (rej && (!first || strcmp(f->id, first->id) < 0))
			first = f; /* the lowest id: H01 "forward calls torch.matmul" says more than H04 "no kernel" */
	}
	if (first) {
		verdict_fail(v, V_REJECTED, "%s: %s", first->id, first->message);
		free(v->detail);
		v->detail = strbuf_detach(&detail, NULL);
	}
	strbuf_release(&detail);
	static_report_release(&r);
	return first != NULL;
}
