/* judge.c - the rubric judge (judge.h): a configured rubric scores the candidates of `eval`, `run` and
 * `serve` alike. */
#include "judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int judge_open(struct judge *j, const struct config *cfg, const char *home, const char *run_dir, struct sb_error *err)
{
	memset(j, 0, sizeof(*j));
	j->reward_lambda = cfg->checks.reward_lambda;
	/* StitchCUDA's protocol scores its own four criteria once a judge model is named */
	char *bundled = !cfg->checks.rubric && cfg->checks.judge_model && cfg->eval.preset == PRESET_STITCHCUDA && home
				? xstrfmt("%s/configs/rubrics/stitchcuda.yaml", home) : NULL;
	const char *path = cfg->checks.rubric ? cfg->checks.rubric : bundled;
	if (!path)
		return 0;
	if (!cfg->checks.judge_model)
		return sb_error_set(err, SB_EINPUT, "checks.rubric is set but checks.judge_model is not: name the "
				    "models[] entry that scores the rubric");
	int rc = rubric_load(path, &j->rubric, err);
	free(bundled);
	if (rc == 0 && (rc = llm_client_new(config_find_model(cfg, cfg->checks.judge_model), run_dir, NULL, &j->client, err)))
		rubric_release(&j->rubric);
	j->model = cfg->checks.judge_model;
	return rc;
}

void judge_close(struct judge *j)
{
	if (j->client)
		llm_client_free(j->client);
	rubric_release(&j->rubric);
	memset(j, 0, sizeof(*j));
}

void judge_rubric(const struct judge *j, const struct problem *p, const char *agent, int sample, int call,
		  struct verdict *v)
{
	if (!j || !j->client || v->status == V_COMPILE_ERROR || v->status == V_FORMAT_ERROR)
		return;
	struct strbuf prob = STRBUF_INIT, cand = STRBUF_INIT;
	struct rubric_result r;
	strbuf_read_file(&prob, p->path, 1 << 20);
	strbuf_read_file(&cand, v->candidate_path, 1 << 20);
	rubric_judge(j->client, j->model, &j->rubric, agent, v->problem, sample, call, prob.buf ? prob.buf : "",
		     cand.buf ? cand.buf : "", &r);
	/* the verdict is final here (status, findings, timing), so the reward is too */
	int major_hack = v->status == V_REJECTED;
	for (size_t i = 0; i < v->findings.n; i++)
		major_hack |= v->findings.v[i].severity == SEV_REJECT;
	v->reward = rubric_reward(&r, v->status == V_PASS, major_hack, v->timing.ran ? v->timing.speedup_eager : NAN,
				  j->reward_lambda);
	json_decref(v->rubric);
	v->rubric = rubric_result_json(&r);
	json_object_set_new(v->rubric, "reward_lambda", json_real(j->reward_lambda));
	rubric_result_release(&r);
	strbuf_release(&prob);
	strbuf_release(&cand);
}
