/* gpuwatch.h - serve's GPU idle: each slot's GPU utilization read through NVML every 200 ms, as
 * nvidia-smi's utilization.gpu would be sampled, and the share of samples at 0% (no kernel ran in the
 * driver's sample period) reported by /v1/metrics. */
#ifndef SB_GPUWATCH_H
#define SB_GPUWATCH_H

#include <jansson.h>

struct eval_env;
struct gpuwatch;

/* Starts sampling the GPUs of the n slots; NULL when none is a GPU. A GPU NVML cannot open is left out,
 * and why is kept for the metrics. */
struct gpuwatch *gpuwatch_start(const struct eval_env *envs, int n);
/* {"gpu_idle": share of samples at 0% over every watched GPU since the start (null: none sampled),
 * "gpu_util_mean": mean percent, "gpu_samples": count, "gpu_note": why a GPU is not watched, or null}:
 * merged into the object `into`. */
void gpuwatch_metrics(struct gpuwatch *w, json_t *into);
void gpuwatch_stop(struct gpuwatch *w);

#endif
