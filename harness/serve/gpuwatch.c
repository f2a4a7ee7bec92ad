/* gpuwatch.c - GPU utilization sampled beside the evaluations (gpuwatch.h). */
#include "gpuwatch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/nvml.h"
#include "../core/strbuf.h"
#include "../eval/evaluate.h"

#define GPUWATCH_PERIOD_MS 200

struct gpuwatch {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stopping;
	struct nvml_gpu **gpus;
	int n;
	unsigned long long samples, zero, sum;
	char note[256];
};

static void *sampler(void *arg)
{
	struct gpuwatch *w = arg;
	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		for (int i = 0; i < w->n; i++) {
			unsigned pct;
			if (nvml_utilization(w->gpus[i], &pct) == 0) {
				w->samples++;
				w->zero += pct == 0;
				w->sum += pct;
			}
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += GPUWATCH_PERIOD_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&w->wake, &w->lock, &ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct gpuwatch *gpuwatch_start(const struct eval_env *envs, int n)
{
	struct gpuwatch *w = xcalloc(1, sizeof(*w));
	w->gpus = xcalloc((size_t)n + 1, sizeof(*w->gpus));
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	int gpus = 0;
	for (int i = 0; i < n; i++) {
		if (!strncmp(envs[i].device, "cpu", 3))
			continue;
		gpus++;
		char why[200] = "";
		struct nvml_gpu *g = envs[i].gpu_uuid[0] ? nvml_open(envs[i].gpu_uuid, why, sizeof(why)) : NULL;
		if (g)
			w->gpus[w->n++] = g;
		else if (!w->note[0])
			snprintf(w->note, sizeof(w->note), "%s not sampled: %s", envs[i].device,
				 why[0] ? why : "torch reported no UUID for it");
	}
	if (!gpus || (w->n && pthread_create(&w->thread, NULL, sampler, w))) {
		w->stopping = 1;
		for (int i = 0; i < w->n; i++)
			nvml_close(w->gpus[i]);
		w->n = 0;
		if (!gpus) {
			free(w->gpus);
			free(w);
			return NULL;
		}
		snprintf(w->note, sizeof(w->note), "the sampling thread did not start");
	}
	return w;
}

void gpuwatch_metrics(struct gpuwatch *w, json_t *into)
{
	if (!w) {
		json_object_set_new(into, "gpu_idle", json_null());
		json_object_set_new(into, "gpu_note", json_string("no GPU: the server judges on the CPU"));
		return;
	}
	pthread_mutex_lock(&w->lock);
	json_object_set_new(into, "gpu_idle", w->samples ? json_real((double)w->zero / (double)w->samples) : json_null());
	json_object_set_new(into, "gpu_util_mean", w->samples ? json_real((double)w->sum / (double)w->samples) : json_null());
	json_object_set_new(into, "gpu_samples", json_integer((json_int_t)w->samples));
	json_object_set_new(into, "gpu_note", w->note[0] ? json_string(w->note) : json_null());
	pthread_mutex_unlock(&w->lock);
}

void gpuwatch_stop(struct gpuwatch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	int running = !w->stopping;
	w->stopping = 1;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	if (running && w->n)
		pthread_join(w->thread, NULL);
	for (int i = 0; i < w->n; i++)
		nvml_close(w->gpus[i]);
	free(w->gpus);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	free(w);
}
