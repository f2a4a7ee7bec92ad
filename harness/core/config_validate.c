/* config_validate.c - the checks no single key can make: names unique, agents naming defined models,
 * provider-specific requirements. Errors point at the list entry's line in the file. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

/* ---------- cross-checks ---------- */

__attribute__((format(printf, 4, 5)))
static int invalid(const struct config *c, struct src_pos pos, struct sb_error *err, const char *fmt, ...)
{
	char msg[SB_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pos.line)
		return sb_error_set(err, SB_EINPUT, "%s:%d:%d: %s", c->path ? c->path : "config", pos.line, pos.col, msg);
	return sb_error_set(err, SB_EINPUT, "%s: %s", c->path ? c->path : "config", msg);
}

static int agent_needs_model(const struct agent_cfg *a)
{
	return strcmp(a->kind, "torch-compile") && strcmp(a->kind, "torch-eager") && strcmp(a->kind, "samples");
}

int config_validate(const struct config *c, struct sb_error *err)
{
	const char *dev = c->eval.device;
	if (!dev || !(!strcmp(dev, "auto") || !strcmp(dev, "cpu") || !strcmp(dev, "cuda") ||
		      (starts_with(dev, "cuda:") && dev[5] && strspn(dev + 5, "0123456789") == strlen(dev + 5))))
		return invalid(c, (struct src_pos){ 0, 0 }, err,
			       "eval.device: '%s' is not a device: expected auto, cpu, cuda or cuda:N", dev ? dev : "null");
	if (!c->problems.levels[0] && !c->problems.levels[1] && !c->problems.levels[2] && !c->problems.levels[3])
		return invalid(c, (struct src_pos){ 0, 0 }, err, "problems.levels: select at least one level");
	for (size_t i = 0; i < c->nmodels; i++) {
		const struct model_cfg *m = &c->models[i];
		if (!m->name || !*m->name)
			return invalid(c, m->pos, err, "models[%zu].name: every model needs a name", i);
		if (!m->provider)
			return invalid(c, m->pos, err, "models[%zu].provider: required (openai, anthropic or replay)", i);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->models[j].name, m->name))
				return invalid(c, m->pos, err, "models[%zu].name: '%s' is already used by models[%zu]", i, m->name, j);
		if (strcmp(m->provider, "replay") && (!m->api_base || !m->model))
			return invalid(c, m->pos, err, "models[%zu] (%s): api_base and model are required for provider %s",
				       i, m->name, m->provider);
		if (!strcmp(m->provider, "replay") && !m->cassette)
			return invalid(c, m->pos, err, "models[%zu] (%s): provider replay needs cassette: (a run directory or cassette file)",
				       i, m->name);
	}
	for (size_t i = 0; i < c->nagents; i++) {
		const struct agent_cfg *a = &c->agents[i];
		if (!a->name || !*a->name)
			return invalid(c, a->pos, err, "agents[%zu].name: every agent needs a name", i);
		if (!a->kind)
			return invalid(c, a->pos, err, "agents[%zu].kind: required", i);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->agents[j].name, a->name))
				return invalid(c, a->pos, err, "agents[%zu].name: '%s' is already used by agents[%zu]", i, a->name, j);
		if (agent_needs_model(a)) {
			if (!a->model)
				return invalid(c, a->pos, err, "agents[%zu] (%s): kind %s needs model: (one of the models' names)",
					       i, a->name, a->kind);
			if (!config_find_model(c, a->model)) {
				struct strbuf names = STRBUF_INIT;
				for (size_t j = 0; j < c->nmodels; j++)
					strbuf_addf(&names, "%s%s", j ? ", " : "", c->models[j].name);
				int rc = invalid(c, a->pos, err, "agents[%zu] (%s): model '%s' is not defined under models: (defined: %s)",
						 i, a->name, a->model, c->nmodels ? names.buf : "none");
				strbuf_release(&names);
				return rc;
			}
		}
		if (!strcmp(a->kind, "samples") && !a->samples_dir)
			return invalid(c, a->pos, err, "agents[%zu] (%s): kind samples needs samples_dir:", i, a->name);
	}
	if (c->checks.judge_model && !config_find_model(c, c->checks.judge_model))
		return invalid(c, (struct src_pos){ 0, 0 }, err, "checks.judge_model: '%s' is not defined under models:",
			       c->checks.judge_model);
	return 0;
}
