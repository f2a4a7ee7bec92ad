/* test_safetensors.c - the safetensors reader: every malformation a hostile worker could write is
 * refused with its own message, valid files read back exactly, and the Python writer and C reader agree. */
#include "testutil.h"

#include <math.h>

#include "core/proc.h"
#include "eval/check/check.h"

/* Writes the 8-byte little-endian length, the header and the data section to dir/name. */
static char *write_st(const char *dir, const char *name, const char *header, const void *data, size_t dlen)
{
	char *path = xstrfmt("%s/%s", dir, name);
	uint64_t n = strlen(header);
	unsigned char len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (unsigned char)(n >> (8 * i));
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(len8, 1, 8, f), 8);
	assert_int_equal(fwrite(header, 1, n, f), n);
	if (dlen)
		assert_int_equal(fwrite(data, 1, dlen, f), dlen);
	fclose(f);
	return path;
}

static void write_bytes(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	if (n)
		assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

/* Opens path, expects SB_EINPUT with `why` in the message and the path named; leaves f closed. */
static void expect_rejected(const char *path, const char *why)
{
	struct st_file f;
	struct sb_error err = { 0 };
	int rc = st_open(path, &f, &err);
	if (rc != SB_EINPUT || !strstr(err.msg, why) || !strstr(err.msg, path))
		fail_msg("%s: expected a rejection mentioning \"%s\", got rc %d: %s", path, why, rc, err.msg);
	assert_null(f.map);
	assert_null(f.tensors);
}

/* One malformed header, the size of the zero data section after it, and the words the error must use. */
struct bad_header {
	const char *header;
	size_t dlen;
	const char *why;
};

static void expect_all_rejected(const struct bad_header *cases, size_t n)
{
	unsigned char data[64] = { 0 };
	char *dir = tmpdir_make();
	for (size_t i = 0; i < n; i++) {
		assert_true(cases[i].dlen <= sizeof(data));
		char *path = write_st(dir, "bad.safetensors", cases[i].header, data, cases[i].dlen);
		expect_rejected(path, cases[i].why);
		free(path);
	}
	tmpdir_remove(dir);
}
#define EXPECT_ALL_REJECTED(cases) expect_all_rejected(cases, sizeof(cases) / sizeof(cases[0]))
/* A header with one tensor 'a' whose entry holds `fields`. */
#define A(fields) "{\"a\":{" fields "}}"
#define OFFSETS_WHY "tensor 'a': data_offsets must be [begin, end] with 0 <= begin <= end"

static void rejects_bad_lengths(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *path = xstrfmt("%s/x.safetensors", dir);
	struct st_file f;
	struct sb_error err = { 0 };

	write_bytes(path, "\x10\0\0\0\0", 5);
	expect_rejected(path, "shorter than the 8-byte header length");
	write_bytes(path, "", 0);
	expect_rejected(path, "shorter than the 8-byte header length");
	/* says 32 header bytes, has 2 */
	write_bytes(path, "\x20\0\0\0\0\0\0\0{}", 10);
	expect_rejected(path, "header length 32 is larger than the 2 bytes that follow it");
	/* 200 MiB: refused before anything is compared with the file's size */
	write_bytes(path, "\0\0\x80\x0c\0\0\0\0{}", 10);
	expect_rejected(path, "header length 209715200 exceeds the 100 MiB limit");
	write_bytes(path, "\xff\xff\xff\xff\xff\xff\xff\xff{}", 10);
	expect_rejected(path, "exceeds the 100 MiB limit");

	assert_int_equal(st_open(dir, &f, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "not a regular file"));
	char *missing = xstrfmt("%s/missing.safetensors", dir);
	assert_int_equal(st_open(missing, &f, &err), SB_EIO);
	assert_non_null(strstr(err.msg, "cannot open"));
	assert_non_null(strstr(err.msg, missing));
	free(missing);
	free(path);
	tmpdir_remove(dir);
}

static void rejects_bad_json(void **state)
{
	(void)state;
	static const struct bad_header cases[] = {
		{ "{\"a\": {\"dtype\": \"F32\"", 0, "header is not valid JSON" },
		{ "[1, 2]", 0, "header is not a JSON object" },
		{ "\"F32\"", 0, "header is not a JSON object" },
		{ "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
		  "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2, "duplicate object key" },
		{ "{\"a\": 3}", 0, "tensor 'a': entry is not an object" },
		{ A("\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1"), 1, "tensor 'a': unexpected field 'x'" },
	};
	EXPECT_ALL_REJECTED(cases);
}

static void rejects_bad_dtype_and_shape(void **state)
{
	(void)state;
	static const struct bad_header cases[] = {
		{ A("\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]"), 1, "tensor 'a': unknown dtype 'F8_E4M3'" },
		{ A("\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]"), 4, "tensor 'a': dtype is missing or not a string" },
		{ A("\"dtype\":\"F32\",\"data_offsets\":[0,4]"), 4, "tensor 'a': shape is missing or not a list" },
		{ A("\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]"), 16, "tensor 'a': shape is missing or not a list" },
		{ A("\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]"), 4,
		  "tensor 'a': shape must be a list of non-negative integers" },
		{ A("\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]"), 8,
		  "tensor 'a': shape must be a list of non-negative integers" },
		{ A("\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]"), 8,
		  "tensor 'a': shape must be a list of non-negative integers" },
		{ A("\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]"), 1,
		  "tensor 'a': 9 dimensions, more than the 8 supported" },
		/* 2^32 * 2^32 elements */
		{ A("\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,1]"), 1,
		  "tensor 'a': the element count of its shape overflows 64 bits" },
		/* 2^62 elements fit in int64, their 2^64 bytes do not */
		{ A("\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]"), 4,
		  "tensor 'a': its byte size (4611686018427387904 elements of F32) overflows" },
		/* a zero dimension makes any other harmless, so 'a' passes and 'b' is the one refused */
		{ "{\"a\":{\"dtype\":\"U8\",\"shape\":[0,4294967296,4294967296],\"data_offsets\":[0,0]},"
		  "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2,
		  "tensor 'b': 2 data bytes, but 1 elements of U8 need 1" },
	};
	EXPECT_ALL_REJECTED(cases);
}

static void rejects_bad_offsets(void **state)
{
	(void)state;
	static const struct bad_header cases[] = {
		{ A("\"dtype\":\"U8\",\"shape\":[4]"), 4, OFFSETS_WHY },
		{ A("\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4]"), 4, OFFSETS_WHY },
		{ A("\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4,8]"), 8, OFFSETS_WHY },
		{ A("\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,4]"), 8, OFFSETS_WHY },
		{ A("\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[-4,0]"), 8, OFFSETS_WHY },
		{ A("\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":\"0,4\""), 8, OFFSETS_WHY },
		{ A("\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]"), 3,
		  "tensor 'a': data_offsets end 4 is beyond the data section (3 bytes)" },
		{ A("\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,12]"), 12,
		  "tensor 'a': 12 data bytes, but 4 elements of F32 need 16" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
		  "tensors 'a' [0, 8) and 'b' [4, 12) overlap" },
		/* the same bytes handed out twice are an overlap too */
		{ "{\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		  "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "overlap" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12,
		  "4 bytes before tensor 'b' belong to no tensor" },
		{ A("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]"), 6, "2 trailing bytes after the last tensor's data" },
	};
	EXPECT_ALL_REJECTED(cases);
}

static void rejects_bad_metadata(void **state)
{
	(void)state;
	static const struct bad_header cases[] = {
		{ "{\"__metadata__\":{\"trial\":3}}", 0, "__metadata__ value of 'trial' is not a string" },
		{ "{\"__metadata__\":{\"a\":\"x\",\"b\":null}}", 0, "__metadata__ value of 'b' is not a string" },
		{ "{\"__metadata__\":[\"a\"]}", 0, "__metadata__ is not an object of strings" },
	};
	EXPECT_ALL_REJECTED(cases);
}

static void reads_a_valid_file(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	/* No padding: 8 + header length is odd, so every tensor is misaligned and must still read. */
	const char *header =
		"{\"__metadata__\":{\"problem\":\"1_Square\",\"trial\":\"2\"},"
		"\"out\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
		"\"h\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[16,22]},"
		"\"idx\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[22,38]},"
		"\"mask\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[38,41]},"
		"\"s\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[41,43]},"
		"\"none\":{\"dtype\":\"U8\",\"shape\":[0,5],\"data_offsets\":[43,43]}}   ";
	unsigned char data[43];
	float out[4] = { 1.5f, -2.0f, 0.25f, 1e30f };
	uint16_t h[3] = { 0x3F80, 0xC020, 0x4049 };
	int64_t idx[2] = { -7, (int64_t)1 << 40 };
	memcpy(data, out, 16);
	memcpy(data + 16, h, 6);
	memcpy(data + 22, idx, 16);
	memcpy(data + 38, "\1\0\2", 3);
	memcpy(data + 41, "\x00\x3c", 2); /* f16 1.0 */
	char *path = write_st(dir, "ok.safetensors", header, data, sizeof(data));
	assert_int_equal(strlen(header) % 2, 1);

	struct st_file f;
	struct sb_error err = { 0 };
	if (st_open(path, &f, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(f.ntensors, 6);
	assert_string_equal(f.tensors[0].name, "out"); /* header order */
	assert_string_equal(f.tensors[5].name, "none");
	assert_string_equal(st_meta(&f, "problem"), "1_Square");
	assert_string_equal(st_meta(&f, "trial"), "2");
	assert_null(st_meta(&f, "seed"));
	assert_null(st_find(&f, "__metadata__"));
	assert_null(st_find(&f, "missing"));

	const struct st_tensor *t = st_find(&f, "out");
	assert_int_equal(t->dtype, ST_F32);
	assert_int_equal(t->ndim, 2);
	assert_int_equal(t->shape[0], 2);
	assert_int_equal(t->numel, 4);
	assert_int_equal(t->nbytes, 16);
	for (int i = 0; i < 4; i++)
		assert_true(st_value(t, i) == out[i]);
	assert_true(isnan(st_value(t, 4)));
	assert_true(isnan(st_value(t, -1)));

	t = st_find(&f, "h");
	assert_true(st_value(t, 0) == 1.0 && st_value(t, 1) == -2.5 && st_value(t, 2) == 3.140625);
	t = st_find(&f, "idx");
	assert_true(st_value(t, 0) == -7.0 && st_value(t, 1) == 1099511627776.0);
	t = st_find(&f, "mask");
	assert_true(st_value(t, 0) == 1.0 && st_value(t, 1) == 0.0 && st_value(t, 2) == 1.0);
	t = st_find(&f, "s");
	assert_int_equal(t->ndim, 0);
	assert_int_equal(t->numel, 1);
	assert_true(st_value(t, 0) == 1.0);
	t = st_find(&f, "none");
	assert_int_equal(t->numel, 0);
	assert_int_equal(t->nbytes, 0);
	assert_true(isnan(st_value(t, 0)));

	st_close(&f);
	st_close(&f); /* closing twice is harmless */
	assert_null(f.map);
	free(path);

	/* A file with nothing in it is valid too. */
	path = write_st(dir, "empty.safetensors", "{}      ", NULL, 0);
	assert_int_equal(st_open(path, &f, &err), 0);
	assert_int_equal(f.ntensors, 0);
	st_close(&f);
	free(path);
	tmpdir_remove(dir);
}

static void dtype_names_sizes_and_kinds(void **state)
{
	(void)state;
	assert_string_equal(st_dtype_name(ST_BF16), "BF16");
	assert_string_equal(st_dtype_name(ST_BOOL), "BOOL");
	assert_int_equal(st_dtype_size(ST_F64), 8);
	assert_int_equal(st_dtype_size(ST_BOOL), 1);
	assert_true(st_dtype_is_float(ST_F16) && st_dtype_is_float(ST_BF16) && st_dtype_is_float(ST_F64));
	assert_false(st_dtype_is_float(ST_I64) || st_dtype_is_float(ST_U8) || st_dtype_is_float(ST_BOOL));
}

static void half_and_bfloat16_convert_exactly(void **state)
{
	(void)state;
	assert_true(st_f16_to_double(0x3C00) == 1.0);
	assert_true(st_f16_to_double(0xC100) == -2.5);
	assert_true(st_f16_to_double(0x7BFF) == 65504.0);
	assert_true(st_f16_to_double(0x0001) == ldexp(1, -24)); /* smallest subnormal */
	assert_true(st_f16_to_double(0x03FF) == ldexp(1023, -24)); /* largest subnormal */
	assert_true(st_f16_to_double(0x0400) == ldexp(1, -14)); /* smallest normal */
	assert_true(st_f16_to_double(0x3555) == ldexp(0x555 | 0x400, -12)); /* 0.333251953125 */
	assert_true(st_f16_to_double(0x0000) == 0.0 && !signbit(st_f16_to_double(0x0000)));
	assert_true(st_f16_to_double(0x8000) == 0.0 && signbit(st_f16_to_double(0x8000)));
	assert_true(isinf(st_f16_to_double(0x7C00)) && st_f16_to_double(0x7C00) > 0);
	assert_true(isinf(st_f16_to_double(0xFC00)) && st_f16_to_double(0xFC00) < 0);
	assert_true(isnan(st_f16_to_double(0x7E00)));
	assert_true(isnan(st_f16_to_double(0x7C01)));
	assert_true(isnan(st_f16_to_double(0xFE00)));

	assert_true(st_bf16_to_double(0x3F80) == 1.0);
	assert_true(st_bf16_to_double(0xC020) == -2.5);
	assert_true(st_bf16_to_double(0x4049) == 3.140625);
	assert_true(st_bf16_to_double(0x7F7F) == ldexp(255, 120)); /* largest finite: (2 - 2^-7) * 2^127 */
	assert_true(st_bf16_to_double(0x0001) == ldexp(1, -133)); /* smallest subnormal */
	assert_true(st_bf16_to_double(0x8000) == 0.0 && signbit(st_bf16_to_double(0x8000)));
	assert_true(isinf(st_bf16_to_double(0x7F80)) && st_bf16_to_double(0x7F80) > 0);
	assert_true(isinf(st_bf16_to_double(0xFF80)) && st_bf16_to_double(0xFF80) < 0);
	assert_true(isnan(st_bf16_to_double(0x7FC0)));
	assert_true(isnan(st_bf16_to_double(0x7F81)));
}

/* The writer the workers use, run by the interpreter the harness would pick. */
static const char *writer_script =
	"import sys, torch\n"
	"sys.path.insert(0, sys.argv[2] + '/harness/worker')\n"
	"import sbtensors\n"
	"t = {}\n"
	"for n, dt in [('F32', torch.float32), ('F16', torch.float16), ('BF16', torch.bfloat16), ('F64', torch.float64)]:\n"
	"    t[n] = torch.tensor([[-1.0, -0.5, 0.0], [0.5, 1.0, 1.5]], dtype=dt)\n"
	"for n, dt in [('I64', torch.int64), ('I32', torch.int32), ('I16', torch.int16), ('I8', torch.int8)]:\n"
	"    t[n] = torch.tensor([[-3, -2, -1], [0, 1, 2]], dtype=dt)\n"
	"t['U8'] = torch.tensor([[0, 1, 2], [253, 254, 255]], dtype=torch.uint8)\n"
	"t['BOOL'] = torch.tensor([[True, False, True], [False, False, True]])\n"
	"t['F16_special'] = torch.tensor([65504.0, 2.0 ** -24, float('inf'), float('-inf'), float('nan')], dtype=torch.float16)\n"
	"t['I64_big'] = torch.tensor([2 ** 62 + 1, -2 ** 63], dtype=torch.int64)\n"
	"t['scalar'] = torch.tensor(3.140625, dtype=torch.bfloat16)\n"
	"t['empty'] = torch.zeros(0, 4)\n"
	"t['transposed'] = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()\n"
	"sbtensors.save(sys.argv[1], t, {'producer': 'test_safetensors', 'trial': '3'})\n";

/* 0 when `python` imports torch; otherwise appends why to `why`. */
static int python_has_torch(const char *python, struct strbuf *why)
{
	const char *argv[] = { python, "-c", "import torch", NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 120000 };
	struct proc_result r;
	proc_result_init(&r);
	int rc = proc_run(&o, &r) ? -1 : proc_ok(&r) ? 0 : -1;
	if (rc) {
		strbuf_trim(&r.err);
		const char *last = strrchr(r.err.buf, '\n');
		strbuf_addf(why, "  %s: %s\n", python, r.spawn_failed ? "cannot be run" : last ? last + 1 : r.err.buf);
	}
	proc_result_release(&r);
	return rc;
}

static void python_writer_and_c_reader_agree(void **state)
{
	(void)state;
	const char *root = getenv("SB_SOURCE_ROOT");
	const char *env_py = getenv("STITCHBENCH_PYTHON");
	const char *python = NULL;
	struct strbuf why = STRBUF_INIT;
	if (!root || !*root)
		root = ".";
	if (env_py && *env_py && !python_has_torch(env_py, &why))
		python = env_py;
	else if (!python_has_torch("/usr/bin/python3", &why))
		python = "/usr/bin/python3";
	if (!python)
		fail_msg("no Python with torch to run harness/worker/sbtensors.py (set STITCHBENCH_PYTHON or "
			 "install python3-torch):\n%s", why.buf);
	strbuf_release(&why);

	char *dir = tmpdir_make();
	char *path = xstrfmt("%s/out.safetensors", dir);
	const char *argv[] = { python, "-c", writer_script, path, root, NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 120000 };
	struct proc_result r;
	proc_result_init(&r);
	assert_int_equal(proc_run(&o, &r), 0);
	if (!proc_ok(&r))
		fail_msg("%s could not write with sbtensors.py (root %s):\n%s", python, root, r.err.buf);
	proc_result_release(&r);

	struct st_file f;
	struct sb_error err = { 0 };
	if (st_open(path, &f, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(f.ntensors, 15);
	assert_string_equal(st_meta(&f, "producer"), "test_safetensors");
	assert_string_equal(st_meta(&f, "trial"), "3");

	static const struct { const char *name; enum st_dtype dtype; double first, step; } grids[] = {
		{ "F32", ST_F32, -1.0, 0.5 }, { "F16", ST_F16, -1.0, 0.5 }, { "BF16", ST_BF16, -1.0, 0.5 },
		{ "F64", ST_F64, -1.0, 0.5 }, { "I64", ST_I64, -3, 1 },      { "I32", ST_I32, -3, 1 },
		{ "I16", ST_I16, -3, 1 },     { "I8", ST_I8, -3, 1 },
	};
	for (size_t k = 0; k < sizeof(grids) / sizeof(grids[0]); k++) {
		const struct st_tensor *t = st_find(&f, grids[k].name);
		assert_non_null(t);
		assert_int_equal(t->dtype, grids[k].dtype);
		assert_int_equal(t->ndim, 2);
		assert_int_equal(t->shape[0], 2);
		assert_int_equal(t->shape[1], 3);
		for (int i = 0; i < 6; i++)
			if (st_value(t, i) != grids[k].first + i * grids[k].step)
				fail_msg("%s[%d] = %g, expected %g", grids[k].name, i, st_value(t, i),
					 grids[k].first + i * grids[k].step);
	}
	const struct st_tensor *t = st_find(&f, "U8");
	const double u8[] = { 0, 1, 2, 253, 254, 255 }, flags[] = { 1, 0, 1, 0, 0, 1 };
	for (int i = 0; i < 6; i++)
		assert_true(st_value(t, i) == u8[i]);
	t = st_find(&f, "BOOL");
	assert_int_equal(t->dtype, ST_BOOL);
	assert_int_equal(t->nbytes, 6);
	for (int i = 0; i < 6; i++)
		assert_true(st_value(t, i) == flags[i]);

	t = st_find(&f, "F16_special");
	assert_true(st_value(t, 0) == 65504.0 && st_value(t, 1) == ldexp(1, -24));
	assert_true(st_value(t, 2) == INFINITY && st_value(t, 3) == -INFINITY && isnan(st_value(t, 4)));

	t = st_find(&f, "I64_big"); /* beyond 2^53: check the bytes, not doubles */
	int64_t big[2];
	memcpy(big, t->data, sizeof(big));
	assert_true(big[0] == ((int64_t)1 << 62) + 1 && big[1] == INT64_MIN);

	t = st_find(&f, "scalar");
	assert_int_equal(t->ndim, 0);
	assert_true(st_value(t, 0) == 3.140625);
	t = st_find(&f, "empty");
	assert_int_equal(t->ndim, 2);
	assert_int_equal(t->shape[0], 0);
	assert_int_equal(t->shape[1], 4);
	assert_int_equal(t->nbytes, 0);
	t = st_find(&f, "transposed"); /* written C-contiguous in its transposed shape [3, 2] */
	assert_int_equal(t->shape[0], 3);
	const double tr[] = { 0, 3, 1, 4, 2, 5 };
	for (int i = 0; i < 6; i++)
		assert_true(st_value(t, i) == tr[i]);
	/* the writer pads the header so that the data section starts 8-byte aligned */
	assert_int_equal(((const char *)st_find(&f, "F32")->data - (const char *)f.map) % 8, 0);
	st_close(&f);
	free(path);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rejects_bad_lengths),
		cmocka_unit_test(rejects_bad_json),
		cmocka_unit_test(rejects_bad_dtype_and_shape),
		cmocka_unit_test(rejects_bad_offsets),
		cmocka_unit_test(rejects_bad_metadata),
		cmocka_unit_test(reads_a_valid_file),
		cmocka_unit_test(dtype_names_sizes_and_kinds),
		cmocka_unit_test(half_and_bfloat16_convert_exactly),
		cmocka_unit_test(python_writer_and_c_reader_agree),
	};
	return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
