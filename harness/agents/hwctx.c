/* hwctx.c - the hardware context of a run: the GPU the candidates are judged on (name, SM arch, memory,
 * bandwidth, L2), or the CPU, as a struct for the prompts and as hardware.json for the run directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/gpu.h"
#include "../eval/evaluate.h"
#include "agent.h"
#include "prompt.h"

static void cpu_model(char *out, size_t cap)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	snprintf(out, cap, "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (starts_with(line, "model name") && colon) {
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(out, cap, "%s", colon);
			break;
		}
	}
	if (f)
		fclose(f);
}

void hw_context_fill(struct hw_context *h, const struct eval_env *e)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->device, sizeof(h->device), "%s", e->device);
	snprintf(h->torch, sizeof(h->torch), "%s", e->torch);
	h->cpu_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	if (!starts_with(e->device, "cuda"))
		return;
	h->gpu = 1;
	snprintf(h->gpu_name, sizeof(h->gpu_name), "%s", e->gpu);
	snprintf(h->sm, sizeof(h->sm), "%s", e->sm);
	h->l2_bytes = e->l2_bytes;
	int index = atoi(e->device + (e->device[4] == ':' ? 5 : 4));
	struct gpu_list l;
	gpu_query(&l);
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].index == index) {
			h->memory_bytes = l.v[i].memory_bytes;
			h->bandwidth_gbs = l.v[i].peak_bw_gbs;
			h->sms = l.v[i].multiprocessors;
			if (!h->l2_bytes)
				h->l2_bytes = l.v[i].l2_bytes;
		}
	gpu_list_release(&l);
}

json_t *hw_context_json(const struct hw_context *h)
{
	return json_pack("{s:s, s:b, s:s, s:s, s:I, s:f, s:I, s:i, s:s, s:i, s:s}", "device", h->device, "gpu", h->gpu,
			 "gpu_name", h->gpu_name, "sm", h->sm, "memory_bytes", (json_int_t)h->memory_bytes, "bandwidth_gbs",
			 h->bandwidth_gbs, "l2_bytes", (json_int_t)h->l2_bytes, "sms", h->sms, "torch", h->torch,
			 "cpu_cores", h->cpu_cores, "cpu_model", h->cpu_model);
}

static void bytes_text(long long b, char *out, size_t cap)
{
	if (b <= 0)
		snprintf(out, cap, "unknown");
	else if (b >= (1LL << 30))
		snprintf(out, cap, "%.0f GiB", (double)b / (1 << 30));
	else
		snprintf(out, cap, "%.0f MiB", (double)b / (1 << 20));
}

void hw_context_vars(const struct hw_context *h, struct tvars *v)
{
	char buf[64];
	tvars_set(v, "device", h->device);
	tvars_set(v, "gpu_name", h->gpu ? h->gpu_name : "none (CPU run)");
	tvars_set(v, "sm_arch", h->gpu && h->sm[0] ? h->sm : "none");
	bytes_text(h->memory_bytes, buf, sizeof(buf));
	tvars_set(v, "gpu_memory", buf);
	if (h->bandwidth_gbs > 0)
		tvars_setf(v, "bandwidth", "%.0f GB/s", h->bandwidth_gbs);
	else
		tvars_set(v, "bandwidth", "unknown");
	bytes_text(h->l2_bytes, buf, sizeof(buf));
	tvars_set(v, "l2_cache", buf);
	if (h->sms > 0)
		tvars_setf(v, "sm_count", "%d", h->sms);
	else
		tvars_set(v, "sm_count", "unknown");
	tvars_setf(v, "cpu", "%s, %d cores", h->cpu_model, h->cpu_cores);
	tvars_set(v, "torch_version", h->torch);
}
