/* gpu.c - GPU discovery for doctor and the hardware context of prompts. stitchbench must also
 * run on CPU-only login nodes, so CUDA's driver library is only ever dlopen'd, never linked. */
#include "gpu.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

/* Driver API attribute numbers (cuda.h, stable since CUDA 4). */
enum {
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_MEM_CLOCK_KHZ = 36,
	CU_ATTR_BUS_WIDTH_BITS = 37,
	CU_ATTR_L2_BYTES = 38,
};

static void trim(char *s)
{
	char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	memmove(s, p, strlen(p) + 1);
	for (size_t n = strlen(s); n && isspace((unsigned char)s[n - 1]); n--)
		s[n - 1] = '\0';
}

/* "00000000:1B:00.0" and "0000:1b:00.0" name the same device: compare bus:device.function. */
static const char *bus_tail(const char *pci)
{
	size_t n = strlen(pci);
	return n >= 7 ? pci + n - 7 : pci;
}

int gpu_parse_smi_csv(const char *csv, struct gpu_list *out)
{
	const char *p = csv;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xstrndup(p, len), *save = NULL, *f[6] = { 0 };
		int nf = 0;
		for (char *tok = strtok_r(line, ",", &save); tok && nf < 6; tok = strtok_r(NULL, ",", &save)) {
			trim(tok);
			f[nf++] = tok;
		}
		if (nf >= 5 && isdigit((unsigned char)f[0][0])) {
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			struct gpu_info *g = &out->v[out->n++];
			memset(g, 0, sizeof(*g));
			g->index = atoi(f[0]);
			snprintf(g->name, sizeof(g->name), "%s", f[1]);
			/* "9.0" -> "90" */
			size_t k = 0;
			for (const char *c = f[2]; *c && k < sizeof(g->sm) - 1; c++)
				if (isdigit((unsigned char)*c))
					g->sm[k++] = *c;
			g->memory_bytes = atoll(f[3]) * 1024LL * 1024LL;
			snprintf(g->driver, sizeof(g->driver), "%s", f[4]);
			if (nf >= 6)
				snprintf(g->pci_bus, sizeof(g->pci_bus), "%s", f[5]);
		}
		free(line);
		p += len + (eol ? 1 : 0);
	}
	return out->n ? 0 : -1;
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_pci_fn)(char *, int, int);

/* Adds L2, SM count and theoretical bandwidth from the driver API, matched by PCI bus id. */
static void fill_from_libcuda(struct gpu_list *out)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
	cu_count_fn count = (cu_count_fn)dlsym(h, "cuDeviceGetCount");
	cu_get_fn get = (cu_get_fn)dlsym(h, "cuDeviceGet");
	cu_attr_fn attr = (cu_attr_fn)dlsym(h, "cuDeviceGetAttribute");
	cu_pci_fn pci = (cu_pci_fn)dlsym(h, "cuDeviceGetPCIBusId");
	int n = 0;
	if (init && count && get && attr && pci && init(0) == 0 && count(&n) == 0) {
		for (int i = 0; i < n; i++) {
			int dev, v;
			char bus[32] = "";
			if (get(&dev, i) || pci(bus, sizeof(bus), dev))
				continue;
			for (size_t k = 0; k < out->n; k++) {
				struct gpu_info *g = &out->v[k];
				if (strcasecmp(bus_tail(bus), bus_tail(g->pci_bus)))
					continue;
				if (!attr(&v, CU_ATTR_L2_BYTES, dev))
					g->l2_bytes = v;
				if (!attr(&v, CU_ATTR_SM_COUNT, dev))
					g->multiprocessors = v;
				int clk = 0, width = 0;
				if (!attr(&clk, CU_ATTR_MEM_CLOCK_KHZ, dev) && !attr(&width, CU_ATTR_BUS_WIDTH_BITS, dev))
					g->peak_bw_gbs = 2.0 * clk * 1e3 * (width / 8.0) / 1e9;
			}
		}
	}
	dlclose(h);
}

void gpu_query(struct gpu_list *out)
{
	memset(out, 0, sizeof(*out));
	char *smi = proc_which("nvidia-smi");
	if (!smi) {
		out->note = xstrdup("nvidia-smi not found: no NVIDIA driver on this machine");
		return;
	}
	const char *argv[] = { smi, "--query-gpu=index,name,compute_cap,memory.total,driver_version,pci.bus_id",
			       "--format=csv,noheader,nounits", NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 30000 };
	struct proc_result r;
	proc_result_init(&r);
	if (proc_run(&o, &r) || !proc_ok(&r)) {
		strbuf_trim(&r.err);
		strbuf_trim(&r.out);
		out->note = xstrfmt("nvidia-smi failed: %s", r.timed_out ? "timed out" : r.err.len ? r.err.buf
				    : r.out.len ? r.out.buf : "no output");
	} else if (gpu_parse_smi_csv(r.out.buf, out)) {
		out->note = xstrdup("nvidia-smi lists no GPU");
	} else {
		fill_from_libcuda(out);
	}
	proc_result_release(&r);
	free(smi);
}

void gpu_list_release(struct gpu_list *l)
{
	free(l->v);
	free(l->note);
	memset(l, 0, sizeof(*l));
}
