/* gpus.c - the --gpus list: parsed against the GPUs the run's Python sees (CUDA_VISIBLE_DEVICES, as
 * Slurm sets it, already applies), each slot an environment that differs from the run's in its device. */
#include "gpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/python.h"
#include "../core/strbuf.h"

int gpus_parse(const char *spec, int ndevices, int **idx, int *n, struct sb_error *err)
{
	*idx = NULL;
	*n = 0;
	if (ndevices < 1)
		return sb_error_set(err, SB_EENV, "--gpus %s: torch sees no GPU here (CUDA_VISIBLE_DEVICES=%s); run without "
				    "--gpus for the CPU", spec, getenv("CUDA_VISIBLE_DEVICES") ?: "unset");
	int *v = xcalloc((size_t)ndevices, sizeof(*v));
	int count = 0;
	if (!strcmp(spec, "all")) {
		for (int i = 0; i < ndevices; i++)
			v[count++] = i;
	} else {
		const char *p = spec;
		for (;;) {
			char *end;
			long k = strtol(p, &end, 10);
			if (end == p || (*end && *end != ',') || k < 0) {
				free(v);
				return sb_error_set(err, SB_EINPUT, "--gpus %s: expected 'all' or GPU indices like 0,1,3", spec);
			}
			if (k >= ndevices) {
				free(v);
				return sb_error_set(err, SB_EENV, "--gpus %s: GPU %ld does not exist; torch sees %d (0-%d)", spec, k,
						    ndevices, ndevices - 1);
			}
			for (int j = 0; j < count; j++)
				if (v[j] == k) {
					free(v);
					return sb_error_set(err, SB_EINPUT, "--gpus %s: GPU %ld is listed twice", spec, k);
				}
			v[count++] = (int)k;
			if (!*end)
				break;
			p = end + 1;
		}
	}
	*idx = v;
	*n = count;
	return 0;
}

int gpus_resolve(const char *spec, const struct eval_env *base, const char *home, struct eval_env **envs, int *n,
		 struct sb_error *err)
{
	struct python_info py;
	char *probe = xstrfmt("%s/harness/worker/probe.py", home);
	int rc = python_probe(base->python, probe, &py, err);
	free(probe);
	if (rc)
		return rc;
	int *idx = NULL;
	rc = gpus_parse(spec, py.cuda_available ? (int)py.ndevices : 0, &idx, n, err);
	struct eval_env *out = rc ? NULL : xcalloc((size_t)*n, sizeof(*out));
	for (int i = 0; !rc && i < *n; i++) {
		const struct py_device *d = &py.devices[idx[i]];
		const char *first = py.devices[idx[0]].name ?: "?";
		if (strcmp(d->name ?: "?", first)) {
			rc = sb_error_set(err, SB_EINPUT, "--gpus %s: GPU %d is a %s, GPU %d a %s; one run times on one GPU "
					  "model (list GPUs of one model)", spec, idx[0], first, idx[i], d->name ?: "?");
			break;
		}
		out[i] = *base;
		snprintf(out[i].device, sizeof(out[i].device), "cuda:%d", idx[i]);
		snprintf(out[i].gpu, sizeof(out[i].gpu), "%s", d->name ?: "?");
		snprintf(out[i].sm, sizeof(out[i].sm), "%s", d->sm);
		out[i].l2_bytes = d->l2_bytes;
		snprintf(out[i].gpu_uuid, sizeof(out[i].gpu_uuid), "%s", d->uuid);
	}
	free(idx);
	python_info_release(&py);
	if (rc) {
		free(out);
		*n = 0;
		return rc;
	}
	*envs = out;
	return 0;
}

void gpus_use_first(struct eval_env *base, const struct eval_env *first)
{
	snprintf(base->device, sizeof(base->device), "%s", first->device);
	snprintf(base->gpu, sizeof(base->gpu), "%s", first->gpu);
	snprintf(base->sm, sizeof(base->sm), "%s", first->sm);
	snprintf(base->gpu_uuid, sizeof(base->gpu_uuid), "%s", first->gpu_uuid);
	base->l2_bytes = first->l2_bytes;
}
