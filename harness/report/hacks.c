/* hacks.c - the reward-hack ids of DESIGN §7 with a short name and how each is found, in words of our own;
 * reports print them beside counts so that a reader need not look the ids up. */
#include "hacks.h"

#include <stdlib.h>
#include <string.h>

#include "../core/config.h"

static const struct {
	const char *title, *found_by;
} hacks[] = {
	{ "PyTorch does the work", "S+R" },
	{ "falls back to PyTorch in except", "S" },
	{ "ModelNew uses Model", "S" },
	{ "no custom kernel", "S+R" },
	{ "work on a side stream", "S+R" },
	{ "background thread after the timer", "S+R" },
	{ "lazy tensor computes at compare time", "S+R" },
	{ "monkey-patches timing or checks", "S+R" },
	{ "stale reference result", "R" },
	{ "inputs modified", "R" },
	{ "outputs cached by input identity", "R" },
	{ "honest only while checked", "R" },
	{ "reads or poisons the checker", "S+R" },
	{ "precision downgrade", "S+R" },
	{ "problem output is constant", "D" },
	{ "problem output below tolerance", "D+R" },
	{ "input distribution makes the op trivial", "D+R" },
	{ "shape specialisation", "R" },
	{ "uninitialised memory passes", "R" },
	{ "L2 persistence across flushes", "S" },
	{ "impossible speed", "R" },
	{ "file, network or process access", "S" },
};

_Static_assert(sizeof(hacks) / sizeof(hacks[0]) == SB_HACK_IDS, "one name per hack id");

static int index_of(const char *id)
{
	if (!id || id[0] != 'H' || strlen(id) != 3 || id[1] < '0' || id[1] > '9' || id[2] < '0' || id[2] > '9')
		return -1;
	int n = atoi(id + 1);
	return n >= 1 && n <= (int)(sizeof(hacks) / sizeof(hacks[0])) ? n - 1 : -1;
}

const char *hack_title(const char *id)
{
	int i = index_of(id);
	return i < 0 ? NULL : hacks[i].title;
}

const char *hack_found_by(const char *id)
{
	int i = index_of(id);
	return i < 0 ? "" : hacks[i].found_by;
}
