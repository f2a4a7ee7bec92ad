/* safetensors.c - reads a worker's output file and checks every length, offset and field before use.
 * The file comes from the sandboxed candidate, so nothing in it is believed until it is checked. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/parallel.h"
#include "../../core/strbuf.h"

static const struct {
	const char *name;
	size_t size;
	int is_float;
} dtypes[] = {
	[ST_F32] = { "F32", 4, 1 }, [ST_F16] = { "F16", 2, 1 }, [ST_BF16] = { "BF16", 2, 1 },
	[ST_F64] = { "F64", 8, 1 }, [ST_I64] = { "I64", 8, 0 }, [ST_I32] = { "I32", 4, 0 },
	[ST_I16] = { "I16", 2, 0 }, [ST_I8] = { "I8", 1, 0 },   [ST_U8] = { "U8", 1, 0 },
	[ST_BOOL] = { "BOOL", 1, 0 },
};
#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

const char *st_dtype_name(enum st_dtype d)
{
	return (unsigned)d < NDTYPES ? dtypes[d].name : "?";
}

size_t st_dtype_size(enum st_dtype d)
{
	return (unsigned)d < NDTYPES ? dtypes[d].size : 0;
}

int st_dtype_parse(const char *name, enum st_dtype *d)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (!strcmp(name, dtypes[i].name)) {
			*d = (enum st_dtype)i;
			return 0;
		}
	return -1;
}

int st_dtype_is_float(enum st_dtype d)
{
	return (unsigned)d < NDTYPES && dtypes[d].is_float;
}

double st_value(const struct st_tensor *t, int64_t i)
{
	if (i < 0 || i >= t->numel)
		return NAN;
	const unsigned char *p = (const unsigned char *)t->data + (size_t)i * st_dtype_size(t->dtype);
	switch (t->dtype) {
#define AS(type) do { type v; memcpy(&v, p, sizeof(v)); return (double)v; } while (0)
	case ST_F32: AS(float);
	case ST_F64: AS(double);
	case ST_I64: AS(int64_t);
	case ST_I32: AS(int32_t);
	case ST_I16: AS(int16_t);
	case ST_I8: AS(int8_t);
	case ST_U8: AS(uint8_t);
#undef AS
	case ST_BOOL:
		return *p != 0;
	case ST_F16:
	case ST_BF16: {
		uint16_t h;
		memcpy(&h, p, sizeof(h));
		return t->dtype == ST_F16 ? st_f16_to_double(h) : st_bf16_to_double(h);
	}
	}
	return NAN;
}

const struct st_tensor *st_find(const struct st_file *f, const char *name)
{
	for (size_t i = 0; i < f->ntensors; i++)
		if (!strcmp(f->tensors[i].name, name))
			return &f->tensors[i];
	return NULL;
}

const char *st_meta(const struct st_file *f, const char *key)
{
	for (size_t i = 0; i < f->nmeta; i++)
		if (!strcmp(f->meta_keys[i], key))
			return f->meta_values[i];
	return NULL;
}

/* The buffer a file is read into. Large ones are mapped and asked for huge pages: outputs run to
 * gigabytes, and reading 64 MiB into 4 KiB pages costs twice the time (one fault per page). */
#define BUFFER_MAPPED (2u << 20)

static void *buffer_alloc(size_t n)
{
	if (n < BUFFER_MAPPED)
		return malloc(n ? n : 1);
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n, MADV_HUGEPAGE); /* a hint: without transparent huge pages, plain pages */
	return p;
}

/* Reading runs in blocks on several threads (parallel.h) for large files: the copy out of the page cache
 * and the first touch of the buffer's pages are a large share of an evaluation's time on one core. */
#define READ_BLOCK ((size_t)8 << 20)

struct read_job {
	int fd;
	char *buf;
	size_t size;
	size_t *got; /* bytes read per block */
};

static size_t read_range(int fd, char *buf, size_t off, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, buf + off + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static void read_block(void *arg, size_t b)
{
	struct read_job *job = arg;
	size_t off = b * READ_BLOCK;
	job->got[b] = read_range(job->fd, job->buf, off, job->size - off < READ_BLOCK ? job->size - off : READ_BLOCK);
}

/* The bytes of [0, size) read into buf; fewer than size when the file is shorter than it was. */
static size_t read_all(int fd, void *buf, size_t size)
{
	if (size <= 2 * READ_BLOCK)
		return read_range(fd, buf, 0, size);
	size_t nb = par_blocks(size, READ_BLOCK), total = 0;
	struct read_job job = { fd, buf, size, xcalloc(nb, sizeof(size_t)) };
	par_for(nb, read_block, &job);
	for (size_t b = 0; b < nb; b++)
		total += job.got[b];
	free(job.got);
	return total;
}

static void buffer_free(void *p, size_t n)
{
	if (n < BUFFER_MAPPED)
		free(p);
	else
		munmap(p, n);
}

void st_close(struct st_file *f)
{
	if (f->map)
		buffer_free(f->map, f->size);
	for (size_t i = 0; i < f->ntensors; i++)
		free(f->tensors[i].name);
	for (size_t i = 0; i < f->nmeta; i++) {
		free(f->meta_keys[i]);
		free(f->meta_values[i]);
	}
	free(f->tensors);
	free(f->meta_keys);
	free(f->meta_values);
	memset(f, 0, sizeof(*f));
}

/* Every rejection names the file first; sb_error_set checks the format. */
#define bad(err, path, fmt, ...) sb_error_set(err, SB_EINPUT, "%s: " fmt, path, ##__VA_ARGS__)

static int get_nonneg(json_t *v, int64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

static int parse_metadata(const char *path, json_t *meta, struct st_file *f, struct sb_error *err)
{
	const char *key;
	json_t *v;
	if (!json_is_object(meta))
		return bad(err, path, "__metadata__ is not an object of strings");
	f->meta_keys = xcalloc(json_object_size(meta) + 1, sizeof(char *));
	f->meta_values = xcalloc(json_object_size(meta) + 1, sizeof(char *));
	json_object_foreach(meta, key, v) {
		if (!json_is_string(v))
			return bad(err, path, "__metadata__ value of '%s' is not a string", key);
		f->meta_keys[f->nmeta] = xstrdup(key);
		f->meta_values[f->nmeta++] = xstrdup(json_string_value(v));
	}
	return 0;
}

/* Fills t from one header entry; `data`/`avail` is the data section. begin/end are returned for the
 * overlap check. */
static int parse_tensor(const char *path, const char *name, json_t *entry, const unsigned char *data,
			size_t avail, struct st_tensor *t, int64_t *begin, int64_t *end, struct sb_error *err)
{
	const char *key, *dname;
	json_t *v, *shape, *offs;
	size_t i;

	if (!json_is_object(entry))
		return bad(err, path, "tensor '%s': entry is not an object", name);
	json_object_foreach(entry, key, v)
		if (strcmp(key, "dtype") && strcmp(key, "shape") && strcmp(key, "data_offsets"))
			return bad(err, path, "tensor '%s': unexpected field '%s'", name, key);

	dname = json_string_value(json_object_get(entry, "dtype"));
	if (!dname)
		return bad(err, path, "tensor '%s': dtype is missing or not a string", name);
	for (i = 0; i < NDTYPES && strcmp(dname, dtypes[i].name); i++)
		;
	if (i == NDTYPES)
		return bad(err, path, "tensor '%s': unknown dtype '%s' (known: F32 F16 BF16 F64 I64 I32 I16 I8 U8 BOOL)",
			   name, dname);
	t->dtype = (enum st_dtype)i;

	shape = json_object_get(entry, "shape");
	if (!json_is_array(shape))
		return bad(err, path, "tensor '%s': shape is missing or not a list", name);
	if (json_array_size(shape) > ST_MAX_DIMS)
		return bad(err, path, "tensor '%s': %zu dimensions, more than the %d supported", name,
			   json_array_size(shape), ST_MAX_DIMS);
	t->ndim = (int)json_array_size(shape);
	t->numel = 1;
	json_array_foreach(shape, i, v) {
		if (get_nonneg(v, &t->shape[i]))
			return bad(err, path, "tensor '%s': shape must be a list of non-negative integers", name);
		if (t->shape[i] && t->numel > INT64_MAX / t->shape[i])
			return bad(err, path, "tensor '%s': the element count of its shape overflows 64 bits", name);
		t->numel *= t->shape[i];
	}
	size_t isz = dtypes[t->dtype].size;
	if (t->numel > (int64_t)(SIZE_MAX / 2 / isz))
		return bad(err, path, "tensor '%s': its byte size (%lld elements of %s) overflows", name,
			   (long long)t->numel, dtypes[t->dtype].name);

	offs = json_object_get(entry, "data_offsets");
	if (!json_is_array(offs) || json_array_size(offs) != 2 || get_nonneg(json_array_get(offs, 0), begin) ||
	    get_nonneg(json_array_get(offs, 1), end) || *begin > *end)
		return bad(err, path, "tensor '%s': data_offsets must be [begin, end] with 0 <= begin <= end", name);
	if ((uint64_t)*end > avail)
		return bad(err, path, "tensor '%s': data_offsets end %lld is beyond the data section (%zu bytes)", name,
			   (long long)*end, avail);
	t->nbytes = (size_t)(*end - *begin);
	if (t->nbytes != (size_t)t->numel * isz)
		return bad(err, path, "tensor '%s': %zu data bytes, but %lld elements of %s need %zu", name, t->nbytes,
			   (long long)t->numel, dtypes[t->dtype].name, (size_t)t->numel * isz);
	t->data = data + *begin;
	t->name = xstrdup(name);
	return 0;
}

struct span {
	int64_t begin, end;
	size_t idx;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* The format wants the data section indexed entirely, with no overlaps and no holes: a byte that no
 * tensor owns is one a polyglot or smuggled payload could hide in. */
static int check_layout(const char *path, const struct st_file *f, struct span *spans, size_t avail,
			struct sb_error *err)
{
	int64_t covered = 0;
	const struct span *prev = NULL;
	qsort(spans, f->ntensors, sizeof(*spans), span_cmp);
	for (size_t i = 0; i < f->ntensors; i++) {
		const struct span *s = &spans[i];
		if (s->begin < covered)
			return bad(err, path, "tensors '%s' [%lld, %lld) and '%s' [%lld, %lld) overlap",
				   f->tensors[prev->idx].name, (long long)prev->begin, (long long)prev->end,
				   f->tensors[s->idx].name, (long long)s->begin, (long long)s->end);
		if (s->begin > covered)
			return bad(err, path, "%lld bytes before tensor '%s' belong to no tensor",
				   (long long)(s->begin - covered), f->tensors[s->idx].name);
		covered = s->end;
		prev = s;
	}
	if ((uint64_t)covered != avail)
		return bad(err, path, "%zu trailing bytes after the last tensor's data", avail - (size_t)covered);
	return 0;
}

static int parse_header(const char *path, struct st_file *f, size_t hlen, struct sb_error *err)
{
	const unsigned char *base = f->map;
	const unsigned char *data = base + 8 + hlen;
	size_t avail = f->size - 8 - hlen;
	json_error_t jerr;
	json_t *root, *v;
	const char *key;
	struct span *spans = NULL;
	int rc = 0;

	root = json_loadb((const char *)base + 8, hlen, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root)
		return bad(err, path, "header is not valid JSON: %s (header byte %d)", jerr.text, jerr.position);
	if (!json_is_object(root)) {
		json_decref(root);
		return bad(err, path, "header is not a JSON object");
	}
	f->tensors = xcalloc(json_object_size(root) + 1, sizeof(*f->tensors));
	spans = xcalloc(json_object_size(root) + 1, sizeof(*spans));
	json_object_foreach(root, key, v) {
		if (!strcmp(key, "__metadata__")) {
			rc = parse_metadata(path, v, f, err);
		} else {
			struct span *s = &spans[f->ntensors];
			rc = parse_tensor(path, key, v, data, avail, &f->tensors[f->ntensors], &s->begin, &s->end, err);
			s->idx = f->ntensors;
			if (!rc)
				f->ntensors++;
		}
		if (rc)
			break;
	}
	if (!rc)
		rc = check_layout(path, f, spans, avail, err);
	free(spans);
	json_decref(root);
	return rc;
}

int st_open(const char *path, struct st_file *f, struct sb_error *err)
{
	struct stat st;
	unsigned char len8[8];
	uint64_t hlen = 0;
	int fd, rc;

	memset(f, 0, sizeof(*f));
	/* O_NONBLOCK: a FIFO planted at the output path must not hang the parent in open(). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return sb_error_set(err, SB_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return bad(err, path, "not a regular file");
	}
	if ((uint64_t)st.st_size < 8) {
		close(fd);
		return bad(err, path, "file is %lld bytes, shorter than the 8-byte header length", (long long)st.st_size);
	}
	/* Read, not mmap: the file belongs to an untrusted process that (or whose children) may still run,
	 * and a mapped file truncated under us would kill the parent with SIGBUS. */
	f->size = (size_t)st.st_size;
	f->map = buffer_alloc(f->size);
	if (!f->map) {
		close(fd);
		return sb_error_set(err, SB_EIO, "%s: cannot allocate %zu bytes to read it", path, f->size);
	}
	size_t got = read_all(fd, f->map, f->size);
	close(fd);
	if (got != f->size) {
		buffer_free(f->map, f->size);
		f->map = NULL;
		return bad(err, path, "file changed while it was read (%zu of %zu bytes)", got, f->size);
	}
	memcpy(len8, f->map, 8);
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | len8[i];
	if (hlen > ST_MAX_HEADER)
		rc = bad(err, path, "header length %llu exceeds the %u MiB limit", (unsigned long long)hlen,
			 ST_MAX_HEADER >> 20);
	else if (hlen > f->size - 8)
		rc = bad(err, path, "header length %llu is larger than the %zu bytes that follow it",
			 (unsigned long long)hlen, f->size - 8);
	else
		rc = parse_header(path, f, (size_t)hlen, err);
	if (rc)
		st_close(f);
	return rc;
}
