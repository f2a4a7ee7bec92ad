/* test_config.c - the experiment YAML: a complete valid file, every kind of invalid input with
 * the exact file:line:column and key it must name, --set overrides, validation across sections,
 * and the dump -> load -> dump round trip that `doctor --config` relies on. */
#include "testutil.h"

#include <jansson.h>

#include "core/config.h"
#include "core/config_schema.h"

static const char *VALID =
	"name: demo\n"
	"python: /usr/bin/python3\n"
	"problems:\n"
	"  root: null\n"
	"  levels: [1, 3]\n"
	"  select: [L1/1-3, \"L3/*\"]\n"
	"models:\n"
	"  - name: qwen\n"
	"    provider: openai\n"
	"    api_base: http://127.0.0.1:8000/v1\n"
	"    model: Qwen/Qwen3-32B\n"
	"    temperature: 0.2\n"
	"    headers: {X-Team: kernels}\n"
	"    price_prompt_per_mtok: 0.5\n"
	"  - name: rec\n"
	"    provider: replay\n"
	"    cassette: kernelbench/cassettes/demo\n"
	"agents:\n"
	"  - name: sc\n"
	"    kind: stitchcuda\n"
	"    model: qwen\n"
	"    max_attempts: 5\n"
	"  - name: eager\n"
	"    kind: torch-eager\n"
	"eval:\n"
	"  device: cuda:0\n"
	"  trials: 7\n"
	"  tolerance: kernelbench-v0\n"
	"  statistic: mean\n"
	"  extra_shapes: yes\n"
	"checks:\n"
	"  policy: {H01: flag, H14: reject}\n"
	"output:\n"
	"  dir: /tmp/results\n";

static int load(struct config *c, const char *yaml, struct sb_error *err)
{
	config_init(c);
	int rc = config_load_string(c, "exp.yaml", yaml, strlen(yaml), err);
	if (!rc)
		rc = config_validate(c, err);
	return rc;
}

static void valid_file_fills_every_section(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	assert_int_equal(load(&c, VALID, &err), 0);
	assert_string_equal(c.name, "demo");
	assert_string_equal(c.python, "/usr/bin/python3");
	assert_null(c.problems.root);
	assert_int_equal(c.problems.levels[0], 1);
	assert_int_equal(c.problems.levels[1], 0);
	assert_int_equal(c.problems.levels[2], 1);
	assert_int_equal(c.problems.nselect, 2);
	assert_string_equal(c.problems.select[1], "L3/*");
	assert_int_equal(c.nmodels, 2);
	assert_string_equal(c.models[0].model, "Qwen/Qwen3-32B");
	assert_true(c.models[0].temperature == 0.2);
	assert_int_equal(c.models[0].nheaders, 1);
	assert_string_equal(c.models[0].headers[0].name, "X-Team");
	assert_int_equal(c.models[0].max_tokens, 8192); /* default kept */
	assert_int_equal(c.models[0].pos.line, 8);
	assert_int_equal(c.nagents, 2);
	assert_int_equal(c.agents[0].max_attempts, 5);
	assert_int_equal(c.agents[1].max_attempts, 3);
	assert_string_equal(c.eval.device, "cuda:0");
	assert_int_equal(c.eval.trials, 7);
	assert_int_equal(c.eval.perf_trials, 100);
	assert_int_equal(c.eval.tolerance, TOL_KERNELBENCH_V0);
	assert_int_equal(c.eval.statistic, STAT_MEAN);
	assert_int_equal(c.eval.extra_shapes, 1);
	assert_int_equal(c.checks.policy[0], POLICY_FLAG);
	assert_int_equal(c.checks.policy[13], POLICY_REJECT);
	assert_int_equal(c.checks.policy[14], POLICY_FLAG); /* H15 default */
	assert_string_equal(c.output.dir, "/tmp/results");
	config_release(&c);
}

static void empty_file_gives_defaults(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	assert_int_equal(load(&c, "", &err), 0);
	assert_int_equal(c.eval.trials, 5);
	assert_int_equal(c.eval.seed, 42);
	assert_string_equal(c.eval.device, "auto");
	assert_int_equal(c.eval.preset, PRESET_STITCHBENCH);
	assert_int_equal(c.eval.timing_lead_us, 0);  /* calls timed end to end, the host's launch inside */
	assert_int_equal(c.eval.timing_gc, 0);       /* the collector paused inside timed blocks */
	assert_int_equal(c.eval.process_factor, PF_AUTO); /* the reference timed in the candidate's process on a GPU */
	assert_int_equal(c.eval.hash_seed, 0);       /* one PYTHONHASHSEED for every worker */
	assert_true(c.checks.reward_lambda == 0.5);  /* the rubric's weight in a verdict's reward */
	assert_int_equal(c.nagents, 0);
	config_release(&c);
	assert_int_equal(load(&c, "# only a comment\n", &err), 0);
	config_release(&c);
}

/* A preset writes its column of the table into every key the file or a --set did not give, whatever the
 * order; a later preset replaces an earlier one's values, never a given key's. */
static void presets_set_their_keys_and_given_keys_win(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	assert_int_equal(load(&c, "eval:\n  trials: 3\n  preset: kernelbench\n", &err), 0);
	assert_int_equal(c.eval.preset, PRESET_KERNELBENCH);
	assert_int_equal(c.eval.trials, 3);           /* given before the preset: kept */
	assert_int_equal(c.eval.perf_trials, 100);
	assert_int_equal(c.eval.statistic, STAT_MEAN);
	assert_int_equal(c.eval.timing_block, 32);
	assert_int_equal(c.eval.process_factor, PF_OFF);
	assert_true(c.eval.rse_target == 0);
	assert_int_equal(c.checks.policy[0], POLICY_FLAG);    /* H01: KernelBench's pytorch_wrap warns */
	assert_int_equal(c.checks.policy[1], POLICY_REJECT);  /* H02: its code_bypass is strict */
	assert_int_equal(c.checks.policy[7], POLICY_REJECT);  /* H08: timing patched */
	assert_int_equal(c.checks.policy[18], POLICY_FLAG);   /* H19: not one of its rules */
	/* a --set preset afterwards: the table's keys go back to stitchbench's, the given one stays */
	assert_int_equal(config_set(&c, "eval.preset=stitchbench", &err), 0);
	assert_int_equal(c.eval.trials, 3);
	assert_int_equal(c.eval.statistic, STAT_MEDIAN);
	assert_int_equal(c.eval.process_factor, PF_AUTO);
	assert_int_equal(c.checks.policy[0], POLICY_REJECT);
	assert_int_equal(c.checks.policy[18], POLICY_REJECT);
	config_release(&c);

	assert_int_equal(load(&c, "checks:\n  policy: {H01: reject}\neval:\n  preset: stitchcuda\n  perf_trials: 7\n", &err), 0);
	assert_int_equal(c.eval.perf_trials, 7);      /* given after the preset: kept */
	assert_int_equal(c.eval.trials, 5);
	assert_int_equal(c.eval.statistic, STAT_MEAN);
	assert_int_equal(c.checks.policy[0], POLICY_REJECT); /* given in the file */
	assert_int_equal(c.checks.policy[3], POLICY_REJECT); /* H04 */
	assert_int_equal(c.checks.policy[4], POLICY_FLAG);   /* H05: stream_injection only warns */
	assert_true(preset_unpaired_mean(c.eval.preset));
	/* --set's given keys win over a later --set preset too */
	assert_int_equal(config_set(&c, "eval.timing_block=4", &err), 0);
	assert_int_equal(config_set(&c, "eval.preset=kernelbench", &err), 0);
	assert_int_equal(c.eval.timing_block, 4);
	assert_int_equal(c.eval.perf_trials, 7);
	config_release(&c);
}

/* Every value of the preset table is one its key accepts, under every preset: a typo there would be
 * dropped silently when the preset is set. */
static void preset_table_values_are_valid(void **state)
{
	(void)state;
	for (int p = PRESET_STITCHBENCH; p <= PRESET_STITCHCUDA; p++) {
		const char *value, *key;
		size_t i;
		for (i = 0; (key = config_preset_row(i, p, &value)); i++) {
			struct config c;
			struct sb_error err = { 0 };
			char *a = xstrfmt("%s=%s", key, value);
			config_init(&c);
			if (config_set(&c, a, &err))
				fail_msg("preset %s: %s: %s", preset_name((enum eval_preset)p), a, err.msg);
			free(a);
			config_release(&c);
		}
		assert_int_equal(i, config_preset_rows());
		assert_true(i >= 10);
	}
	/* and stitchbench's column is the defaults: the preset given changes nothing */
	struct config a, b;
	struct sb_error err = { 0 };
	struct strbuf ya = STRBUF_INIT, yb = STRBUF_INIT;
	assert_int_equal(load(&a, "", &err), 0);
	assert_int_equal(load(&b, "eval:\n  preset: kernelbench\n", &err), 0);
	assert_int_equal(config_set(&b, "eval.preset=stitchbench", &err), 0);
	config_dump(&a, CONFIG_DUMP_ALL, &ya);
	config_dump(&b, CONFIG_DUMP_ALL, &yb);
	assert_string_equal(ya.buf, yb.buf);
	strbuf_release(&ya);
	strbuf_release(&yb);
	config_release(&a);
	config_release(&b);
}

/* Each case: YAML, then the text the error must contain (position and key). */
static const char *const BAD[][2] = {
	{ "eval:\n  trails: 5\n", "exp.yaml:2:3: eval.trails: unknown key (did you mean 'trials'?)" },
	{ "eval:\n  trials: five\n", "exp.yaml:2:11: eval.trials: expected an integer, got 'five'" },
	{ "eval:\n  trials: 0\n", "exp.yaml:2:11: eval.trials: 0 is out of range" },
	{ "eval:\n  trials: 2.5\n", "eval.trials: expected an integer, got '2.5'" },
	{ "eval:\n  trials: [1, 2]\n", "exp.yaml:2:11: eval.trials: expected an integer, got a list" },
	{ "eval:\n  rse_target: 2\n", "eval.rse_target: 2 is out of range: expected a number between 0 and 1" },
	{ "eval:\n  timing_lead_us: -2\n", "eval.timing_lead_us: -2 is out of range" },
	{ "eval:\n  hash_seed: -2\n", "eval.hash_seed: -2 is out of range" },
	{ "eval:\n  tolerance: strict\n", "eval.tolerance: 'strict' is not one of: kernelbench, kernelbench-v0" },
	{ "eval:\n  extra_shapes: maybe\n", "eval.extra_shapes: expected true or false, got 'maybe'" },
	{ "eval: 5\n", "exp.yaml:1:7: eval: expected a mapping, got a scalar" },
	{ "evals:\n  trials: 1\n", "exp.yaml:1:1: evals: unknown key (did you mean 'eval'?)" },
	{ "eval:\n  trials: 1\n  trials: 2\n", "exp.yaml:3:3: eval.trials: duplicate key (first given at line 2)" },
	{ "eval:\n  trials: [1\n", "exp.yaml:3:1: YAML syntax error" },
	{ "eval:\n\ttrials: 1\n", "YAML syntax error" },
	{ "- a\n- b\n", "exp.yaml:1:1: (top level): the file must be a mapping" },
	{ "problems:\n  levels: [1, 5]\n", "exp.yaml:2:15: problems.levels: '5' is not a level" },
	{ "problems:\n  levels: 1\n", "problems.levels: expected a list, got a scalar" },
	{ "models:\n  name: x\n", "exp.yaml:2:3: models: expected a list of mappings, got a mapping" },
	{ "models:\n  - qwen\n", "exp.yaml:2:5: models[0]: expected a mapping" },
	{ "models:\n  - name: a\n    provider: grpc\n", "exp.yaml:3:15: models[0].provider: 'grpc' is not one of: openai, anthropic, replay" },
	{ "models:\n  - name: a\n    temperature: 3\n", "models[0].temperature: 3 is out of range" },
	{ "agents:\n  - name: a\n    kind: stitchcuda\n    modle: q\n", "exp.yaml:4:5: agents[0].modle: unknown key (did you mean 'model'?)" },
	{ "checks:\n  policy: {H23: flag}\n", "checks.policy.H23: 'H23' is not a hack id" },
	{ "checks:\n  policy: {H02: ignore}\n", "checks.policy.H02: H02: expected reject or flag, got 'ignore'" },
	{ "checks:\n  reward_lambda: 10.5\n", "checks.reward_lambda: 10.5 is out of range: expected a number between 0 and 10" },
	{ "checks:\n  reward_lambda: -0.1\n", "checks.reward_lambda: -0.1 is out of range" },
	{ "name: x\n---\nname: y\n", "a second YAML document" },
};

static void each_invalid_input_names_place_and_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		struct config c;
		struct sb_error err = { 0 };
		int rc = load(&c, BAD[i][0], &err);
		if (rc != SB_EINPUT || !strstr(err.msg, BAD[i][1]))
			fail_msg("case %zu:\n%s\nexpected error containing: %s\ngot (rc %d): %s", i, BAD[i][0], BAD[i][1],
				 rc, err.msg);
		config_release(&c);
	}
}

static const char *const INVALID_REFS[][2] = {
	{ "agents:\n  - name: a\n    kind: oneshot\n    model: gpt\n",
	  "exp.yaml:2:5: agents[0] (a): model 'gpt' is not defined under models: (defined: none)" },
	{ "agents:\n  - name: a\n    kind: refine\n", "agents[0] (a): kind refine needs model:" },
	{ "agents:\n  - name: a\n    kind: torch-eager\n  - name: a\n    kind: torch-compile\n",
	  "exp.yaml:4:5: agents[1].name: 'a' is already used by agents[0]" },
	{ "agents:\n  - kind: torch-eager\n", "agents[0].name: every agent needs a name" },
	{ "agents:\n  - name: s\n    kind: samples\n", "kind samples needs samples_dir:" },
	{ "models:\n  - name: m\n    provider: openai\n", "models[0] (m): api_base and model are required" },
	{ "models:\n  - name: m\n    provider: replay\n", "provider replay needs cassette:" },
	{ "eval:\n  device: gpu0\n", "eval.device: 'gpu0' is not a device" },
	{ "problems:\n  levels: []\n", "problems.levels: select at least one level" },
	{ "checks:\n  judge_model: j\n", "checks.judge_model: 'j' is not defined" },
};

static void cross_section_errors_point_at_the_entry(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(INVALID_REFS) / sizeof(INVALID_REFS[0]); i++) {
		struct config c;
		struct sb_error err = { 0 };
		config_init(&c);
		c.path = xstrdup("exp.yaml");
		int rc = config_load_string(&c, "exp.yaml", INVALID_REFS[i][0], strlen(INVALID_REFS[i][0]), &err);
		assert_int_equal(rc, 0);
		rc = config_validate(&c, &err);
		if (rc != SB_EINPUT || !strstr(err.msg, INVALID_REFS[i][1]))
			fail_msg("case %zu: expected '%s', got (rc %d) '%s'", i, INVALID_REFS[i][1], rc, err.msg);
		config_release(&c);
	}
}

static void set_overrides_scalars_lists_and_named_entries(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	assert_int_equal(load(&c, VALID, &err), 0);
	assert_int_equal(config_set(&c, "eval.trials=11", &err), 0);
	assert_int_equal(c.eval.trials, 11);
	assert_int_equal(config_set(&c, "checks.reward_lambda=2", &err), 0);
	assert_true(c.checks.reward_lambda == 2.0);
	assert_int_equal(config_set(&c, "models.qwen.temperature=0", &err), 0);
	assert_true(c.models[0].temperature == 0.0);
	assert_int_equal(config_set(&c, "agents.sc.kind=refine", &err), 0);
	assert_string_equal(c.agents[0].kind, "refine");
	assert_int_equal(config_set(&c, "problems.levels=2,4", &err), 0);
	assert_int_equal(c.problems.levels[0], 0);
	assert_int_equal(c.problems.levels[1], 1);
	assert_int_equal(c.problems.levels[3], 1);
	assert_int_equal(config_set(&c, "problems.select=L2/1,L2/3-4", &err), 0);
	assert_int_equal(c.problems.nselect, 2);
	assert_string_equal(c.problems.select[1], "L2/3-4");
	assert_int_equal(config_set(&c, "checks.policy=H05:flag", &err), 0);
	assert_int_equal(c.checks.policy[4], POLICY_FLAG);
	assert_int_equal(config_set(&c, "python=null", &err), 0);
	assert_null(c.python);
	assert_int_equal(config_set(&c, "problems.root=/x=y", &err), 0); /* '=' in the value */
	assert_string_equal(c.problems.root, "/x=y");

	assert_int_equal(config_set(&c, "eval.trials=0", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "--set eval.trials=0: 0 is out of range"));
	assert_int_equal(config_set(&c, "eval.trails=3", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "did you mean 'trials'"));
	assert_int_equal(config_set(&c, "eval", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "expected KEY=VALUE"));
	assert_int_equal(config_set(&c, "eval=3", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "names a section"));
	assert_int_equal(config_set(&c, "models.nobody.temperature=1", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "no models entry named 'nobody'"));
	assert_int_equal(config_set(&c, "eval.trials.x=1", &err), SB_EINPUT);
	assert_int_equal(c.eval.trials, 11); /* failed overrides change nothing */
	config_release(&c);
}

static void dump_round_trips(void **state)
{
	(void)state;
	struct config a, b;
	struct sb_error err = { 0 };
	struct strbuf y1 = STRBUF_INIT, y2 = STRBUF_INIT;
	assert_int_equal(load(&a, VALID, &err), 0);
	/* values that need quoting survive too */
	assert_int_equal(config_set(&a, "name=a \"quoted\": name # not a comment", &err), 0);
	config_dump(&a, CONFIG_DUMP_ALL, &y1);
	if (load(&b, y1.buf, &err))
		fail_msg("dump did not load back: %s\n%s", err.msg, y1.buf);
	config_dump(&b, CONFIG_DUMP_ALL, &y2);
	assert_string_equal(y1.buf, y2.buf);
	assert_string_equal(b.name, "a \"quoted\": name # not a comment");
	assert_true(b.models[0].temperature == 0.2);
	strbuf_release(&y1);
	strbuf_release(&y2);
	config_release(&a);
	config_release(&b);
}

/* What doctor prints and a run stores never holds a credential given as a header: a secret-looking name's
 * value is written redacted, other headers and the variables headers_env names as they are. */
static void dump_redacts_secret_headers(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	struct strbuf y = STRBUF_INIT;
	assert_int_equal(load(&c, VALID, &err), 0);
	assert_int_equal(config_set(&c, "models.qwen.headers=Authorization:Bearer s1,X-Api-Key:s2,x-auth-token:s3,"
				    "Cookie:s4,X-Team:kernels", &err), 0);
	assert_int_equal(config_set(&c, "models.qwen.headers_env=X-Client-Secret:MY_SECRET_VAR", &err), 0);
	config_dump(&c, CONFIG_DUMP_ALL, &y);
	assert_null(strstr(y.buf, "Bearer s1"));
	assert_null(strstr(y.buf, "\"s2\""));
	assert_null(strstr(y.buf, "\"s3\""));
	assert_null(strstr(y.buf, "\"s4\""));
	assert_non_null(strstr(y.buf, "\"Authorization\": \"[REDACTED]\""));
	assert_non_null(strstr(y.buf, "\"x-auth-token\": \"[REDACTED]\""));
	assert_non_null(strstr(y.buf, "\"X-Team\": \"kernels\""));
	assert_non_null(strstr(y.buf, "headers_env:\n      \"X-Client-Secret\": \"MY_SECRET_VAR\""));
	assert_true(config_header_secret("Proxy-Authorization") && config_header_secret("OpenAI-Organization-Key"));
	assert_false(config_header_secret("Content-Type") || config_header_secret("anthropic-version"));
	strbuf_release(&y);
	config_release(&c);
}

/* docs/config.md must document every public key the schema accepts, and name no other key: hidden and
 * internal keys are not the interface. */
static void walk_keys(const struct field *fields, const char *prefix, struct strbuf *doc, int *missing)
{
	for (const struct field *f = fields; f->key; f++) {
		char *full = xstrfmt("%s%s", prefix, f->key);
		char *needle = xstrfmt("`%s`", full);
		if (f->vis == VIS_PUBLIC && !strstr(doc->buf, needle)) {
			fprintf(stderr, "docs/config.md does not document %s\n", needle);
			(*missing)++;
		}
		if (f->vis != VIS_PUBLIC && strstr(doc->buf, full)) {
			fprintf(stderr, "docs/config.md names %s, which is not a public key\n", full);
			(*missing)++;
		}
		if (f->type == FT_SECTION || f->type == FT_LIST) {
			char *p = xstrfmt("%s%s.", full, f->type == FT_LIST ? "[]" : "");
			walk_keys(f->sub, p, doc, missing);
			free(p);
		}
		free(needle);
		free(full);
	}
}

/* A file of the source tree (SB_SOURCE_ROOT, else the working directory) into doc. */
static void source_file(const char *rel, struct strbuf *doc)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	char *path = xstrfmt("%s/%s", root ? root : ".", rel);
	assert_int_equal(strbuf_read_file(doc, path, 0), 0);
	free(path);
}

static void docs_cover_every_key(void **state)
{
	(void)state;
	struct strbuf doc = STRBUF_INIT;
	source_file("docs/config.md", &doc);
	int missing = 0;
	walk_keys(config_schema, "", &doc, &missing);
	assert_int_equal(missing, 0);
	strbuf_release(&doc);
}

/* The README is a map of the interface: it names no hidden or internal key, neither whole (eval.exchange)
 * nor as a bare key in backticks. */
static int hidden_named(const struct field *fields, const char *prefix, const struct strbuf *doc)
{
	int n = 0;
	for (const struct field *f = fields; f->key; f++) {
		char *full = xstrfmt("%s%s", prefix, f->key), *bare = xstrfmt("`%s`", f->key);
		if (f->vis != VIS_PUBLIC && (strstr(doc->buf, full) || strstr(doc->buf, bare))) {
			fprintf(stderr, "README.md names %s, which is not a public key\n", full);
			n++;
		}
		if (f->type == FT_SECTION) {
			char *p = xstrfmt("%s.", full);
			n += hidden_named(f->sub, p, doc);
			free(p);
		}
		free(bare);
		free(full);
	}
	return n;
}

static void readme_names_no_hidden_key(void **state)
{
	(void)state;
	struct strbuf doc = STRBUF_INIT;
	source_file("README.md", &doc);
	assert_int_equal(hidden_named(config_schema, "", &doc), 0);
	strbuf_release(&doc);
}

/* doctor shows the public keys, and a hidden one only where the file gave it, so what it prints loads
 * as the same configuration; a run's config.yaml keeps every key. At most 16 eval keys are public. */
static void dump_shows_public_keys(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	struct strbuf pub = STRBUF_INIT, all = STRBUF_INIT;
	assert_int_equal(load(&c, "eval:\n  timing_block: 4\n", &err), 0);
	config_dump(&c, CONFIG_DUMP_PUBLIC, &pub);
	config_dump(&c, CONFIG_DUMP_ALL, &all);
	assert_non_null(strstr(pub.buf, "  tf32: false\n"));
	assert_non_null(strstr(pub.buf, "  timing_block: 4\n"));
	assert_null(strstr(pub.buf, "warmup_ms:"));
	assert_null(strstr(pub.buf, "fork_server:"));
	assert_non_null(strstr(all.buf, "  warmup_ms: 100\n"));
	assert_non_null(strstr(all.buf, "  fork_server: true\n"));
	const struct field *eval = config_schema;
	while (strcmp(eval->key, "eval"))
		eval++;
	int npublic = 0;
	for (const struct field *f = eval->sub; f->key; f++)
		npublic += f->vis == VIS_PUBLIC;
	assert_in_range(npublic, 1, 16);
	strbuf_release(&pub);
	strbuf_release(&all);
	config_release(&c);
}

/* Every public and hidden key of eval and checks is in the run's identity (the policy has a column of its
 * own), no internal one is, and a preset's values are what its default identity holds. */
static void identity_holds_every_key_that_changes_numbers(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	json_t *id = config_identity(&c);
	for (const struct field *sec = config_schema; sec->key; sec++) {
		if (strcmp(sec->key, "eval") && strcmp(sec->key, "checks"))
			continue;
		for (const struct field *f = sec->sub; f->key; f++) {
			char *key = xstrfmt("%s.%s", sec->key, f->key);
			int want = f->vis != VIS_INTERNAL && f->vis != VIS_REPORT && f->type != FT_POLICY;
			if (want != (json_object_get(id, key) != NULL))
				fail_msg("%s is %sin the identity", key, want ? "not " : "");
			free(key);
		}
	}
	assert_true(json_is_false(json_object_get(id, "eval.tf32")));
	/* a run that measured the kernels' hardware metrics still compares with one that did not */
	assert_null(json_object_get(id, "eval.profile_metrics"));
	json_decref(id);
	config_release(&c);
	id = config_identity_default("kernelbench");
	assert_int_equal(json_integer_value(json_object_get(id, "eval.timing_block")), 32);
	assert_string_equal(json_string_value(json_object_get(id, "eval.preset")), "kernelbench");
	json_decref(id);
}

/* The test switch turns every fast path off, and only those: each internal key leaves its default. */
static void plain_paths_turn_every_internal_key_off(void **state)
{
	(void)state;
	struct config c, d;
	struct sb_error err = { 0 };
	config_init(&c);
	config_init(&d);
	assert_int_equal(config_plain_paths(&c, &err), 0);
	assert_int_equal(c.eval.exchange, XCHG_FILES);
	assert_true(!c.eval.fork_server && !c.eval.prestart_candidate && !c.eval.keep_reference_worker);
	assert_true(!c.eval.lean_headers && !c.eval.lite_headers && !c.eval.split_nvcc);
	assert_int_equal(c.eval.build_jobs, 1);
	json_t *a = config_identity(&c), *b = config_identity(&d);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	config_release(&c);
	config_release(&d);
}

static void example_config_is_valid(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	const char *root = getenv("SB_SOURCE_ROOT");
	char *path = xstrfmt("%s/configs/example.yaml", root ? root : ".");
	config_init(&c);
	int rc = config_load_file(&c, path, &err);
	if (!rc)
		rc = config_validate(&c, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_true(c.nmodels >= 1);
	assert_true(c.nagents >= 3);
	/* the example is documentation: it gives public keys only */
	for (size_t i = 0; i < c.ngiven; i++)
		for (const struct field *sec = config_schema; sec->key; sec++) {
			size_t n = strlen(sec->key);
			if (sec->type != FT_SECTION || strncmp(c.given[i], sec->key, n) || c.given[i][n] != '.')
				continue;
			for (const struct field *f = sec->sub; f->key; f++)
				if (!strcmp(c.given[i] + n + 1, f->key) && f->vis != VIS_PUBLIC)
					fail_msg("configs/example.yaml gives %s, which is not a public key", c.given[i]);
		}
	config_release(&c);
	free(path);
}

static void missing_file_is_an_input_error(void **state)
{
	(void)state;
	struct config c;
	struct sb_error err = { 0 };
	config_init(&c);
	assert_int_equal(config_load_file(&c, "/nonexistent/exp.yaml", &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/exp.yaml: cannot read the config file"));
	config_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_file_fills_every_section),
		cmocka_unit_test(empty_file_gives_defaults),
		cmocka_unit_test(presets_set_their_keys_and_given_keys_win),
		cmocka_unit_test(preset_table_values_are_valid),
		cmocka_unit_test(each_invalid_input_names_place_and_key),
		cmocka_unit_test(cross_section_errors_point_at_the_entry),
		cmocka_unit_test(set_overrides_scalars_lists_and_named_entries),
		cmocka_unit_test(dump_round_trips),
		cmocka_unit_test(dump_redacts_secret_headers),
		cmocka_unit_test(docs_cover_every_key),
		cmocka_unit_test(readme_names_no_hidden_key),
		cmocka_unit_test(dump_shows_public_keys),
		cmocka_unit_test(identity_holds_every_key_that_changes_numbers),
		cmocka_unit_test(plain_paths_turn_every_internal_key_off),
		cmocka_unit_test(example_config_is_valid),
		cmocka_unit_test(missing_file_is_an_input_error),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
