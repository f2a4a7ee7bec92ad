/* test_strbuf.c - strbuf, strvec and sha256: growth, formatting, trimming, reading files,
 * and SHA-256 against the NIST example vectors (including a multi-block message). */
#include "testutil.h"

#include "core/sha256.h"

static void grows_and_formats(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_true(starts_with(sb.buf, "0,1,2,"));
	assert_true(ends_with(sb.buf, "998,999,"));
	assert_int_equal(sb.len, strlen(sb.buf));
	strbuf_setlen(&sb, 2);
	assert_string_equal(sb.buf, "0,");
	strbuf_release(&sb);
	assert_int_equal(sb.len, 0);
}

static void trims_and_detaches(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_trim(&sb); /* must not write into the shared empty buffer */
	strbuf_addstr(&sb, " \t hello world \n\n");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "hello world");
	size_t len;
	char *s = strbuf_detach(&sb, &len);
	assert_int_equal(len, 11);
	assert_string_equal(s, "hello world");
	assert_string_equal(sb.buf, "");
	free(s);
}

static void reads_files_with_a_cap(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "f.txt", "0123456789");
	char *path = xstrfmt("%s/f.txt", dir);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	assert_string_equal(sb.buf, "0123456789");
	strbuf_reset(&sb);
	assert_true(strbuf_read_file(&sb, path, 4) < 0);
	assert_string_equal(sb.buf, "0123");
	strbuf_reset(&sb);
	assert_true(strbuf_read_file(&sb, "/nonexistent/x", 0) < 0);
	strbuf_release(&sb);
	free(path);
	tmpdir_remove(dir);
}

static void strvec_keeps_null_terminated(void **state)
{
	(void)state;
	struct strvec sv = STRVEC_INIT;
	for (int i = 0; i < 20; i++)
		strvec_pushf(&sv, "arg%d", i);
	assert_int_equal(sv.nr, 20);
	assert_string_equal(sv.v[19], "arg19");
	assert_null(sv.v[20]);
	strvec_clear(&sv);
	assert_int_equal(sv.nr, 0);
}

static void sha256_matches_nist_vectors(void **state)
{
	(void)state;
	char hex[65];
	sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex(two, strlen(two), hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* one million 'a', fed in uneven pieces to exercise block boundaries */
	struct sha256_ctx c;
	uint8_t d[32];
	char buf[997];
	memset(buf, 'a', sizeof(buf));
	sha256_init(&c);
	size_t left = 1000000;
	while (left) {
		size_t n = left < sizeof(buf) ? left : sizeof(buf);
		sha256_update(&c, buf, n);
		left -= n;
	}
	sha256_final(&c, d);
	assert_int_equal(d[0], 0xcd);
	assert_int_equal(d[1], 0xc7);
	assert_int_equal(d[31], 0xd0);
}

static void sha256_of_file_equals_of_buffer(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "p.py", "class Model: pass\n");
	char *path = xstrfmt("%s/p.py", dir);
	char a[65], b[65];
	assert_int_equal(sha256_file_hex(path, a), 0);
	sha256_hex("class Model: pass\n", 18, b);
	assert_string_equal(a, b);
	assert_true(sha256_file_hex("/nonexistent", a) < 0);
	free(path);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_and_formats),
		cmocka_unit_test(trims_and_detaches),
		cmocka_unit_test(reads_files_with_a_cap),
		cmocka_unit_test(strvec_keeps_null_terminated),
		cmocka_unit_test(sha256_matches_nist_vectors),
		cmocka_unit_test(sha256_of_file_equals_of_buffer),
	};
	return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
