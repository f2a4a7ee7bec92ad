/* test_docs.c - documentation retrieval (harness/agents/docs.c): HTML stripping, passage splitting,
 * query terms from compiler errors and verdicts, and the cached FTS5 index ranked by BM25 within a
 * token budget, over the hand-written documents of tests/fixtures/docs. */
#include "testutil.h"

#include <jansson.h>

#include "agents/docs.h"
#include "core/error.h"

static char *fixture_dir(void)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	return xstrfmt("%s/tests/fixtures/docs", root ? root : ".");
}

static char *read_fixture(const char *rel)
{
	char *dir = fixture_dir(), *path = xstrfmt("%s/%s", dir, rel);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	free(dir);
	free(path);
	return strbuf_detach(&sb, NULL);
}

static int has_term(const struct strvec *t, const char *term)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->v[i], term))
			return 1;
	return 0;
}

static void html_is_stripped_to_markdown(void **state)
{
	(void)state;
	char *html = read_fixture("guides/toolkit.html");
	struct strbuf out = STRBUF_INIT;
	docs_strip_html(html, &out);
	/* headings become "#" lines, with inline markup inside them gone */
	assert_non_null(strstr(out.buf, "\n# Building extensions\n") ? out.buf : strstr(out.buf, "# Building extensions\n"));
	assert_non_null(strstr(out.buf, "\n## Headers on machines without CUDA\n"));
	/* head, style, script and comments vanish, with the markup inside them */
	assert_null(strstr(out.buf, "Toolkit notes"));
	assert_null(strstr(out.buf, "color: red"));
	assert_null(strstr(out.buf, "not a heading"));
	assert_null(strstr(out.buf, "Hidden heading"));
	assert_null(strstr(out.buf, "<code>"));
	/* entities are decoded, white space collapsed, and a "<" that starts no tag is text */
	assert_non_null(strstr(out.buf, "Checks such as a < b && b > c stay readable after decoding entities, and a lone < sign is kept."));
	assert_non_null(strstr(out.buf, "A CPU-only build cannot see cuda_runtime.h: the header ships"));
	/* <pre> keeps its lines in a fence; list items are lines */
	assert_non_null(strstr(out.buf, "```\n\n__host__ __device__ inline float relu(float x) {\n    return x > 0.f ? x : 0.f;\n}\n```"));
	assert_non_null(strstr(out.buf, "\n- First item\n- Second item\n"));
	assert_null(strstr(out.buf, "\n\n\n"));
	strbuf_release(&out);
	free(html);

	/* broken markup loses no text: an unclosed tag and a stray entity stay as they are */
	docs_strip_html("<p>if x <y and &bogus; stay</p><p>then &#65;&#x42; end", &out);
	assert_string_equal(out.buf, "if x <y and &bogus; stay\n\nthen AB end\n");
	strbuf_release(&out);
}

static void markdown_splits_by_heading_and_keeps_fences_whole(void **state)
{
	(void)state;
	char *md = read_fixture("guides/memory.md");
	struct docs_passages ps = DOCS_PASSAGES_INIT;
	docs_split("guides/memory.md", md, DOCS_MARKDOWN, &ps);
	assert_int_equal(ps.nr, 4);
	assert_string_equal(ps.v[0].heading, "Device memory");
	assert_int_equal(ps.v[0].line, 3);
	assert_true(starts_with(ps.v[0].body, "Global memory is large"));
	assert_string_equal(ps.v[1].heading, "Device memory > Coalesced access");
	assert_string_equal(ps.v[2].heading, "Device memory > Shared memory and bank conflicts");
	/* the paragraph and the fenced block (blank line and "#" line inside) are one passage */
	assert_non_null(strstr(ps.v[2].body, "spreads the columns"));
	assert_non_null(strstr(ps.v[2].body, "\n# this line is inside a code block, not a heading\n"));
	assert_true(ends_with(ps.v[2].body, "```"));
	assert_string_equal(ps.v[3].heading, "Device memory > Synchronizing the threads of a block");
	assert_string_equal(ps.v[3].file, "guides/memory.md");
	for (size_t i = 0; i < ps.nr; i++)
		assert_int_equal(ps.v[i].tokens, (int)((strlen(ps.v[i].body) + 3) / 4));
	docs_passages_release(&ps);
	free(md);

	/* setext headings in plain text; a deeper heading nests under the one before */
	char *txt = read_fixture("guides/warps.txt");
	docs_split("guides/warps.txt", txt, DOCS_TEXT, &ps);
	assert_int_equal(ps.nr, 2);
	assert_string_equal(ps.v[0].heading, "Warp shuffles");
	assert_string_equal(ps.v[1].heading, "Warp shuffles > Reductions");
	assert_true(starts_with(ps.v[1].body, "A warp reduction halves"));
	docs_passages_release(&ps);
	free(txt);

	/* a new top-level heading replaces the whole path; text before any heading has none */
	docs_split("x.md", "intro text\n\n# A\n\n## B\n\nunder b\n\n# C\n\nunder c\n", DOCS_MARKDOWN, &ps);
	assert_int_equal(ps.nr, 3);
	assert_string_equal(ps.v[0].heading, "");
	assert_string_equal(ps.v[1].heading, "A > B");
	assert_string_equal(ps.v[2].heading, "C");
	assert_int_equal(ps.v[2].line, 11);
	docs_passages_release(&ps);
}

static void paragraphs_join_up_to_target_and_long_ones_are_cut(void **state)
{
	(void)state;
	struct docs_passages ps = DOCS_PASSAGES_INIT;
	/* short paragraphs of one section share a passage */
	docs_split("a.md", "# S\n\none short paragraph.\n\nanother short one.\n", DOCS_MARKDOWN, &ps);
	assert_int_equal(ps.nr, 1);
	assert_string_equal(ps.v[0].body, "one short paragraph.\n\nanother short one.");
	docs_passages_release(&ps);

	/* paragraphs whose sum passes the target start a new passage */
	struct strbuf text = STRBUF_INIT, joined = STRBUF_INIT;
	strbuf_addstr(&text, "# Long\n\n");
	for (int p = 0; p < 4; p++) { /* 265 bytes each: three fit under the target, the fourth does not */
		for (int i = 0; i < 7; i++)
			strbuf_addf(&text, "Paragraph %d sentence %d says a little. ", p, i);
		strbuf_addstr(&text, "\n\n");
	}
	docs_split("b.md", text.buf, DOCS_MARKDOWN, &ps);
	assert_int_equal(ps.nr, 2);
	assert_true(strlen(ps.v[0].body) <= DOCS_PASSAGE_TARGET);
	assert_non_null(strstr(ps.v[0].body, "Paragraph 2 sentence 6"));
	assert_true(starts_with(ps.v[1].body, "Paragraph 3 sentence 0"));
	assert_string_equal(ps.v[1].heading, "Long");
	docs_passages_release(&ps);

	/* one paragraph longer than the maximum is cut at sentence ends, losing nothing */
	strbuf_reset(&text);
	for (int i = 0; i < 120; i++)
		strbuf_addf(&text, "Sentence number %d of one very long paragraph.%s", i, i < 119 ? " " : "");
	docs_split("c.txt", text.buf, DOCS_TEXT, &ps);
	assert_true(ps.nr >= 3);
	for (size_t i = 0; i < ps.nr; i++) {
		assert_true(strlen(ps.v[i].body) <= DOCS_PASSAGE_MAX);
		assert_true(ends_with(ps.v[i].body, "paragraph."));
		strbuf_addf(&joined, "%s%s", i ? " " : "", ps.v[i].body);
	}
	assert_string_equal(joined.buf, text.buf);
	docs_passages_release(&ps);
	strbuf_release(&text);
	strbuf_release(&joined);
}

static const char gcc_log[] =
	"load_inline('sb_test_relu') failed: Error building extension 'sb_test_relu_v1': [1/2] c++ -MMD -MF main.o.d "
	"-DTORCH_EXTENSION_NAME=sb_test_relu_v1 -isystem /usr/lib/python3/dist-packages/torch/include -fPIC -std=c++14 "
	"-c /tmp/cache/work/eval-23590-rUzaDT/cand/ext/ea6865ed9eb3b33a165bd96d/main.cpp -o main.o\n"
	"FAILED: main.o\n"
	"<command-line>: fatal error: cuda_runtime.h: No such file or directory\n"
	"compilation terminated.\n"
	"ninja: build stopped: subcommand failed.\n";

static void query_terms_keep_identifiers_and_drop_noise(void **state)
{
	(void)state;
	struct strvec t = STRVEC_INIT;
	docs_query_terms("/tmp/x/kernel.cu(12): error: identifier \"__shfl_down\" is undefined", &t);
	assert_int_equal(t.nr, 3);
	assert_string_equal(t.v[0], "identifier");
	assert_string_equal(t.v[1], "__shfl_down");
	assert_string_equal(t.v[2], "undefined");
	strvec_clear(&t);

	/* paths, flags, locations, numbers, hashes and boilerplate go; case folds; duplicates once */
	docs_query_terms("main.cpp:13:5: error: 'blockDim' was not declared; -O3 -DFOO=1 ea6865ed9eb3b33a 0x1f 1234 "
			 "sm_80 BlockDim float4 at", &t);
	assert_int_equal(t.nr, 4);
	assert_string_equal(t.v[0], "blockdim");
	assert_string_equal(t.v[1], "declared");
	assert_string_equal(t.v[2], "sm_80");
	assert_string_equal(t.v[3], "float4");
	strvec_clear(&t);

	/* a build log: the command line gives nothing, the diagnostic gives the header */
	docs_query_terms(gcc_log, &t);
	assert_true(has_term(&t, "cuda_runtime"));
	assert_true(has_term(&t, "directory"));
	assert_false(has_term(&t, "usr"));
	assert_false(has_term(&t, "isystem"));
	assert_false(has_term(&t, "main"));
	assert_false(has_term(&t, "ninja"));
	assert_false(has_term(&t, "command"));
	strvec_clear(&t);

	/* at most DOCS_MAX_TERMS */
	struct strbuf many = STRBUF_INIT;
	for (int i = 0; i < 2 * DOCS_MAX_TERMS; i++)
		strbuf_addf(&many, "word%c%c ", 'a' + i / 26, 'a' + i % 26);
	docs_query_terms(many.buf, &t);
	assert_int_equal(t.nr, DOCS_MAX_TERMS);
	strbuf_release(&many);
	strvec_clear(&t);
}

static void verdict_terms_follow_the_failing_stage(void **state)
{
	(void)state;
	struct strvec t = STRVEC_INIT;
	json_t *v = json_pack("{s:s, s:s, s:s}", "status", "compile_error", "message", "compile_error while building",
			      "detail", gcc_log);
	docs_query_from_verdict(v, &t);
	/* only the diagnostic lines count: the command line mentions "Error" but its words are noise */
	assert_true(has_term(&t, "cuda_runtime"));
	assert_false(has_term(&t, "sb_test_relu"));
	assert_string_equal(t.v[t.nr - 1], "compile");
	json_decref(v);
	strvec_clear(&t);

	v = json_pack("{s:s, s:s, s:s}", "status", "runtime_error", "message", "the candidate raised",
		      "detail", "Traceback (most recent call last):\n  File \"/tmp/c.py\", line 9, in forward\n"
				"RuntimeError: CUDA error: an illegal memory access was encountered\n");
	docs_query_from_verdict(v, &t);
	assert_true(has_term(&t, "illegal"));
	assert_true(has_term(&t, "runtimeerror"));
	assert_false(has_term(&t, "forward"));
	assert_string_equal(t.v[t.nr - 1], "runtime");
	json_decref(v);
	strvec_clear(&t);

	v = json_pack("{s:s, s:s, s:[{s:b}, {s:b, s:b, s:[{s:s, s:b, s:s}]}]}", "status", "incorrect", "message",
		      "outputs differ from the reference", "trials", "pass", 1, "pass", 0, "inputs_mutated", 1, "outputs",
		      "name", "out0", "pass", 0, "detail", "shape mismatch: (4, 1) vs (4,)");
	docs_query_from_verdict(v, &t);
	assert_true(has_term(&t, "differ"));
	assert_true(has_term(&t, "mismatch"));
	assert_true(has_term(&t, "inplace"));
	assert_string_equal(t.v[t.nr - 1], "correctness");
	json_decref(v);
	strvec_clear(&t);

	v = json_pack("{s:s, s:s}", "status", "pass", "message", "all trials matched");
	docs_query_from_verdict(v, &t);
	assert_int_equal(t.nr, 0);
	json_decref(v);
	strvec_clear(&t);
}

static void search(struct docs_index *ix, const char *query, int budget, struct docs_passages *hits)
{
	struct strvec t = STRVEC_INIT;
	struct sb_error err = { 0 };
	docs_query_terms(query, &t);
	if (docs_search(ix, &t, budget, hits, &err))
		fail_msg("search: %s", err.msg);
	strvec_clear(&t);
}

static void index_ranks_by_bm25_within_the_budget(void **state)
{
	(void)state;
	char *cache = tmpdir_make(), *docs = fixture_dir();
	struct docs_index *ix, *again;
	struct sb_error err = { 0 };
	if (docs_open(docs, cache, &ix, &err))
		fail_msg("docs_open: %s", err.msg);
	assert_true(ix->built);
	assert_int_equal(ix->files, 4);
	assert_true(ix->passages >= 9);
	assert_true(ends_with(ix->db_path, ".db"));
	assert_non_null(strstr(ix->db_path, ix->key));

	/* each error finds the passage written about it first */
	struct docs_passages hits = DOCS_PASSAGES_INIT;
	search(ix, "kernel.cu(40): error: identifier \"__shfl_down\" is undefined", 1500, &hits);
	assert_true(hits.nr >= 1);
	assert_string_equal(hits.v[0].file, "guides/warps.txt");
	assert_string_equal(hits.v[0].heading, "Warp shuffles");
	for (size_t i = 1; i < hits.nr; i++)
		assert_true(hits.v[i - 1].score >= hits.v[i].score);
	docs_passages_release(&hits);

	search(ix, gcc_log, 1500, &hits);
	assert_true(hits.nr >= 1);
	assert_string_equal(hits.v[0].file, "guides/toolkit.html");
	assert_string_equal(hits.v[0].heading, "Building extensions > Headers on machines without CUDA");
	docs_passages_release(&hits);

	search(ix, "the block hangs at __syncthreads", 1500, &hits);
	assert_true(hits.nr >= 1);
	assert_string_equal(hits.v[0].heading, "Device memory > Synchronizing the threads of a block");
	docs_passages_release(&hits);

	/* a word of one passage only finds that passage alone */
	search(ix, "reductions", 1500, &hits);
	assert_int_equal(hits.nr, 1);
	assert_string_equal(hits.v[0].heading, "Warp shuffles > Reductions");
	docs_passages_release(&hits);

	/* the budget: the passages taken (and the intro) fit, and a tight one takes fewer */
	search(ix, "shared memory warp threads bank", 1500, &hits);
	size_t wide = hits.nr;
	int sum = 0;
	for (size_t i = 0; i < hits.nr; i++)
		sum += hits.v[i].tokens;
	assert_true(wide >= 3);
	assert_true(sum <= 1500);
	docs_passages_release(&hits);
	search(ix, "shared memory warp threads bank", 200, &hits);
	sum = 0;
	for (size_t i = 0; i < hits.nr; i++)
		sum += hits.v[i].tokens;
	assert_true(hits.nr >= 1 && hits.nr < wide);
	assert_true(sum <= 200);
	docs_passages_release(&hits);
	search(ix, "shared memory warp threads bank", 20, &hits);
	assert_int_equal(hits.nr, 0);
	docs_passages_release(&hits);

	/* nothing matches, or no terms: no passage */
	search(ix, "zyxxy quorble", 1500, &hits);
	assert_int_equal(hits.nr, 0);
	search(ix, "", 1500, &hits);
	assert_int_equal(hits.nr, 0);

	/* the render: the intro with the query, then each passage with its file, line and heading */
	struct strbuf out = STRBUF_INIT;
	struct strvec t = STRVEC_INIT;
	docs_render(&hits, &t, &out);
	assert_int_equal(out.len, 0);
	docs_query_terms("identifier \"__shfl_down\" is undefined", &t);
	assert_int_equal(docs_search(ix, &t, 1500, &hits, &err), 0);
	docs_render(&hits, &t, &out);
	assert_non_null(strstr(out.buf, "searched for: identifier, __shfl_down, undefined):\n\n[1] guides/warps.txt, line 4, "
					"\"Warp shuffles\"\nA shuffle moves"));
	assert_true(ends_with(out.buf, ".\n") || ends_with(out.buf, "```\n"));
	strbuf_release(&out);
	strvec_clear(&t);
	docs_passages_release(&hits);

	/* the second open reads the cache entry */
	assert_int_equal(docs_open(docs, cache, &again, &err), 0);
	assert_false(again->built);
	assert_string_equal(again->key, ix->key);
	assert_int_equal(again->passages, ix->passages);
	docs_close(again);
	docs_close(ix);
	free(docs);
	tmpdir_remove(cache);
}

static void a_heading_counts_more_than_a_body(void **state)
{
	(void)state;
	char *cache = tmpdir_make(), *docs = tmpdir_make();
	struct docs_index *ix;
	struct sb_error err = { 0 };
	/* the same word once in each passage, bodies of the same length: the heading's weight decides */
	write_file(docs, "a.md", "# Tuning\n\nThe occupancy of a multiprocessor depends on registers.\n");
	write_file(docs, "b.md", "# Occupancy\n\nThe number of resident warps depends on the registers.\n");
	assert_int_equal(docs_open(docs, cache, &ix, &err), 0);
	struct docs_passages hits = DOCS_PASSAGES_INIT;
	search(ix, "occupancy", 1500, &hits);
	assert_int_equal(hits.nr, 2);
	assert_string_equal(hits.v[0].file, "b.md");
	assert_true(hits.v[0].score > hits.v[1].score);
	docs_passages_release(&hits);
	docs_close(ix);
	tmpdir_remove(docs);
	tmpdir_remove(cache);
}

static void a_changed_file_is_indexed_again(void **state)
{
	(void)state;
	char *cache = tmpdir_make(), *docs = tmpdir_make();
	struct docs_index *a, *b, *c;
	struct sb_error err = { 0 };
	write_file(docs, "notes.md", "# Launch bounds\n\nUse __launch_bounds__ to cap registers per thread.\n");
	write_file(docs, "image.png", "not a document");
	write_file(docs, ".hidden/skip.md", "# Hidden\n\nnever indexed\n");
	assert_int_equal(docs_open(docs, cache, &a, &err), 0);
	assert_true(a->built);
	assert_int_equal(a->files, 1);
	assert_int_equal(docs_open(docs, cache, &b, &err), 0);
	assert_false(b->built);
	write_file(docs, "notes.md", "# Launch bounds\n\nUse __launch_bounds__ to cap the registers of each thread.\n");
	assert_int_equal(docs_open(docs, cache, &c, &err), 0);
	assert_true(c->built);
	assert_string_not_equal(c->key, a->key);
	struct docs_passages hits = DOCS_PASSAGES_INIT;
	search(c, "registers of each thread", 1500, &hits);
	assert_int_equal(hits.nr, 1);
	assert_non_null(strstr(hits.v[0].body, "registers of each thread"));
	docs_passages_release(&hits);
	docs_close(a);
	docs_close(b);
	docs_close(c);

	/* a folder without documents, and none at all, are input errors naming the folder */
	char *empty = tmpdir_make();
	write_file(empty, "data.bin", "x");
	assert_int_equal(docs_open(empty, cache, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "holds no document"));
	assert_int_equal(docs_open("/nonexistent/docs", cache, &a, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/docs"));
	tmpdir_remove(empty);
	tmpdir_remove(docs);
	tmpdir_remove(cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(html_is_stripped_to_markdown),
		cmocka_unit_test(markdown_splits_by_heading_and_keeps_fences_whole),
		cmocka_unit_test(paragraphs_join_up_to_target_and_long_ones_are_cut),
		cmocka_unit_test(query_terms_keep_identifiers_and_drop_noise),
		cmocka_unit_test(verdict_terms_follow_the_failing_stage),
		cmocka_unit_test(index_ranks_by_bm25_within_the_budget),
		cmocka_unit_test(a_heading_counts_more_than_a_body),
		cmocka_unit_test(a_changed_file_is_indexed_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
