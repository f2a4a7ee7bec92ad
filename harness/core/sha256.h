/* sha256.h - SHA-256 (FIPS 180-4) for problem and candidate content hashes.
 * None of the chosen libraries exports a hash, and caches and results are keyed by these. */
#ifndef SB_SHA256_H
#define SB_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
	uint32_t h[8];
	uint64_t nbytes;
	uint8_t block[64];
	size_t used;
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, uint8_t out[32]);
/* Hex digest (64 chars + NUL) of a buffer. */
void sha256_hex(const void *data, size_t len, char out[65]);
/* Hex digest of a file; returns 0 or -errno. */
int sha256_file_hex(const char *path, char out[65]);

#endif
