/* test_shard.c - the `run --shard I/N` partition (harness/run/shard.c): every item in exactly one shard,
 * the same answer on every call, shards that differ by at most one item, parsing and run ids. */
#include "testutil.h"

#include "run/shard.h"

static void every_item_is_in_exactly_one_shard(void **state)
{
	(void)state;
	for (int n = 1; n <= 9; n++)
		for (size_t item = 0; item < 500; item++) {
			int holders = 0;
			for (int i = 1; i <= n; i++) {
				struct shard s = { i, n };
				holders += shard_holds(&s, item);
			}
			assert_int_equal(holders, 1);
		}
}

static void the_answer_is_stable_across_calls(void **state)
{
	(void)state;
	struct shard s = { 3, 7 };
	unsigned char first[300];
	for (size_t item = 0; item < 300; item++)
		first[item] = (unsigned char)shard_holds(&s, item);
	for (int round = 0; round < 3; round++)
		for (size_t item = 300; item-- > 0;) /* another order: no hidden state */
			assert_int_equal(shard_holds(&s, item), first[item]);
}

static void shards_are_balanced(void **state)
{
	(void)state;
	for (int n = 1; n <= 12; n++)
		for (size_t total = 0; total <= 40; total++) {
			size_t lo = (size_t)-1, hi = 0;
			for (int i = 1; i <= n; i++) {
				struct shard s = { i, n };
				size_t c = 0;
				for (size_t item = 0; item < total; item++)
					c += shard_holds(&s, item);
				lo = c < lo ? c : lo;
				hi = c > hi ? c : hi;
			}
			assert_true(hi - lo <= 1);
			assert_int_equal(hi, (total + (size_t)n - 1) / (size_t)n);
		}
}

static void a_shard_mixes_neighbouring_items(void **state)
{
	(void)state;
	/* consecutive items (agents of one problem) go to different shards, so no shard gets only the
	 * problems at the end of the order */
	struct shard s = { 2, 4 };
	assert_false(shard_holds(&s, 0));
	assert_true(shard_holds(&s, 1));
	assert_false(shard_holds(&s, 2));
	assert_true(shard_holds(&s, 5));
}

static void unsharded_holds_everything(void **state)
{
	(void)state;
	struct shard s = { 0, 0 };
	for (size_t item = 0; item < 50; item++)
		assert_true(shard_holds(&s, item));
}

static void parsing(void **state)
{
	(void)state;
	struct shard s;
	struct sb_error err = { 0 };
	assert_int_equal(shard_parse("2/4", &s, &err), 0);
	assert_int_equal(s.index, 2);
	assert_int_equal(s.count, 4);
	assert_int_equal(shard_parse("1/1", &s, &err), 0);
	const char *bad[] = { "0/4", "5/4", "4", "/4", "2/", "2/4x", "a/b", "-1/4", "1/0", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(shard_parse(bad[i], &s, &err), SB_EINPUT);
		assert_non_null(strstr(err.msg, "expected I/N"));
	}
}

static void run_ids(void **state)
{
	(void)state;
	char id[128], text[32];
	struct shard s = { 3, 8 }, none = { 0, 0 };
	shard_run_id(&s, "exp", id, sizeof(id));
	assert_string_equal(id, "exp-shard3of8");
	shard_run_id(&none, "exp", id, sizeof(id));
	assert_string_equal(id, "exp");
	shard_text(&s, text, sizeof(text));
	assert_string_equal(text, "3/8");
	shard_text(&none, text, sizeof(text));
	assert_string_equal(text, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_item_is_in_exactly_one_shard),
		cmocka_unit_test(the_answer_is_stable_across_calls),
		cmocka_unit_test(shards_are_balanced),
		cmocka_unit_test(a_shard_mixes_neighbouring_items),
		cmocka_unit_test(unsharded_holds_everything),
		cmocka_unit_test(parsing),
		cmocka_unit_test(run_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
