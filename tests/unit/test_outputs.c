/* test_outputs.c - comparing two output files as the evaluator does, on files large enough to be read,
 * hashed and compared in blocks on several threads: a difference or a non-zero byte in any block is
 * seen, and nothing (the digest above all) depends on the number of threads. */
#include "testutil.h"

#include "eval/check/check.h"
#include "eval/verdict.h"

enum { N = 10 * (1 << 20) + 3 }; /* 40 MiB of F32: five read blocks and eleven hash blocks, the last short */

/* dir/name: one F32 output "out0" of N elements. */
static char *write_out(const char *dir, const char *name, const float *v)
{
	char *path = xstrfmt("%s/%s", dir, name), header[128];
	int n = snprintf(header, sizeof(header), "{\"out0\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[0,%zu]}}",
			 N, (size_t)N * sizeof(float));
	unsigned char len8[8] = { (unsigned char)n };
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(len8, 1, 8, f), 8);
	assert_int_equal(fwrite(header, 1, (size_t)n, f), (size_t)n);
	assert_int_equal(fwrite(v, sizeof(float), N, f), N);
	fclose(f);
	return path;
}

static struct outputs_cmp compare(const char *expected, const char *actual, const char *threads)
{
	struct outputs_cmp r;
	struct sb_error err = { 0 };
	setenv("STITCHBENCH_THREADS", threads, 1);
	assert_int_equal(outputs_compare(expected, actual, TOL_KERNELBENCH, &r, &err), 0);
	unsetenv("STITCHBENCH_THREADS");
	assert_true(r.readable);
	return r;
}

static void large_files_compare_alike_on_any_number_of_threads(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	float *v = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++)
		v[i] = (float)(i % 1013) - 500.0f;
	char *a = write_out(dir, "a.safetensors", v), *b = write_out(dir, "b.safetensors", v);
	struct outputs_cmp one = compare(a, b, "1"), many = compare(a, b, "8");
	assert_true(one.pass && one.bitwise && many.pass && many.bitwise);
	assert_true(one.digest_expected == one.digest_actual);
	assert_true(many.digest_actual == one.digest_actual); /* the same hash whatever the threads */
	assert_false(one.zero_actual[0] || many.zero_actual[0]);
	outputs_cmp_release(&one);
	outputs_cmp_release(&many);

	/* one element in the last, short block off by its last bit: within tolerance, but not the same bytes */
	uint32_t bits;
	memcpy(&bits, &v[N - 2], 4);
	bits ^= 1;
	memcpy(&v[N - 2], &bits, 4);
	free(write_out(dir, "b.safetensors", v));
	one = compare(a, b, "1");
	many = compare(a, b, "5");
	assert_true(one.pass && many.pass);
	assert_false(one.bitwise || many.bitwise);
	assert_true(one.digest_actual != one.digest_expected);
	assert_true(many.digest_actual == one.digest_actual);
	outputs_cmp_release(&one);
	outputs_cmp_release(&many);

	/* far off in a middle block: failed, at that element */
	v[6 * (1 << 20) + 1] += 100.0f;
	free(write_out(dir, "b.safetensors", v));
	many = compare(a, b, "8");
	assert_false(many.pass);
	assert_int_equal(many.outputs[0].cmp.n_mismatched, 1);
	assert_int_equal(many.outputs[0].cmp.worst_index, 6 * (1 << 20) + 1);
	outputs_cmp_release(&many);
	free(v);
	free(a);
	free(b);
	tmpdir_remove(dir);
}

static void an_all_zero_output_is_told_from_one_non_zero_byte(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	float *z = calloc(N, sizeof(float));
	char *a = write_out(dir, "zero.safetensors", z);
	z[N - 1] = 1e-30f; /* the very last element of the last block */
	char *b = write_out(dir, "late.safetensors", z);
	struct outputs_cmp r = compare(a, b, "4");
	assert_true(r.zero_expected[0]);
	assert_false(r.zero_actual[0]);
	assert_true(r.pass); /* 1e-30 is within tolerance of 0 */
	outputs_cmp_release(&r);
	z[N - 1] = 0;
	z[5 * (1 << 20)] = -0.0f; /* a negative zero is not all-zero bytes */
	free(write_out(dir, "late.safetensors", z));
	r = compare(a, b, "2");
	assert_false(r.zero_actual[0]);
	assert_false(r.bitwise);
	assert_true(r.pass);
	outputs_cmp_release(&r);
	free(z);
	free(a);
	free(b);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(large_files_compare_alike_on_any_number_of_threads),
		cmocka_unit_test(an_all_zero_output_is_told_from_one_non_zero_byte),
	};
	return cmocka_run_group_tests_name("outputs", tests, NULL, NULL);
}
