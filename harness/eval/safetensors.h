/* safetensors.h - reads the safetensors files the workers write (harness/worker/sbtensors.py).
 * The writer is untrusted: st_open validates every field and offset before anything is exposed. */
#ifndef SB_SAFETENSORS_H
#define SB_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../core/error.h"

enum st_dtype { ST_F32, ST_F16, ST_BF16, ST_F64, ST_I64, ST_I32, ST_I16, ST_I8, ST_U8, ST_BOOL };
#define ST_MAX_DIMS 8
/* A header larger than this is an attack or a bug, not model outputs. */
#define ST_MAX_HEADER (100u << 20)

struct st_tensor {
	char *name;
	enum st_dtype dtype;
	int ndim;
	int64_t shape[ST_MAX_DIMS];
	int64_t numel;          /* 1 for a 0-dim tensor, 0 for an empty one */
	const void *data;       /* inside the file's bytes in memory; not aligned: read through st_value() or memcpy */
	size_t nbytes;          /* == numel * st_dtype_size(dtype) */
};

struct st_file {
	void *map;              /* the file's bytes (a copy read into memory of our own) */
	size_t size;
	struct st_tensor *tensors;  /* in header order */
	size_t ntensors;
	char **meta_keys, **meta_values;
	size_t nmeta;
};

/* Reads `path` into memory and validates it: lengths, JSON, dtypes, shapes, offsets (in bounds, sizes that
 * match the shape, no overlaps and, as the format requires, no holes or trailing bytes), duplicate names,
 * string metadata. On error *f is left closed and err names the file and what is wrong (SB_EINPUT for a
 * malformed file, SB_EIO when it cannot be read). The file is copied, not mapped, so a writer that is still
 * alive and truncates it cannot make the parent fault (SIGBUS); a file that changes while read is an error. */
int st_open(const char *path, struct st_file *f, struct sb_error *err);
/* Safe on a zeroed or already closed struct. */
void st_close(struct st_file *f);
const struct st_tensor *st_find(const struct st_file *f, const char *name);
const char *st_meta(const struct st_file *f, const char *key);           /* NULL if absent */
const char *st_dtype_name(enum st_dtype d);                               /* "F32" ... */
size_t st_dtype_size(enum st_dtype d);                                    /* bytes per element */
int st_dtype_is_float(enum st_dtype d);
int st_dtype_parse(const char *name, enum st_dtype *d);                  /* "F32" -> ST_F32; -1 if unknown */
/* Element i (flat, C order) as a double; f16/bf16 exactly, I64 beyond 2^53 rounded, BOOL as 0/1
 * (any non-zero byte is true, as torch reads it). NaN when i is outside [0, numel). */
double st_value(const struct st_tensor *t, int64_t i);

/* Half and bfloat16 bit patterns to double, exactly (subnormals, infinities, NaN). Inline and free of
 * ldexp because compare.c converts every element of a half-precision output through them. */
static inline double st_f16_to_double(uint16_t h)
{
	unsigned exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	uint64_t bits = (uint64_t)(h >> 15) << 63;
	double v;
	if (exp == 0) {
		v = mant * 0x1p-24; /* zero and subnormals: mant * 2^-14 * 2^-10, exact */
		return h >> 15 ? -v : v;
	}
	if (exp == 31)
		bits |= mant ? 0x7ff8000000000000ull : 0x7ff0000000000000ull;
	else /* rebias the exponent (15 -> 1023) and widen the 10 mantissa bits to 52 */
		bits |= (uint64_t)(exp - 15 + 1023) << 52 | (uint64_t)mant << 42;
	memcpy(&v, &bits, sizeof(v));
	return v;
}

static inline double st_bf16_to_double(uint16_t b)
{
	/* bfloat16 is the top half of an IEEE float, so widening the bits is exact for every class. */
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif
