/* kinds.c - the table of agent designs by their config name (agents[].kind). The baselines live in
 * baselines/, one file each; the Makefile builds them into the same library. */
#include <string.h>

#include "agent.h"

const struct agent_kind *agent_kind_find(const char *name)
{
	static const struct agent_kind *const all[] = { &agent_stitchcuda, &agent_oneshot, &agent_best_of_n,
							&agent_refine, &agent_cudaforge, &agent_kevin,
							&agent_torch_eager, &agent_torch_compile, &agent_samples };
	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}
