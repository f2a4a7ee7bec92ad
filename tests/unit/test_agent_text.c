/* test_agent_text.c - the text work of agents: template rendering (strict placeholders, comments, the
 * search order of folders), every built-in template against the placeholders its agent fills, code
 * and plan extraction with their fallbacks, and the Verifier's feedback from verdict JSON. */
#include "testutil.h"

#include <jansson.h>

#include "agents/extract.h"
#include "agents/feedback.h"
#include "agents/prompt.h"

static void render_ok(const char *text, const struct tvars *v, const char *want)
{
	struct strbuf out = STRBUF_INIT;
	struct sb_error err = { 0 };
	if (prompt_render(text, "t.md", v, &out, &err))
		fail_msg("render failed: %s", err.msg);
	assert_string_equal(out.buf, want);
	strbuf_release(&out);
}

static void render_fails(const char *text, const struct tvars *v, const char *msg_part)
{
	struct strbuf out = STRBUF_INIT;
	struct sb_error err = { 0 };
	assert_int_equal(prompt_render(text, "t.md", v, &out, &err), SB_EINPUT);
	if (!strstr(err.msg, msg_part))
		fail_msg("error '%s' lacks '%s'", err.msg, msg_part);
	strbuf_release(&out);
}

static void placeholders_are_strict(void **state)
{
	(void)state;
	struct tvars v = TVARS_INIT;
	tvars_set(&v, "name", "ReLU");
	tvars_set(&v, "code", "x = {{name}}");
	tvars_setf(&v, "n", "%d", 3);
	render_ok("a {{name}} b {{ n }} c", &v, "a ReLU b 3 c");
	render_ok("{{code}}", &v, "x = {{name}}"); /* values are never scanned again */
	render_ok("{{! a comment naming {{name}} }}\nline\n", &v, "line\n");
	render_ok("keep {{! inline }}this", &v, "keep this");
	render_ok("single } and { braces", &v, "single } and { braces");
	tvars_set(&v, "name", "Softmax"); /* replaced, not added twice */
	render_ok("{{name}}", &v, "Softmax");
	assert_int_equal(v.names.nr, 3);
	render_fails("ok\n\nthen {{plan}}", &v, "t.md:3: unknown placeholder {{plan}} (placeholders this prompt knows: name, code, n)");
	render_fails("{{ Plan }}", &v, "'Plan' is not a placeholder name");
	render_fails("{{name", &v, "t.md:1: '{{' without a closing '}}'");
	render_fails("{{! unclosed comment\n}}", &v, "comment without '}}' on its line");
	tvars_release(&v);
}

static void templates_are_found_in_order(void **state)
{
	(void)state;
	char *mine = tmpdir_make(), *builtin = tmpdir_make();
	write_file(builtin, "a.md", "built-in a");
	write_file(builtin, "b.md", "built-in b");
	write_file(mine, "a.md", "my a");
	struct prompt_dirs d;
	prompt_dirs_init(&d, mine, builtin, NULL);
	struct strbuf out = STRBUF_INIT;
	struct sb_error err = { 0 };
	char *path;
	assert_int_equal(prompt_load(&d, "a", &out, &path, &err), 0);
	assert_string_equal(out.buf, "my a");
	assert_true(ends_with(path, "/a.md") && starts_with(path, mine));
	free(path);
	strbuf_reset(&out);
	assert_int_equal(prompt_load(&d, "b", &out, &path, &err), 0); /* falls back to the built-in */
	assert_string_equal(out.buf, "built-in b");
	free(path);
	assert_int_equal(prompt_load(&d, "missing", &out, &path, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "prompt template missing.md not found"));
	assert_non_null(strstr(err.msg, mine));
	assert_non_null(strstr(err.msg, builtin));
	assert_null(path);
	strbuf_release(&out);
	tmpdir_remove(mine);
	tmpdir_remove(builtin);
}

/* Every built-in template renders with exactly the placeholders its caller provides (harness/agents/
 * session.c, stitchcuda.c, baselines/): a typo in a template fails here, not in the middle of a run. */
static void builtin_templates_render(void **state)
{
	(void)state;
	static const char *const base[] = { "problem_source", "problem", "target_speedup", "device", "gpu_name",
					    "sm_arch", "gpu_memory", "bandwidth", "l2_cache", "sm_count", "cpu",
					    "torch_version", NULL };
	static const char *const coder[] = { "plan", "previous_code", "feedback", "history", "profile", "docs", NULL };
	static const struct { const char *name; const char *const *extra; const char *more; int blocks; } t[] = {
		{ "hardware-cuda", NULL, NULL, 0 }, { "hardware-cpu", NULL, NULL, 0 },
		{ "constraints-cuda", NULL, NULL, 0 }, { "constraints-cpu", NULL, NULL, 0 },
		{ "system", NULL, NULL, 1 }, { "planner-system", NULL, NULL, 1 },
		{ "planner", NULL, "profile", 1 }, { "plan-reask", NULL, "error", 1 },
		{ "replanner", coder, "reason", 1 }, { "coder-draft", coder, NULL, 1 },
		{ "coder-repair_compile", coder, NULL, 1 }, { "coder-repair_correctness", coder, NULL, 1 },
		{ "coder-optimize_performance", coder, NULL, 1 }, { "coder-optimize", coder, NULL, 1 },
		{ "oneshot", NULL, NULL, 1 }, { "refine", NULL, "feedback", 1 },
		{ "bound-hints", NULL, "kernels", 0 },
	};
	const char *root = getenv("SB_SOURCE_ROOT");
	char *h = xstrfmt("%s/harness/prompts", root ? root : "."), *b = xstrfmt("%s/baselines/prompts", root ? root : ".");
	struct prompt_dirs d;
	prompt_dirs_init(&d, NULL, h, b);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct tvars v = TVARS_INIT;
		for (size_t k = 0; base[k]; k++)
			tvars_setf(&v, base[k], "<%s>", base[k]);
		if (t[i].blocks) {
			tvars_set(&v, "hardware", "<hardware>");
			tvars_set(&v, "constraints", "<constraints>");
		}
		for (size_t k = 0; t[i].extra && t[i].extra[k]; k++)
			tvars_setf(&v, t[i].extra[k], "<%s>", t[i].extra[k]);
		if (t[i].more)
			tvars_setf(&v, t[i].more, "<%s>", t[i].more);
		if (!strcmp(t[i].name, "refine"))
			tvars_set(&v, "attempt", "0");
		struct strbuf out = STRBUF_INIT;
		struct sb_error err = { 0 };
		if (prompt_render_file(&d, t[i].name, &v, &out, &err))
			fail_msg("template %s: %s", t[i].name, err.msg);
		assert_null(strstr(out.buf, "{{"));
		assert_true(out.len > 40);
		strbuf_release(&out);
		tvars_release(&v);
	}
	free(h);
	free(b);
}

static void code_extraction_and_its_fallbacks(void **state)
{
	(void)state;
	struct strbuf c = STRBUF_INIT;
	assert_int_equal(extract_code("Here:\n```python\nimport torch\nclass ModelNew(nn.Module):\n    pass\n```\nDone.", &c),
			 EXTRACT_PYTHON_FENCE);
	assert_string_equal(c.buf, "import torch\nclass ModelNew(nn.Module):\n    pass\n");
	/* the last qualifying block wins; a python block without ModelNew does not qualify */
	assert_int_equal(extract_code("```python\nclass ModelNew:\n  v = 1\n```\ntext\n```py\nclass ModelNew:\n  v = 2\n```\n"
				      "```python\nprint('usage')\n```", &c), EXTRACT_PYTHON_FENCE);
	assert_string_equal(c.buf, "class ModelNew:\n  v = 2\n");
	assert_int_equal(extract_code("```\nclass ModelNew(nn.Module):\n  pass\n```", &c), EXTRACT_ANY_FENCE);
	assert_int_equal(extract_code("```cpp\nint x;\n```\n```text\nclass ModelNew(nn.Module): pass\n```", &c),
			 EXTRACT_ANY_FENCE);
	assert_string_equal(c.buf, "class ModelNew(nn.Module): pass\n");
	assert_int_equal(extract_code("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n", &c), EXTRACT_RAW);
	assert_string_equal(c.buf, "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n");
	/* a truncated answer: the unclosed fence runs to the end */
	assert_int_equal(extract_code("```python\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return", &c),
			 EXTRACT_PYTHON_FENCE);
	assert_true(ends_with(c.buf, "        return\n"));
	/* reasoning is not the answer */
	assert_int_equal(extract_code("<think>```python\nclass ModelNew: draft\n```</think>\nno code after all", &c),
			 EXTRACT_NONE);
	assert_int_equal(extract_code("thinking about class ModelNew ...</think>\n```python\nclass ModelNew: final\n```", &c),
			 EXTRACT_PYTHON_FENCE);
	assert_string_equal(c.buf, "class ModelNew: final\n");
	assert_int_equal(extract_code("<think>unfinished reasoning ```python\nclass ModelNew: x\n```", &c), EXTRACT_NONE);
	/* no usable code */
	assert_int_equal(extract_code("I will write the kernel next time.", &c), EXTRACT_NONE);
	assert_int_equal(extract_code("```python\nclass Model(nn.Module): pass\nclass ModelNewer: pass\n```", &c), EXTRACT_NONE);
	assert_int_equal(extract_code(NULL, &c), EXTRACT_NONE);
	strbuf_release(&c);
}

static void plan_fails(const char *text, const char *why_part)
{
	struct strbuf why = STRBUF_INIT;
	json_t *p = extract_plan(text, &why);
	if (p || !strstr(why.buf, why_part))
		fail_msg("plan %s: why '%s' lacks '%s'", p ? "accepted" : "refused", why.buf, why_part);
	strbuf_release(&why);
}

static void plans_are_parsed_and_checked(void **state)
{
	(void)state;
	const char *good = "{\"summary\": \"s\", \"implementation_steps\": [\"a\", \"b\"], \"expected_bottlenecks\": [],"
			   " \"correctness_risks\": [\"r\"], \"constraints\": [\"c\"]}";
	struct strbuf why = STRBUF_INIT, txt = STRBUF_INIT, md = STRBUF_INIT;
	strbuf_addf(&txt, "Plan below.\n```json\n%s\n```\n", good);
	json_t *p = extract_plan(txt.buf, &why);
	assert_non_null(p);
	plan_render(p, &md);
	assert_string_equal(md.buf, "Summary: s\n\nImplementation steps:\n1. a\n2. b\n\nCorrectness risks:\n- r\n\n"
				    "Constraints:\n- c\n");
	json_decref(p);
	strbuf_reset(&txt);
	strbuf_addf(&txt, "Sure! %s Hope it helps {not json}", good); /* no fence: first '{' to last '}' fails */
	plan_fails(txt.buf, "line 1 column");
	strbuf_reset(&txt);
	strbuf_addf(&txt, "Sure! %s", good);
	p = extract_plan(txt.buf, &why);
	assert_non_null(p);
	json_decref(p);
	plan_fails("```json\n{\"summary\": \"s\",\n \"implementation_steps\": [\"a\",],\n}\n```", "line 2 column");
	plan_fails("no JSON here", "the answer holds no JSON object");
	plan_fails("{\"summary\": \"s\"}", "field \"implementation_steps\" is missing: it must be a list of strings");
	plan_fails("{\"summary\": \"\", \"implementation_steps\": [\"a\"]}", "field \"summary\"");
	plan_fails("{\"summary\": \"s\", \"implementation_steps\": [], \"expected_bottlenecks\": [], \"correctness_risks\": [],"
		   " \"constraints\": []}", "implementation_steps\" is empty");
	plan_fails("{\"summary\": \"s\", \"implementation_steps\": [\"a\"], \"expected_bottlenecks\": [1],"
		   " \"correctness_risks\": [], \"constraints\": []}", "field \"expected_bottlenecks\", item 0 is not a string");
	plan_fails("```json\n[1, 2]\n```", "must be a JSON object");
	plan_fails("{\"summary\": \"s\", \"summary\": \"t\"}", "duplicate");
	strbuf_release(&why);
	strbuf_release(&txt);
	strbuf_release(&md);
}

static json_t *verdict(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);
	if (!v)
		fail_msg("fixture: %s", jerr.text);
	return v;
}

static char *feedback(json_t *v, double target)
{
	struct strbuf out = STRBUF_INIT;
	feedback_from_verdict(v, target, NULL, &out);
	json_decref(v);
	return strbuf_detach(&out, NULL);
}

static void feedback_by_status(void **state)
{
	(void)state;
	/* a long build log: the error lines survive, the noise does not, the total is bounded */
	struct strbuf log = STRBUF_INIT;
	for (int i = 0; i < 500; i++)
		strbuf_addf(&log, "[%d/2] c++ -MMD -MF main.o.d -O2 -c main.cpp noise noise noise\n", i);
	strbuf_addstr(&log, "main.cpp:12:5: note: in expansion\nmain.cpp:13:31: error: expected ';' before 'for'\n");
	json_t *v = json_pack("{s:s, s:s, s:s}", "status", "compile_error", "message", "load_inline('x') failed", "detail", log.buf);
	char *fb = feedback(v, 1.5);
	assert_non_null(strstr(fb, "Verdict: compile_error. load_inline('x') failed"));
	assert_non_null(strstr(fb, "main.cpp:13:31: error: expected ';' before 'for'"));
	assert_non_null(strstr(fb, "main.cpp:12:5: note: in expansion")); /* the line before, for context */
	assert_null(strstr(fb, "noise"));
	assert_non_null(strstr(fb, "(2 of 502 lines shown: the lines mentioning errors)"));
	free(fb);
	strbuf_release(&log);

	fb = feedback(verdict("{\"status\": \"incorrect\", \"message\": \"m\", \"trials\": ["
			      "{\"seed\": 7, \"pass\": false, \"inputs_mutated\": true, \"outputs\": [{\"name\": \"out0\", \"pass\": false,"
			      " \"detail\": \"3 of 8 elements differ; worst at [1, 2]: 0.5 vs expected 1\"}]},"
			      "{\"seed\": 8, \"pass\": true, \"outputs\": []}]}"), 1);
	assert_non_null(strstr(fb, "- trial 0 (seed 7): your forward modified its input tensors; out0: 3 of 8 elements differ; "
				   "worst at [1, 2]: 0.5 vs expected 1\n1 of 2 trials failed.\n"));
	assert_null(strstr(fb, "seed 8"));
	free(fb);

	/* many failing trials: at most FEEDBACK_MAX_TRIALS are shown */
	json_t *trials = json_array();
	for (int i = 0; i < 9; i++)
		json_array_append_new(trials, json_pack("{s:i, s:b, s:[{s:s, s:b, s:s}]}", "seed", i, "pass", 0, "outputs",
							"name", "out0", "pass", 0, "detail", "differs"));
	fb = feedback(json_pack("{s:s, s:s, s:o}", "status", "incorrect", "message", "m", "trials", trials), 1);
	assert_non_null(strstr(fb, "(4 more failing trials not shown)\n9 of 9 trials failed."));
	free(fb);

	fb = feedback(verdict("{\"status\": \"rejected\", \"message\": \"H22: ...\", \"findings\": ["
			      "{\"id\": \"H22\", \"severity\": \"reject\", \"message\": \"os.environ.get (line 12) reaches outside the inputs; "
			      "compute from the inputs only\", \"line\": 12, \"col\": 5},"
			      "{\"id\": \"H14\", \"severity\": \"flag\", \"message\": \"a cast to fp16\", \"line\": 3, \"col\": 1}]}"), 1);
	assert_non_null(strstr(fb, "reject this candidate (each says what to do instead):\n- H22 at line 12: os.environ.get (line 12) "
				   "reaches outside the inputs; compute from the inputs only\n"));
	assert_non_null(strstr(fb, "Flagged by the reward-hack checks (not rejected, but reported with the result):\n- H14 at line 3: "));
	free(fb);

	fb = feedback(verdict("{\"status\": \"pass\", \"message\": \"ok\", \"trials\": [{}, {}],"
			      " \"timing\": {\"clock\": \"cuda_event\", \"pairs\": 40, \"eager\": {\"median_us\": 100.0},"
			      " \"candidate\": {\"median_us\": 80.0}, \"compiled\": null},"
			      " \"speedup\": {\"vs_eager\": 1.25, \"vs_eager_ci95\": [1.2, 1.3], \"vs_compiled\": null}}"), 2.0);
	assert_non_null(strstr(fb, "All 2 correctness trials matched the reference.\nTiming (cuda_event clock, 40 interleaved rounds): "
				   "PyTorch eager 100.0 us, yours 80.0 us (medians).\nSpeedup vs eager: 1.250x (95% CI 1.200-1.300).\n"
				   "Target 2.00x: not reached; 1.60x faster is still needed.\n"));
	assert_null(strstr(fb, "kernels")); /* no profile in the verdict: no kernel section */
	free(fb);

	/* a point above the target whose interval reaches below it: not shown yet (the stage machine goes on) */
	fb = feedback(verdict("{\"status\": \"pass\", \"message\": \"ok\", \"trials\": [{}],"
			      " \"timing\": {\"clock\": \"host\", \"pairs\": 9, \"eager\": {\"median_us\": 100.0},"
			      " \"candidate\": {\"median_us\": 45.0}, \"compiled\": null},"
			      " \"speedup\": {\"vs_eager\": 2.2, \"vs_eager_ci95\": [1.6, 2.9], \"vs_compiled\": null}}"), 2.0);
	assert_non_null(strstr(fb, "Target 2.00x: not yet shown: the speedup's interval reaches down to 1.600x"));
	free(fb);

	fb = feedback(verdict("{\"status\": \"pass\", \"message\": \"ok\", \"timing\": null, \"speedup\": null,"
			      " \"profile\": {\"kernels\": [{\"name\": \"relu_kernel\", \"total_us\": 75.0, \"calls\": 10},"
			      " {\"name\": \"memcpy\", \"total_us\": 25.0}]}}"), 2.0);
	assert_non_null(strstr(fb, "It was not timed"));
	assert_non_null(strstr(fb, "Top kernels by share of kernel time:\n- relu_kernel: 75.0% (75.0 us, 10 calls)\n- memcpy: 25.0% (25.0 us)\n"));
	free(fb);

	fb = feedback(verdict("{\"status\": \"runtime_error\", \"message\": \"RuntimeError\", \"detail\": \"Traceback:\\n  File x\\n"
			      "RuntimeError: CUDA error: an illegal memory access was encountered\"}"), 1);
	assert_true(strstr(fb, "```\nTraceback:\n  File x\nRuntimeError: CUDA error: an illegal memory access was encountered\n```") != NULL);
	free(fb);
}

static void feedback_is_bounded(void **state)
{
	(void)state;
	json_t *findings = json_array();
	struct strbuf big = STRBUF_INIT;
	strbuf_addchars(&big, 'x', 2000);
	for (int i = 0; i < 20; i++)
		json_array_append_new(findings, json_pack("{s:s, s:s, s:s, s:i}", "id", "H01", "severity", "reject", "message",
							  big.buf, "line", i + 1));
	char *fb = feedback(json_pack("{s:s, s:s, s:o}", "status", "rejected", "message", "m", "findings", findings), 1);
	assert_true(strlen(fb) <= FEEDBACK_MAX_BYTES + 32);
	assert_true(ends_with(fb, "(feedback cut here)\n"));
	free(fb);
	/* a tail of a traceback keeps the last lines */
	struct strbuf out = STRBUF_INIT, tb = STRBUF_INIT;
	for (int i = 0; i < 100; i++)
		strbuf_addf(&tb, "frame %d\n", i);
	feedback_trim(tb.buf, 3, 1000, 1, &out);
	assert_string_equal(out.buf, "frame 97\nframe 98\nframe 99\n(3 of 100 lines shown: the last ones)\n");
	strbuf_reset(&out);
	strbuf_reset(&big);
	strbuf_addchars(&big, 'y', 1000);
	feedback_trim(big.buf, 5, 5000, 0, &out); /* one long line is cut at 300 bytes */
	assert_int_equal(out.len, 300 + strlen(" [...]\n"));
	strbuf_release(&out);
	strbuf_release(&tb);
	strbuf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(placeholders_are_strict),
		cmocka_unit_test(templates_are_found_in_order),
		cmocka_unit_test(builtin_templates_render),
		cmocka_unit_test(code_extraction_and_its_fallbacks),
		cmocka_unit_test(plans_are_parsed_and_checked),
		cmocka_unit_test(feedback_by_status),
		cmocka_unit_test(feedback_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
