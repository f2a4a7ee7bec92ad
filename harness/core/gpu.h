/* gpu.h - what the harness knows about the machine's NVIDIA GPUs without linking CUDA:
 * nvidia-smi for names, memory and driver; libcuda (dlopen'd) for L2, SM count and bandwidth. */
#ifndef SB_GPU_H
#define SB_GPU_H

#include <stddef.h>

#include "strbuf.h"

struct gpu_info {
	int index;
	char name[128];
	char sm[8];              /* compute capability without the dot: "90" */
	long long memory_bytes;
	char driver[32];
	char pci_bus[32];
	long long l2_bytes;      /* 0 = unknown */
	int multiprocessors;     /* 0 = unknown */
	double peak_bw_gbs;      /* theoretical, from memory clock and bus width; 0 = unknown */
};

struct gpu_list {
	struct gpu_info *v;
	size_t n;
	char *note;              /* why the list is empty or partial, for doctor; may be NULL */
};

/* Never fails: an empty list with a note means no usable GPU. */
void gpu_query(struct gpu_list *out);
void gpu_list_release(struct gpu_list *l);
/* Parses nvidia-smi's CSV (index,name,compute_cap,memory.total[MiB],driver_version,pci.bus_id). */
int gpu_parse_smi_csv(const char *csv, struct gpu_list *out);

#endif
