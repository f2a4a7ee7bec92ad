/* nvml.h - the GPU's SM clock and why it is held down, read through NVML while candidates are timed.
 * An idle H200 drops to 375 MHz within milliseconds and a power or thermal cap slows every kernel
 * alike: a verdict that says which clock its times were taken at can be trusted or discounted. */
#ifndef SB_NVML_H
#define SB_NVML_H

#include <stddef.h>

#include "strbuf.h"

struct nvml_gpu;

/* Opens the GPU with this UUID ("GPU-..." or torch's bare form) through libnvidia-ml.so.1, dlopen'd so
 * stitchbench runs where there is no driver. NULL, with why filled, when NVML or the GPU is missing. */
struct nvml_gpu *nvml_open(const char *uuid, char *why, size_t why_len);
/* The current SM clock in MHz and the clock-event reasons bitmask (NVML's nvmlClocksEventReason*
 * bits). Returns 0, or -1 when NVML could not say. */
int nvml_sample(struct nvml_gpu *g, unsigned *sm_mhz, unsigned long long *reasons);
/* The percent of the driver's last sample period (1/6 s to 1 s) in which a kernel ran, as nvidia-smi's
 * utilization.gpu reports it. Returns 0, or -1 when NVML could not say. */
int nvml_utilization(struct nvml_gpu *g, unsigned *gpu_pct);
/* The highest SM clock the GPU may run at, in MHz; 0 when unknown. */
unsigned nvml_max_sm_mhz(struct nvml_gpu *g);
void nvml_close(struct nvml_gpu *g);

/* The named reasons set in `reasons` (idle left out), at most max, in a fixed order; returns how many. */
size_t nvml_reason_list(unsigned long long reasons, const char **names, size_t max);
/* The reasons other than "the GPU is idle" and "none", as a comma-separated list of short names
 * (sw_power_cap, hw_slowdown, sw_thermal, hw_thermal, power_brake, ...); "" when there are none. */
void nvml_reason_names(unsigned long long reasons, struct strbuf *out);

#endif
