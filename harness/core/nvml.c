/* nvml.c - a few NVML calls through dlopen: no link dependency, no header needed (the declarations
 * below are NVML's stable C ABI; the "_v2" entry points exist since driver 320). */
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1 };
typedef void *nvml_device;

struct nvml_gpu {
	void *lib;
	nvml_device dev;
	int (*shutdown)(void);
	int (*clock)(nvml_device, int, unsigned *);
	int (*max_clock)(nvml_device, int, unsigned *);
	int (*reasons)(nvml_device, unsigned long long *);
	int (*util)(nvml_device, unsigned *);   /* nvmlDeviceGetUtilizationRates: {gpu, memory} percent */
};

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p || !b ? p : dlsym(lib, b);
}

struct nvml_gpu *nvml_open(const char *uuid, char *why, size_t why_len)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, why_len, "libnvidia-ml.so.1 does not load: %s", dlerror());
		return NULL;
	}
	int (*init)(void) = (int (*)(void))sym(lib, "nvmlInit_v2", "nvmlInit");
	int (*by_uuid)(const char *, nvml_device *) = (int (*)(const char *, nvml_device *))sym(lib, "nvmlDeviceGetHandleByUUID", NULL);
	struct nvml_gpu g = {
		.lib = lib,
		.shutdown = (int (*)(void))sym(lib, "nvmlShutdown", NULL),
		.clock = (int (*)(nvml_device, int, unsigned *))sym(lib, "nvmlDeviceGetClockInfo", NULL),
		.max_clock = (int (*)(nvml_device, int, unsigned *))sym(lib, "nvmlDeviceGetMaxClockInfo", NULL),
		/* renamed in CUDA 12.2's NVML; the old name stays as an alias on older drivers */
		.reasons = (int (*)(nvml_device, unsigned long long *))sym(lib, "nvmlDeviceGetCurrentClocksEventReasons",
									 "nvmlDeviceGetCurrentClocksThrottleReasons"),
		.util = (int (*)(nvml_device, unsigned *))sym(lib, "nvmlDeviceGetUtilizationRates", NULL),
	};
	if (!init || !by_uuid || !g.clock || !g.shutdown) {
		snprintf(why, why_len, "libnvidia-ml.so.1 lacks the calls stitchbench needs");
		dlclose(lib);
		return NULL;
	}
	int rc = init();
	if (rc != NVML_SUCCESS) {
		snprintf(why, why_len, "nvmlInit failed (NVML error %d)", rc);
		dlclose(lib);
		return NULL;
	}
	char *id = !strncmp(uuid, "GPU-", 4) ? xstrdup(uuid) : xstrfmt("GPU-%s", uuid);
	rc = by_uuid(id, &g.dev);
	free(id);
	if (rc != NVML_SUCCESS) {
		snprintf(why, why_len, "NVML does not know the GPU %s (NVML error %d)", uuid, rc);
		g.shutdown();
		dlclose(lib);
		return NULL;
	}
	struct nvml_gpu *out = xcalloc(1, sizeof(*out));
	*out = g;
	return out;
}

int nvml_sample(struct nvml_gpu *g, unsigned *sm_mhz, unsigned long long *reasons)
{
	*sm_mhz = 0;
	*reasons = 0;
	if (!g || g->clock(g->dev, NVML_CLOCK_SM, sm_mhz) != NVML_SUCCESS)
		return -1;
	if (g->reasons && g->reasons(g->dev, reasons) != NVML_SUCCESS)
		*reasons = 0;
	return 0;
}

int nvml_utilization(struct nvml_gpu *g, unsigned *gpu_pct)
{
	unsigned rates[2] = { 0, 0 }; /* nvmlUtilization_t: gpu, memory */
	*gpu_pct = 0;
	if (!g || !g->util || g->util(g->dev, rates) != NVML_SUCCESS)
		return -1;
	*gpu_pct = rates[0];
	return 0;
}

unsigned nvml_max_sm_mhz(struct nvml_gpu *g)
{
	unsigned mhz = 0;
	if (!g || !g->max_clock || g->max_clock(g->dev, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS)
		return 0;
	return mhz;
}

void nvml_close(struct nvml_gpu *g)
{
	if (!g)
		return;
	g->shutdown();
	dlclose(g->lib);
	free(g);
}

/* nvmlClocksEventReason* bits; 0x1 (GPU idle) is left out: it says nothing about the timed calls */
static const struct { unsigned long long bit; const char *name; } reason_bits[] = {
	{ 0x2ULL, "applications_clocks" }, { 0x4ULL, "sw_power_cap" }, { 0x8ULL, "hw_slowdown" },
	{ 0x10ULL, "sync_boost" }, { 0x20ULL, "sw_thermal" }, { 0x40ULL, "hw_thermal" },
	{ 0x80ULL, "power_brake" }, { 0x100ULL, "display_clocks" },
};

size_t nvml_reason_list(unsigned long long reasons, const char **names, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(reason_bits) / sizeof(reason_bits[0]) && n < max; i++)
		if (reasons & reason_bits[i].bit)
			names[n++] = reason_bits[i].name;
	return n;
}

void nvml_reason_names(unsigned long long reasons, struct strbuf *out)
{
	const char *names[16];
	size_t n = nvml_reason_list(reasons, names, 16);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s%s", i ? "," : "", names[i]);
	unsigned long long known = 0x1ff;
	if (reasons & ~known)
		strbuf_addf(out, "%sother_0x%llx", n ? "," : "", reasons & ~known);
}
