/* shard.c - the shard partition: item k of the canonical order goes to shard (k mod N) + 1, so shards
 * differ by at most one item and each one gets a mix of problems and agents. */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>

int shard_parse(const char *text, struct shard *out, struct sb_error *err)
{
	char *end;
	long i = strtol(text, &end, 10), n = 0;
	if (end != text && *end == '/') {
		const char *p = end + 1;
		n = strtol(p, &end, 10);
		if (end == p || *end)
			n = 0;
	}
	if (n < 1 || n > 100000 || i < 1 || i > n)
		return sb_error_set(err, SB_EINPUT, "--shard %s: expected I/N with 1 <= I <= N (e.g. 2/4: the second of four "
				    "shards)", text);
	out->index = (int)i;
	out->count = (int)n;
	return 0;
}

int shard_holds(const struct shard *s, size_t item)
{
	if (s->count <= 0)
		return 1;
	return item % (size_t)s->count == (size_t)(s->index - 1);
}

void shard_run_id(const struct shard *s, const char *base, char *out, size_t cap)
{
	if (s->count <= 0)
		snprintf(out, cap, "%s", base);
	else
		snprintf(out, cap, "%s-shard%dof%d", base, s->index, s->count);
}

void shard_text(const struct shard *s, char *out, size_t cap)
{
	if (s->count <= 0)
		snprintf(out, cap, "%s", "");
	else
		snprintf(out, cap, "%d/%d", s->index, s->count);
}
