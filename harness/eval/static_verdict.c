/* static_verdict.c - turns static findings into verdict findings: severity from checks.policy, H14
 * dropped when the problem itself computes in half precision, and a reject one as the verdict. */
#include "static_verdict.h"

#include "../checks/imports.h"

#include <stdlib.h>
#include <string.h>

/* H14 is about precision the problem did not ask for: a problem in fp16/bf16 allows it. */
static int problem_is_low_precision(const char *problem_path)
{
	struct findings r;
	struct sb_error err = { 0 };
	if (!problem_path || static_check_file(problem_path, &r, &err))
		return 0;
	int low = findings_has(&r, "H14");
	findings_release(&r);
	return low;
}

/* The findings of one step into v, severity by policy; a reject one (the lowest id) becomes the verdict. */
static int judge(const struct config *cfg, struct findings *r, int drop_h14, struct verdict *v)
{
	policy_apply(cfg->checks.policy, r->v, r->n);
	const struct finding *first = NULL;
	struct strbuf detail = STRBUF_INIT;
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = &r->v[i];
		if (drop_h14 && !strcmp(f->id, "H14"))
			continue;
		findings_append(&v->findings, f);
		strbuf_addf(&detail, "%d:%d %s %s (%s) %s\n", f->line, f->col, f->id, severity_name(f->severity), f->rule,
			    f->message);
		if (f->severity == SEV_REJECT && (!first || strcmp(f->id, first->id) < 0))
			first = f; /* the lowest id: H01 "forward calls torch.matmul" says more than H04 "no kernel" */
	}
	if (first) {
		verdict_fail(v, V_REJECTED, "%s: %s", first->id, first->message);
		free(v->detail);
		v->detail = strbuf_detach(&detail, NULL);
	}
	strbuf_release(&detail);
	findings_release(r);
	return first != NULL;
}

int static_judge(const struct config *cfg, const char *problem_path, const struct candidate_source *cand,
		 struct verdict *v)
{
	struct findings r;
	struct sb_error err = { 0 };
	if (!cfg->checks.static_checks || static_check(cand, &r, &err))
		return 0;
	int low = findings_has(&r, "H14") && problem_is_low_precision(problem_path);
	return judge(cfg, &r, low, v);
}

int static_judge_build(const struct config *cfg, const char *build_dir, struct verdict *v, struct sb_error *err)
{
	struct findings r = { 0 };
	if (!cfg->checks.static_checks || !build_dir)
		return 0;
	if (imports_check_dir(build_dir, &r, err)) {
		findings_release(&r);
		return -1;
	}
	return judge(cfg, &r, 0, v);
}
