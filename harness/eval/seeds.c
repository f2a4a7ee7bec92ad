/* seeds.c - an evaluation's secret and the seeds derived from it (seeds.h). */
#include "seeds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "../core/sha256.h"

int eval_seeds_draw(struct eval_seeds *s, struct sb_error *err)
{
	size_t got = 0;
	memset(s, 0, sizeof(*s));
	while (got < sizeof(s->secret)) {
		ssize_t n = getrandom(s->secret + got, sizeof(s->secret) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return sb_error_set(err, SB_EENV, "getrandom failed: %s", strerror(errno));
		got += (size_t)n;
	}
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int eval_seeds_parse(struct eval_seeds *s, const char *text, struct sb_error *err)
{
	memset(s, 0, sizeof(*s));
	if (!text || strlen(text) != 2 * sizeof(s->secret))
		return sb_error_set(err, SB_EINPUT, "a seed secret is %zu hex digits (a verdict's seeds.secret), not '%.40s'",
				    2 * sizeof(s->secret), text ? text : "");
	for (size_t i = 0; i < sizeof(s->secret); i++) {
		int hi = hexval(text[2 * i]), lo = hexval(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return sb_error_set(err, SB_EINPUT, "a seed secret is hex digits only, not '%.40s'", text);
		s->secret[i] = (uint8_t)(hi << 4 | lo);
	}
	s->replayed = 1;
	return 0;
}

void eval_seeds_hex(const struct eval_seeds *s, char out[33])
{
	for (size_t i = 0; i < sizeof(s->secret); i++)
		snprintf(out + 2 * i, 3, "%02x", s->secret[i]);
}

uint32_t eval_seed(const struct eval_seeds *s, enum seed_use use, uint32_t k)
{
	struct sha256_ctx c;
	uint8_t msg[8] = { (uint8_t)use, 0, 0, 0, (uint8_t)k, (uint8_t)(k >> 8), (uint8_t)(k >> 16), (uint8_t)(k >> 24) };
	uint8_t h[32];
	sha256_init(&c);
	sha256_update(&c, s->secret, sizeof(s->secret));
	sha256_update(&c, msg, sizeof(msg));
	sha256_final(&c, h);
	return ((uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24) & 0x7FFFFFFFu;
}
